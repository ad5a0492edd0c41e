"""A real headless browser for the report tests: Debian's ``chromium``, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``) with the standard library only -- no driver
binary, no Python package, no port, no network, every Python pellucid supports.

``browser()`` skips the calling test, saying why, when chromium is missing -- except in CI
(``CI`` set, or ``PELLUCID_REQUIRE_BROWSER=1``, which ``.ci/run`` exports after installing
chromium), where a missing browser fails the test.

The driver offers the few calls the tests use, named as selenium names them (``get``,
``execute_script`` with ``arguments``, ``find_element``, ``get_screenshot_as_png``, ...), so
the checks read as browser tests usually do; a click is a real mouse press and release at the
element's centre, typing is the browser's own text input.
"""
import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional

import pytest

CHROMIUM = os.environ.get("PELLUCID_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--font-render-hinting=none", "--mute-audio",
         "--remote-debugging-pipe"]
WIDTH, HEIGHT = 1400, 900
TIMEOUT = 60.0


def required() -> bool:
    """Whether a missing browser is a failure here (CI) rather than a reason to skip."""
    return bool(os.environ.get("CI") or os.environ.get("PELLUCID_REQUIRE_BROWSER"))


def missing() -> str:
    """Why no browser can be driven here ('' when one can)."""
    if not sys.platform.startswith("linux"):
        return "the browser tests drive Debian's chromium, on Linux only (here: %s)" % sys.platform
    if not os.access(CHROMIUM, os.X_OK):
        return "%s not found (apt-get install chromium; or set PELLUCID_CHROMIUM)" % CHROMIUM
    return ""


def require() -> None:
    """Skip (or, in CI, fail) when no browser can be driven."""
    why = missing()
    if why:
        if required():
            pytest.fail("a headless browser is required in CI: " + why)
        pytest.skip("no headless browser: " + why)


class BrowserError(RuntimeError):
    pass


class Element:
    """An element found by a JavaScript expression that finds it again each time it is used."""

    def __init__(self, driver: "Driver", expr: str) -> None:
        self.driver = driver
        self.expr = expr

    def _call(self, body: str, *args: Any) -> Any:
        return self.driver.execute_script(
            "var e = arguments[0]; if (!e) throw new Error('no such element: ' + %s); %s"
            % (json.dumps(self.expr), body), self, *args)

    def get_attribute(self, name: str) -> Any:
        # as selenium does: the property when there is one (an absolute href), else the attribute
        return self._call("var v = e[arguments[1]];"
                          "return (v === undefined || v === null || typeof v === 'object') ? e.getAttribute(arguments[1]) : v;",
                          name)

    @property
    def text(self) -> str:
        return self._call("return e.innerText;")

    def is_displayed(self) -> bool:
        return bool(self._call(
            "return !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)"
            " && getComputedStyle(e).visibility !== 'hidden';"))

    def find_element(self, by: str, value: str) -> "Element":
        return Element(self.driver, "(%s).querySelector(%s)" % (self.expr, json.dumps(_selector(by, value))))

    def click(self) -> None:
        """A real click: the element scrolled into view, the mouse pressed and released at the centre
        of its first box (a link wrapped over lines is one box per line, as selenium clicks)."""
        x, y = self._call("e.scrollIntoView({block: 'center', inline: 'center'});"
                          "var r = e.getClientRects()[0] || e.getBoundingClientRect();"
                          "return [r.left + r.width / 2, r.top + r.height / 2];")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params = {"type": kind, "x": x, "y": y}
            if kind != "mouseMoved":
                params.update(button="left", clickCount=1)
            self.driver.send("Input.dispatchMouseEvent", **params)

    def send_keys(self, text: str) -> None:
        """Focus the element and type ``text`` as the browser's text input (fires ``input``)."""
        self._call("e.focus();")
        self.driver.send("Input.insertText", text=text)


def _selector(by: str, value: str) -> str:
    if by == "id":
        return "#" + value.replace(".", "\\.").replace(":", "\\:")
    if by == "css selector":
        return value
    raise ValueError("unsupported locator %r" % by)


