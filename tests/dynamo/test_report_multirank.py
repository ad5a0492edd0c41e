"""The report of a real multi-rank dump, in a headless browser: two ranks of a DDP training
program (gloo, CPU) with a graph break inside a submodule and a recompilation on one rank
write into one directory; ``pellucid report`` renders both, and every view, link and search
works in chromium.  An Inductor dump's kernels link to the FX nodes they compute."""
import os
import re
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
import browser  # noqa: E402
import report_browser_checks as checks  # noqa: E402

import pellucid  # noqa: E402
from pellucid.dynamo.api import load_capture  # noqa: E402
from pellucid.dynamo.report import write_report  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_support import needs_headers  # noqa: E402

SRC = os.path.dirname(os.path.dirname(pellucid.__file__))
PROGRAM = os.path.join(HERE, "multirank_program.py")


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("multirank") / "dump")
    port = _free_port()
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), PYTHONPATH=SRC)
        env.pop("PELLUCID_RUN_ID", None)
        procs.append(subprocess.Popen([sys.executable, PROGRAM, d, "aot_eager"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True))
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    return d


def test_both_ranks_share_one_tidy_directory(dump):
    names = os.listdir(dump)
    assert not [n for n in names if n.startswith(".")], names  # the last rank removed the registry
    loaded = load_capture(dump)
    assert sorted(c.process["rank"] for c in loaded) == [0, 1]
    by_rank = {c.process["rank"]: c for c in loaded}
    labels = {fn.name for fn in by_rank[0].functions()}
    assert {"Net.forward", "Block.forward"} <= labels
    assert by_rank[0].why_recompiled("Block.forward") and not by_rank[1].why_recompiled("Block.forward")
    assert by_rank[0].graph_breaks("Block.forward") and by_rank[1].graph_breaks("Block.forward")
    written = set()
    for c in loaded:
        written |= set(c.process["written"])
    assert written == set(names)  # every file is some rank's, and listed
    with open(os.path.join(dump, "index.md")) as fh:
        index = fh.read()
    assert index.count("## process ") == 2 and "(rank 0)" in index and "(rank 1)" in index


def test_the_report_renders_every_rank_in_a_browser(dump, tmp_path):
    path = write_report(dump)
    with open(path) as fh:
        page = fh.read()
    # the recompilation happened on rank 0 only, the graph break on both: the overview says so
    assert re.search(r"seen on</div><div><span class=\"warn\">only rank 0 \(pid \d+\)</span>", page)
    breaks = page[page.index("<h3>Graph breaks</h3>"):page.index("<h3>Recompilations</h3>")]
    block = [card for card in breaks.split('<div class="card break')
             if "in <b>Block.forward</b>" in card and "Data-dependent branching" in card]
    assert len(block) == 1 and re.search(r"every process \(rank 0 \(pid \d+\), rank 1 \(pid \d+\)\)", block[0])
    with browser.browser() as driver:
        checks.check_overview(driver, path, ["2 processes", "Net.forward", "Block.forward", "rank 0 (pid",
                                             "rank 1 (pid", "Data-dependent branching", "only rank 0"])
        counts = checks.check_views_and_links(driver, path)
        assert counts["files"] > 20
        checks.check_jump_to_line(driver, path)
        assert checks.check_search(driver, path, "relu") > 0
        checks.screenshot(driver, path, str(tmp_path / "multirank-overview.png"))
        checks.check_layout(driver)
        for rank in (0, 1):
            checks.open_report(driver, path, "p%d-fn-Block_forward" % rank)
            marked = driver.execute_script(
                "return document.querySelectorAll('.view.shown .line.break').length")
            assert marked >= 1


def f_inductor(x, w):
    h = (x @ w).relu()  # matmul, relu
    return (h.sin() + 1).sum()


@needs_headers
def test_inductor_kernels_link_to_their_fx_nodes(tmp_path, capsys):
    torch._dynamo.reset()
    dump = str(tmp_path / "dump")
    compiled = torch.compile(f_inductor, backend="inductor")
    with pellucid.prepare_debug(dump):
        compiled(torch.randn(4, 8, requires_grad=True), torch.randn(8, 8)).backward()
    path = write_report(dump)
    with open(path) as fh:
        page = fh.read()
    assert "kernel call" in page and "and the FX nodes they compute" in page
    # an extern matmul kernel names the Dynamo graph's node, which links to its line
    m = re.search(r'→ nodes <a href="#(p0-graph-__compiled_fn_\d+-dynamo-L\d+)">matmul</a>', page)
    assert m, "no kernel linked to the matmul node"
    with browser.browser() as driver:
        checks.check_views_and_links(driver, path)
        checks.open_report(driver, path, m.group(1))
        line = driver.find_element("id", m.group(1))
        assert line.is_displayed() and "matmul" in line.text
        ann = line.find_element("css selector", ".ann a").get_attribute("href")
        assert re.search(r"#p0-fn-f_inductor-src-L\d+$", ann)
