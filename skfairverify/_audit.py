"""The ``audit`` command: one fairness report of a linear model on a dataset.

``python -m skfairverify audit`` trains (or loads) a linear model and reports, in one
place, the verified group rates and DI/SP/EO with the network used beside the empirical
ones on the test rows (fairlearn's ``MetricFrame``), the features with the largest
fairness influence, the CFlips/nDCCF gaps, the first-stage ESL values with their test and
the second-stage contributions of the features. Every number is labelled for what it is
(verified: population under the learned Bayesian network; empirical: test rows) and every
difference with its unit and direction.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import sys
import textwrap
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

__all__ = ["AuditReport", "main", "run_audit"]

_DATASETS = ("adult", "german", "compas")
_STEPS = ("verify", "counterfactual", "esl")


def default_model() -> object:
    """The audit's linear model: scaled numbers and one-hot categories, then LR.

    Columns are selected by dtype, so the same pipeline fits any subset of columns
    (the second ESL stage refits it on feature coalitions).
    """
    return make_pipeline(
        make_column_transformer(
            (StandardScaler(), make_column_selector(dtype_include="number")),
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_exclude="number"),
            ),
        ),
        LogisticRegression(max_iter=2000),
    )


def _load_bundled(name: str) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    from .datasets import load_adult, load_compas, load_german

    if name == "adult":
        bunch = load_adult(dropna=True)
        X = bunch.data.drop(columns=["split", "fnlwgt"])
    elif name == "german":
        bunch = load_german()
        X = bunch.data
    elif name == "compas":
        bunch = load_compas(propublica_filter=True)
        X = bunch.data
    else:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {list(_DATASETS)}.")
    y = pd.Series(np.asarray(bunch.target), index=X.index, name="target")
    return X, y, list(bunch.sensitive)


def _load_csv(path: str, target: str, sensitive: Sequence[str], positive=None):
    frame = pd.read_csv(path)
    missing = [c for c in [target, *sensitive] if c not in frame.columns]
    if missing:
        raise ValueError(f"Column(s) {missing} not found in {path}; columns: {list(frame)}.")
    frame = frame.dropna()
    labels = frame.pop(target)
    if positive is None:
        values = sorted(pd.unique(labels), key=str)
        if len(values) != 2:
            raise ValueError(
                f"Target {target!r} has {len(values)} values; pass --positive VALUE to say "
                "which one is the favorable outcome."
            )
        positive = 1 if set(map(str, values)) == {"0", "1"} else values[-1]
    y = (labels.astype(str) == str(positive)).astype(int).rename("target")
    for col in frame.columns:
        if frame[col].dtype == object or col in sensitive:
            frame[col] = frame[col].astype("category")
    return frame, y, list(sensitive)


@dataclass
class AuditReport:
    """Everything the audit found, as plain Python data (JSON-serialisable)."""

    dataset: dict
    model: dict
    sections: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """The report without figures, for ``--json``."""
        return {"dataset": self.dataset, "model": self.model, **self.sections,
                "timings_seconds": self.timings}

    def to_text(self) -> str:
        """A readable plain-text report."""
        return _render_text(self)

    def to_html(self) -> str:
        """A self-contained HTML page with the figures embedded."""
        return _render_html(self)


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows of a DataFrame as JSON-ready dicts (a named index becomes columns)."""
    out = frame.copy()
    if isinstance(out.columns, pd.MultiIndex):
        out.columns = [" / ".join(str(p) for p in col if str(p)) for col in out.columns]
    if any(name is not None for name in out.index.names):
        out = out.reset_index()
    out = out.astype(object).where(out.notna(), None)
    return json.loads(out.to_json(orient="records", default_handler=str))


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item")
                                 else str(o)))


def _top_features(model, X: pd.DataFrame, candidates: list[str], n: int) -> list[str]:
    """The ``n`` raw columns whose contribution to the decision varies most on ``X``."""
    from ._linear import linear_rule

    rule = linear_rule(model)
    spread = {}
    for col in candidates:
        if col in rule.numeric_features:
            spread[col] = abs(rule.coef[col]) * float(X[col].astype(float).std())
        elif col in rule.categorical_features:
            coefs = rule.category_coef(col)
            contrib = X[col].astype(object).map(dict(zip(coefs.index, coefs.to_numpy())))
            spread[col] = float(pd.to_numeric(contrib, errors="coerce").fillna(0.0).std())
    ranked = sorted(spread, key=lambda c: -spread[c])
    return ranked[:n]


