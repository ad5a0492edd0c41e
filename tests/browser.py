"""A real headless browser for the report tests: Debian's ``chromium`` driven through selenium
with the system's ``chromedriver`` (never a browser a tool downloads).

``browser()`` skips the calling test, saying why, when chromium, chromedriver or selenium is
missing -- unless ``PELLUCID_REQUIRE_BROWSER=1`` (CI sets it when it installed chromium), where a
missing browser fails; selenium needs Python 3.10+, so older Pythons always skip.
"""
import contextlib
import os
import shutil
import sys
import tempfile

import pytest

CHROMIUM = os.environ.get("PELLUCID_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PELLUCID_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1",
         "--font-render-hinting=none"]
WIDTH, HEIGHT = 1400, 900


def missing() -> str:
    """Why no browser can be driven here ('' when one can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.path.exists(path):
            return "%s not found (apt-get install chromium chromium-driver; package %s)" % (path, package)
    return ""


def require() -> None:
    """Skip (or, with PELLUCID_REQUIRE_BROWSER=1, fail) when no browser can be driven."""
    why = missing()
    if why:
        if sys.version_info < (3, 10):
            pytest.skip("the browser tests need selenium, which needs Python 3.10+")
        if os.environ.get("PELLUCID_REQUIRE_BROWSER"):
            pytest.fail("a headless browser is required here: " + why)
        pytest.skip("no headless browser: " + why)


@contextlib.contextmanager
def browser():
    """A selenium Chrome driver on Debian's chromium, in a fresh profile."""
    require()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="pellucid-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + ["--user-data-dir=%s" % profile, "--window-size=%d,%d" % (WIDTH, HEIGHT)]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_window_size(WIDTH, HEIGHT)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
