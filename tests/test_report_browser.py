"""The HTML report in a real headless browser (Debian's chromium), on a two-rank dump written
from the capture model (no torch needed; ``tests/dynamo/test_report_multirank.py`` does the
same on a real multi-rank training run).

The main page's screenshot is compared with the screenshot of a blank page in the same browser,
at the scale of 16-pixel blocks (see :func:`report_browser_checks.compare_png`): no golden image
to keep in step with the report's look, yet a page that failed to draw fails.
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import browser  # noqa: E402
import report_browser_checks as checks  # noqa: E402
import report_fixture  # noqa: E402

#: where the screenshot tests put their screenshots, to look at (``pytest --basetemp`` keeps them)
SHOTS = "report-screenshots"


@pytest.fixture(scope="module")
def driver():
    with browser.browser() as d:
        yield d


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from pellucid.dynamo.report import write_report

    # a fixed place, so the page shows the same directory name in every run
    base = str(tmp_path_factory.mktemp("fx")) + "/pellucid-report-fixture"
    return write_report(report_fixture.make_dump(base, ranks=2))


def test_every_view_renders_and_every_link_resolves(driver, report):
    counts = checks.check_views_and_links(driver, report)
    assert counts["nav"] == 2 + 2 * 5  # overview, search; per rank one function and four graphs


def test_the_overview_says_what_broke_and_why(driver, report):
    checks.check_overview(driver, report, [
        "2 processes", "Block.forward", "rank 0 (pid 4100)", "rank 1 (pid 4101)",
        "Data-dependent branching", "Detected data-dependent branching", "Use `torch.cond`",
        "if h.mean() > 0.5:", "compile 0/1 of Block.forward", "Tensor f32[4, 8]", "Tensor f32[6, 8]",
        "model.py:6 h = self.linear(x).relu()"])


def test_a_source_link_opens_the_line(driver, report):
    checks.check_jump_to_line(driver, report)


def test_search_finds_across_views(driver, report):
    assert checks.check_search(driver, report, "relu") >= 4


def test_the_function_view_marks_breaks_and_guards(driver, report):
    checks.open_report(driver, report, "p0-fn-Block_forward")
    marks = driver.execute_script(
        "return Array.from(document.querySelectorAll('#p0-fn-Block_forward .line.break, #p0-fn-Block_forward .line.recomp'))"
        ".filter(l => l.id.indexOf('-src-') > 0).map(l => [l.id.split('-L').pop(), l.className, l.title])")
    by_line = {int(n): (css, title) for n, css, title in marks}
    assert by_line[7][0] == "line break" and "graph break here: Data-dependent branching" in by_line[7][1]
    assert by_line[6][0] == "line recomp" and "compiled for Tensor f32[4, 8]" in by_line[6][1]
    assert "guard checks installed by this line" in by_line[6][1]
    # both columns are on screen side by side
    left, right = driver.execute_script(
        "return Array.from(document.querySelectorAll('#p0-fn-Block_forward .split > .panel')).map(p => p.getBoundingClientRect().left)")
    assert right > left + 200


def test_the_main_page_is_drawn(driver, report, tmp_path):
    shot = str(tmp_path / "overview.png")
    png = checks.screenshot(driver, report, shot)
    checks.check_layout(driver)
    checks.check_not_blank(driver, png)


def test_the_blank_check_can_fail(driver, report, tmp_path):
    """The same page with nothing shown is judged blank; with its stylesheet gone it is still
    drawn (text), but the layout check fails."""
    with open(report) as fh:
        page = fh.read()
    hidden = page.replace("<body", "<body style=\"display:none\"", 1)
    assert hidden != page
    path = os.path.join(os.path.dirname(report), "broken-hidden.html")
    with open(path, "w") as fh:
        fh.write(hidden)
    png = checks.screenshot(driver, path, str(tmp_path / "hidden.png"))
    with pytest.raises(AssertionError):
        checks.check_not_blank(driver, png)
    unstyled = page.replace("<style>", "<style>/*", 1).replace("</style>", "*/</style>", 1)
    path = os.path.join(os.path.dirname(report), "broken-unstyled.html")
    with open(path, "w") as fh:
        fh.write(unstyled)
    checks.screenshot(driver, path, str(tmp_path / "unstyled.png"))
    with pytest.raises(AssertionError):
        checks.check_layout(driver)