def _taking_all_columns(model, X: pd.DataFrame):
    """Let a fitted model that reads a subset of the columns take the whole of ``X``."""
    names = getattr(model, "feature_names_in_", None)
    if names is None or list(names) == list(X.columns):
        return model
    missing = [c for c in names if c not in X.columns]
    if missing:
        raise ValueError(f"The model was fitted on column(s) {missing} that the data lacks.")
    select = make_column_transformer(
        ("passthrough", list(names)), remainder="drop", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(select.fit(X), FrozenEstimator(model))


def _figure_png(axes) -> str:
    """PNG (base64) of the figure holding ``axes`` (one Axes or an array of them)."""
    fig = np.ravel(axes)[0].figure
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


# The three kinds of group numbers the audit prints, each labelled for what it is.
_SOURCES = {
    "verified": "population under the learned Bayesian network (FVGM)",
    "verified, test-row network": "the verifier's network re-learned on the test rows "
                                  "(still model-based, not an observed rate)",
    "empirical": "test rows, fairlearn MetricFrame",
}
VERIFIED_LABEL, RELEARNED_LABEL, EMPIRICAL_LABEL = (f"{k}: {v}" for k, v in _SOURCES.items())

# Metric key -> (description with its unit, fairlearn function giving the empirical value)
_METRICS = {
    "disparate_impact": ("disparate impact DI (min / max selection rate; ratio, 1 = fair)",
                         "demographic_parity_ratio"),
    "statistical_parity": ("statistical parity SP (max - min selection rate; 0 = fair)",
                           "demographic_parity_difference"),
    "equalized_odds": ("equalized odds EO (larger of the TPR and FPR gaps, max - min; "
                       "0 = fair)", "equalized_odds_difference"),
    "path_specific_causal": ("path-specific causal fairness (max - min rate with the "
                             "mediators drawn from Z | A = most favored group, FVGM; "
                             "0 = fair)", None),
}


def _binary_predictions(y_pred) -> np.ndarray:
    """The model's decisions as 0/1 (1 = favorable), or an error naming the labels."""
    arr = np.asarray(y_pred)
    if arr.dtype == bool:
        return arr.astype(int)
    values = pd.unique(arr)
    try:
        ok = set(np.asarray(values, dtype=float).tolist()) <= {0.0, 1.0}
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"The model predicts the labels {sorted(map(str, values))[:5]}; the audit needs "
            "0/1 decisions (1 = favorable), like the labels it was given."
        )
    return arr.astype(float).astype(int)


def _rate_given(label: int, rate):
    """fairlearn's ``rate`` on a group, NaN when the group has no row with ``y == label``.

    fairlearn returns 0 for such a group (its confusion matrix row is empty), which would
    enter the equalized-odds gap as a plausible wrong rate; the verifier reports NaN there.
    """

    def metric(y_true, y_pred):
        if not np.any(np.asarray(y_true) == label):
            return np.nan
        return float(rate(y_true, y_pred, pos_label=1))

    return metric


def empirical_group_metrics(y_true, y_pred, sensitive: pd.DataFrame) -> dict:
    """Observed group rates and DI/SP/EO of the decisions ``y_pred`` (fairlearn MetricFrame).

    Groups are the intersections of the columns of ``sensitive`` (as the verifier's
    compound groups). ``selection_rate`` is the share of positive decisions,
    ``true_positive_rate`` / ``false_positive_rate`` those among the rows with label 1 / 0
    (NaN for a group without such rows, and left out of the gap). DI is fairlearn's
    ``demographic_parity_ratio``, SP its ``demographic_parity_difference`` and EO its
    ``equalized_odds_difference`` (worst case of the TPR and FPR differences between
    groups).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Labels and decisions, 0/1 (1 = favorable).
    sensitive : pandas.DataFrame
        Sensitive columns of the same rows.

    Returns
    -------
    dict
        ``label``, ``rows``, ``groups`` (records) and ``metrics``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify._audit import empirical_group_metrics
    >>> out = empirical_group_metrics([1, 0, 1, 0], [1, 0, 0, 0],
    ...                               pd.DataFrame({"sex": ["F", "F", "M", "M"]}))
    >>> out["metrics"]["statistical_parity"], out["metrics"]["equalized_odds"]
    (0.5, 1.0)
    """
    from fairlearn.metrics import (
        MetricFrame,
        count,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )

    y_true = np.asarray(y_true).astype(int)
    y_pred = _binary_predictions(y_pred)
    frame = MetricFrame(
        metrics={
            "selection_rate": selection_rate,
            "true_positive_rate": _rate_given(1, true_positive_rate),
            "false_positive_rate": _rate_given(0, false_positive_rate),
            "rows": count,
            "positives": lambda t, p: int(np.sum(np.asarray(t) == 1)),
        },
        y_true=y_true, y_pred=y_pred,
        sensitive_features=sensitive.reset_index(drop=True),
    )
    groups = frame.by_group.dropna(subset=["rows"])
    groups = groups[groups["rows"] > 0].astype({"rows": int, "positives": int})
    groups.insert(groups.columns.get_loc("positives") + 1, "negatives",
                  groups["rows"] - groups["positives"])
    rates = ["selection_rate", "true_positive_rate", "false_positive_rate"]
    gaps = frame.difference(method="between_groups")[rates].astype(float)  # max - min
    metrics = {
        "disparate_impact": float(frame.ratio(method="between_groups")["selection_rate"]),
        "statistical_parity": float(gaps["selection_rate"]),
        "equalized_odds": float(max(gaps["true_positive_rate"], gaps["false_positive_rate"])),
    }
    return {"label": EMPIRICAL_LABEL, "rows": int(len(y_true)),
            "groups": _records(groups), "metrics": _jsonable(metrics)}


