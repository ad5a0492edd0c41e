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


# -- ranks of one job whose lifetimes barely overlap ------------------------------------------------
def _capture_of(d, pid, run, written, end):
    import json
    import socket

    record = {"format": "pellucid-capture",
              "process": {"pid": pid, "host": socket.gethostname(), "run": run, "end": end,
                          "written": written}}
    with open(os.path.join(str(d), "capture_0.json"), "w") as fh:
        json.dump(record, fh)


def test_a_rank_starting_after_another_finished_keeps_its_files(tmp_path):
    # rank A of job "id:job" finished (files, capture, registry removed) before rank B started
    import time

    dead = _dead_pid()
    (tmp_path / "full_code_for_f.py").write_text("# rank A\n")
    _capture_of(tmp_path, dead, "id:job", ["full_code_for_f.py"], time.time())
    started = time.time()
    b = DumpFiles(str(tmp_path), run="id:job")
    assert b.clear_old_runs(started) == []
    path = b.claim("full_code_for_f.py")
    assert os.path.basename(path) == "full_code_for_f.1.py"
    assert (tmp_path / "full_code_for_f.py").read_text() == "# rank A\n"
    # another run's earlier process: its names are taken over (stable names across runs)
    c = DumpFiles(str(tmp_path / "other"), run="id:later")
    (tmp_path / "other" / "g.py").write_text("# earlier run\n")
    _capture_of(tmp_path / "other", dead, "id:earlier", ["g.py"], started - 10)
    assert c.clear_old_runs(time.time()) == ["capture_0.json", "g.py"]
    assert os.path.basename(c.claim("g.py")) == "g.py"


def test_a_rank_finishing_first_leaves_the_registry_to_one_still_starting(tmp_path):
    # rank B (this process) started writing but claimed nothing yet; rank A claims, writes and
    # releases in a process of its own: B's claim must not take A's name
    import time

    b = DumpFiles(str(tmp_path), run="id:job")
    b.clear_old_runs(time.time())
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    program = ("import sys; sys.path.insert(0, %r); from pellucid.dynamo.dump_files import DumpFiles\n"
               "a = DumpFiles(%r, run='id:job'); p = a.claim('full_code_for_f.py')\n"
               "a.write(p, '# rank A\\n'); a.release()\n" % (os.path.join(src, "src"), str(tmp_path)))
    subprocess.run([sys.executable, "-c", program], check=True)
    assert (tmp_path / "full_code_for_f.py").read_text() == "# rank A\n"
    assert os.path.basename(b.claim("full_code_for_f.py")) == "full_code_for_f.1.py"
    b.release()
    assert not (tmp_path / CLAIMS).exists()  # the last writer removed the registry
