"""Files in the dump directory: stable names, atomic writes, and several writers at once.

Names come from counters, not UUIDs, so a second run of the same program writes the same
names (and replaces the first run's files).  Several processes can share one directory: a
name is *claimed* by a small owner file holding the claiming process's id; a name owned by
another live process is skipped (the counter moves on), a name owned by a finished process
is taken over.  Claims are lines of one registry file (``.pellucid-claims/owners``), whose lock
serialises them: creating a file is the slowest thing a dump does on some file systems (a
quarter of a millisecond here), so a claim appends a line instead of creating a file.  Every
file is written to a temporary name and renamed, so a reader never sees half a file, with the
mode the process's umask gives new files.

The registry only lives while a process writes: when a process is done it drops its claims,
and the last one removes the registry (what a finished run leaves is its files and each
process's ``capture_<n>.json``, which lists them).  A later run starts by removing the files
of earlier runs (:meth:`DumpFiles.clear_old_runs`), so the directory holds one run.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> files = DumpFiles(d)
>>> p = files.claim("full_code_for_f.py")
>>> files.write(p, "x = 1\\n"); os.path.basename(p)
'full_code_for_f.py'
"""
import errno
import json
import os
import random
import threading
from typing import Any, Dict, List, Optional, Set, Tuple

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
#: the registry's name for "this process is done writing" (a process's claims stay its own)
DONE = "*done*"
#: the registry's name for "this process writes here" (recorded when it starts, before it claims
#: anything: a rank that finishes first must not remove the registry under one still starting)
WRITING = "*writing*"
#: registry lines that are no file's claim
_MARKERS = (DONE, WRITING)


class ClaimsLock:
    """An exclusive lock on a dump directory's claims registry (held while one name is claimed,
    or while ``index.md`` is rebuilt), with the registry to read and append to."""

    def __init__(self, claims_dir: str) -> None:
        self.path = os.path.join(claims_dir, REGISTRY)
        self.fh = None  # type: ignore[var-annotated]

    def __enter__(self) -> "ClaimsLock":
        while True:
            try:
                self.fh = open(self.path, "a+b")
            except FileNotFoundError:  # (the last process of a run removed the registry)
                try:
                    os.mkdir(os.path.dirname(self.path))  # (not the dump directory: if that
                except FileExistsError:                   # went, writing fails, as it must)
                    pass
                continue
            try:
                import fcntl

                fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
            except (ImportError, OSError):
                return self  # no advisory locks (Windows): as safe as unlocked appends
            # The last process to finish removes the registry (under this lock): a lock taken
            # on a file that is no longer the registry locks nothing, so take the new one.
            try:
                same = os.path.samestat(os.fstat(self.fh.fileno()), os.stat(self.path))
            except OSError:
                same = False
            if same:
                return self
            self.fh.close()

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()  # closing releases the lock

    def _text(self) -> str:
        assert self.fh is not None
        self.fh.seek(0)
        return self.fh.read().decode("utf-8", "replace")

    def entries(self) -> List[Tuple[str, Tuple[int, str]]]:
        """Every line of the registry: (name, (process id, run))."""
        out = []
        for line in self._text().split("\n"):
            name, tab, rest = line.partition("\t")
            if tab:
                out.append((name, _owner_fields(rest)))
        return out

    def owners(self) -> Dict[str, Tuple[int, str]]:
        """Every claimed name and who last claimed it: (process id, run)."""
        return {name: owner for name, owner in self.entries() if name not in _MARKERS}

    def drop(self, pids: Set[int]) -> int:
        """Forget the claims of ``pids``; returns how many claims are left."""
        assert self.fh is not None
        kept = [(n, o) for n, o in self.entries() if o[0] not in pids]
        data = "".join("%s\t%d\t%s\n" % (n, pid, run) for n, (pid, run) in kept).encode("utf-8")
        self.fh.truncate(0)
        self.fh.write(data)
        self.fh.flush()
        return sum(1 for n, _ in kept if n != DONE)

    def owner_of(self, name: str) -> Tuple[int, str]:
        """(process id, run) of the last claim of ``name``; (0, '') when never claimed or
        unreadable."""
        found = (0, "")
        prefix = name + "\t"
        for line in self._text().split("\n"):
            if line.startswith(prefix):
                found = _owner_fields(line[len(prefix):])  # (a torn line reads as unowned)
        return found

    def owner(self, name: str) -> int:
        """The process id that last claimed ``name`` (0: never claimed, or unreadable)."""
        return self.owner_of(name)[0]

    def record(self, name: str, run: str = "", pid: Optional[int] = None) -> None:
        """Make this process (or ``pid``), of ``run``, the owner of ``name``."""
        assert self.fh is not None
        end = self.fh.seek(0, os.SEEK_END)
        if end > COMPACT_AT:
            end = self._compact()
        torn = False
        if end:
            self.fh.seek(end - 1)
            torn = self.fh.read(1) != b"\n"  # a writer died mid-line: start a line of our own
        line = "%s%s\t%d%s\n" % ("\n" if torn else "", name, os.getpid() if pid is None else pid,
                                 "\t" + run if run else "")
        self.fh.write(line.encode("utf-8"))  # ("a+" writes at the end, wherever we read)
        self.fh.flush()

    def _compact(self) -> int:
        """Keep only each name's last line (a directory reused run after run would otherwise
        grow its registry, and every claim reads it whole); returns the new size."""
        assert self.fh is not None
        last: Dict[str, str] = {}
        for line in self._text().split("\n"):
            name, tab, rest = line.partition("\t")
            if tab:
                if name in _MARKERS:  # (one of each per process)
                    name = "%s\t%s" % (name, rest.partition("\t")[0])
                last.pop(name, None)  # (re-inserted: the dict keeps the claims' order)
                last[name] = line
        data = "".join(line + "\n" for line in last.values()).encode("utf-8")
        self.fh.truncate(0)
        self.fh.write(data)
        self.fh.flush()
        return len(data)


