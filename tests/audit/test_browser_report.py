"""The HTML audit report and a notebook display, opened in a real browser.

Headless Chromium (Debian's ``chromium`` package, driven by playwright; playwright's own
browser download is not used) loads the page from a file at 1280 x 900 pixels and checks
what a reader would meet: no console error, no horizontal scrolling of the page (wide
tables scroll inside their box), every image decoded, every inline SVG with a size, a
PDF printed. Full-page screenshots are saved under the test's tmp dir. The tests skip,
saying why, where playwright or chromium is missing.
"""

import os
import shutil

import pytest
from _report_html_parsing import hostile_report

pytest.importorskip("matplotlib")
sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="playwright is not installed (pip install 'skfairverify[test]'); the browser "
           "test of the HTML report needs it")

WIDTH = 1280


def _chromium() -> str:
    for path in (os.environ.get("SKFAIRVERIFY_CHROMIUM"), shutil.which("chromium"),
                 "/usr/bin/chromium", shutil.which("chromium-browser")):
        if path and os.path.exists(path):
            return path
    pytest.skip("chromium is not installed (Debian: apt-get install chromium; .ci/run "
                "installs it): the browser test of the HTML report cannot run")


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except sync_api.Error as exc:
            pytest.skip(f"chromium at {executable} does not start: {exc}")
        yield browser
        browser.close()


def _open(browser, path):
    """The page at ``path`` (1280 px wide) and the console errors it logged."""
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


_IMAGES = """() => [...document.images].map(i => ({
    alt: i.alt, complete: i.complete, natural: i.naturalWidth,
    shown: i.getBoundingClientRect().width}))"""
_SVGS = """() => [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect(); return [r.width, r.height]; })"""
_WIDE = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1
                 && !e.closest('.skfv-scroll'))
    .map(e => e.tagName + '.' + e.className).slice(0, 5)"""


def _check_page(page, errors):
    assert errors == []
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert page.evaluate(_WIDE) == []  # nothing sticks out but inside a table's box
    for image in page.evaluate(_IMAGES):
        assert image["complete"] and image["natural"] > 0, image["alt"]
        assert 0 < image["shown"] <= WIDTH
    for width, height in page.evaluate(_SVGS):
        assert width > 0 and height > 0


def test_report_in_chromium(browser, tmp_path):
    report = hostile_report()
    path = tmp_path / "report.html"
    path.write_text(report.to_html(), encoding="utf-8")
    page, errors = _open(browser, path)
    _check_page(page, errors)
    assert len(page.evaluate(_IMAGES)) == len(report.figures)
    # the markup in the data stayed text: no element came from it
    assert page.evaluate("document.querySelectorAll('main script, main b, main u').length") == 0
    assert "<script>alert('name')</script>" in page.inner_text("h1")
    # a figure stands beside its table when both fit (the ESL group table is narrow)
    beside = page.evaluate("""() => {
        const pair = document.querySelector('#counterfactual .pair');
        const t = pair.querySelector('.tables').getBoundingClientRect();
        const f = pair.querySelector('figure').getBoundingClientRect();
        return f.left >= t.right && f.top < t.bottom; }""")
    assert beside
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF")
    page.close()


def test_report_with_svg_figure_in_chromium(browser, tmp_path):
    """Inline SVG figures (what a vector figure of the plotting helpers gives) get a size."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    report = hostile_report()
    fig, ax = plt.subplots(figsize=(14, 3))  # wider than the page at its natural size
    ax.bar(["<b>F</b>", "M & 'co'"], [0.4, 0.6])
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    original = dict(report.figures)
    try:
        report.figures["CFlips@k per group"] = buf.getvalue()
        path = tmp_path / "svg.html"
        path.write_text(report.to_html(), encoding="utf-8")
    finally:
        report.figures = original
    page, errors = _open(browser, path)
    _check_page(page, errors)
    assert len(page.evaluate(_SVGS)) >= 1
    page.screenshot(path=str(tmp_path / "svg.png"), full_page=True)
    page.close()


def test_notebook_display_in_chromium(browser, tmp_path):
    """A result's ``_repr_html_`` as a notebook shows it: inside a page, at 1280 px."""
    import numpy as np

    from skfairverify import group_esl

    rng = np.random.default_rng(0)
    groups = rng.choice(["<b>F</b>", "M"], 300)
    res = group_esl(rng.integers(0, 2, 300), rng.integers(0, 2, 300),
                    sensitive_features=groups, metric="tpr")
    path = tmp_path / "display.html"
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                    + res._repr_html_() + "</body></html>", encoding="utf-8")
    page, errors = _open(browser, path)
    _check_page(page, errors)
    assert page.evaluate("document.querySelectorAll('table').length") == 2
    assert page.evaluate("document.querySelectorAll('b').length") == 0
    page.screenshot(path=str(tmp_path / "display.png"), full_page=True)
    page.close()


@pytest.mark.filterwarnings(  # 12 groups of ~100 rows: the gaps of noisy draws are wide
    "ignore::skfairverify.verification.EstimateOutsideIntervalWarning")
def test_report_with_twelve_groups_fits_the_window(browser, tmp_path):
    """12 compound groups with long names (4 x 3): every wide table scrolls inside its box
    and nothing sticks out of the 1280-pixel window."""
    import numpy as np
    import pandas as pd

    from skfairverify.audit import run_audit

    rng = np.random.default_rng(0)
    n = 1200
    region = rng.choice([f"region with a long name {i}" for i in range(4)], n)
    band = rng.choice(["young adults", "middle-aged adults", "older adults"], n)
    x = rng.normal(size=n) + (band == "older adults")
    X = pd.DataFrame({"x": x.round(3), "z": rng.normal(size=n).round(3),
                      "region": region, "band": band})
    y = (x + X["z"] + rng.normal(0, 0.8, n) > 0.5).astype(int)
    report = run_audit(X, y, ["region", "band"], steps=["verify", "esl"],
                       n_esl_features=2, figures=True, verbose=0)
    assert len(report.sections["verification"]["groups"]) == 12
    path = tmp_path / "twelve.html"
    path.write_text(report.to_html(), encoding="utf-8")
    page, errors = _open(browser, path)
    _check_page(page, errors)
    page.screenshot(path=str(tmp_path / "twelve.png"), full_page=True)
    page.close()
