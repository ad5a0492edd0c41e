"""Decompiling finishes quickly: programs that made the decompiler's work blow up.

Each program is decompiled in a child process that must spend under ``LIMIT_S`` of CPU on it (a
small program takes well under a second); a wall-clock limit, far larger so that a loaded
machine does not fail it, keeps a blow-up from stalling the suite.  Entries marked for a
Python version are known blow-ups there (strict xfail: remove the mark when fixed).
"""
import os
import subprocess
import sys
import textwrap

import pytest

VERSION = "%d.%d" % sys.version_info[:2]
LIMIT_S = 5
WALL_LIMIT_S = 120

# name -> (module source, versions where it is a known hang)
CASES = {
    # Found by the corpus fuzz sweep (seeds 5/6) on 3.13 after the merge of the <=3.10 structure
    # work (68ee7fc): a with statement in a try that has a bare except and an else clause took
    # 10-30 s (with a class statement in the clause it did not finish in minutes).  The with's
    # "exception suppressed" path resumes mid-block, and that partial block was taken for a
    # block outside the try: the try statement ended there and the walk built the same try
    # again at the same block until its step limit.
    "try_with_bare_except_else": (
        "try:\n    with a:\n        pass\nexcept:\n    x = 1\nelse:\n    pass\n",
        set(),
    ),
    "try_with_bare_except_class_else": (
        "try:\n    with 0j:\n        pass\nexcept:\n    class A:\n        pass\nelse:\n    pass\n",
        set(),
    ),
    # Before 3.12 an and/or value jumps with JUMP_IF_*_OR_POP, and each arm of an ``and`` inside
    # an ``or`` was walked to the end of the chain: 2**n block walks for n terms (16 pairs: 9 s
    # on 3.11; 24 would take hours).  A budget of walks made such code fall back; now each arm
    # is read once (tests/test_value_chains.py: structured, and linear).
    "and_or_value_chain": (
        "def f(a, b):\n    x = " + " or ".join("(a > %d and b < %d)" % (j, j) for j in range(24))
        + "\n    return x\n",
        set(),
    ),
}


def _params():
    for name, (src, hangs_on) in CASES.items():
        marks = [pytest.mark.xfail(strict=True, reason="known blow-up on %s" % VERSION)] \
            if VERSION in hangs_on else []
        yield pytest.param(src, id=name, marks=marks)


@pytest.mark.parametrize("src", list(_params()))
def test_decompile_finishes(src):
    script = textwrap.dedent("""
        import sys, time, pellucid
        code = compile(sys.stdin.read(), "<case>", "exec")
        start = time.process_time()
        out = pellucid.decompile(code)
        spent = time.process_time() - start
        compile(out, "<decompiled>", "exec")
        print("done %.3f" % spent)
    """)
    env = dict(os.environ)
    src_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env["PYTHONPATH"] = src_dir + os.pathsep + env.get("PYTHONPATH", "")
    try:
        run = subprocess.run([sys.executable, "-c", script], input=src, env=env,
                             timeout=WALL_LIMIT_S, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
    except subprocess.TimeoutExpired:
        raise AssertionError("decompiling did not finish within %d s" % WALL_LIMIT_S)
    words = run.stdout.split()
    assert run.returncode == 0 and words[:1] == ["done"], run.stderr[-2000:]
    assert float(words[1]) < LIMIT_S, "decompiling took %s s of CPU" % words[1]
