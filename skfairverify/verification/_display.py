"""The notebook display of a fitted verifier and of its results.

What the verifier's intervals are (:func:`interval_note`, :func:`influence_note`,
:func:`interval_label`), its groups table with the population estimate beside the rate
under the network (:func:`groups_frame`), the sources of its verdict table
(:func:`population_sources`), the model check in one line (:func:`model_check_fact`),
the network's parents (:func:`network_frame`) and the whole display
(:func:`verifier_html`). The tables themselves are drawn by ``skfairverify.utils._html``
and judged by ``skfairverify.utils._verdict``; the audit report reads the same
functions, so a notebook shows the numbers of the report, in the same layout.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..utils._html import (
    count,
    facts,
    frame_table,
    interval_cell,
    merge_interval,
    notebook_block,
    number,
    p_value,
    signed,
    with_interval,
)
from ..utils._verdict import verdict_table

__all__ = ["influence_note", "interval_label", "interval_note", "verifier_html"]

# ---------------------------------------------------------------- intervals
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
    >>> from skfairverify.verification._display import interval_note
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
    elif verifier.method_ == "bounds":
        note = _bounds_note(verifier)
    elif verifier.n_draws == 0 or _point_intervals(verifier):
        note = {"kind": _POINT_KIND, "level": None,
                "n_draws": 0 if verifier.n_draws == 0 else None}
    else:
        note = _credible_note(verifier, int(verifier.n_draws))
    note["label"] = interval_label(note)
    return note


def _bounds_note(verifier) -> dict:
    """The note of the tree-ensemble path: sound bounds, or credible intervals hulled."""
    sampled = int(getattr(verifier, "n_samples_", 0) or 0) > 0
    note = {"kind": "sound bounds (under the network)", "level": None,
            "n_draws": 0, "unsettled_sampled": sampled}
    if sampled:
        note["confidence"] = float(verifier.confidence)
        kinds = verifier.groups_.get("unsettled_interval")
        note["unsettled_intervals"] = sorted(
            set(kinds) - {"none"} if kinds is not None else set())
    if verifier.n_draws > 0 and isinstance(verifier.network, str):
        note.update(kind="credible + sound bounds (posterior draws of the network, each "
                         "bounded, hulled with the bounds under the point network)",
                    level=float(verifier.credible_level), n_draws=int(verifier.n_draws))
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
    >>> from skfairverify.verification._display import influence_note
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
    >>> from skfairverify.verification._display import interval_label
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
    if "sound bounds" in str(note["kind"]):
        return _bounds_label(note, level, short)
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


def _bounds_label(note: Mapping, level: str, short: bool) -> str:
    """:func:`interval_label` of the tree-ensemble path's intervals."""
    credible = str(note["kind"]).startswith("credible")
    head = f"{level}credible interval and sound bounds" if credible else "sound bounds"
    if short:
        return head
    parts = ([f"posterior of the network, {note.get('n_draws')} draws, each bounded, "
              "joined with the bounds under the point network"] if credible
             else ["under the network: the rate lies between them"])
    if note.get("unsettled_sampled"):
        conf = note.get("confidence")
        parts.append("with a" + (f" {float(conf):.0%}" if conf is not None else "")
                     + " Clopper-Pearson interval of the mass the branching left unsettled"
                     + _UNSETTLED_WORDS.get(tuple(note.get("unsettled_intervals", ())), ""))
    return f"{head} ({'; '.join(parts)})"


#: What the unsettled mass's interval is, by the designs of its draws (``groups_``'s
#: ``unsettled_interval``).
_UNSETTLED_WORDS = {
    ("conservative",): " (draws in proportion to its mass: conservative)",
    ("asymptotic",): " (Neyman draws, at their effective size: asymptotic)",
    ("asymptotic", "conservative"): " (conservative where drawn in proportion to its "
                                    "mass, asymptotic where Neyman draws: "
                                    "unsettled_interval)",
}


# ---------------------------------------------------------------- groups
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
    >>> from skfairverify.utils._html import frame_table
    >>> from skfairverify.verification._display import influence_frame
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
    >>> from skfairverify.verification._display import network_frame
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


# ---------------------------------------------------------------- fitted verifier
def _verifier_facts(verifier) -> list[tuple[str, str]]:
    items = [("sensitive features", ", ".join(map(str, verifier.sensitive_features_)))]
    for label, attr in (("method", "method_"), ("why this method", "method_reason_"),
                        ("bins", "n_bins_"),
                        ("integer multiplier", "multiplier_"),
                        ("agreement of the integer rule with the model", "agreement_")):
        value = getattr(verifier, attr, None)
        if value is not None:
            items.append((label, number(value)))
    check = model_check_fact(getattr(verifier, "population_", None))
    if check:
        items.append(("model check", check))
    return items


def as_sentence(text: str) -> str:
    """``text`` as a sentence of its own: its first letter upper case, a final period.

    Examples
    --------
    >>> from skfairverify.verification._display import as_sentence
    >>> as_sentence("the network fits all 6 group rates (Holm, 5%)")
    'The network fits all 6 group rates (Holm, 5%).'
    """
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


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
    >>> from skfairverify.verification._display import verifier_html
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