def _owner_fields(rest: str) -> Tuple[int, str]:
    pid, _, run = rest.partition("\t")
    return (int(pid) if pid.isdigit() else 0), (run if "\t" not in run else "")


def run_id() -> str:
    """What tells the processes of one run (the ranks of one job) from an earlier run's: the
    launcher's id for the job (``PELLUCID_RUN_ID``, torchrun's ``TORCHELASTIC_RUN_ID``, SLURM's
    job and step), else the parent process when it is a Python program (torchrun, ``mp.spawn``,
    ``pellucid dump``), else this process alone."""
    explicit = os.environ.get("PELLUCID_RUN_ID")
    if explicit:
        return "id:" + explicit
    host = _host()
    elastic = os.environ.get("TORCHELASTIC_RUN_ID")
    if elastic and elastic != "none":
        return "elastic:%s" % elastic
    if os.environ.get("SLURM_JOB_ID"):
        return "slurm:%s.%s" % (os.environ["SLURM_JOB_ID"], os.environ.get("SLURM_STEP_ID", ""))
    ppid = os.getppid()
    if ppid > 1 and _is_multiprocessing_child():
        # (torch.multiprocessing.spawn, a Pool: the children of one parent are one job, however
        # their lifetimes overlap -- a rank may end before the last one starts)
        return "mp:%s:%d" % (host, ppid)
    if ppid > 1 and _is_python(ppid):
        return "parent:%s:%d" % (host, ppid)
    return "process:%s:%d" % (host, os.getpid())


#: run ids that name one job: processes sharing one keep each other's files whenever they ran
JOB_RUN_PREFIXES = ("id:", "mp:", "elastic:", "slurm:")


def _is_multiprocessing_child() -> bool:
    import sys

    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return False  # (a child made by multiprocessing has imported it to start)
    parent = getattr(mp, "parent_process", None)
    try:
        return parent is not None and parent() is not None
    except Exception:  # (a multiprocessing we do not know: not a child we can tell)
        return False


def process_start_time() -> float:
    """When this process started (seconds since the epoch; Linux's /proc), else now."""
    import time

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # (field 22, starttime: clock ticks after boot)
        # (boot time from the uptime, to the clock tick: /proc/stat's btime is whole seconds,
        # which put a process's start up to a second early -- before an earlier run ended)
        with open("/proc/uptime", "rb") as fh:
            boot = time.time() - float(fh.read().split()[0])
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        return time.time()


def _host() -> str:
    import socket

    try:
        return socket.gethostname()
    except OSError:
        return "?"


def _is_python(pid: int) -> bool:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            argv0 = fh.read().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return False
    return os.path.basename(argv0).startswith("python")