class Driver:
    """One page of a headless chromium, over the DevTools protocol on a pipe."""

    def __init__(self, proc: "subprocess.Popen[bytes]", to_browser: int, from_browser: int) -> None:
        self.proc = proc
        self.to_browser = to_browser
        self.from_browser = from_browser
        self.buffer = b""
        self.next_id = 0
        self.session: Optional[str] = None
        self.logs: List[Dict[str, Any]] = []

    # -- the protocol ---------------------------------------------------------------------
    def send(self, method: str, _timeout: float = TIMEOUT, _session: bool = True, **params: Any) -> Dict[str, Any]:
        self.next_id += 1
        message: Dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if _session and self.session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_browser, data):]
        end = time.time() + _timeout
        while True:
            reply = self._read(end, method)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            if "method" in reply:
                self._event(reply)

    def _read(self, end: float, waiting_for: str) -> Dict[str, Any]:
        while b"\0" not in self.buffer:
            left = end - time.time()
            if left <= 0:
                raise BrowserError("chromium did not answer %s within %.0fs" % (waiting_for, TIMEOUT))
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the pipe (exit status %s)" % self.proc.poll())
                self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw.decode("utf-8"))

    def _event(self, event: Dict[str, Any]) -> None:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.logs.append({"level": "SEVERE", "message": "uncaught: " + text})
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            level = "SEVERE" if entry.get("level") == "error" else entry.get("level", "").upper()
            self.logs.append({"level": level, "message": "%s %s" % (entry.get("url", ""), entry.get("text", ""))})
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.logs.append({"level": "SEVERE", "message": "console.error: " + text})

    def open_page(self) -> None:
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")
        self.set_window_size(WIDTH, HEIGHT)

    # -- what the tests call ----------------------------------------------------------------
    def set_window_size(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def get(self, url: str) -> None:
        """Navigate and wait until the page has loaded (its scripts have run)."""
        result = self.send("Page.navigate", url=url)
        if result.get("errorText"):
            raise BrowserError("could not open %s: %s" % (url, result["errorText"]))
        end = time.time() + TIMEOUT
        while self.execute_script("return document.readyState") != "complete":
            if time.time() > end:
                raise BrowserError("%s did not finish loading" % url)
            time.sleep(0.02)

    def _evaluate(self, expression: str, await_promise: bool = False, timeout: float = TIMEOUT) -> Any:
        result = self.send("Runtime.evaluate", _timeout=timeout, expression=expression, returnByValue=True,
                           awaitPromise=await_promise, userGesture=True, timeout=int(timeout * 1000))
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError("script failed: %s" % (details.get("exception", {}).get("description")
                                                       or details.get("text")))
        return result.get("result", {}).get("value")

    @staticmethod
    def _arguments(args: Any) -> str:
        return "[%s]" % ", ".join(a.expr if isinstance(a, Element) else json.dumps(a) for a in args)

    def execute_script(self, script: str, *args: Any) -> Any:
        """Run ``script`` as a function body (``return`` its result; ``arguments[i]`` are ``args``,
        elements passed as themselves)."""
        return self._evaluate("(function () { %s\n}).apply(null, %s)" % (script, self._arguments(args)))

    def execute_async_script(self, script: str, *args: Any) -> Any:
        """Run ``script`` with a last argument ``done``: its call's value is the result."""
        return self._evaluate(
            "new Promise(function (done) { (function () { %s\n}).apply(null, %s.concat([done])); })"
            % (script, self._arguments(args)), await_promise=True)

    def set_script_timeout(self, seconds: float) -> None:
        pass  # every script has TIMEOUT

    def find_element(self, by: str, value: str) -> Element:
        element = Element(self, "document.querySelector(%s)" % json.dumps(_selector(by, value)))
        if not self.execute_script("return !!arguments[0]", element):
            raise BrowserError("no element %s=%r" % (by, value))
        return element

    def get_screenshot_as_png(self) -> bytes:
        """The viewport as PNG."""
        return base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"])

    def get_log(self, kind: str) -> List[Dict[str, Any]]:
        """The errors the page logged since the last call (uncaught exceptions, failed loads,
        console.error)."""
        assert kind == "browser"
        logs, self.logs = self.logs, []
        return logs

    def quit(self) -> None:
        try:
            self.send("Browser.close", _session=False, _timeout=10)
        except (BrowserError, OSError):
            pass
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# Puts the two pipe ends on fds 3 and 4 whatever numbers they had (moving both out of the way
# first, so neither is overwritten by the other), then becomes chromium.
_EXEC_WITH_PIPE = """
import fcntl, os, sys
fds = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
for target, fd in zip((3, 4), fds):
    os.dup2(fd, target)
    os.close(fd)
os.execv(sys.argv[3], sys.argv[3:])
"""


@contextlib.contextmanager
def browser() -> Iterator[Driver]:
    """A headless chromium in a fresh profile, with one page open at WIDTH x HEIGHT."""
    require()
    profile = tempfile.mkdtemp(prefix="pellucid-chromium-")
    # chromium reads commands on its fd 3 and writes replies on its fd 4
    cmd_read, cmd_write = os.pipe()
    reply_read, reply_write = os.pipe()
    args = FLAGS + ["--user-data-dir=%s" % profile, "--window-size=%d,%d" % (WIDTH, HEIGHT), "about:blank"]
    proc = subprocess.Popen([sys.executable, "-c", _EXEC_WITH_PIPE, str(cmd_read), str(reply_write), CHROMIUM] + args,
                            pass_fds=(cmd_read, reply_write), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(cmd_read)
    os.close(reply_write)
    driver = Driver(proc, cmd_write, reply_read)
    try:
        driver.open_page()
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