def _first_stage_test(first) -> dict | None:
    """The two-group test of a GroupESLResult, every difference named with its unit."""
    if first.compared is None:
        return None
    return {
        "compared": [str(g) for g in first.compared],
        "direction": f"{first.compared[0]} - {first.compared[1]}",
        "metric_difference": first.metric_difference,
        "metric_std_error": first.metric_std_error,
        "metric_ci": list(first.metric_ci),
        "esl_difference": first.esl_difference,
        "esl_std_error": first.esl_std_error,
        "esl_ci": list(first.esl_ci),
        "z": first.z,
        "p_value": first.p_value,
    }


def _relearned_on_test_rows(verifier, X_test, y_test) -> tuple[dict | None, str | None]:
    """The verifier's metrics with its network re-learned on the test rows, or the reason.

    ``verify`` refuses test rows it cannot encode (e.g. a value of a many-valued numeric
    column that the training rows never showed); the audit then reports the reason in
    place of these model-based numbers instead of failing.
    """
    try:
        return _jsonable(verifier.verify(X_test, y_test)), None
    except ValueError as exc:
        return None, str(exc)


def _classifier_summary(summary: dict | None) -> dict | None:
    """The sensitive classifier's precision / recall per group, JSON-ready."""
    if not summary:
        return None
    by_group = summary.get("by_group")
    return {"held_out": bool(summary.get("held_out")),
            "accuracy": _jsonable(summary.get("accuracy")),
            "roc_auc": _jsonable(summary.get("roc_auc")),
            "by_group": _records(by_group) if isinstance(by_group, pd.DataFrame) else None}


