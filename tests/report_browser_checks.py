"""What the report tests check in a real browser, shared by the fixture test (every Python with
a browser) and the multi-rank torch test: every view renders, every link resolves, search finds
and jumps, the page loads nothing from the network, and the main page is drawn (not blank) with
its parts where they belong."""
import base64
import os
import time
from typing import Any, Dict, List



def open_report(driver: Any, path: str, fragment: str = "") -> None:
    driver.get("file://" + path + ("#" + fragment if fragment else ""))
    wait_for(driver, "return document.readyState === 'complete' && !!document.querySelector('.view.shown')")
    if fragment:
        # another fragment of the page already open is a same-document navigation: the page
        # routes on the 'hashchange' that follows, so wait until the fragment's view is shown
        wait_for(driver, "var e = document.getElementById(%r), v = document.querySelector('.view.shown');"
                 "return !!e && !!v && v.contains(e)" % fragment)


def wait_for(driver: Any, script: str, timeout: float = 30.0) -> Any:
    end = time.time() + timeout
    while True:
        value = driver.execute_script(script)
        if value or time.time() > end:
            return value
        time.sleep(0.05)


def shown_view(driver: Any) -> str:
    return driver.execute_script("var v = document.querySelector('.view.shown'); return v ? v.id : null")


def errors(driver: Any) -> List[str]:
    """Messages the page logged as errors (script errors, failed loads)."""
    try:
        logs = driver.get_log("browser")
    except Exception:  # (a driver without log access: nothing to read)
        return []
    return [entry["message"] for entry in logs if entry.get("level") == "SEVERE"]


def check_views_and_links(driver: Any, path: str) -> Dict[str, int]:
    """Every navigation link shows its view with content; every link of the page resolves:
    ``#id`` to an element, a relative link to a file next to the report.  Returns counts."""
    open_report(driver, path)
    assert shown_view(driver) == "overview"
    nav = driver.execute_script("return Array.from(document.querySelectorAll('nav a')).map(a => a.getAttribute('href'))")
    assert len(nav) >= 4, nav
    for href in nav:
        driver.execute_script("location.hash = arguments[0]", href)
        wait_for(driver, "var v = document.querySelector('.view.shown'); return v && ('#' + v.id) === arguments[0]".replace(
            "arguments[0]", repr(href)))
        assert "#" + shown_view(driver) == href, href
        height = driver.execute_script("return document.querySelector('.view.shown').getBoundingClientRect().height")
        assert height > 40, (href, height)  # rendered, not an empty box
    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    internal = [h[1:] for h in links if h.startswith("#")]
    missing = driver.execute_script("return arguments[0].filter(id => !document.getElementById(id))", internal)
    assert not missing, missing[:10]
    base = os.path.dirname(path)
    files = [h for h in links if not h.startswith(("#", "http://", "https://"))]
    assert files
    assert not [h for h in files if not os.path.exists(os.path.join(base, h))]
    # the page loaded nothing: no network, no files but itself
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert not errors(driver), errors(driver)
    return {"nav": len(nav), "internal": len(internal), "files": len(files)}


def check_overview(driver: Any, path: str, expected: List[str]) -> str:
    """The main page, once its scripts ran, shows the overview with every text in ``expected``
    and at least one graph-break and one recompilation card; returns its text."""
    open_report(driver, path)
    assert shown_view(driver) == "overview"
    text = driver.execute_script("return document.querySelector('.view.shown').innerText")
    absent = [e for e in expected if e not in text]
    assert not absent, (absent, text[:2000])
    cards = driver.execute_script(
        "return ['.card.break', '.card.recomp'].map(s => Array.from(document.querySelectorAll('#overview ' + s))"
        ".filter(c => c.offsetParent !== null).length)")
    assert cards[0] >= 1 and cards[1] >= 1, cards
    return text


def check_jump_to_line(driver: Any, path: str) -> None:
    """A source link in a recompilation card opens the function at that line, highlighted and
    on screen; the tab of a transformed-code line opens when its line is linked."""
    open_report(driver, path)
    href = driver.execute_script(
        "var a = document.querySelector('#overview .card.recomp a[href*=\"-src-L\"]'); return a && a.getAttribute('href')")
    assert href, "no recompilation card links to a source line"
    driver.find_element("css selector", '#overview .card.recomp a[href="%s"]' % href).click()
    # the page routes on 'hashchange', which fires after the hash changed: wait for its effect
    wait_for(driver, "var e = document.getElementById(%r); return location.hash === %r && !!e && e.classList.contains('hl')"
             % (href[1:], href))
    target = driver.find_element("id", href[1:])
    assert "hl" in target.get_attribute("class").split()
    assert target.is_displayed()
    top = driver.execute_script("return arguments[0].getBoundingClientRect().top", target)
    assert 0 <= top <= driver.execute_script("return window.innerHeight")
    # a line inside the second transformed-code tab: its tab becomes the shown one
    pane = driver.execute_script(
        "var p = document.querySelectorAll('.view.shown .panes .pane')[1]; return p && p.id")
    if pane:
        driver.execute_script("location.hash = %r" % ("#%s-L4" % pane))
        wait_for(driver, "return document.getElementById(%r).classList.contains('on')" % pane)
        assert driver.find_element("id", "%s-L4" % pane).is_displayed()


