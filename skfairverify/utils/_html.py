"""HTML helpers shared by every notebook display and the audit report.

One place builds every table a person reads: :func:`frame_table` writes a DataFrame as a
``<table>`` (every label escaped, numbers formatted, undefined values as ``n/a``) inside a
container that scrolls on its own instead of widening the page; :func:`notebook_block`
wraps a result's tables into its notebook display; :func:`with_interval` and
:func:`merge_interval` show a value with its interval. What a table means belongs to the
analysis that computes it: the verifier's tables are in
``skfairverify.verification._display``, the verdict on every metric in
``skfairverify.utils._verdict``, the audit page's layout in ``skfairverify.audit._html``.
The counterfactual and ESL tables are still here (the counterfactual and ESL results and
the audit report share them).
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

__all__ = ["CSS", "escape", "frame_table", "notebook_block", "number", "with_interval"]

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


def escape(value) -> str:
    """``value`` as text safe inside HTML (quotes escaped too)."""
    return html.escape(str(value), quote=True)


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