class DumpFiles:
    """Claims and writes files of one dump directory for this process."""

    def __init__(self, dump_dir: str, run: Optional[str] = None) -> None:
        self.dump_dir = os.path.abspath(dump_dir)
        #: the run this process belongs to (:func:`run_id`): names a finished process of the same
        #: run claimed stay its own (a rank that finished first keeps its files)
        self.run = run or run_id()
        os.makedirs(self.dump_dir, exist_ok=True)
        if not os.access(self.dump_dir, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "dump directory is not writable", self.dump_dir)
        self.claims_dir = os.path.join(self.dump_dir, CLAIMS)
        os.makedirs(self.claims_dir, exist_ok=True)
        self._mine: Set[str] = set()
        self._by_key: Dict[str, str] = {}
        self._lock = threading.Lock()
        #: every file this object wrote, in order (a path once)
        self.written: List[str] = []
        self._written: Set[str] = set()

    def clear_old_runs(self, started: float) -> List[str]:
        """Remove what earlier runs wrote into the directory: the files each process that ended
        before this one started lists in its capture file (and the capture file), and the files
        a process of another run that died while writing had claimed.  Processes still running
        on this host, processes that ran alongside this one (the ranks of its job), processes
        of the same job (:data:`JOB_RUN_PREFIXES`: an explicit ``PELLUCID_RUN_ID``, torchrun's or
        SLURM's job, the children of one multiprocessing parent) and this process keep theirs.  Only names
        pellucid wrote are removed.  Returns the removed file names."""
        me, host, run = os.getpid(), _host(), self.run
        # ranks of one job run at the same time: a process that ended before this one began
        # is an earlier run's, whatever its parent (a driver running a script twice)
        began = min(started, process_start_time())
        old: Set[str] = set()
        kept: Set[str] = set()
        # names listed by processes whose files stay, and who wrote them (process id, run)
        kept_owner: Dict[str, Tuple[int, str]] = {}
        with ClaimsLock(self.claims_dir) as claims:
            claims.record(WRITING, run)
            for name in sorted(os.listdir(self.dump_dir)):
                if not (name.startswith("capture_") and name.endswith(".json")):
                    continue
                info = _read_manifest(os.path.join(self.dump_dir, name))
                if info is None:
                    continue
                proc, listed = info
                pid = proc.get("pid") if isinstance(proc.get("pid"), int) else 0
                same_host = proc.get("host") in (None, host)
                ended = proc.get("end")
                explicit = run.startswith(JOB_RUN_PREFIXES) and proc.get("run") == run
                earlier = (not explicit and pid != me and not (same_host and _alive(pid))
                           and isinstance(ended, (int, float)) and ended <= began)
                (old if earlier else kept).update(listed + [name])
                if not earlier and pid and pid != me:
                    proc_run = proc.get("run") if isinstance(proc.get("run"), str) else ""
                    for listed_name in listed:
                        kept_owner.setdefault(listed_name, (pid, proc_run))
            owners = claims.owners()
            # A process that finished before this one claimed anything may have removed the
            # registry with its claims (it was the last writer it knew of): its capture file
            # still says which names are its, so they go back in, or a claim here would take
            # them over and overwrite a file of this run.
            for listed_name, (pid, proc_run) in sorted(kept_owner.items()):
                if listed_name not in owners:
                    claims.record(listed_name, proc_run, pid=pid)
            dead = {p for p, r in set(owners.values()) if p and p != me and r != run and not _alive(p)}
            for name, (pid, _) in owners.items():
                if pid in dead:
                    old.add(name)
            if dead:
                claims.drop(dead)
            removed = []
            for name in sorted(old - kept):
                path = os.path.join(self.dump_dir, name)
                if os.path.dirname(os.path.abspath(path)) != self.dump_dir:
                    continue  # (a name of ours never leaves the directory)
                try:
                    os.unlink(path)
                except OSError:
                    continue
                removed.append(name)
        return removed

    def release(self) -> None:
        """This process is done writing: the last process of the directory to finish removes
        the registry (the others' claims keep the names of ranks that finished first)."""
        if not os.path.isdir(self.claims_dir):
            return
        with ClaimsLock(self.claims_dir) as claims:
            me = os.getpid()
            claims.record(DONE, self.run)
            entries = claims.entries()
            done = {pid for name, (pid, _) in entries if name == DONE}
            # (a process that started writing here but claimed nothing yet counts: it would
            # otherwise start a registry that knows none of this run's names)
            writers = {pid for name, (pid, _) in entries if name != DONE}
            if any(pid != me and pid not in done and _alive(pid) for pid in writers):
                return  # a process still writing: the last one to finish removes the registry
            try:
                os.unlink(claims.path)
                os.rmdir(self.claims_dir)
            except OSError:
                pass  # (someone else's file in it, or it went already)

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
            pid, run = claims.owner_of(name)
            if pid and pid != os.getpid() and (_alive(pid) or (run and run == self.run)):
                return None  # a running process's, or a finished rank's of this run
            # Free, or a finished run's file: take the name (stable names across runs).
            claims.record(name, self.run)
        self._mine.add(name)
        return os.path.join(self.dump_dir, name)

    def write(self, path: str, text: str) -> None:
        """Write ``text`` to ``path`` atomically (temporary file in the same directory, rename)."""
        try:
            write_file(path, text)
        except OSError as exc:
            raise DumpDirError(exc.errno, "cannot write %s: %s" % (path, exc.strerror or exc),
                               self.dump_dir) from exc
        with self._lock:
            if path not in self._written:
                self._written.add(path)
                self.written.append(path)


def write_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename; the file gets the mode
    the umask gives (``open()``'s, unlike ``mkstemp``'s owner-only files)."""
    directory = os.path.dirname(path)
    for _ in range(100):
        tmp = os.path.join(directory, ".tmp-%d-%08x.part" % (os.getpid(), random.getrandbits(32)))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - a hundred random names taken
        raise FileExistsError(errno.EEXIST, "no free temporary name", directory)
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


def _read_manifest(path: str) -> Optional[Any]:
    """(process, file names) of a capture file, or None when it is not one."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != "pellucid-capture":
        return None
    proc = data.get("process") if isinstance(data.get("process"), dict) else {}
    written = proc.get("written") if isinstance(proc.get("written"), list) else []
    return proc, [n for n in written if isinstance(n, str) and os.sep not in n and n not in ("", ".", "..")]