def check_search(driver: Any, path: str, word: str) -> int:
    """Typing in the search box lists matches across views; a match opens where it is."""
    open_report(driver, path)
    box = driver.find_element("id", "q")
    box.send_keys(word)
    wait_for(driver, "return document.querySelectorAll('#hits li').length > 0")
    assert shown_view(driver) == "search"
    hits = driver.execute_script("return document.querySelectorAll('#hits li').length")
    assert hits > 0
    texts = driver.execute_script("return Array.from(document.querySelectorAll('#hits code')).map(c => c.textContent)")
    assert all(word.lower() in t.lower() for t in texts), texts[:5]
    first = driver.find_element("css selector", "#hits li a")
    target = first.get_attribute("href").split("#", 1)[1]
    first.click()
    wait_for(driver, "var el = document.getElementById(%r); return el && el.offsetParent !== null" % target)
    assert driver.find_element("id", target).is_displayed()
    return hits


def screenshot(driver: Any, path: str, out: str) -> bytes:
    """The main page as PNG (written to ``out``)."""
    open_report(driver, path)
    driver.execute_script("window.scrollTo(0, 0)")
    png = driver.get_screenshot_as_png()
    with open(out, "wb") as fh:
        fh.write(png)
    return png


def blank_png(driver: Any) -> bytes:
    """What the same browser shows for an empty page, at the same size: the image a report that
    failed to draw would look like."""
    driver.get("about:blank")
    return driver.get_screenshot_as_png()


def check_not_blank(driver: Any, png: bytes) -> Dict[str, float]:
    """The screenshot ``png`` of the main page differs from a blank page over much of the window
    (blocks of 16 pixels whose grey level moved), has dark text on light ground somewhere, and
    has the window's size."""
    result = compare_png(driver, png, blank_png(driver))
    viewport = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    assert result["size_a"] == result["size_b"] == viewport, result
    assert result["contrast"] > 150, result  # text and background, not a wash of one colour
    assert result["changed"] > 0.15, result  # a header, a sidebar, tables: not a near-empty page
    return result


def check_layout(driver: Any) -> None:
    """Where the main page's parts are: a header bar across the top, the navigation on the left,
    the overview beside it with its tables and cards in view, nothing wider than the window."""
    rect = "var r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.left, r.top, r.width, r.height]"
    width = driver.execute_script("return window.innerWidth")
    header = driver.execute_script(rect, "header")
    nav = driver.execute_script(rect, "nav")
    main = driver.execute_script(rect, "main")
    assert header[0] == 0 and header[1] == 0 and header[2] == width and 40 <= header[3] <= 70, header
    assert nav[0] == 0 and abs(nav[1] - header[3]) < 2 and 200 <= nav[2] <= 320, nav
    assert abs(main[0] - nav[2]) < 2 and main[2] > width / 2, main
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width
    for sel in ("#overview h2", "#overview table", "#overview .card.break"):
        assert driver.execute_script("var e = document.querySelector(arguments[0]); return !!e && e.offsetParent !== null", sel), sel


def compare_png(driver: Any, png: bytes, reference: bytes, block: int = 16) -> Dict[str, float]:
    """Compare two screenshots as a person would glance at them: both are shrunk to blocks of
    ``block`` pixels (their mean grey level), so a few changed letters move few blocks while a
    changed layout, colour or missing section moves many.  Done in the browser (canvas)."""
    script = """
    var srcA = arguments[0], srcB = arguments[1], B = arguments[2], done = arguments[3];
    function load(src) { return new Promise(function (ok, bad) { var i = new Image(); i.onload = function () { ok(i); }; i.onerror = bad; i.src = src; }); }
    Promise.all([load(srcA), load(srcB)]).then(function (imgs) {
      var a = imgs[0], b = imgs[1];
      var out = {size_a: [a.width, a.height], size_b: [b.width, b.height]};
      var w = Math.min(a.width, b.width), h = Math.min(a.height, b.height);
      function grey(img) {
        var c = document.createElement('canvas'); c.width = w; c.height = h;
        var x = c.getContext('2d'); x.drawImage(img, 0, 0);
        var d = x.getImageData(0, 0, w, h).data, cols = Math.floor(w / B), rows = Math.floor(h / B), g = new Float64Array(cols * rows);
        for (var y = 0; y < rows * B; y++) for (var xx = 0; xx < cols * B; xx++) {
          var k = (y * w + xx) * 4; g[Math.floor(y / B) * cols + Math.floor(xx / B)] += 0.299 * d[k] + 0.587 * d[k + 1] + 0.114 * d[k + 2];
        }
        for (var i = 0; i < g.length; i++) g[i] /= B * B;
        return g;
      }
      var ga = grey(a), gb = grey(b), sum = 0, changed = 0, lo = 255, hi = 0;
      for (var i = 0; i < ga.length; i++) { var dd = Math.abs(ga[i] - gb[i]); sum += dd; if (dd > 12) changed++; lo = Math.min(lo, ga[i]); hi = Math.max(hi, ga[i]); }
      out.mean_diff = sum / ga.length; out.changed = changed / ga.length; out.contrast = hi - lo;
      done(out);
    }, function (e) { done({error: String(e)}); });
    """
    a = "data:image/png;base64," + base64.b64encode(png).decode()
    b = "data:image/png;base64," + base64.b64encode(reference).decode()
    driver.set_script_timeout(30)
    result = driver.execute_async_script(script, a, b, block)
    assert "error" not in result, result
    return result