def run_audit(
    X: pd.DataFrame,
    y,
    sensitive: Sequence[str],
    *,
    model=None,
    dataset_name: str = "data",
    steps: Sequence[str] = _STEPS,
    test_size: float = 0.3,
    k: int = 10,
    n_esl_features: int = 4,
    figures: bool = False,
    random_state: int | None = 0,
    verbose: int = 1,
) -> AuditReport:
    """Audit a linear model for fairness on one dataset.

    Parameters
    ----------
    X : pandas.DataFrame
        Features, sensitive columns included.
    y : array-like of shape (n_samples,)
        Binary labels, 1 = favorable outcome.
    sensitive : list of str
        Sensitive columns of ``X``. The verifier uses all of them (compound groups); the
        counterfactual and ESL steps use the first one.
    model : estimator, default=None
        A fitted model (read as it is, through ``FrozenEstimator``) taking ``X``; by
        default a logistic regression that does not read the sensitive columns
        (fairness under unawareness) is trained on the training part.
    dataset_name : str, default="data"
        Name shown in the report.
    steps : sequence of {"verify", "counterfactual", "esl"}, default=all
        Which analyses to run.
    test_size : float, default=0.3
        Share of rows held out for testing (stratified by label).
    k : int, default=10
        Counterfactuals per refused row.
    n_esl_features : int, default=4
        Number of features in the second ESL stage (those whose contribution varies
        most); the Shapley member fits ``2 ** n_esl_features`` models.
    figures : bool, default=False
        Draw the figures (needs matplotlib) for the HTML report.
    random_state : int or None, default=0
        Seed of the split and of every randomised step.
    verbose : int, default=1
        Progress messages on standard error and progress bars when > 0.

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> from skfairverify._audit import run_audit
    >>> from skfairverify.datasets import load_german
    >>> data = load_german()
    >>> report = run_audit(data.data, data.target, ["sex"], steps=["esl"],
    ...                    verbose=0)  # doctest: +SKIP
    >>> report.sections["esl_first_stage"]["metric"]  # doctest: +SKIP
    'tpr'
    """
    unknown = [s for s in steps if s not in _STEPS]
    if unknown:
        raise ValueError(f"Unknown audit step(s) {unknown}; choose among {list(_STEPS)}.")
    if not isinstance(X, pd.DataFrame):
        raise TypeError("run_audit needs X as a pandas DataFrame.")
    sensitive = list(sensitive)
    missing = [c for c in sensitive if c not in X.columns]
    if missing:
        raise ValueError(f"Sensitive column(s) {missing} not found in X.")
    y = pd.Series(np.asarray(y), index=X.index, name="target")

    def say(msg):
        if verbose:
            print(f"[audit] {msg}", file=sys.stderr, flush=True)

    timings: dict[str, float] = {}
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=random_state
    )
    t0 = time.perf_counter()
    if model is None:
        features = [c for c in X.columns if c not in sensitive]
        say(f"training a logistic regression on {len(features)} non-sensitive columns")
        select = make_column_transformer(
            ("passthrough", features), remainder="drop", verbose_feature_names_out=False
        ).set_output(transform="pandas")
        model = make_pipeline(select, default_model()).fit(X_train, y_train)
        description = "LogisticRegression on the non-sensitive columns (unaware)"
    else:
        description = f"user model {type(model).__name__}"
        model = _taking_all_columns(model, X)
    timings["model"] = time.perf_counter() - t0
    frozen = FrozenEstimator(model)
    y_pred = model.predict(X_test)
    report = AuditReport(
        dataset={
            "name": dataset_name,
            "rows": int(len(X)),
            "features": int(X.shape[1]),
            "favorable_rate": float(y.mean()),
            "sensitive": sensitive,
            "train_rows": int(len(X_train)),
            "test_rows": int(len(X_test)),
        },
        model={
            "description": description,
            "train_accuracy": float(model.score(X_train, y_train)),
            "test_accuracy": float(model.score(X_test, y_test)),
        },
    )

    report.sections["empirical"] = empirical_group_metrics(y_test, y_pred, X_test[sensitive])
    if "verify" in steps:
        from .verification import FairnessVerifier

        say("verifying: learning the Bayesian network and computing exact group rates")
        t0 = time.perf_counter()
        verifier = FairnessVerifier(frozen, sensitive, random_state=random_state,
                                    verbose=verbose).fit(X_train, y_train)
        timings["verify"] = time.perf_counter() - t0
        net = verifier.network_
        edges = [
            (net.names[p], net.names[i])
            for i in range(len(net.parents)) for p in net.parents[i]
        ]
        t0 = time.perf_counter()
        fif = verifier.fairness_influence()
        timings["fairness_influence"] = time.perf_counter() - t0
        test_metrics, test_error = _relearned_on_test_rows(verifier, X_test, y_test)
        report.sections["verification"] = {
            "label": VERIFIED_LABEL,
            "groups": _records(verifier.groups_),
            "metrics": _jsonable(verifier.metrics_),
            "metrics_network_relearned_on_test_rows": test_metrics,
            "label_metrics_network_relearned_on_test_rows": RELEARNED_LABEL,
            "network_relearned_on_test_rows_error": test_error,
            "most_favored_group": _jsonable(verifier.most_favored_group_),
            "least_favored_group": _jsonable(verifier.least_favored_group_),
            "agreement": float(verifier.agreement_),
            "n_bins": verifier.n_bins_,
            "multiplier": int(verifier.multiplier_),
            "network_edges": edges,
            "fairness_influence": _records(fif),
            "fairness_influence_units": "change of each group's verified selection rate "
                                        "(probability) due to the feature's distribution "
                                        "rather than one uniform within its observed range "
                                        "(FVGM Appendix E; categorical: uniform over its "
                                        "categories)",
        }
        report.sections["comparison"] = _comparison_records(report)
        if figures:
            from .plotting import plot_fairness_influence, plot_group_rates

            report.figures["Verified group positive rates"] = _figure_png(
                plot_group_rates(verifier))
            report.figures["Fairness influence of the features"] = _figure_png(
                plot_fairness_influence(verifier, fif=fif))

    attribute = sensitive[0]
    if "counterfactual" in steps:
        from .counterfactual import CounterfactualFairness

        say(f"counterfactuals: CFlips/nDCCF for {attribute!r} (k={k})")
        t0 = time.perf_counter()
        cf = CounterfactualFairness(frozen, attribute, k=k, random_state=random_state,
                                    verbose=verbose).fit(X_train, y_train)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = cf.evaluate(X_test)
        timings["counterfactual"] = time.perf_counter() - t0
        report.sections["counterfactual"] = {
            "attribute": attribute,
            "k": k,
            "privileged": _jsonable(cf.privileged_),
            "unprivileged": [str(g) for g in cf.groups_ if g != cf.privileged_],
            "cflips": _jsonable(result["cflips"]),
            "ndccf": _jsonable(result["ndccf"]),
            "n_refused": _jsonable(result["n_refused"]),
            "delta_definition": {"cflips": "unprivileged - privileged",
                                 "ndccf": "privileged - unprivileged"},
            "units": "CFlips@k and nDCCF@k are shares in [0, 1] (means over the refused "
                     "test rows); CFlips 0 = fair, nDCCF 1 = fair",
            "sensitive_classifier": _classifier_summary(result.get("sensitive_classifier")),
            "warnings": [str(w.message) for w in caught],
        }
        if figures:
            from .plotting import plot_cflips_at_k

            report.figures["CFlips@k per group"] = _figure_png(
                plot_cflips_at_k(result))

    if "esl" in steps:
        from .esl import esl_decomposition, group_esl

        say(f"ESL values: first stage (groups of {attribute!r}) and second stage (features)")
        t0 = time.perf_counter()
        first = group_esl(y_test, y_pred, X_test[attribute], metric="tpr")
        candidates = [c for c in X.columns if c not in sensitive]
        chosen = _top_features(model, X_train, candidates, n_esl_features)
        second = esl_decomposition(
            default_model(), X_train, y_train, X_test=X_test, y_test=y_test,
            sensitive_feature=attribute, features=chosen, metric="tpr",
            random_state=random_state, verbose=verbose,
        )
        timings["esl"] = time.perf_counter() - t0
        frame = first.to_frame()
        report.sections["esl_first_stage"] = {
            "attribute": attribute,
            "metric": "tpr",
            "baseline": first.baseline,
            "confidence": first.confidence,
            "units": frame.attrs.get("units"),
            "total_esl_units": first.total,
            "table": _records(frame),
            "test": _jsonable(_first_stage_test(first)),
        }
        report.sections["esl_second_stage"] = {
            "features": chosen,
            "baseline": first.baseline,
            "units": f"ESL units = tpr / baseline ({first.baseline:g}): contributions "
                     "of the features to each group's first-stage ESL value",
            "compared": {str(k): [str(g) for g in v]
                         for k, v in (second.attrs.get("compared") or {}).items()},
            "table": _records(second),
        }
        if figures:
            from .plotting import plot_esl_contributions, plot_group_shares

            report.figures["First-stage ESL shares"] = _figure_png(
                plot_group_shares(first))
            report.figures["Second-stage contributions"] = _figure_png(
                plot_esl_contributions(second))
    report.timings = {k_: round(v, 3) for k_, v in timings.items()}
    return report


