"""HTML rendering shared by the audit report and the notebook displays.

One place builds every table a person reads: :func:`frame_table` writes a DataFrame as a
``<table>`` (every label escaped, numbers formatted, undefined values as ``n/a``) inside a
container that scrolls on its own instead of widening the page; the ``*_frame`` helpers
build the tables of each analysis from the plain values both the results and the audit
report hold, so a notebook shows the numbers of the report, in the same layout.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

__all__ = ["DEFAULT_THRESHOLDS", "interval_note", "verifier_html"]

# Styles of every table and block, scoped under ``.skfv`` so that a notebook's own
# styles are untouched. The report page adds its page layout (audit/_html.py).
CSS = """
.skfv{--skfv-line:#c8ccd2;--skfv-head:#eef1f4;--skfv-muted:#5a6270;--skfv-pass:#1b6e2d;
--skfv-fail:#a3161b;--skfv-pass-bg:#e3f3e6;--skfv-fail-bg:#fbe5e5;--skfv-note:#f5f7fa;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
line-height:1.45;color:#1d232b;background:#fff;overflow-wrap:anywhere}
.skfv .skfv-scroll{max-width:100%;overflow-x:auto;margin:.4em 0 1em}
.skfv table{border-collapse:collapse;font-size:.86em;margin:0}
.skfv .skfv-table{margin:.6em 0 1.1em}
.skfv .skfv-table .skfv-scroll{margin:0}
.skfv .skfv-caption{font-weight:600;font-size:.9em;margin:0 0 .35em;max-width:46em}
.skfv th,.skfv td{border:1px solid var(--skfv-line);padding:.22em .55em;vertical-align:top;
overflow-wrap:break-word;word-break:normal}
.skfv thead th{background:var(--skfv-head);text-align:center;font-weight:600}
.skfv tbody th{background:var(--skfv-head);text-align:left;font-weight:600;white-space:nowrap}
.skfv thead th{min-width:4.5em}
.skfv td{text-align:left}
.skfv td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.skfv td.text{min-width:8em;max-width:36em}
.skfv tbody th.long{white-space:normal;min-width:12em;max-width:24em}
.skfv tbody th.rep{color:var(--skfv-muted);font-weight:400}
.skfv .pass{color:var(--skfv-pass);background:var(--skfv-pass-bg);font-weight:600}
.skfv .fail{color:var(--skfv-fail);background:var(--skfv-fail-bg);font-weight:600}
.skfv .uncertain{color:#6b4a00;background:#fff3d6;font-weight:600}
.skfv .na{color:var(--skfv-muted)}
.skfv .skfv-title{font-weight:600;font-size:1.05em;margin:.2em 0}
.skfv .skfv-summary{color:var(--skfv-muted);font-size:.9em;margin:.1em 0 .6em}
.skfv dl.skfv-facts{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;
font-size:.9em;margin:.4em 0 1em}
.skfv dl.skfv-facts dt{font-weight:600}
.skfv dl.skfv-facts dd{margin:0}
"""

# Thresholds of the verdict table: DI passes at or above its threshold (the four-fifths
# rule of the US EEOC Uniform Guidelines), every gap passes at or below its threshold.
DEFAULT_THRESHOLDS = {
    "disparate_impact": 0.8,
    "statistical_parity": 0.1,
    "equalized_odds": 0.1,
    "path_specific_causal": 0.1,
    "cflips_delta": 0.1,
    "ndccf_delta": 0.1,
    "tpr_difference": 0.1,
}

# metric key -> (label, what the threshold means)
VERDICT_METRICS = {
    "disparate_impact": ("DI: min / max selection rate (ratio, 1 = fair)", "four-fifths rule"),
    "statistical_parity": ("SP: max - min selection rate (0 = fair)", "largest gap"),
    "equalized_odds": ("EO: larger of the TPR and FPR gaps (0 = fair)", "largest gap"),
    "path_specific_causal": ("path-specific causal fairness: max - min rate with the "
                             "mediators drawn as for the most favored group (0 = fair)",
                             "largest gap"),
    "cflips_delta": ("CFlips@k delta: unprivileged - privileged (0 = fair)",
                     "largest |delta|"),
    "ndccf_delta": ("nDCCF@k delta: privileged - unprivileged (0 = fair)",
                    "largest |delta|"),
    "tpr_difference": ("TPR difference of the two groups (ESL first stage; 0 = fair)",
                       "largest |gap|"),
}


def escape(value) -> str:
    """``value`` as text safe inside HTML (quotes escaped too)."""
    return html.escape(str(value), quote=True)


def check_thresholds(thresholds: Mapping | None) -> dict:
    """The verdict thresholds: the defaults updated by ``thresholds``, checked.

    Parameters
    ----------
    thresholds : mapping or None
        Metric key -> threshold, overriding :data:`DEFAULT_THRESHOLDS`.

    Returns
    -------
    dict
        Every key of :data:`DEFAULT_THRESHOLDS`.

    Raises
    ------
    ValueError
        On an unknown key or a threshold that is not a finite number >= 0 (or, for
        ``disparate_impact``, not in [0, 1]).

    Examples
    --------
    >>> from skfairverify.utils._html import check_thresholds
    >>> check_thresholds({"statistical_parity": 0.05})["statistical_parity"]
    0.05
    >>> check_thresholds({"sp": 0.05})
    Traceback (most recent call last):
    ...
    ValueError: Unknown threshold 'sp'; choose among ['disparate_impact', ...
    """
    out = dict(DEFAULT_THRESHOLDS)
    for key, value in (thresholds or {}).items():
        if key not in DEFAULT_THRESHOLDS:
            raise ValueError(f"Unknown threshold {key!r}; choose among "
                             f"{list(DEFAULT_THRESHOLDS)}.")
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not math.isfinite(value) or value < 0):
            raise ValueError(f"Threshold {key!r} must be a finite number >= 0, got {value!r}.")
        if key == "disparate_impact" and value > 1:
            raise ValueError(f"Threshold 'disparate_impact' is a ratio in [0, 1], got {value!r}.")
        out[key] = float(value)
    return out


def is_missing(value) -> bool:
    """True for None and for a float that is NaN or infinite."""
    if value is None:
        return True
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return not math.isfinite(float(value))
    return False


def number(value, spec: str = ".4f") -> str:
    """A number formatted with ``spec``; ``n/a`` when undefined; integers as integers.

    Anything that is not a real number is shown as its text.

    Examples
    --------
    >>> from skfairverify.utils._html import number
    >>> number(0.123456), number(3), number(float("nan")), number(None)
    ('0.1235', '3', 'n/a', 'n/a')
    """
    if is_missing(value):
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return format(float(value), spec)


def count(value) -> str:
    """A count: an integer when whole, else (a sum of weights) four significant digits."""
    if is_missing(value):
        return "n/a"
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.4g}"


def p_value(value) -> str:
    """A p-value: four decimals, or scientific notation below 0.0001."""
    if is_missing(value):
        return "n/a"
    value = float(value)
    return f"{value:.4f}" if value >= 1e-4 or value == 0 else f"{value:.1e}"


def signed(value) -> str:
    """A difference with its sign, four decimals."""
    return number(value, "+.4f")


def _cell(value, formatter: Callable | None) -> str:
    if formatter is not None:
        text = formatter(value)
        text, cls = text if isinstance(text, tuple) else (text, "num")
    elif is_missing(value):
        text, cls = "n/a", "num na"
    elif isinstance(value, (numbers.Number, np.bool_)):
        text, cls = number(value), "num"
    else:
        text, cls = str(value), "text" if len(str(value)) > 30 else ""
    if text == "n/a":
        cls = "num na"
    attr = f' class="{cls}"' if cls else ""
    return f"<td{attr}>{escape(text)}</td>"


def _depth(label: tuple) -> int:
    """The last non-empty level of a column label (lower empty levels share its cell)."""
    d = len(label) - 1
    while d > 0 and label[d] == "":
        d -= 1
    return d


def _header_rows(frame: pd.DataFrame, index: bool) -> list[str]:
    """The ``<thead>`` rows: one per column level (spans for a shared upper label)."""
    n_levels = frame.columns.nlevels
    tuples = [c if isinstance(c, tuple) else (c,) for c in frame.columns]
    rowspan = f' rowspan="{n_levels}"' if n_levels > 1 else ""
    index_names = [("" if n is None else n) for n in frame.index.names] if index else []
    rows = []
    for level in range(n_levels):
        cells = ([f'<th scope="col"{rowspan}>{escape(n)}</th>' for n in index_names]
                 if level == 0 else [])
        j = 0
        while j < len(tuples):
            label, depth = tuples[j], _depth(tuples[j])
            span = 1
            if depth > level:
                while (j + span < len(tuples) and _depth(tuples[j + span]) > level
                       and tuples[j + span][:level + 1] == label[:level + 1]):
                    span += 1
            if depth >= level:
                attr = (f' colspan="{span}"' if span > 1 else "") + (
                    f' rowspan="{n_levels - level}"' if depth == level < n_levels - 1 else "")
                cells.append(f'<th scope="col"{attr}>{escape(label[level])}</th>')
            j += span
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return rows


def _index_cells(key, previous) -> str:
    key = key if isinstance(key, tuple) else (key,)
    prev = previous if isinstance(previous, tuple) else (previous,)
    cells, same = [], previous is not None
    for i, part in enumerate(key):
        same = same and i < len(prev) and prev[i] == part and i < len(key) - 1
        classes = ["rep"] * same + ["long"] * (len(str(part)) > 30)
        cls = f' class="{" ".join(classes)}"' if classes else ""
        cells.append(f'<th scope="row"{cls}>{escape(number(part) if is_missing(part) else part)}'
                     "</th>")
    return "".join(cells)


def frame_table(frame: pd.DataFrame, caption: str | None = None, *,
                formats: Mapping | None = None, index: bool = True) -> str:
    """A DataFrame as an HTML ``<table>`` in a container that scrolls horizontally.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; MultiIndex rows and columns are shown level by level.
    caption : str, default=None
        What the table shows, with its units (escaped).
    formats : mapping, default=None
        Column label (the last level of a MultiIndex column, or the whole tuple) ->
        function of one value returning its text (or ``(text, css class)``); other
        numbers get four decimals, integers stay integers, undefined values ``n/a``.
    index : bool, default=True
        Show the index as row headers.

    Returns
    -------
    str
        ``<div class="skfv-table">``: the caption as a paragraph (a ``<caption>`` would
        be as narrow as the table), then ``<div class="skfv-scroll"><table>``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.utils._html import frame_table
    >>> page = frame_table(pd.DataFrame({"rate": [0.5, None]}, index=["<a>", "b"]))
    >>> "&lt;a&gt;" in page, "<td class=\\"num na\\">n/a</td>" in page
    (True, True)
    """
    formats = formats or {}
    parts = ['<div class="skfv-table">']
    if caption:
        parts.append(f'<p class="skfv-caption">{escape(caption)}</p>')
    parts.append('<div class="skfv-scroll"><table>')
    parts.append("<thead>" + "".join(_header_rows(frame, index)) + "</thead><tbody>")
    formatters = []
    for col in frame.columns:
        last = col[-1] if isinstance(col, tuple) else col
        formatters.append(formats.get(col, formats.get(last)))
    previous = None
    for key, row in zip(frame.index, frame.itertuples(index=False, name=None)):
        cells = _index_cells(key, previous) if index else ""
        cells += "".join(_cell(v, f) for v, f in zip(row, formatters))
        parts.append(f"<tr>{cells}</tr>")
        previous = key
    parts.append("</tbody></table></div></div>")
    return "".join(parts)


def facts(items) -> str:
    """``(term, text)`` pairs as a two-column definition list (both escaped)."""
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items)
    return f'<dl class="skfv-facts">{rows}</dl>'


def notebook_block(title: str, summary: str, parts: list[str]) -> str:
    """A notebook display: styles, a title, a one-line summary, then the parts (HTML)."""
    return (f"<div class=\"skfv\"><style>{CSS}</style>"
            f'<div class="skfv-title">{escape(title)}</div>'
            f'<div class="skfv-summary">{escape(summary)}</div>' + "".join(parts) + "</div>")


# ---------------------------------------------------------------- intervals
#: Decimals of a value shown with its interval, ``"0.412 [0.395, 0.430]"``.
INTERVAL_SPEC = ".3f"
_POINT_KIND = "none (point estimates)"


def _point_intervals(verifier) -> bool:
    """True when every interval of the fit is its point (e.g. a user network: no draws)."""
    groups = verifier.groups_
    if not {"ci_low", "ci_high"} <= set(groups.columns):
        return True
    rate = groups["positive_rate"].to_numpy(dtype=float)
    same = (np.allclose(groups["ci_low"], rate, equal_nan=True)
            and np.allclose(groups["ci_high"], rate, equal_nan=True))
    intervals = getattr(verifier, "metric_intervals_", None) or {}
    return same and all(lo == hi for lo, hi in intervals.values())


def interval_note(verifier) -> dict:
    """What ``ci_low`` / ``ci_high`` and ``metric_intervals_`` of a fitted verifier are.

    Parameters
    ----------
    verifier : FairnessVerifier
        A fitted verifier.

    Returns
    -------
    dict
        JSON-ready: ``kind`` (``"credible ..."``, ``"confidence ..."`` or ``"none (point
        estimates)"``), ``level`` (None for point estimates), ``n_draws`` (posterior
        draws; 0 for point estimates of an exact path), ``tolerance`` (sampling path)
        and ``label``, the text a reader sees (:func:`interval_label`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> from skfairverify.utils._html import interval_note
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 2, 400), "x": rng.normal(size=400)})
    >>> y = (X["x"] > 0).astype(int)
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=10, n_draws=0).fit(X, y)
    >>> interval_note(ver)["label"]
    'point estimate only (n_draws=0)'
    """
    if verifier.method_ == "sampling" and verifier.n_draws > 0 and isinstance(
            verifier.network, str):
        # posterior draws of a learned network, each sampled: the credible level is the
        # interval's; the Monte Carlo interval of the point estimate is hulled with it
        note = {"kind": "credible + Monte Carlo (posterior draws of the network, each "
                        "sampled, hulled with the Monte Carlo interval of the estimate)",
                "level": float(verifier.credible_level), "n_draws": int(verifier.n_draws),
                "confidence": float(verifier.confidence),
                "tolerance": float(verifier.tolerance)}
    elif verifier.method_ == "sampling":
        note = {"kind": "confidence (Monte Carlo, Clopper-Pearson, joint over all intervals)",
                "level": float(verifier.confidence), "tolerance": float(verifier.tolerance)}
    elif verifier.n_draws == 0 or _point_intervals(verifier):
        note = {"kind": _POINT_KIND, "level": None,
                "n_draws": 0 if verifier.n_draws == 0 else None}
    else:
        note = _credible_note(verifier, int(verifier.n_draws))
    note["label"] = interval_label(note)
    return note


def _credible_note(verifier, n_draws: int) -> dict:
    """The note of credible intervals from ``n_draws`` posterior draws solved exactly."""
    return {"kind": "credible (posterior of the network's parameters, "
                    f"{n_draws} draws solved exactly)",
            "level": float(verifier.credible_level), "n_draws": n_draws}


def influence_note(verifier, draws=None, requested=True) -> dict:
    """What the intervals of :meth:`~skfairverify.FairnessVerifier.fairness_influence` are.

    Parameters
    ----------
    verifier : FairnessVerifier
        A fitted verifier.
    draws : list or None, default=None
        The posterior draws of the network the influences were computed on (None: none).
    requested : bool, default=True
        False when the caller asked for no intervals (``intervals=False``).

    Returns
    -------
    dict
        As :func:`interval_note`: ``kind``, ``level``, ``n_draws`` and ``label``; without
        draws, the label says why there is no interval (``n_draws=0``, a user network,
        or the sampling path, whose influences are Monte Carlo estimates without the
        posterior of the network).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> from skfairverify.utils._html import influence_note
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 2, 400), "x": rng.normal(size=400)})
    >>> y = (X["x"] > 0).astype(int)
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=10, n_draws=0).fit(X, y)
    >>> influence_note(ver)["label"]
    'point estimate only (n_draws=0)'
    """
    if draws:
        note = _credible_note(verifier, len(draws))
    elif not requested:
        note = {"kind": _POINT_KIND, "level": None, "reason": "intervals=False"}
    elif verifier.method_ == "sampling":
        note = {"kind": _POINT_KIND, "level": None,
                "reason": "sampling path: Monte Carlo estimates, each rate within about "
                          f"tolerance={float(verifier.tolerance):g} of its value under the "
                          "network; no interval for the network's uncertainty"}
    elif verifier.n_draws == 0:
        note = {"kind": _POINT_KIND, "level": None, "n_draws": 0}
    elif not isinstance(verifier.network, str):
        note = {"kind": _POINT_KIND, "level": None,
                "reason": "a user network: no posterior draws"}
    else:
        note = {"kind": _POINT_KIND, "level": None,
                "reason": "fit kept no posterior draws of the network"}
    note["label"] = interval_label(note)
    return note


def has_intervals(note: Mapping | None) -> bool:
    """True when ``note`` (:func:`interval_note`) describes real intervals."""
    return bool(note) and not str(note.get("kind", "none")).startswith("none")


def interval_label(note: Mapping | None, short: bool = False) -> str:
    """What the intervals of ``note`` are, as a reader should see it.

    Parameters
    ----------
    note : mapping or None
        :func:`interval_note` (as recorded in an audit report); None: no intervals.
    short : bool, default=False
        The column-header form (level and kind only).

    Returns
    -------
    str

    Examples
    --------
    >>> from skfairverify.utils._html import interval_label
    >>> note = {"kind": "credible (...)", "level": 0.95, "n_draws": 50}
    >>> interval_label(note)
    '95% credible interval (posterior of the network, 50 draws)'
    >>> interval_label({"kind": "confidence (...)", "level": 0.99, "tolerance": 0.02}, True)
    '99% Monte Carlo interval'
    >>> interval_label({"kind": "credible + Monte Carlo (...)", "level": 0.95,
    ...                 "confidence": 0.99, "n_draws": 50}, short=True)
    '95% credible + Monte Carlo interval'
    >>> interval_label(None)
    'point estimate only (no interval)'
    """
    if not has_intervals(note):
        if note and note.get("reason"):
            return "point estimate only" + ("" if short else f" ({note['reason']})")
        if note and note.get("n_draws") == 0:
            return "point estimate only" + ("" if short else " (n_draws=0)")
        return "point estimate only" + ("" if short else " (no interval)")
    level = f"{float(note['level']):.0%} " if note.get("level") is not None else ""
    if str(note["kind"]).startswith("credible + Monte Carlo"):
        mc = (f" {float(note['confidence']):.0%}" if note.get("confidence") is not None
              else "")
        return f"{level}credible + Monte Carlo interval" + (
            "" if short else f" (posterior of the network, {note.get('n_draws')} draws, "
                             f"each sampled, joined with the{mc} Monte Carlo interval of "
                             "the estimate)")
    if str(note["kind"]).startswith("credible"):
        draws = f", {note['n_draws']} draws" if note.get("n_draws") else ""
        return f"{level}credible interval" + (
            "" if short else f" (posterior of the network{draws})")
    width = (f"; each at most {float(note['tolerance']):g} wide"
             if note.get("tolerance") is not None else "")
    return f"{level}Monte Carlo interval" + (
        "" if short else f" (Clopper-Pearson on the sampled rows, joint over all "
                         f"intervals{width})")


def with_interval(value, interval=None) -> str:
    """``"0.412 [0.395, 0.430]"``; the value alone (four decimals) without an interval.

    Examples
    --------
    >>> from skfairverify.utils._html import with_interval
    >>> with_interval(0.41234, (0.3951, 0.43)), with_interval(0.41234)
    ('0.412 [0.395, 0.430]', '0.4123')
    >>> with_interval(float("nan"), (0.1, 0.2))
    'n/a'
    """
    if interval is None or is_missing(value):
        return number(value)
    low, high = interval
    return (f"{number(value, INTERVAL_SPEC)} [{number(low, INTERVAL_SPEC)}, "
            f"{number(high, INTERVAL_SPEC)}]")


def interval_cell(value) -> str:
    """Formatter of :func:`frame_table` for a ``(value, low, high)`` cell (or a number)."""
    if isinstance(value, tuple):
        return with_interval(value[0], value[1:])
    return number(value)


def merge_interval(frame: pd.DataFrame, column, low, high, header) -> pd.DataFrame:
    """``frame`` with ``column``, ``low`` and ``high`` as one ``(value, low, high)`` column.

    The merged column is named ``header`` and sits where ``column`` was;
    :func:`interval_cell` shows it.
    """
    out = frame.copy()
    cells = list(zip(out[column], out[low], out[high]))
    position = list(out.columns).index(column)
    out = out.drop(columns=[column, low, high])
    merged = pd.Series(cells, index=out.index, dtype=object)
    out.insert(min(position, out.shape[1]), header, merged)
    return out


def influence_frame(table: pd.DataFrame, low=None, high=None) -> tuple[pd.DataFrame, dict]:
    """A fairness influence table for display, every cell ``(value, low, high)`` with bounds.

    Parameters
    ----------
    table : pandas.DataFrame
        Influence per feature (rows) and group (columns).
    low, high : pandas.DataFrame or None
        Bounds of the same shape; None shows the values alone.

    Returns
    -------
    frame : pandas.DataFrame
    formats : dict
        The :func:`frame_table` formats (:func:`interval_cell` for every column with
        bounds, :func:`signed` otherwise).

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.utils._html import frame_table, influence_frame
    >>> t = pd.DataFrame({"F": [0.0123]}, index=["x"])
    >>> frame, formats = influence_frame(t, t - 0.01, t + 0.02)
    >>> "0.012 [0.002, 0.032]" in frame_table(frame, formats=formats)
    True
    """
    if low is None or high is None:
        return table, {c: signed for c in table.columns}
    cells = np.empty(table.shape, dtype=object)
    for (i, j), value in np.ndenumerate(table.to_numpy(dtype=float)):
        cells[i, j] = (value, float(low.iat[i, j]), float(high.iat[i, j]))
    frame = pd.DataFrame(cells, index=table.index, columns=table.columns)
    return frame, {c: interval_cell for c in table.columns}


#: The header of the population estimate's column (its interval: a Jeffreys interval with
#: the estimate's effective rows).
POPULATION_HEADER = "population_rate [95% interval]"


def _population_header(level) -> str:
    return f"population_rate [{float(level):.0%} interval]"


def groups_frame(groups: pd.DataFrame, sensitive, note: Mapping | None,
                 level: float = 0.95) -> pd.DataFrame:
    """A verifier's groups table for display: each rate and its interval in one column.

    With the population estimate, ``population_rate [<level> interval]`` (the estimate,
    ``population_ci_low``, ``population_ci_high``) comes first, then the rate under
    the network: ``positive_rate [<interval label>]`` holding ``(rate, ci_low,
    ci_high)``; without intervals (point estimates) ``ci_low`` / ``ci_high`` are left
    out (they repeat the rate).
    """
    sensitive = [c for c in sensitive if c in groups.columns]
    frame = groups.set_index(sensitive) if sensitive else groups
    if {"population_rate", "population_ci_low", "population_ci_high"} <= set(frame.columns):
        frame = merge_interval(frame, "population_rate", "population_ci_low",
                               "population_ci_high", _population_header(level))
    if {"ci_low", "ci_high"} <= set(frame.columns):
        if has_intervals(note):
            frame = merge_interval(frame, "positive_rate", "ci_low", "ci_high",
                                   f"positive_rate [{interval_label(note, short=True)}]")
        else:
            frame = frame.drop(columns=["ci_low", "ci_high"])
    # the population estimate, the network's rate, the rows' and the check, side by side
    lead = [c for prefix in ("population_rate [", "positive_rate") for c in frame.columns
            if str(c).startswith(prefix)]
    lead += [c for c in ("direct_rate", "model_check_pvalue", "support") if c in frame]
    return frame[lead + [c for c in frame.columns if c not in lead]]


def groups_caption(frame: pd.DataFrame, label: str, what: str) -> str:
    """The caption of a :func:`groups_frame`: what the rates are, with their interval."""
    points = [c for c in ("true_positive_rate", "false_positive_rate", "path_specific_rate")
              if c in frame.columns]
    rest = f"; {', '.join(points)}: point estimates (no interval)" if points else ""
    population = ""
    if any(str(c).startswith("population_rate [") for c in frame.columns):
        population = (
            "population_rate: the estimate of the group's rate in the population, the "
            "network's rate combined with the group's own rows (direct_rate) by their "
            "precision including the network's bias; model_check_pvalue: the test of the "
            "network's rate against the rows (small: the network does not fit the group); ")
    return (f"Rates of every group ({population}positive_rate: {what}, {label}{rest}; "
            "support: rows of the group)")


def groups_formats(frame: pd.DataFrame) -> dict:
    """The :func:`frame_table` formats of a :func:`groups_frame`."""
    formats = {"support": count, "model_check_pvalue": p_value}
    formats.update({c: interval_cell for c in frame.columns
                    if str(c).startswith(("positive_rate [", "population_rate ["))})
    return formats


def population_sources(verifier_metrics: Mapping, intervals: Mapping | None,
                       population: Mapping | None, population_intervals: Mapping | None,
                       level: float = 0.95):
    """Sources of a verdict table: the population estimate first, then the network's.

    Returns ``(values, intervals, labels)`` for :func:`verdict_table`; without a
    population estimate the network's alone (source ``"verified"``).
    """
    values, cis, labels = {}, {}, {}
    if population:
        values["population"] = dict(population)
        cis["population"] = dict(population_intervals or {})
        labels["population"] = f"{float(level):.0%} interval"
    key = "under the network" if population else "verified"
    values[key] = dict(verifier_metrics)
    if intervals is not None:
        cis[key] = dict(intervals)
    return values, cis or None, labels, key


# ---------------------------------------------------------------- verdict
#: What an "uncertain" verdict means (the reports' "how to read this" boxes).
UNCERTAIN_TEXT = (
    "uncertain: the value's interval holds values on both sides of the threshold (or the "
    "value and its interval disagree), so the data cannot tell pass from fail at the "
    "interval's level; pass / fail with an interval: the value and its whole interval "
    "are on that side of the threshold")


def _passes(key: str, value: float, thresholds: dict) -> bool:
    if key == "disparate_impact":
        return value >= thresholds[key]
    return abs(value) <= thresholds[key]


def _judge(key: str, value, thresholds: dict, interval=None) -> str:
    """pass / fail of ``value``; with an interval, "uncertain" when it straddles."""
    if is_missing(value):
        return "n/a"
    point = _passes(key, value, thresholds)
    if interval is None or any(is_missing(v) for v in interval):
        return "pass" if point else "fail"
    low, high = sorted(float(v) for v in interval)
    t = thresholds[key]
    if key == "disparate_impact":
        all_pass, all_fail = low >= t, high < t
    else:  # |x| <= t on all of [low, high], or |x| > t on all of it
        all_pass, all_fail = max(abs(low), abs(high)) <= t, low > t or high < -t
    if point and all_pass:
        return "pass"
    if not point and all_fail:
        return "fail"
    return "uncertain"


def threshold_text(key: str, thresholds: dict) -> str:
    """How ``key`` is judged, e.g. ``">= 0.80 (four-fifths rule)"``."""
    sign = ">=" if key == "disparate_impact" else "<="
    bar = "" if key in ("disparate_impact", "statistical_parity", "equalized_odds",
                        "path_specific_causal") else "|value| "
    return f"{bar}{sign} {thresholds[key]:.2f} ({VERDICT_METRICS[key][1]})"


def verdict_frame(values: Mapping[str, Mapping], thresholds: Mapping | None = None,
                  intervals: Mapping[str, Mapping] | None = None) -> pd.DataFrame:
    """Each metric's value per source, the threshold and the verdict, side by side.

    Parameters
    ----------
    values : mapping
        Source name (e.g. ``"verified"``, ``"empirical"``) -> {metric key: value}; a
        metric a source does not give is ``n/a`` there.
    thresholds : mapping, default=None
        Overrides of :data:`DEFAULT_THRESHOLDS` (see :func:`check_thresholds`).
    intervals : mapping, default=None
        Source name -> {metric key: ``(low, high)``}, the intervals of a source's
        values (e.g. the verifier's ``metric_intervals_``).

    Returns
    -------
    pandas.DataFrame
        Index: the metrics; columns ``("threshold", "")``, then per source
        ``(source, "value")``, with intervals ``(source, "low")`` and ``(source,
        "high")``, and ``(source, "verdict")``: ``"pass"``, ``"fail"``, ``"n/a"`` when
        undefined, and for a source with intervals ``"uncertain"`` when the interval
        holds values on both sides of the threshold (pass / fail need the value and
        its whole interval on that side).

    Examples
    --------
    >>> from skfairverify.utils._html import verdict_frame
    >>> frame = verdict_frame({"verified": {"disparate_impact": 0.75,
    ...                                     "statistical_parity": 0.05}})
    >>> frame["verified", "verdict"].tolist()
    ['fail', 'pass']
    >>> frame = verdict_frame({"verified": {"disparate_impact": 0.75,
    ...                                     "statistical_parity": 0.05}},
    ...                       intervals={"verified": {"disparate_impact": (0.7, 0.85),
    ...                                               "statistical_parity": (0.03, 0.07)}})
    >>> frame["verified", "verdict"].tolist()
    ['uncertain', 'pass']
    """
    thresholds = check_thresholds(thresholds)
    intervals = intervals or {}
    keys = [k for k in VERDICT_METRICS if any(k in v for v in values.values())]
    columns = {("threshold", ""): [threshold_text(k, thresholds) for k in keys]}
    for source, vals in values.items():
        ci = intervals.get(source)
        columns[source, "value"] = [vals.get(k) for k in keys]
        if ci is not None:
            bounds = [ci.get(k) or (None, None) for k in keys]
            columns[source, "low"] = [b[0] for b in bounds]
            columns[source, "high"] = [b[1] for b in bounds]
        columns[source, "verdict"] = [
            _judge(k, vals.get(k), thresholds, None if ci is None else ci.get(k))
            for k in keys]
    index = pd.Index([VERDICT_METRICS[k][0] for k in keys], name="metric")
    frame = pd.DataFrame(columns, index=index)
    frame.columns = pd.MultiIndex.from_tuples(columns)
    return frame


def verdict_table(values: Mapping[str, Mapping], thresholds: Mapping | None = None,
                  caption: str | None = None, *, intervals: Mapping | None = None,
                  labels: Mapping[str, str] | None = None) -> str:
    """:func:`verdict_frame` as HTML, verdict cells coloured.

    A source with intervals shows ``value [low, high]`` in one column headed
    ``value [<its label>]`` (``labels``: source -> short interval label).
    """
    frame = verdict_frame(values, thresholds, intervals)
    formats = {"verdict": _verdict_cell}
    for source in (intervals or {}):
        header = (source, f"value [{(labels or {}).get(source, 'interval')}]")
        frame = merge_interval(frame, (source, "value"), (source, "low"), (source, "high"),
                               header)
        formats[header] = interval_cell
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame_table(frame, caption, formats=formats)


def _verdict_cell(word: str) -> tuple[str, str]:
    return word, word if word in ("pass", "fail", "uncertain") else "na"


# ---------------------------------------------------------------- network
def network_frame(edges, variables=None) -> pd.DataFrame:
    """The parents of every variable, one row each (a readable listing of the network).

    Parameters
    ----------
    edges : iterable of (parent, child)
        The network's edges.
    variables : list, default=None
        Every variable, in order (those without parents included); by default the
        children of the edges, in order of appearance.

    Returns
    -------
    pandas.DataFrame
        Index ``variable``; columns ``parents`` (comma separated, ``"(none)"``) and
        ``number of parents``.

    Examples
    --------
    >>> from skfairverify.utils._html import network_frame
    >>> network_frame([("sex", "age"), ("sex", "job"), ("age", "job")])["parents"].tolist()
    ['sex', 'sex, age']
    """
    parents: dict = {}
    for v in variables or []:
        parents.setdefault(str(v), [])
    for parent, child in edges:
        parents.setdefault(str(child), []).append(str(parent))
    index = pd.Index(list(parents), name="variable")
    return pd.DataFrame({"parents": [", ".join(p) or "(none)" for p in parents.values()],
                         "number of parents": [len(p) for p in parents.values()]},
                        index=index)


# ---------------------------------------------------------------- counterfactual
def counterfactual_frame(cflips: Mapping, ndccf: Mapping, n_refused: Mapping
                         ) -> pd.DataFrame:
    """CFlips@k and nDCCF@k of both groups and their deltas, with the audited rows.

    Examples
    --------
    >>> from skfairverify.utils._html import counterfactual_frame
    >>> counterfactual_frame({"privileged": .1, "unprivileged": .4, "delta": .3},
    ...                      {"privileged": .9, "unprivileged": .5, "delta": .4},
    ...                      {"privileged": 10, "unprivileged": 12}).loc["delta", "CFlips@k"]
    0.3
    """
    rows = ["privileged", "unprivileged", "delta"]
    return pd.DataFrame({
        "CFlips@k": [cflips.get(r) for r in rows],
        "nDCCF@k": [ndccf.get(r) for r in rows],
        "audited rows": [n_refused.get(r) for r in rows],
    }, index=pd.Index(rows, name="group")).astype(object)


COUNTERFACTUAL_CAPTION = (
    "CFlips@k: share of a refused row's k counterfactuals that the sensitive classifier "
    "puts in another group (0 = fair); nDCCF@k: rank-discounted share it keeps in the "
    "row's group (1 = fair); means over the audited refused rows, in [0, 1]. Delta: "
    "CFlips unprivileged - privileged, nDCCF privileged - unprivileged (positive: the "
    "unprivileged must look privileged more often to be accepted)")


def counterfactual_tables(cflips, ndccf, n_refused, classifier: Mapping | None) -> list[str]:
    """The counterfactual section's tables: the metrics, then the sensitive classifier."""
    out = [frame_table(counterfactual_frame(cflips, ndccf, n_refused),
                       COUNTERFACTUAL_CAPTION, formats={"audited rows": count})]
    by_group = (classifier or {}).get("by_group")
    if by_group is not None and len(by_group):
        frame = by_group if isinstance(by_group, pd.DataFrame) else \
            pd.DataFrame(by_group).set_index("group")
        how = ("out-of-fold on the training rows" if classifier.get("held_out")
               else "on the rows passed to fit (frozen classifier, not held out)")
        out.append(frame_table(
            frame, f"Sensitive classifier (judges every counterfactual), scored {how}: "
                   f"accuracy {number(classifier.get('accuracy'))}, ROC AUC "
                   f"{number(classifier.get('roc_auc'))}; precision, recall, F1 per group",
            formats={"support": count}))
    return out


# ---------------------------------------------------------------- ESL
ESL_GROUP_FORMATS = {"metric_std_error": number, "esl_std_error": number}


def esl_groups_table(frame: pd.DataFrame, units: str, total) -> str:
    """The first-stage table: each group's metric, ESL value, interval and share."""
    return frame_table(frame, f"ESL values of the groups ({units}); share = esl_value / "
                              f"total (total {number(total)} ESL units)")


def esl_test_frame(test: Mapping, confidence: float) -> pd.DataFrame:
    """The two-group test in both units: difference, standard error, interval, z, p.

    Examples
    --------
    >>> from skfairverify.utils._html import esl_test_frame
    >>> t = {"metric_difference": -.05, "metric_std_error": .04, "metric_ci": (-.13, .03),
    ...      "esl_difference": -.1, "esl_std_error": .08, "esl_ci": (-.26, .06),
    ...      "z": -1.2, "p_value": .23}
    >>> esl_test_frame(t, 0.95).loc["metric units", "difference"]
    -0.05
    """
    level = f"{confidence:.0%}"
    rows = {}
    for unit in ("metric", "esl"):
        ci = test.get(f"{unit}_ci") or (None, None)
        rows["ESL units" if unit == "esl" else "metric units"] = {
            "difference": test.get(f"{unit}_difference"),
            "std. error": test.get(f"{unit}_std_error"),
            f"{level} CI low": ci[0], f"{level} CI high": ci[1],
            "z": test.get("z"), "p-value": test.get("p_value"),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index").astype(object)
    frame.index.name = "units"
    return frame


def esl_test_table(test: Mapping, metric: str, baseline: float, confidence: float) -> str:
    """:func:`esl_test_frame` as HTML, captioned with the direction and the units."""
    a, b = test["compared"]
    caption = (f"Test of equal ESL values, {a} - {b}: metric units = the raw {metric} gap; "
               f"ESL units = {metric} / baseline ({baseline:g}); for two groups both give "
               "the same z and p-value (Theorem 4.1 of the ESL paper)")
    return frame_table(esl_test_frame(test, confidence), caption,
                       formats={"difference": signed, "p-value": p_value, "z": signed})


def contributions_table(frame: pd.DataFrame, units: str, direction: str) -> str:
    """The second-stage table: each feature's contribution to each group, and the test."""
    return frame_table(
        frame, f"Contributions of the features, per ESL member ({units}); esl_difference, "
               f"esl_std_error, esl_ci_* are the difference of the contributions, "
               f"{direction}, in the same ESL units; majority: flagged unfair by a strict "
               "majority of the ESL members",
        formats={"esl_difference": signed, "z": signed, "p_value": p_value})


def first_stage_members_table(frame: pd.DataFrame, direction: str) -> str:
    """The full model's first-stage values per ESL member (decomposition result)."""
    return frame_table(frame, "First stage of the full model per ESL member (ESL units; "
                              f"metric_* in metric units; differences {direction})",
                       formats={"esl_difference": signed, "metric_difference": signed,
                                "z": signed, "p_value": p_value})


def direction_text(compared: Mapping) -> str:
    """``"a - b"`` when every member compares the same pair, else one per member."""
    pairs = {tuple(map(str, p)) for p in compared.values()}
    if len(pairs) == 1:
        a, b = pairs.pop()
        return f"{a} - {b}"
    return ", ".join(f"{k}: {p[0]} - {p[1]}" for k, p in compared.items())


# ---------------------------------------------------------------- generic results
def _scalar(value) -> bool:
    return isinstance(value, (str, numbers.Number, np.generic)) or value is None


def _mapping_frame(name: str, value: Mapping) -> pd.DataFrame | None:
    """A dict of scalars as a one-column table (None when it holds anything else)."""
    if not value or not all(_scalar(v) for v in value.values()):
        return None
    return pd.DataFrame({name: list(value.values())},
                        index=pd.Index([str(k) for k in value], name="key")).astype(object)


def result_parts(result) -> list[str]:
    """The generic notebook tables of a result.

    ``to_frame()``, then its fields that are dicts of scalars, then its scalar fields (a
    dataclass's fields, in order).
    """
    frame = result.to_frame()
    plain = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
    parts = [frame_table(frame, f"{type(result).__name__}.to_frame()", index=not plain)]
    fields = getattr(result, "__dataclass_fields__", {})
    scalars = []
    for name in fields:
        value = getattr(result, name, None)
        if isinstance(value, Mapping):
            frame = _mapping_frame(name, value)
            if frame is not None:
                parts.append(frame_table(frame, name))
        elif _scalar(value) and value is not None:
            scalars.append((name, value))
    if scalars:
        frame = pd.DataFrame({"value": [v for _, v in scalars]},
                             index=pd.Index([n for n, _ in scalars], name="field"))
        parts.append(frame_table(frame.astype(object), "other fields"))
    return parts


# ---------------------------------------------------------------- fitted verifier
def _verifier_facts(verifier) -> list[tuple[str, str]]:
    items = [("sensitive features", ", ".join(map(str, verifier.sensitive_features_)))]
    for label, attr in (("method", "method_"), ("bins", "n_bins_"),
                        ("integer multiplier", "multiplier_"),
                        ("agreement of the integer rule with the model", "agreement_")):
        value = getattr(verifier, attr, None)
        if value is not None:
            items.append((label, number(value)))
    check = model_check_fact(getattr(verifier, "population_", None))
    if check:
        items.append(("model check", check))
    return items


def model_check_fact(table) -> str | None:
    """``"2 of 12 group rates do not fit the network (Holm, 5%): ..."``, or None.

    ``table``: the verifier's ``population_`` (one row per group and rate).
    """
    if table is None or not len(table):
        return None
    p = table["pvalue"].to_numpy(dtype=float)
    order = np.argsort(p)
    rejected = []
    for k, i in enumerate(order):
        if np.isnan(p[i]) or p[i] > 0.05 / (len(p) - k):
            break
        rejected.append(i)
    if not rejected:
        return f"the network fits all {len(p)} group rates (no test rejects, Holm, 5%)"
    sensitive = [c for c in table.columns if c not in _POPULATION_TABLE_COLUMNS]
    named = ", ".join(f"{'/'.join(str(table.iloc[i][c]) for c in sensitive)} "
                      f"({table.iloc[i]['rate']}, p = {p_value(p[i])})" for i in rejected[:4])
    return (f"{len(rejected)} of {len(p)} group rates do not fit the network (Holm, 5%): "
            f"{named}{' ...' if len(rejected) > 4 else ''}; their population estimate "
            "rests on the rows")


_POPULATION_TABLE_COLUMNS = ("rate", "network", "network_se", "direct", "rows", "estimate",
                             "ci_low", "ci_high", "effective_rows", "direct_weight",
                             "discrepancy", "pvalue")


def verifier_html(verifier, thresholds: Mapping | None = None) -> str:
    """The notebook display of a fitted :class:`~skfairverify.FairnessVerifier`.

    The parameters (as scikit-learn shows them) are not repeated: this shows what the
    fit found, with the tables of the audit report: the verified rate of every group,
    the verdict on every metric, and the network's parents of every variable.

    Parameters
    ----------
    verifier : FairnessVerifier
        A fitted verifier.
    thresholds : mapping, default=None
        Overrides of the verdict thresholds (:data:`DEFAULT_THRESHOLDS`).

    Returns
    -------
    str
        HTML, every label escaped.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> from skfairverify.utils._html import verifier_html
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 2, 400), "x": rng.normal(size=400)})
    >>> y = (X["x"] > 0).astype(int)
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=20).fit(X, y)
    >>> page = verifier_html(ver)
    >>> "positive_rate [95% credible interval]" in page
    True
    """
    note = interval_note(verifier)
    label = interval_label(note)
    level = verifier.credible_level
    population = getattr(verifier, "population_metrics_", None)
    values, ci, labels, key = population_sources(
        verifier.metrics_, verifier.metric_intervals_ if has_intervals(note) else None,
        population, getattr(verifier, "population_metric_intervals_", None), level)
    labels[key] = interval_label(note, True)
    groups = groups_frame(verifier.groups_, verifier.sensitive_features_, note, level)
    parts = [facts(_verifier_facts(verifier) + [("intervals", label)]),
             frame_table(groups, groups_caption(groups, label, "probability under the "
                                                               "network"),
                         formats=groups_formats(groups)),
             verdict_table(values, thresholds,
                           "Metrics over the groups and their verdict" + (
                               "; population: of the population estimates; under the "
                               "network: exact under the learned network" if population
                               else "") + (f"; value [low, high], the {label}" if ci
                                           else f" ({label})"),
                           intervals=ci, labels=labels)]
    network = getattr(verifier, "network_", None)
    if network is not None and getattr(network, "names", None) is not None:
        edges = [(network.names[p], network.names[i])
                 for i in range(len(network.parents)) for p in network.parents[i]]
        parts.append(frame_table(network_frame(edges, network.names),
                                 "Bayesian network: the parents of every variable"))
    first = next(iter(values))
    return notebook_block(type(verifier).__name__ + " (fitted)",
                          metrics_summary(values[first], (ci or {}).get(first)), parts)


def metrics_summary(metrics: Mapping, intervals: Mapping | None = None) -> str:
    """``"disparate_impact 0.412 [0.395, 0.430], ..."``: the one-line summary of metrics."""
    return ", ".join(f"{k} {with_interval(v, (intervals or {}).get(k))}"
                     for k, v in metrics.items())
