"""Rewrite ``construct_xfail.py`` from what actually fails on each installed CPython.

Run it after fixing the decompiler: entries only disappear as cases start passing (new failures
appear too, so read the diff — a case that used to pass must not be added silently)::

    python tests/refresh_construct_xfail.py          # all of 3.8..3.15 that are installed

Each interpreter needs pytest; the venvs nox makes (``.nox/tests-3-X``) are used when present.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, Set

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VERSIONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]


def interpreter(version: str) -> str:
    """A python of ``version`` that has pytest: nox's venv, else pyenv's, else PATH."""
    candidates = glob.glob(os.path.join(ROOT, ".nox", "tests-%s" % version.replace(".", "-"), "bin", "python"))
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python" % version)), reverse=True)
    extra = os.environ.get("PELLUCID_PYTHONS", "")  # e.g. "3.8=/tmp/v38/bin/python,3.9=..."
    candidates = [p.split("=", 1)[1] for p in extra.split(",") if p.startswith(version + "=")] + candidates
    for c in candidates:
        if subprocess.call([c, "-c", "import pytest"], stderr=subprocess.DEVNULL) == 0:
            return c
    return ""


def failures(python: str) -> Set[str]:
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.txt")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), PELLUCID_IGNORE_XFAIL="1")
        subprocess.call([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                         os.path.join(HERE, "test_constructs.py")], cwd=ROOT, env=env,
                        stdout=open(report, "w"), stderr=subprocess.STDOUT)
        text = open(report).read()
    out = set()
    for m in re.finditer(r"^(?:FAILED|ERROR) \S+::(test_roundtrip|test_decompile_compiles)\[([^\]]+)\]", text, re.M):
        kind = "roundtrip" if m.group(1) == "test_roundtrip" else "decompile"
        out.add("%s/%s" % (m.group(2), kind))
    return out


def main() -> int:
    found: Dict[str, Set[str]] = {}
    for v in VERSIONS:
        py = interpreter(v)
        if not py:
            print("Python %s: absent or without pytest, skipped" % v)
            continue
        fails = failures(py)
        print("Python %s: %d failing tests" % (v, len(fails)))
        for key in fails:
            found.setdefault(key, set()).add(v)
    # A case failing both tests on the same versions gets one key.
    merged: Dict[str, Set[str]] = {}
    cases = {k.split("/")[0] for k in found}
    for case in cases:
        r, d = found.get(case + "/roundtrip", set()), found.get(case + "/decompile", set())
        if r and r == d:
            merged[case] = r
        else:
            if r:
                merged[case + "/roundtrip"] = r
            if d:
                merged[case + "/decompile"] = d
    path = os.path.join(HERE, "construct_xfail.py")
    text = open(path).read()
    head = text[:text.index("EXPECTED_FAILURES = ")]
    lines = ["EXPECTED_FAILURES = {"]
    for key in sorted(merged):
        vs = merged[key]
        value = '"all"' if vs == set(VERSIONS) else "{%s}" % ", ".join(json.dumps(v) for v in sorted(vs, key=lambda s: tuple(map(int, s.split(".")))))
        lines.append("    %s: %s," % (json.dumps(key), value))
    lines.append("}")
    open(path, "w").write(head + "\n".join(lines) + "\n")
    print("wrote %d entries to %s" % (len(merged), path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
