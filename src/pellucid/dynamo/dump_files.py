"""Files in the dump directory: stable names, atomic writes, and several writers at once.

Names come from counters, not UUIDs, so a second run of the same program writes the same
names (and replaces the first run's files).  Several processes can share one directory: a
name is *claimed* by a small owner file holding the claiming process's id; a name owned by
another live process is skipped (the counter moves on), a name owned by a finished process
is taken over.  Claims are lines of one registry file (``.pellucid-claims/owners``), whose lock
serialises them: creating a file is the slowest thing a dump does on some file systems (a
quarter of a millisecond here), so a claim appends a line instead of creating a file.  Every
file is written to a temporary name and renamed, so a reader never sees half a file.

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


#: the claims registry in the claims directory: one ``<name>\t<pid>`` line per claim, the last
#: line for a name saying who owns it
REGISTRY = "owners"
#: registry size (bytes) past which a claim first drops the lines later lines overrule
COMPACT_AT = 1 << 16


class ClaimsLock:
    """An exclusive lock on a dump directory's claims registry (held while one name is claimed,
    or while ``index.md`` is rebuilt), with the registry to read and append to."""

    def __init__(self, claims_dir: str) -> None:
        self.path = os.path.join(claims_dir, REGISTRY)
        self.fh = None  # type: ignore[var-annotated]

    def __enter__(self) -> "ClaimsLock":
        self.fh = open(self.path, "a+b")
        try:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
        except (ImportError, OSError):
            pass  # no advisory locks (Windows): claims are then only as safe as unlocked appends
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()  # closing releases the lock

    def _text(self) -> str:
        assert self.fh is not None
        self.fh.seek(0)
        return self.fh.read().decode("utf-8", "replace")

    def owner(self, name: str) -> int:
        """The process id that last claimed ``name`` (0: never claimed, or unreadable)."""
        pid = 0
        prefix = name + "\t"
        for line in self._text().split("\n"):
            if line.startswith(prefix):
                rest = line[len(prefix):]
                pid = int(rest) if rest.isdigit() else 0  # (a torn line reads as unowned)
        return pid

    def record(self, name: str) -> None:
        """Make this process the owner of ``name``."""
        assert self.fh is not None
        end = self.fh.seek(0, os.SEEK_END)
        if end > COMPACT_AT:
            end = self._compact()
        torn = False
        if end:
            self.fh.seek(end - 1)
            torn = self.fh.read(1) != b"\n"  # a writer died mid-line: start a line of our own
        line = "%s%s\t%d\n" % ("\n" if torn else "", name, os.getpid())
        self.fh.write(line.encode("utf-8"))  # ("a+" writes at the end, wherever we read)
        self.fh.flush()

    def _compact(self) -> int:
        """Keep only each name's last line (a directory reused run after run would otherwise
        grow its registry, and every claim reads it whole); returns the new size."""
        assert self.fh is not None
        last: Dict[str, str] = {}
        for line in self._text().split("\n"):
            name, tab, _ = line.partition("\t")
            if tab:
                last.pop(name, None)  # (re-inserted: the dict keeps the claims' order)
                last[name] = line
        data = "".join(line + "\n" for line in last.values()).encode("utf-8")
        self.fh.truncate(0)
        self.fh.write(data)
        self.fh.flush()
        return len(data)


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
        try:
            return self._claim_locked(name)
        except OSError as exc:
            raise DumpDirError(exc.errno, "cannot claim %s: %s" % (name, exc.strerror or exc),
                               self.dump_dir) from exc

    def _claim_locked(self, name: str) -> Optional[str]:
        with ClaimsLock(self.claims_dir) as claims:
            # Under the directory's lock, so two processes never both take a name over.
            pid = claims.owner(name)
            if pid and pid != os.getpid() and _alive(pid):
                return None
            # Free, or a finished run's file: take the name (stable names across runs).
            claims.record(name)
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
