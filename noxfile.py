"""Nox sessions for pellucid.

    nox -s tests            # pytest on every supported CPython (3.8 .. 3.15)
    nox -s tests-3.12       # one interpreter
    nox -s tests -- -k pyc  # arguments after -- go to pytest
    nox -s swap             # the swap suite (tests/swap) on every CPython
    nox -s bench            # bench/fidelity.py and bench/speed.py on 3.11
    nox -s "torch-3.13(torch='2.15.0')"  # the torch.compile tests against one torch

Interpreters that cannot be found are skipped, with a message, not failed.
"""
import atexit
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import nox

PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
DEFAULT_PYTHON = "3.11"
PYENV_ROOT = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"
# Skip, don't fail, when an interpreter is absent (nox's default on CI is to fail).
nox.options.error_on_missing_interpreters = False
# Never try to download an interpreter (only PyPI is reachable here).
nox.options.download_python = "never"
if not os.environ.get("CI"):
    # Locally, keep the session venvs between runs (the package is re-installed
    # each time, so source and dependency changes are picked up).
    nox.options.reuse_venv = "yes"

os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")


def _version_of(exe):
    """Return "X.Y" for a working interpreter `exe`, or None."""
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            universal_newlines=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _patch_key(path):
    m = re.search(r"/versions/\d+\.\d+\.(\d+)/", path)
    return int(m.group(1)) if m else -1


def _locate(version):
    """Find a working CPython `version` ("3.X"): pyenv's install dirs first
    (its shims fail unless the version is selected, e.g. PYENV_VERSION), then
    `python3.X` on PATH. Returns the executable path or None."""
    candidates = sorted(
        glob.glob(os.path.join(PYENV_ROOT, "versions", version + ".*", "bin", "python" + version)),
        key=_patch_key,
        reverse=True,
    )
    on_path = shutil.which("python" + version)
    if on_path:
        candidates.append(on_path)
    for exe in candidates:
        if _version_of(exe) == version:
            return exe
    return None


def _expose_interpreters():
    """Put a private directory at the front of PATH holding one `python3.X`
    launcher per interpreter found, so nox's discovery (and any test that runs
    `python3.X`) gets a working interpreter instead of a pyenv shim."""
    bindir = tempfile.mkdtemp(prefix="pellucid-nox-pythons-")
    atexit.register(shutil.rmtree, bindir, True)
    found, missing = [], []
    for version in PYTHONS:
        exe = _locate(version)
        if exe is None:
            missing.append(version)
            continue
        found.append("%s=%s" % (version, exe))
        launcher = os.path.join(bindir, "python" + version)
        with open(launcher, "w") as f:
            f.write('#!/bin/sh\nexec "%s" "$@"\n' % exe)
        os.chmod(launcher, 0o755)
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    print("noxfile: interpreters found: %s" % (", ".join(found) or "none"), file=sys.stderr)
    for version in missing:
        print(
            "noxfile: Python %s not found (no %s/versions/%s.*/bin/python%s, no python%s on PATH):"
            " its sessions (e.g. tests-%s) will be SKIPPED" % (version, PYENV_ROOT, version, version, version, version),
            file=sys.stderr,
        )
    return missing


MISSING = _expose_interpreters()


def _install(session, *extra):
    session.install("-e", "." + ("[%s]" % ",".join(extra) if extra else ""))


# torch.compile tests run against exact torch pins: a bare "torch" would pull several GB of CUDA
# packages, and pip on this kind of machine caps torch at 2.14.1 (/etc/xdg/pip/constraints.txt)
# unless PIP_CONSTRAINT is lifted, which the pins make safe.  The `tests` session installs one torch
# on the Pythons below (2.13.0 on 3.11 is a local CPU wheel; 2.15.0 is ~4.7 GB from PyPI, pip's
# cache keeps it between runs on one machine: about 11 minutes to download and install here).
# torch 2.15.0 runs on 3.13 (where Inductor's C++ build works) and on 3.14 (the newest Python
# torch 2.15 and pellucid both support; Inductor is skipped there: .ci/install-python's 3.14 has no
# Python.h); the CUDA packages are shared between the two, only the torch wheel is downloaded twice.
TORCH_OF_PYTHON = {"3.11": "2.13.0", "3.13": "2.15.0", "3.14": "2.15.0"}
TRANSFORMERS = "transformers==5.23.0"
#: Pythons without a transformers install (its tokenizers wheel; the models tests are skipped)
NO_TRANSFORMERS = ("3.15",)
#: every (Python, torch) pair the torch tests are run on (`nox -s torch`)
TORCH_PAIRS = [("3.11", "2.13.0"), ("3.11", "2.14.1"), ("3.13", "2.15.0"), ("3.14", "2.15.0"),
               ("3.15", "2.15.0")]
