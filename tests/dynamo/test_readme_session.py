"""The README's pdb sessions are what a fresh run prints (see ``readme_session``)."""
import difflib
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme_session  # noqa: E402

pytestmark = pytest.mark.skipif(
    not torch.__version__.startswith(readme_session.TORCH + "."),
    reason="the README's sessions are made with torch %s" % readme_session.TORCH)

REFRESH = "PYTHONPATH=src python tests/dynamo/readme_session.py"


def _readme_block(name):
    with open(readme_session.README, encoding="utf-8") as fh:
        blocks = readme_session.readme_blocks(fh.read())
    assert name in blocks, "README.md has no generated block %r" % name
    return blocks[name]


@pytest.fixture(scope="module")
def fresh():
    """Every generated block, from fresh runs of the sessions."""
    return readme_session.expected_blocks()


def _compare(fresh, name):
    have, want = _readme_block(name), fresh[name]
    if have != want:
        diff = "".join(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                            "README.md", "a fresh run"))
        pytest.fail("README.md's %s is stale; refresh it with `%s` (review the diff):\n%s"
                    % (name, REFRESH, diff))


def test_readme_program_is_the_one_the_sessions_run():
    have = _readme_block("program")
    assert have == readme_session._block("program", readme_session.PROGRAM, "python"), \
        "README.md's program is not the one the sessions run; refresh it with `%s`" % REFRESH


@pytest.mark.parametrize("backend", readme_session.BACKENDS)
def test_readme_pdb_session(fresh, backend):
    _compare(fresh, "session-" + backend)