# ----------------------------------------------------------------------------- renderers


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _table_text(rows: list[dict], columns: list[str] | None = None) -> str:
    if not rows:
        return "  (none)"
    frame = pd.DataFrame(rows)
    if columns:
        frame = frame[[c for c in columns if c in frame.columns]]
    return frame.to_string(index=False, float_format=lambda v: f"{v:.4f}")


def _parents_text(edges: list) -> str:
    parents: dict[str, list[str]] = {}
    for parent, child in edges:
        parents.setdefault(child, []).append(parent)
    if not parents:
        return "(none: independent variables)"
    return "; ".join(f"{child} <- {', '.join(ps)}" for child, ps in parents.items())


_RATE_NAMES = {
    "selection_rate": "selection rate P(Yhat=1)",
    "true_positive_rate": "TPR P(Yhat=1 | Y=1)",
    "false_positive_rate": "FPR P(Yhat=1 | Y=0)",
}
_SHORT_METRICS = {
    "disparate_impact": "DI (min / max selection rate)",
    "statistical_parity": "SP (max - min selection rate)",
    "equalized_odds": "EO (max of TPR gap, FPR gap)",
    "path_specific_causal": "path-specific causal (max - min)",
}


def _group_key(record: dict, sensitive: list[str]) -> tuple:
    return tuple(str(record[c]) for c in sensitive)


def group_comparison(report: AuditReport) -> pd.DataFrame:
    """Verified and empirical rates of every group side by side (probabilities).

    Columns are ``(rate, source)`` pairs, source ``"verified"`` (population under the
    learned network) or ``"empirical"`` (test rows), then the rows behind each:
    ``("rows", "train")`` (the network's support) and ``("rows", "test")``.
    """
    sensitive = report.dataset["sensitive"]
    verified = {_group_key(r, sensitive): r
                for r in report.sections.get("verification", {}).get("groups", [])}
    empirical = {_group_key(r, sensitive): r for r in report.sections["empirical"]["groups"]}
    keys = list(verified) + [k for k in empirical if k not in verified]
    columns, data = [], []
    for rate, name in _RATE_NAMES.items():
        v_rate = "positive_rate" if rate == "selection_rate" else rate
        columns += [(name, "verified"), (name, "empirical")]
        data += [[verified.get(k, {}).get(v_rate) for k in keys],
                 [empirical.get(k, {}).get(rate) for k in keys]]
    columns += [("rows", "train"), ("rows", "test")]
    data += [[verified.get(k, {}).get("support") for k in keys],
             [empirical.get(k, {}).get("rows") for k in keys]]
    frame = pd.DataFrame(dict(enumerate(data)))
    frame.columns = pd.MultiIndex.from_tuples(columns)
    frame.index = (pd.MultiIndex.from_tuples(keys, names=sensitive) if len(sensitive) > 1
                   else pd.Index([k[0] for k in keys], name=sensitive[0]))
    if "verification" not in report.sections:
        frame = frame.drop(columns=[c for c in columns if c[1] in ("verified", "train")])
    frame = frame.apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")
    counts = [c for c in frame.columns if c[0] == "rows"]
    frame[counts] = frame[counts].fillna(0).astype(int)  # a group absent there has 0 rows
    return frame


