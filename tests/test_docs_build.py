"""The documentation builds (``mkdocs build --strict``) and works offline.

The site is built once, from a copy of ``mkdocs.yml``, ``docs/`` and ``examples/`` (the
gallery runs every example in quick mode and writes its pages next to the copy, not in
the checkout). Checks: every public name has its page and anchor, every example page
shows its figures, no page loads a script, style sheet, font or image from the network,
and, in headless Chromium, pages load without a request leaving the machine, without
console errors, with every image decoded and no horizontal scrolling at 1280 px.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
NEEDED = {"mkdocs": "mkdocs", "material": "mkdocs-material", "mkdocstrings": "mkdocstrings",
          "mkdocstrings_handlers.python": "mkdocstrings-python",
          "mkdocs_gallery": "mkdocs-gallery", "matplotlib": "matplotlib"}
CHROMIUM = "/usr/bin/chromium"


def _missing() -> list[str]:
    missing = []
    for module, package in NEEDED.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(package)
    return missing


def _gen_api():
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "docs" / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip(f"the docs build needs {', '.join(missing)} (pip install them, or the "
                    "docs extra)")
    work = tmp_path_factory.mktemp("docs")
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", work / "docs",
                    ignore=shutil.ignore_patterns("generated", "__pycache__"))
    shutil.copytree(ROOT / "examples", work / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (work / "skfairverify").symlink_to(ROOT / "skfairverify", target_is_directory=True)
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, SKFAIRVERIFY_EXAMPLE_QUICK="1", MPLBACKEND="Agg",
               PYTHONPATH=path, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", "site"],
        cwd=work, env=env, capture_output=True, text=True, timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{log[-6000:]}"
    return work / "site"


def _html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_public_name_has_its_page_and_anchor(site):
    for module, name, _ in _gen_api().public_objects():
        page = site / "api" / f"{module}.{name}" / "index.html"
        assert page.is_file(), f"no page for {module}.{name}"
        html = page.read_text(encoding="utf-8")
        assert f'id="{module}.{name}"' in html, f"no anchor for {module}.{name}"
        # the docstring is rendered (its sections as HTML), not shown as raw text
        assert "Examples" in html and "<pre" in html
        assert ":class:`" not in html and "-------" not in html
    fit = (site / "api" / "skfairverify.FairnessVerifier" / "index.html").read_text()
    assert 'id="skfairverify.FairnessVerifier.fit"' in fit


def test_every_example_page_shows_its_figures(site):
    from test_examples import FIGURES

    gallery = site / "generated" / "gallery"
    for script, n_figures in FIGURES.items():
        page = gallery / script.removesuffix(".py") / "index.html"
        assert page.is_file(), f"no gallery page for {script}"
        images = re.findall(r'<img[^>]+src="([^"]+\.png)"', page.read_text(encoding="utf-8"))
        figures = [src for src in images if "sphx_glr_" in src or "mkd_glr_" in src]
        assert len(figures) >= n_figures, f"{script}: {len(figures)} figures on its page"
        for src in figures:
            assert (page.parent / src).resolve().is_file(), f"{script}: missing {src}"


_EXTERNAL = re.compile(
    r"""<(?:script|img|iframe)[^>]+src=["']https?://|"""
    r"""<link[^>]+href=["']https?://[^"']+["'][^>]*rel=["']?(?:stylesheet|preload|icon)|"""
    r"""<link[^>]+rel=["']?(?:stylesheet|preload|icon|preconnect)[^>]+href=["']https?://|"""
    r"""@import\s+url\(["']?https?://|url\(["']?https?://[^)]+\.(?:woff2?|ttf|css)""",
    re.I,
)


def test_no_page_loads_anything_from_the_network(site):
    offenders = []
    for page in _html_pages(site) + sorted(site.rglob("*.css")):
        for match in _EXTERNAL.finditer(page.read_text(encoding="utf-8", errors="replace")):
            offenders.append(f"{page.relative_to(site)}: {match.group(0)[:120]}")
    assert not offenders, "\n".join(offenders[:20])


def _browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    return sync_api


def test_pages_in_headless_chromium(site, tmp_path):
    sync_api = _browser()
    pages = ["index.html", "api/index.html", "api/skfairverify.FairnessVerifier/index.html",
             "generated/gallery/index.html",
             "generated/gallery/plot_constrained_search/index.html",
             "generated/gallery/plot_esl_decomposition/index.html"]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests, errors = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for i, rel in enumerate(pages):
            page.goto((site / rel).as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(tmp_path / f"page{i}.png"))
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"{rel} scrolls horizontally by {overflow} px at 1280 px"
            broken = page.evaluate(
                "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                ".map(i => i.src)")
            assert not broken, f"{rel}: images not decoded: {broken}"
        browser.close()
    remote = [u for u in requests if not u.startswith(("file:", "data:", "blob:"))]
    assert not remote, f"requests leaving the machine: {remote[:10]}"
    assert not errors, f"console errors: {errors[:10]}"
    assert all((tmp_path / f"page{i}.png").stat().st_size > 10_000 for i in range(len(pages)))
