"""The HTML report in a real headless browser (Debian's chromium), on a two-rank dump written
from the capture model (no torch needed; ``tests/dynamo/test_report_multirank.py`` does the
same on a real multi-rank training run).

The main page's screenshot is compared with ``tests/data/report_overview.png`` at the scale of
16-pixel blocks (see :func:`report_browser_checks.compare_png`); after a deliberate change of
the report's look, refresh it with ``PELLUCID_REFRESH_SCREENSHOT=1`` and look at the new file.
"""
import os
import shutil
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


def test_the_main_page_looks_as_it_should(driver, report, tmp_path):
    shot = str(tmp_path / "overview.png")
    png = checks.screenshot(driver, report, shot)
    checks.check_layout(driver)
    if os.environ.get("PELLUCID_REFRESH_SCREENSHOT"):
        os.makedirs(checks.DATA, exist_ok=True)
        shutil.copyfile(shot, checks.REFERENCE)
        pytest.skip("reference screenshot rewritten: %s" % checks.REFERENCE)
    with open(checks.REFERENCE, "rb") as fh:
        reference = fh.read()
    result = checks.compare_png(driver, png, reference)
    viewport = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    assert result["size_a"] == result["size_b"] == viewport, result
    assert result["contrast"] > 150, result  # not a blank or washed-out page
    assert result["changed"] < 0.03 and result["mean_diff"] < 2.5, (result, shot)


def test_the_screenshot_comparison_sees_a_broken_page(driver, report, tmp_path):
    """The comparison must be able to fail: the same page without its stylesheet, or with a
    section gone, is far from the reference."""
    with open(checks.REFERENCE, "rb") as fh:
        reference = fh.read()
    with open(report) as fh:
        page = fh.read()
    for name, broken in (("unstyled", page.replace("<style>", "<style>/*", 1).replace("</style>", "*/</style>", 1)),
                         ("no tables", page.replace("<h3>Processes</h3><table>", "<h3>Processes</h3><table hidden>")
                          .replace("<h3>Functions</h3><table>", "<h3>Functions</h3><table hidden>"))):
        path = os.path.join(os.path.dirname(report), "broken-%s.html" % name)
        with open(path, "w") as fh:
            fh.write(broken)
        png = checks.screenshot(driver, path, str(tmp_path / ("%s.png" % name)))
        result = checks.compare_png(driver, png, reference)
        assert result["changed"] > 0.05, (name, result)
