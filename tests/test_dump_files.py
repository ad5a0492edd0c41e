"""Claiming names in a dump directory: stable across runs, never shared with a live process."""
import os
import subprocess
import sys

from pellucid.dynamo.dump_files import CLAIMS, REGISTRY, ClaimsLock, DumpFiles


def _registry(d):
    return os.path.join(str(d), CLAIMS, REGISTRY)


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_second_run_in_the_same_directory_gets_the_same_names(tmp_path):
    first = DumpFiles(str(tmp_path))
    a = first.claim("full_code_for_f.py")
    b = first.claim("__transformed_code_{n}_for_f.py")
    second = DumpFiles(str(tmp_path))
    assert second.claim("full_code_for_f.py") == a
    assert second.claim("__transformed_code_{n}_for_f.py") == b
    assert os.path.basename(a) == "full_code_for_f.py"
    assert os.path.basename(b) == "__transformed_code_0_for_f.py"


def test_one_process_never_gets_a_name_twice_unless_asked_by_key(tmp_path):
    files = DumpFiles(str(tmp_path))
    names = [os.path.basename(files.claim("g.py")) for _ in range(3)]
    assert names == ["g.py", "g.1.py", "g.2.py"]
    assert files.claim("h.py", key="k") == files.claim("h.py", key="k")
    counted = [os.path.basename(files.claim("c_{n}.py")) for _ in range(2)]
    assert counted == ["c_0.py", "c_1.py"]


def test_a_name_owned_by_a_live_process_is_skipped(tmp_path):
    files = DumpFiles(str(tmp_path))
    with open(_registry(tmp_path), "a") as fh:
        fh.write("f.py\t%d\n" % os.getppid())  # our parent is alive while we run
    assert os.path.basename(files.claim("f.py")) == "f.1.py"
    with open(_registry(tmp_path), "a") as fh:
        fh.write("n_0.py\t%d\n" % os.getppid())
    assert os.path.basename(files.claim("n_{n}.py")) == "n_1.py"


def test_a_name_owned_by_a_finished_process_is_taken_over(tmp_path):
    files = DumpFiles(str(tmp_path))
    with open(_registry(tmp_path), "a") as fh:
        fh.write("f.py\t%d\n" % os.getppid())
        fh.write("f.py\t%d\n" % _dead_pid())  # the last line for a name says who owns it
    assert os.path.basename(files.claim("f.py")) == "f.py"
    with ClaimsLock(os.path.join(str(tmp_path), CLAIMS)) as claims:
        assert claims.owner("f.py") == os.getpid()
        assert claims.owner("other.py") == 0


def test_a_torn_registry_line_reads_as_unowned(tmp_path):
    files = DumpFiles(str(tmp_path))
    with open(_registry(tmp_path), "a") as fh:
        fh.write("f.py\t12")  # a writer died mid-line: no newline, and the pid may be cut short
    with ClaimsLock(os.path.join(str(tmp_path), CLAIMS)) as claims:
        assert claims.owner("f.py") in (0, 12)
    path = files.claim("t.py")
    assert os.path.basename(path) == "t.py"
    with ClaimsLock(os.path.join(str(tmp_path), CLAIMS)) as claims:
        assert claims.owner("t.py") == os.getpid()


def test_written_files_are_whole_and_leave_no_temporary_files(tmp_path):
    files = DumpFiles(str(tmp_path))
    path = files.claim("x.py")
    files.write(path, "x = 1\n")
    files.write(path, "x = 2\n")
    with open(path) as fh:
        assert fh.read() == "x = 2\n"
    assert sorted(n for n in os.listdir(str(tmp_path)) if not n.startswith(CLAIMS)) == ["x.py"]


def test_a_long_registry_keeps_only_each_names_last_claim(tmp_path, monkeypatch):
    import pellucid.dynamo.dump_files as dump_files

    monkeypatch.setattr(dump_files, "COMPACT_AT", 200)
    files = DumpFiles(str(tmp_path))
    dead, live = _dead_pid(), os.getppid()
    with open(_registry(tmp_path), "a") as fh:
        for k in range(50):
            fh.write("a.py\t%d\n" % dead)
            fh.write("b.py\t%d\n" % (dead if k < 49 else live))  # the last claim of b is live
    assert os.path.basename(files.claim("c.py")) == "c.py"
    with open(_registry(tmp_path)) as fh:
        lines = fh.read().splitlines()
    assert lines == ["a.py\t%d" % dead, "b.py\t%d" % live, "c.py\t%d\t%s" % (os.getpid(), files.run)]
    assert os.path.basename(files.claim("b.py")) == "b.1.py"  # still owned by the live process
    assert os.path.basename(files.claim("a.py")) == "a.py"