def metric_comparison(report: AuditReport) -> pd.DataFrame:
    """DI, SP and EO: verified, verified on a test-row network, empirical, side by side."""
    v = report.sections.get("verification")
    emp = report.sections["empirical"]["metrics"]
    names = list(v["metrics"]) if v else list(emp)
    cols = {}
    if v:
        cols["verified"] = [v["metrics"].get(k) for k in names]
        cols["verified, test-row network"] = [
            (v["metrics_network_relearned_on_test_rows"] or {}).get(k) for k in names]
    cols["empirical"] = [emp.get(k) for k in names]
    index = pd.Index([_SHORT_METRICS.get(k, k) for k in names])
    return pd.DataFrame(cols, index=index).apply(pd.to_numeric, errors="coerce")


def _comparison_records(report: AuditReport) -> list[dict]:
    """The metric comparison for JSON, with unambiguous keys."""
    v = report.sections["verification"]
    emp = report.sections["empirical"]["metrics"]
    return [
        {"metric": k, "definition": _METRICS.get(k, (k, None))[0],
         "verified": v["metrics"].get(k),
         "verified_network_relearned_on_test_rows":
             (v["metrics_network_relearned_on_test_rows"] or {}).get(k),
         "empirical_test_rows": emp.get(k),
         "empirical_fairlearn_function": _METRICS.get(k, (k, None))[1]}
        for k in v["metrics"]
    ]


def _frame_text(frame: pd.DataFrame, fmt: str = "{:.4f}") -> str:
    return frame.to_string(float_format=lambda x: fmt.format(x), na_rep="n/a")


def _wrap(text: str) -> str:
    """A prose line of the text report, wrapped at 100 characters."""
    return textwrap.fill(text, 100, subsequent_indent="    ", break_on_hyphens=False)


def _legend(report: AuditReport) -> list[tuple[str, str]]:
    """(column name, what its numbers are) for the verified-vs-empirical tables."""
    d, v = report.dataset, report.sections.get("verification")
    out = []
    if v:
        out += [("verified", _SOURCES["verified"] + ": exact rates of the model's "
                 f"integer rule (agreement with the model {v['agreement']:.4f}; "
                 f"{v['n_bins']} bins, multiplier {v['multiplier']}) when the features follow "
                 f"the network learned on the {d['train_rows']} training rows"),
                ("verified, test-row network", _SOURCES["verified, test-row network"]
                 + "; on the same rows as the empirical column, so their gap is the "
                 "modelling error of the network and the integer rule"
                 + (f" (not available here: {v['network_relearned_on_test_rows_error']})"
                    if v.get("network_relearned_on_test_rows_error") else ""))]
    out.append(("empirical", _SOURCES["empirical"] + ": the model's own "
                f"decisions on the {d['test_rows']} test rows"))
    return out


def _fairness_text(report: AuditReport) -> list[str]:
    """Verified vs empirical group rates and metrics, with what each number is."""
    v = report.sections.get("verification")
    out = ["", "== Group fairness: verified (FVGM) vs empirical =="]
    out += [_wrap(f"{name}: {text}") for name, text in _legend(report)]
    if v:
        out.append(_wrap("network (parents of each variable): "
                         + _parents_text(v["network_edges"])))
    out += [_wrap("Rates per group, probabilities in [0, 1] (n/a: no such group, or no row of "
                  "that label, and then left out of the gap):"),
            _frame_text(group_comparison(report)),
            _wrap("Metrics over the groups (DI is a ratio, 1 = fair; SP and EO are "
                  "differences of probabilities, max - min over the groups, 0 = fair; "
                  "empirical DI, SP, EO are fairlearn's demographic_parity_ratio, "
                  "demographic_parity_difference, equalized_odds_difference):"),
            _frame_text(metric_comparison(report))]
    if v:
        out += _fif_text(v)
    return out


def _fif_text(v: dict) -> list[str]:
    fif = pd.DataFrame(v["fairness_influence"])
    groups = [" / ".join(str(x) for x in g.values())
              for g in (v["most_favored_group"], v["least_favored_group"])]
    if fif.shape[1] > 5 and all(g in fif.columns for g in groups):
        fif = fif[["feature", *groups]]  # many groups: the two extremes
    if fif.empty:
        return []
    num = fif.select_dtypes("number")
    order = num.abs().max(axis=1).sort_values(ascending=False).index[:5]
    return [_wrap("top fairness influence (FIF, verified): change of each group's verified "
                  "selection rate (probability) due to the feature's real distribution rather "
                  "than one uniform within its observed range (FVGM Appendix E; categorical: "
                  "uniform over its categories; most and least favored groups when there are "
                  "many):"),
            fif.loc[order].to_string(index=False, float_format=lambda x: f"{x:+.4f}")]


