"""Files in the dump directory: stable names, atomic writes, and several writers at once.

Names come from counters, not UUIDs, so a second run of the same program writes the same
names (and replaces the first run's files).  Several processes can share one directory: a
name is *claimed* by a small owner file holding the claiming process's id; a name owned by
another live process is skipped (the counter moves on), a name owned by a finished process
is taken over.  Every file is written to a temporary name and renamed, so a reader never
sees half a file.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> files = DumpFiles(d)
>>> p = files.claim("full_code_for_f.py")
>>> files.write(p, "x = 1\\n"); os.path.basename(p)
'full_code_for_f.py'
"""
import errno
import os
import tempfile
import threading
from typing import Dict, Optional, Set

CLAIMS = ".pellucid-claims"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class DumpDirError(OSError):
    """The dump directory cannot be written any more (removed, made read-only, disk full)."""


class _ClaimLock:
    """An exclusive lock on a claims directory, held while one name is claimed."""

    def __init__(self, claims_dir: str) -> None:
        self.path = os.path.join(claims_dir, "claims.lock")
        self.fh = None  # type: ignore[var-annotated]

    def __enter__(self) -> "_ClaimLock":
        self.fh = open(self.path, "a")
        try:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
        except (ImportError, OSError):
            pass  # no advisory locks (Windows): claims are then only as safe as O_EXCL-free writes
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()  # closing releases the lock


class DumpFiles:
    """Claims and writes files of one dump directory for this process."""

    def __init__(self, dump_dir: str) -> None:
        self.dump_dir = os.path.abspath(dump_dir)
        os.makedirs(self.dump_dir, exist_ok=True)
        if not os.access(self.dump_dir, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "dump directory is not writable", self.dump_dir)
        self.claims_dir = os.path.join(self.dump_dir, CLAIMS)
        os.makedirs(self.claims_dir, exist_ok=True)
        self._mine: Set[str] = set()
        self._by_key: Dict[str, str] = {}
        self._lock = threading.Lock()

    def claim(self, name: str, key: Optional[str] = None) -> str:
        """Return a path for ``name`` that no other live process writes.

        ``name`` may contain ``{n}``: the lowest free counter fills it.  Without ``{n}``, a
        name owned by another live process gets a counter before its suffix (``f.1.py``).  ``key`` makes
        repeated claims for the same thing return the same path.
        """
        with self._lock:
            if key is not None and key in self._by_key:
                return self._by_key[key]
            if "{n}" in name:
                n = 0
                while True:
                    path = self._try(name.format(n=n))
                    if path is not None:
                        break
                    n += 1
            else:
                path = self._try(name)
                stem, dot, ext = name.rpartition(".")
                n = 1
                while path is None:  # another live process has it: ``name.1.py``, ``name.2.py``...
                    path = self._try("%s.%d.%s" % (stem, n, ext) if dot else "%s.%d" % (name, n))
                    n += 1
            if key is not None:
                self._by_key[key] = path
            return path

    def _try(self, name: str) -> Optional[str]:
        if name in self._mine:
            return None
        owner = os.path.join(self.claims_dir, name + ".owner")
        try:
            return self._claim_locked(name, owner)
        except OSError as exc:
            raise DumpDirError(exc.errno, "cannot claim %s: %s" % (name, exc.strerror or exc),
                               self.dump_dir) from exc

    def _claim_locked(self, name: str, owner: str) -> Optional[str]:
        with _ClaimLock(self.claims_dir):
            # Under the directory's lock, so two processes never both take a name over.
            try:
                with open(owner) as fh:
                    pid = int(fh.read().strip() or "0")
            except FileNotFoundError:
                pid = 0
            except (OSError, ValueError):
                pid = 0
            if pid and pid != os.getpid() and _alive(pid):
                return None
            # Free, or a finished run's file: take the name (stable names across runs).  Written
            # in place, not by rename: only holders of this lock read owner files, and a torn
            # write reads as "no owner", which the next claim repairs.
            with open(owner, "w") as fh:
                fh.write(str(os.getpid()))
        self._mine.add(name)
        return os.path.join(self.dump_dir, name)

    def write(self, path: str, text: str) -> None:
        """Write ``text`` to ``path`` atomically (temporary file in the same directory, rename)."""
        try:
            self._write_raw(path, text)
        except OSError as exc:
            raise DumpDirError(exc.errno, "cannot write %s: %s" % (path, exc.strerror or exc),
                               self.dump_dir) from exc

    @staticmethod
    def _write_raw(path: str, text: str) -> None:
        directory = os.path.dirname(path)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
