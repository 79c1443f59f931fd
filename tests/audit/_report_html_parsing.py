"""Read back the tables of an HTML report or notebook display (html.parser only).

Shared by tests/verification/test_repr_html.py, tests/audit/test_report_html.py and
tests/audit/test_browser_report.py: the tests compare the numbers a person sees with the
numbers of the result, so they read the page as text, not the code that wrote it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Cell:
    text: str
    tag: str  # "th" or "td"
    cls: str = ""


@dataclass
class Table:
    caption: str = ""
    head: list = field(default_factory=list)  # header rows (lists of Cell)
    body: list = field(default_factory=list)  # body rows (lists of Cell)

    def records(self) -> list[dict]:
        """Body rows as {last header row's text: cell text} (row headers included)."""
        names = [c.text for c in self.head[-1]]
        width = max(len(r) for r in self.body)
        # the last header row lacks the cells spanning all header rows (rowspan)
        lead = [c.text for c in self.head[0][:width - len(names)]]
        keys = lead + names
        return [dict(zip(keys, (c.text for c in row))) for row in self.body]


class _Parser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self._caption = None
        self._in_caption = False
        self._table = None
        self._section = None
        self._row = None
        self._cell = None
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        cls = attrs.get("class") or ""
        if tag == "p" and "skfv-caption" in cls.split():
            self._in_caption, self._caption = True, ""
        elif tag == "table":
            self._table = Table(caption=self._caption or "")
            self._caption = None
        elif tag in ("thead", "tbody") and self._table is not None:
            self._section = tag
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("th", "td") and self._row is not None:
            self._cell = Cell("", tag, cls)
            self._span = int(attrs.get("colspan", 1))

    def handle_endtag(self, tag):
        if tag == "p" and self._in_caption:
            self._in_caption = False
        elif tag in ("th", "td") and self._cell is not None:
            self._cell.text = " ".join(self._cell.text.split())
            self._row += [self._cell] * self._span
            self._cell = None
        elif tag == "tr" and self._row is not None:
            target = self._table.head if self._section == "thead" else self._table.body
            target.append(self._row)
            self._row = None
        elif tag == "table" and self._table is not None:
            self.tables.append(self._table)
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.text += data
        elif self._in_caption:
            self._caption += data
        self.texts.append(data)


def parse_tables(page: str) -> list[Table]:
    """Every ``<table>`` of ``page``, with the caption paragraph written before it."""
    parser = _Parser()
    parser.feed(page)
    parser.close()
    return parser.tables


def visible_text(page: str) -> str:
    """The text of ``page`` (entities decoded), whitespace collapsed."""
    parser = _Parser()
    parser.feed(page)
    return " ".join(" ".join(parser.texts).split())


def table_with(tables: list[Table], words: str) -> Table:
    """The one table whose caption contains ``words``."""
    found = [t for t in tables if words in t.caption]
    assert len(found) == 1, (words, [t.caption for t in tables])
    return found[0]


def shown(text: str) -> float:
    """A number as shown (``+0.1234``, ``3``, ``1.2e-05``); NaN for ``n/a``."""
    return math.nan if text == "n/a" else float(text)


def same_number(text: str, value, decimals: int = 4) -> bool:
    """``text`` shows ``value`` rounded to ``decimals`` (n/a for an undefined value)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return text == "n/a"
    if "e" in text:  # small p-values in scientific notation, two significant digits
        return math.isclose(float(text), float(value), rel_tol=0.06)
    return abs(shown(text) - float(value)) <= 0.5 * 10 ** -decimals + 1e-12


def split_interval(text: str) -> tuple[str, str, str]:
    """``"0.412 [0.395, 0.430]"`` -> ``("0.412", "0.395", "0.430")`` (refuses others)."""
    match = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", text)
    assert match, f"not a value with its interval: {text!r}"
    return match.groups()


def judge_interval(at_least: bool, value: float, interval, threshold: float) -> str:
    """The documented verdict, by enumeration of a fine grid of the interval.

    pass / fail when the value and every point of ``[low, high]`` pass / fail (DI:
    ``x >= threshold``; a gap: ``|x| <= threshold``), else ``"uncertain"``.
    """
    import numpy as np

    low, high = sorted(interval)
    points = np.append(np.linspace(low, high, 20001), [value, low, high])
    ok = points >= threshold if at_least else np.abs(points) <= threshold
    return "pass" if ok.all() else "fail" if not ok.any() else "uncertain"


_REPORTS: dict = {}


def hostile_report():
    """A real audit (every step, figures) of small data whose names are HTML markup.

    Cached for the session: tests/audit/test_report_html.py and tests/audit/test_browser_report.py
    read the same report. The dataset name, a column name and the sensitive values are
    markup, so a missing escape shows as an element in the page.
    """
    if "hostile" not in _REPORTS:
        import numpy as np
        import pandas as pd

        from skfairverify.audit import run_audit

        rng = np.random.default_rng(0)
        n = 300
        sex = rng.choice(["<b>F</b>", "M & 'co'"], n)
        proxy = (sex == "M & 'co'") + rng.normal(0, 0.7, n)
        other = rng.normal(size=n)
        colour = rng.choice(["red", "blue", "<i>green</i>"], n)
        score = 0.8 * proxy + other + (colour == "red") + rng.normal(0, 0.8, n)
        X = pd.DataFrame({"<u>proxy</u>": proxy.round(3), "other": other.round(3),
                          "colour": colour, "sex": sex})
        y = (score > 0.6).astype(int)
        _REPORTS["hostile"] = run_audit(
            X, y, "sex", dataset_name="<script>alert('name')</script>", k=3,
            n_esl_features=2, figures=True, verbose=0, privileged="M & 'co'")
    return _REPORTS["hostile"]


#: What an audit's verification section records of the population estimate.
POPULATION_KEYS = ("population_metrics", "population_metric_intervals", "population",
                   "model_check", "model_check_held_out")


def without_population(report):
    """A copy of ``report`` as a verifier with ``n_bootstrap=0`` records it (no estimate).

    For the tests of how the network's own rates and intervals are shown.
    """
    import copy

    out = copy.deepcopy(report)
    v = out.sections["verification"]
    for key in POPULATION_KEYS:
        v.pop(key, None)
    for g in v.get("groups", []):
        for c in [c for c in g if c.startswith(("population_", "model_check"))
                  or c == "direct_rate"]:
            del g[c]
    return out