def _counterfactual_text(c: dict) -> list[str]:
    groups = ""
    if c.get("privileged") is not None:
        groups = (f" (privileged = {c['privileged']}, unprivileged = "
                  f"{', '.join(c['unprivileged'])})")
    out = ["", f"== Counterfactual fairness ({c['attribute']}, k={c['k']}) ==",
           _wrap(f"Means over the refused test rows{groups} of CFlips@k (share of a row's k "
                 "counterfactuals that the sensitive classifier puts in another group; 0 = "
                 "fair) and nDCCF@k (rank-discounted share of those it keeps in the row's "
                 "group; 1 = fair); both in [0, 1]:")]
    for name, delta in (("cflips", "unprivileged - privileged"),
                        ("ndccf", "privileged - unprivileged")):
        vals = c[name]
        out.append(f"{name}: privileged {_fmt(vals['privileged'])}, unprivileged "
                   f"{_fmt(vals['unprivileged'])}, delta ({delta}) {_fmt(vals['delta'])}")
    out.append("refused rows used: " + ", ".join(f"{k} {v}" for k, v in
                                                 c["n_refused"].items()))
    clf = c.get("sensitive_classifier")
    if clf and clf.get("by_group"):
        how = ("out-of-fold on the training rows (cross-fitted)" if clf["held_out"]
               else "on the rows passed to fit (a frozen classifier; not held out)")
        out += [_wrap(f"sensitive classifier (judges every counterfactual), scored {how}: "
                      f"accuracy {_fmt(clf['accuracy'])}, ROC AUC {_fmt(clf.get('roc_auc'))}; "
                      "per group (shares in [0, 1]):"),
                _table_text(clf["by_group"])]
    return out + [_wrap(f"warning: {w}") for w in c["warnings"]]


def _esl_first_text(e: dict) -> list[str]:
    base = e.get("baseline", 0.5)
    out = ["", f"== ESL values, first stage ({e['attribute']}, metric {e['metric']}) ==",
           _wrap(f"units: {e['units']}; share = esl_value / total (total "
                 f"{_fmt(e['total_esl_units'])} ESL units)"),
           _table_text(e["table"])]
    t = e.get("test")
    if not t:
        out.append(_wrap(f"{len(e['table'])} groups: no single difference; the test of every "
                         "pair, in both units, is group_esl(...).pairwise()"))
    else:
        a, b = t["compared"]
        m = e["metric"].upper()
        out.append(_wrap(
            f"{m} difference {a} - {b}: {t['metric_difference']:+.4f} (raw {m} gap; ESL units: "
            f"{t['esl_difference']:+.4f} = metric / baseline {base:g}), std. error "
            f"{t['metric_std_error']:.4f} raw ({t['esl_std_error']:.4f} ESL), "
            f"z {t['z']:+.3f}, p-value {t['p_value']:.4f}, {e['confidence']:.0%} CI raw "
            f"[{t['metric_ci'][0]:+.4f}, {t['metric_ci'][1]:+.4f}]"
        ))
    return out


def _esl_second_text(e: dict) -> list[str]:
    pairs = {tuple(p) for p in e.get("compared", {}).values()}
    if len(pairs) == 1:
        a, b = pairs.pop()
        direction = f"{a} - {b}"
    else:
        direction = ", ".join(f"{k}: {p[0]} - {p[1]}" for k, p in e.get("compared", {}).items())
    return ["", f"== ESL values, second stage (features {', '.join(e['features'])}) ==",
            _wrap(f"units: {e['units']}; esl_difference, esl_std_error, esl_ci_* are the "
                  f"difference of the contributions, {direction}, in the same ESL units"),
            _table_text(e["table"])]


def _render_text(report: AuditReport) -> str:
    d, m, s = report.dataset, report.model, report.sections
    out = [
        f"skfairverify audit: {d['name']} ({d['rows']} rows, {d['features']} columns, "
        f"favorable rate {d['favorable_rate']:.3f}); sensitive: {', '.join(d['sensitive'])}",
        f"model: {m['description']}; accuracy train {m['train_accuracy']:.4f}, "
        f"test {m['test_accuracy']:.4f} ({d['train_rows']} training / {d['test_rows']} test "
        "rows)",
    ]
    out += _fairness_text(report)
    if "counterfactual" in s:
        out += _counterfactual_text(s["counterfactual"])
    if "esl_first_stage" in s:
        out += _esl_first_text(s["esl_first_stage"])
    if "esl_second_stage" in s:
        out += _esl_second_text(s["esl_second_stage"])
    out += ["", "timings (s): " + ", ".join(f"{k} {v}" for k, v in report.timings.items())]
    return "\n".join(out)