TORCH_TESTS = ["tests/dynamo", "tests/test_dynamo_bytecode.py", "tests/test_dynamo_shapes.py",
               "tests/test_verify.py::test_dynamo_transformed_code"]


def _install_torch(session, version):
    """torch==version (then transformers, resolved against it) into the session's venv."""
    lifted = {"PIP_CONSTRAINT": "/dev/null"}
    session.install("torch==" + version, env=lifted)
    if session.python not in NO_TRANSFORMERS:
        session.install("torch==" + version, TRANSFORMERS, env=lifted)
    session.run("python", "-c", "import sys, torch; print('torch %s on Python %d.%d'"
                " % ((torch.__version__,) + sys.version_info[:2]))")


def _pytest(session, *args):
    """pytest in the session's venv.  On CI, Inductor's cache goes inside the venv and the venv
    (5.6 GB with torch 2.15's CUDA packages) is removed when the session ends, passed or failed:
    the torch venvs of three sessions beside pip's cache and Inductor's do not fit on every
    machine (the tests-3.14 of one CI run failed installing torch for want of disk space)."""
    if not os.environ.get("CI"):
        session.run("pytest", *args)
        return
    env = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(session.create_tmp(), "torchinductor")}
    try:
        session.run("pytest", *args, env=env)
    finally:
        location = getattr(session.virtualenv, "location", None)
        if location and os.path.isdir(location):
            shutil.rmtree(location, ignore_errors=True)
            session.log("removed the session's venv (CI): %s" % location)


@nox.session(python=PYTHONS)
def tests(session):
    """Run the test suite (pytest -q; pass pytest arguments after --).

    On Python 3.11 torch 2.13.0 (CPU), on 3.13 and 3.14 torch 2.15.0, and transformers are installed too,
    for the torch.compile tests; set PELLUCID_NO_TORCH=1 to skip them."""
    _install(session, "test")
    if session.python in TORCH_OF_PYTHON and not os.environ.get("PELLUCID_NO_TORCH"):
        _install_torch(session, TORCH_OF_PYTHON[session.python])
    session.run("python", "--version")
    _pytest(session, "-q", *session.posargs)


@nox.session(python=sorted({p for p, _ in TORCH_PAIRS}, key=lambda v: tuple(map(int, v.split(".")))))
@nox.parametrize("torch", sorted({t for _, t in TORCH_PAIRS}))
def torch(session, torch):
    """The torch.compile tests against one torch: ``nox -s "torch-3.13(torch='2.15.0')"``.

    ``nox -s torch`` runs every pair of TORCH_PAIRS (other pairs are skipped); pytest arguments
    go after --."""
    if (session.python, torch) not in TORCH_PAIRS:
        session.skip("torch %s on Python %s is not one of the tested pairs (TORCH_PAIRS)"
                     % (torch, session.python))
    _install(session, "test")
    _install_torch(session, torch)
    _pytest(session, "-q", *(session.posargs or TORCH_TESTS))


@nox.session(python=PYTHONS)
def swap(session):
    """Run the swap suite in tests/swap."""
    _install(session, "test")
    session.run("pytest", "-q", "tests/swap", "--swap", *session.posargs)


@nox.session(python=DEFAULT_PYTHON)
def bench(session):
    """Run the fidelity and speed benchmarks."""
    _install(session)
    session.run("python", "bench/fidelity.py", *session.posargs)
    session.run("python", "bench/speed.py", *session.posargs)