_CSS = ("body{font-family:sans-serif;margin:1.5em;max-width:75em}"
        "pre{font-size:0.85em;overflow-x:auto}"
        "table{border-collapse:collapse;margin:0.5em 0 1em;font-size:0.9em}"
        "th,td{border:1px solid #bbb;padding:0.2em 0.6em;text-align:right}"
        "caption{text-align:left;font-weight:bold;padding:0.3em 0}"
        "dl{font-size:0.9em}dt{font-weight:bold}dd{margin:0 0 0.4em 1.5em}")


def _fairness_html(report: AuditReport) -> list[str]:
    legend = _legend(report)
    return [
        "<h2>Group fairness: verified vs empirical</h2>",
        "<dl>" + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(t)}</dd>"
                         for k, t in legend) + "</dl>",
        _html_table(group_comparison(report),
                    "Rates per group (probabilities in [0, 1]; n/a: no such group or no row "
                    "of that label)"),
        _html_table(metric_comparison(report),
                    "Metrics over the groups (DI: ratio, 1 = fair; SP, EO: max - min "
                    "difference of probabilities, 0 = fair; empirical = fairlearn's "
                    "demographic_parity_ratio, demographic_parity_difference, "
                    "equalized_odds_difference)"),
    ]


def _html_table(frame: pd.DataFrame, caption: str) -> str:
    table = frame.to_html(float_format=lambda x: f"{x:.4f}", na_rep="n/a", border=0)
    head, rest = table.split(">", 1)
    return f"{head}><caption>{html.escape(caption)}</caption>{rest}"


def _render_html(report: AuditReport) -> str:
    body = [f"<h1>skfairverify audit: {html.escape(report.dataset['name'])}</h1>",
            *_fairness_html(report),
            "<h2>Full text report</h2>",
            f"<pre>{html.escape(report.to_text())}</pre>"]
    for title, png in report.figures.items():
        body.append(f"<h2>{html.escape(title)}</h2>"
                    f'<img alt="{html.escape(title)}" src="data:image/png;base64,{png}">')
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>skfairverify audit"
            f"</title><style>{_CSS}</style></head><body>" + "\n".join(body)
            + "</body></html>\n")


# ----------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skfairverify", description="Fairness verification for scikit-learn models."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    audit = sub.add_parser(
        "audit", help="audit a linear model on a bundled dataset or a CSV file",
        description="Train (or load) a linear model and print one fairness report: "
                    "verified group metrics (population under the learned Bayesian "
                    "network, FVGM) beside the empirical ones on the test rows (fairlearn "
                    "MetricFrame), counterfactual flips and ESL values.",
    )
    src = audit.add_mutually_exclusive_group()
    src.add_argument("--dataset", choices=_DATASETS, default=None,
                     help="bundled dataset (default: german)")
    src.add_argument("--csv", metavar="FILE", help="a CSV file with a header row")
    audit.add_argument("--target", help="label column of the CSV")
    audit.add_argument("--positive", help="favorable value of the CSV label")
    audit.add_argument("--sensitive", nargs="+", metavar="COL",
                       help="sensitive columns (default for bundled data: its usual ones)")
    audit.add_argument("--model", metavar="FILE",
                       help="a fitted model saved with joblib (taking the data's columns)")
    audit.add_argument("--steps", nargs="+", choices=_STEPS, default=list(_STEPS))
    audit.add_argument("--k", type=int, default=10, help="counterfactuals per refused row")
    audit.add_argument("--esl-features", type=int, default=4,
                       help="features in the second ESL stage (2^n fits for Shapley)")
    audit.add_argument("--random-state", type=int, default=0)
    audit.add_argument("--html", metavar="FILE", help="also write an HTML report with plots")
    audit.add_argument("--json", action="store_true", help="print JSON instead of text")
    audit.add_argument("--quiet", action="store_true", help="no progress messages")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.csv:
        if not args.target or not args.sensitive:
            parser.error("--csv needs --target and --sensitive")
        X, y, sensitive = _load_csv(args.csv, args.target, args.sensitive, args.positive)
        name = Path(args.csv).name
    else:
        name = args.dataset or "german"
        X, y, sensitive = _load_bundled(name)
        if args.sensitive:
            sensitive = args.sensitive
    model = None
    if args.model:
        import joblib

        model = joblib.load(args.model)
    report = run_audit(
        X, y, sensitive, model=model, dataset_name=name, steps=args.steps, k=args.k,
        n_esl_features=args.esl_features, figures=bool(args.html),
        random_state=args.random_state, verbose=0 if (args.quiet or args.json) else 1,
    )
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print(report.to_text())
    if args.html:
        Path(args.html).write_text(report.to_html(), encoding="utf-8")
        if not args.json:
            print(f"HTML report written to {args.html}")
    return 0
