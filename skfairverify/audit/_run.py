"""The audit's steps: split and model, verification, counterfactuals, ESL values."""

from __future__ import annotations

import base64
import io
import math
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split

from ..counterfactual import CounterfactualFairness
from ..esl import esl_decomposition, group_esl
from ..plotting import (
    plot_cflips_at_k,
    plot_esl_contributions,
    plot_esl_intervals,
    plot_fairness_influence,
    plot_group_rates,
    plot_group_shares,
)
from ..rules import read_model
from ..s3p import TableTooLargeError
from ..utils._compat import HasMethods, Interval, RealNotInt, StrOptions, validate_params
from ..utils._validation import check_sensitive_features
from ..verification import FairnessVerifier
from ..verification._display import interval_note, model_check_fact
from ..verification._ensemble_path import estimator_columns, read_ensemble_or_reason
from ._common import (
    POPULATION_LABEL,
    RELEARNED_LABEL,
    VERIFIED_LABEL,
    jsonable,
    records,
    small_samples,
)
from ._data import (
    default_model,
    favorable_model,
    missing_counts,
    taking_all_columns,
    top_features,
    unaware_model,
)
from ._empirical import empirical_group_metrics
from ._report import AuditReport
from ._tables import comparison_records

STEPS = ("verify", "counterfactual", "esl")
#: Width of the sampling path's confidence intervals in the audit (non-linear, non-tree
#: models): 0.02 at 99% confidence, 16x fewer rows than the verifier's default 0.005
#: (German with a HistGradientBoosting pipeline took more than 12 minutes at 0.005).
AUDIT_TOLERANCE = 0.02

FIF_UNITS = ("change of each group's verified selection rate (probability) due to the "
             "feature's distribution rather than one uniform within its observed range "
             "(FVGM Appendix E; categorical: uniform over its categories)")


@dataclass
class _Audit:
    """What every step reads: the split, the model and its test decisions, the options."""

    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series
    model: object
    y_pred: np.ndarray
    sensitive_features: list[str]
    random_state: int | None
    verbose: int
    figures: bool
    report: AuditReport
    privileged: object = None
    method: str = "auto"

    @property
    def frozen(self) -> FrozenEstimator:
        """The model, read as it is by every analysis."""
        return FrozenEstimator(self.model)

    def say(self, msg: str) -> None:
        _say(self.verbose, msg)

    def figure(self, title: str, axes) -> None:
        """Keep the figure holding ``axes`` (one Axes or an array of them) as a PNG."""
        import matplotlib.pyplot as plt

        fig = np.ravel(axes)[0].figure
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
        plt.close(fig)
        self.report.figures[title] = base64.b64encode(buf.getvalue()).decode("ascii")


def _say(verbose: int, msg: str) -> None:
    if verbose:
        print(f"[audit] {msg}", file=sys.stderr, flush=True)


def _check_inputs(X, y, sensitive_features, steps) -> tuple[pd.DataFrame, pd.Series, list]:
    """``X`` with the sensitive columns (values given are added), labels, their names."""
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ValueError(f"Unknown audit step(s) {unknown}; choose among {list(STEPS)}.")
    resolved = check_sensitive_features(sensitive_features, X)
    names = resolved.names
    if names is None:  # values: they join X as columns
        clash = [c for c in resolved.frame.columns if c in X.columns]
        if clash:
            raise ValueError(f"sensitive_features values are named {clash}, columns of X "
                             "already; rename them or pass the column names.")
        X = pd.concat([X, resolved.frame], axis=1)
        names = list(resolved.frame.columns)
    return X, pd.Series(np.asarray(y), index=X.index, name="target"), list(names)


def _fit_model(model, X_train, y_train, X, sensitive_features, verbose,
               label=None) -> tuple[object, str]:
    """The model to audit (deciding 0/1, 1 = favorable) and its description."""
    if model is not None:
        decided, note = favorable_model(taking_all_columns(model, X), X, label)
        description = f"user model {type(model).__name__}"
        return decided, description + (f" ({note})" if note else "")
    n = X.shape[1] - len(sensitive_features)
    _say(verbose, f"training a logistic regression on {n} non-sensitive columns")
    return (unaware_model(X_train, y_train, sensitive_features),
            "LogisticRegression on the non-sensitive columns (unaware)")


def _check_missing(model, X, description: str) -> None:
    """Refuse, naming the columns, a user model that cannot decide rows with missing values."""
    rows = X[X.isna().any(axis=1)]
    if rows.empty:
        return
    try:
        model.predict(rows.iloc[:50])
    except ValueError as exc:
        raise ValueError(
            f"The {description} cannot decide the rows with missing values (columns "
            f"{list(missing_counts(X))}): {' '.join(str(exc).split())[:200]}. Save a model "
            "with an imputer in its pipeline (or one that handles NaN), or drop those "
            "columns with --drop."
        ) from exc


def _relearned_on_test_rows(verifier, X_test, y_test
                            ) -> tuple[dict | None, dict | None, str | None]:
    """The metrics and intervals of the verifier re-learned on the test rows, or why not.

    ``verify`` refuses test rows it cannot encode (e.g. a value of a many-valued numeric
    column that the training rows never showed); the audit then reports the reason in
    place of these model-based numbers instead of failing.
    """
    try:
        result = verifier.verify(X_test, y_test)
    except ValueError as exc:
        return None, None, str(exc)
    return jsonable(result.metrics), jsonable(result.metric_intervals), None


def _network_edges(net) -> list[tuple[str, str]]:
    return [(net.names[p], net.names[i])
            for i in range(len(net.parents)) for p in net.parents[i]]


def held_out_check(population, test_rates: dict, test_rows: dict, sensitive) -> list[dict]:
    """The model check on the test rows: the network's rates against the held-out rows.

    For every group, ``z = (network - test) / sqrt(se_network^2 + p (1 - p) / n_test)``,
    the network learned on the training rows (its standard error from the population
    estimate's replicates) and the test rows' own rate independent of it; ``p`` the
    pooled rate. Two-sided normal p-values.
    """
    from scipy.stats import norm

    if population is None:
        return []
    out = []
    rows = population[population["rate"] == "positive_rate"]
    for _, r in rows.iterrows():
        key = tuple(str(r[c]) for c in sensitive)
        rate, n = test_rates.get(key), test_rows.get(key, 0)
        if rate is None or not n or rate != rate:
            continue
        pooled = (r["network"] * r["rows"] + rate * n) / (r["rows"] + n)
        se = math.sqrt(r["network_se"] ** 2 + max(pooled * (1 - pooled), 1e-12) / n)
        z = (r["network"] - rate) / se
        out.append({**{c: jsonable(r[c]) for c in sensitive}, "network": float(r["network"]),
                    "test_rate": float(rate), "test_rows": int(n),
                    "discrepancy": float(r["network"] - rate), "z": float(z),
                    "pvalue": float(2 * norm.sf(abs(z)))})
    return out


def _verification_section(verifier, fif, X_test, y_test) -> dict:
    test_metrics, test_intervals, test_error = _relearned_on_test_rows(verifier, X_test,
                                                                       y_test)
    population = getattr(verifier, "population_", None)
    return {
        "label": VERIFIED_LABEL,
        "population_label": POPULATION_LABEL,
        "population_metrics": jsonable(verifier.population_metrics_),
        "population_metric_intervals": jsonable(verifier.population_metric_intervals_),
        "population_level": float(verifier.credible_level),
        "population": None if population is None else records(population),
        "model_check": model_check_fact(population),
        "groups": records(verifier.groups_),
        "metrics": jsonable(verifier.metrics_),
        "metrics_network_relearned_on_test_rows": test_metrics,
        "metric_intervals_network_relearned_on_test_rows": test_intervals,
        "label_metrics_network_relearned_on_test_rows": RELEARNED_LABEL,
        "network_relearned_on_test_rows_error": test_error,
        "most_favored_group": jsonable(verifier.most_favored_group_),
        "least_favored_group": jsonable(verifier.least_favored_group_),
        "agreement": float(verifier.agreement_),
        "n_bins": verifier.n_bins_,
        "n_bins_reason": verifier.n_bins_reason_,
        "multiplier": None if verifier.multiplier_ is None else int(verifier.multiplier_),
        "method": verifier.method_,
        "method_reason": verifier.method_reason_,
        "metric_intervals": jsonable(verifier.metric_intervals_),
        "intervals": _interval_note(verifier),
        "n_samples": int(verifier.n_samples_),
        "network_edges": _network_edges(verifier.network_),
        "fairness_influence": records(fif.table),
        "fairness_influence_ci_low": None if fif.ci_low is None else records(fif.ci_low),
        "fairness_influence_ci_high": None if fif.ci_high is None else records(fif.ci_high),
        "fairness_influence_intervals": jsonable(fif.intervals),
        "fairness_influence_units": FIF_UNITS,
    }


def _interval_note(verifier) -> dict:
    """What ``ci_low`` / ``ci_high`` and ``metric_intervals`` are, JSON-ready."""
    return interval_note(verifier)


#: Features whose fairness influence the audit computes (one engine run, and its posterior
#: draws, each): beyond, the ones that move the model's decisions most.
AUDIT_FIF_FEATURES = 20


def _influence_features(verifier, audit: _Audit) -> tuple[list | None, str | None]:
    """The features of the audit's fairness influence (None: all), and a line saying so."""
    features = [v for v in verifier.variables_ if v not in verifier.sensitive_features_]
    if len(features) <= AUDIT_FIF_FEATURES:
        return None, None
    top = top_features(audit.frozen, audit.X_train, features, AUDIT_FIF_FEATURES,
                       y=audit.y_train, random_state=audit.random_state)
    return ([[f] for f in top],
            f"fairness influence of the {len(top)} features (of {len(features)}) that move "
            "the model's decisions most (each costs an engine run and its posterior draws)")


def _fairness_influence(verifier, features, audit: _Audit):
    """The influences with their intervals, or point values where the draws are refused.

    The posterior draws of an influence are estimated before they run and refused
    beyond ``max_table_size`` (``TableTooLargeError``); the audit then reports the
    point influences and says why, rather than losing the verified report.
    """
    try:
        return verifier.fairness_influence(features), None
    except TableTooLargeError as exc:
        why = str(exc).split(" Pass intervals=False")[0]  # the audit does just that
        note = f"fairness influence as point values, without intervals: {why}"
        audit.say(note)
        return verifier.fairness_influence(features, intervals=False), note


def _verify_step(audit: _Audit, timings: dict) -> None:
    audit.say("verifying: learning the Bayesian network and computing the group rates")
    t0 = time.perf_counter()
    verifier = FairnessVerifier(audit.frozen, audit.sensitive_features,
                                method=audit.method, tolerance=AUDIT_TOLERANCE,
                                random_state=audit.random_state,
                                verbose=audit.verbose).fit(audit.X_train, audit.y_train)
    timings["verify"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    features, influence_note = _influence_features(verifier, audit)
    if influence_note:
        audit.say(influence_note)
    fif, point_note = _fairness_influence(verifier, features, audit)
    timings["fairness_influence"] = time.perf_counter() - t0
    sections = audit.report.sections
    sections["verification"] = _verification_section(verifier, fif, audit.X_test,
                                                     audit.y_test)
    sections["verification"]["fairness_influence_features"] = (
        "; ".join(n for n in (influence_note, point_note) if n) or None)
    sensitive = list(verifier.sensitive_features_)
    empirical = sections.get("empirical", {}).get("groups", [])
    keys = [tuple(str(r[c]) for c in sensitive) for r in empirical]
    sections["verification"]["model_check_held_out"] = held_out_check(
        getattr(verifier, "population_", None),
        {k: r.get("selection_rate") for k, r in zip(keys, empirical)},
        {k: r.get("rows") for k, r in zip(keys, empirical)}, sensitive)
    sections["comparison"] = comparison_records(audit.report)
    if audit.figures:
        audit.figure("Group positive rates (population and network)",
                     plot_group_rates(verifier))
        audit.figure("Fairness influence of the features",
                     plot_fairness_influence(verifier, fif=fif))


def _classifier_summary(summary: dict | None) -> dict | None:
    """The sensitive classifier's precision / recall per group, JSON-ready."""
    if not summary:
        return None
    by_group = summary.get("by_group")
    return {"held_out": bool(summary.get("held_out")),
            "accuracy": jsonable(summary.get("accuracy")),
            "roc_auc": jsonable(summary.get("roc_auc")),
            "by_group": records(by_group) if isinstance(by_group, pd.DataFrame) else None}


def _counterfactual_section(cf, result, names: list, k: int, caught: list,
                            rule: str) -> dict:
    return {
        "sensitive_features": list(names),
        "k": k,
        "privileged": jsonable(cf.privileged_),
        "privileged_rule": rule,
        "unprivileged": [str(g) for g in cf.groups_ if g != cf.privileged_],
        "cflips": jsonable(result.cflips),
        "ndccf": jsonable(result.ndccf),
        "n_refused": jsonable(result.n_refused),
        "delta_definition": {"cflips": "unprivileged - privileged",
                             "ndccf": "privileged - unprivileged"},
        "units": "CFlips@k and nDCCF@k are shares in [0, 1] (means over the refused "
                 "test rows); CFlips 0 = fair, nDCCF 1 = fair",
        "sensitive_classifier": _classifier_summary(result.sensitive_classifier),
        "generator": cf.generator if isinstance(cf.generator, str)
        else type(cf.generator).__name__,
        "warnings": [str(w.message) for w in caught],
    }


def _fit_on_rows_it_accepts(cf, X_train, y_train, X_test):
    """Fit ``cf``; the test rows to evaluate, and the rows dropped (None: every row).

    When the step refuses missing values, the rows with one are left out (counted, with
    the reason); tried on all rows first, so that the step takes every row once it
    accepts missing values.
    """
    try:
        return cf.fit(X_train, y_train), X_test, None
    except ValueError as exc:
        if not (X_train.isna().any().any() and "missing values" in str(exc)):
            raise
    keep_train, keep_test = X_train.notna().all(axis=1), X_test.notna().all(axis=1)
    dropped = {"train": int((~keep_train).sum()), "test": int((~keep_test).sum())}
    dropped["reason"] = (
        f"{dropped['train']:,} training and {dropped['test']:,} test rows with a missing "
        "value left out: CounterfactualFairness does not take missing values (columns "
        + ", ".join(missing_counts(X_train)) + ")")
    return cf.fit(X_train[keep_train], y_train[keep_train]), X_test[keep_test], dropped


def _group_name(label) -> str:
    """A group as the reports write it: the values of a compound group joined by " / "."""
    if isinstance(label, tuple):
        return " / ".join(map(str, label))
    return str(label).replace("|", " / ")


def _compound_summary(cf, result) -> dict:
    """The privileged side, the unprivileged groups and the small comparisons, readable."""
    unprivileged = (result.groups or {}).get("unprivileged") if hasattr(result, "groups") \
        else None
    if unprivileged is None:
        unprivileged = [g for g in cf.groups_ if g != cf.privileged_]
    by_group = getattr(result, "by_group", None)
    small = {}
    if isinstance(by_group, pd.DataFrame) and "small_sample" in by_group:
        small = {_group_name(g): int(row["n_refused"])
                 for g, row in by_group[by_group["small_sample"]].iterrows()}
    table = None
    if isinstance(by_group, pd.DataFrame):
        table = by_group.rename(index=_group_name).rename_axis("group")
        table = records(table.drop(columns=[c for c in ("small_sample",) if c in table]))
    return {"privileged": _group_name(cf.privileged_),
            "unprivileged": [_group_name(g) for g in unprivileged],
            "by_group": table,
            "small_samples": small or small_samples(result.n_refused)}


def _counterfactual_step(audit: _Audit, timings: dict, k: int) -> None:
    names = audit.sensitive_features
    described = " x ".join(map(repr, names))
    audit.say(f"counterfactuals: CFlips/nDCCF for {described} (k={k})")
    t0 = time.perf_counter()
    # every sensitive column: the compound groups, the privileged one given, documented
    # or chosen by CounterfactualFairness's own rule (privileged_group), as the API does
    cf = CounterfactualFairness(audit.frozen, list(names), k=k, privileged=audit.privileged,
                                random_state=audit.random_state, verbose=audit.verbose)
    cf, X_test, dropped = _fit_on_rows_it_accepts(cf, audit.X_train, audit.y_train,
                                                  audit.X_test)
    if dropped:
        audit.say(f"counterfactuals: {dropped['reason']}")
    rule = cf.privileged_rule_
    audit.say(f"counterfactuals: privileged group of {described} = "
              f"{_group_name(cf.privileged_)!r} ({rule})")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = cf.evaluate(X_test)
    timings["counterfactual"] = time.perf_counter() - t0
    section = _counterfactual_section(cf, result, names, k, caught, rule)
    section.update(_compound_summary(cf, result))
    section["dropped_rows"] = dropped
    audit.report.sections["counterfactual"] = section
    if audit.figures:
        audit.figure("CFlips@k per group", plot_cflips_at_k(result))


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


def _esl_sections(first, second, attribute: str, chosen: list[str]) -> dict:
    frame = first.to_frame()
    return {
        "esl_first_stage": {
            "sensitive_features": [attribute],
            "metric": "tpr",
            "baseline": first.baseline,
            "confidence": first.confidence,
            "units": first.units,
            "total_esl_units": first.total,
            "table": records(frame),
            "test": jsonable(_first_stage_test(first)),
        },
        "esl_second_stage": {
            "features": chosen,
            "baseline": first.baseline,
            "units": f"ESL units = tpr / baseline ({first.baseline:g}): contributions "
                     "of the features to each group's first-stage ESL value",
            "compared": {str(k): [str(g) for g in v]
                         for k, v in (second.compared or {}).items()},
            "table": records(second.contributions),
        },
    }


def compound_groups(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """The compound group of every row: the values of ``columns`` joined by ``" / "``.

    One column: that column itself. Several: their intersections, as one column named
    ``"a / b"``, so that a step taking one attribute compares the verifier's groups.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.audit._run import compound_groups
    >>> compound_groups(pd.DataFrame({"race": ["W", "B"], "sex": ["F", "M"]}),
    ...                 ["race", "sex"]).tolist()
    ['W / F', 'B / M']
    """
    if len(columns) == 1:
        return frame[columns[0]]
    values = frame[columns].astype(str).agg(" / ".join, axis=1)
    return values.rename(" / ".join(columns))


def _esl_step(audit: _Audit, timings: dict, n_features: int, max_fits: int) -> None:
    train = compound_groups(audit.X_train, audit.sensitive_features)
    test = compound_groups(audit.X_test, audit.sensitive_features)
    attribute = str(test.name)
    audit.say(f"ESL values: first stage (groups of {attribute!r}) and second stage "
              "(features)")
    t0 = time.perf_counter()
    # a group without a test row of label 1 has no TPR: left out of this step, and said
    has_positive = pd.Series(np.asarray(audit.y_test) == 1, index=test.index).groupby(
        test.astype(object)).transform("any").to_numpy()
    left_out = sorted(map(str, pd.unique(test[~has_positive])))
    y_test, y_pred = audit.y_test[has_positive], audit.y_pred[has_positive]
    test = test[has_positive]
    first = group_esl(y_test, y_pred, sensitive_features=test, metric="tpr")
    candidates = [c for c in audit.X_train.columns if c not in audit.sensitive_features]
    chosen = top_features(audit.model, audit.X_train, candidates, n_features,
                          y=audit.y_train, random_state=audit.random_state)
    X_train, X_test = audit.X_train, audit.X_test[has_positive]
    if attribute not in X_train.columns:  # the compound groups, a column beside the others
        X_train, X_test = X_train.assign(**{attribute: train}), X_test.assign(**{attribute: test})
    second = esl_decomposition(
        default_model(), X_train, audit.y_train, X_test=X_test,
        y_test=y_test, sensitive_features=attribute, features=chosen, metric="tpr",
        random_state=audit.random_state, verbose=audit.verbose, max_fits=max_fits,
    )
    timings["esl"] = time.perf_counter() - t0
    audit.report.sections.update(_esl_sections(first, second, attribute, chosen))
    positives = test[np.asarray(y_test) == 1]
    stage = audit.report.sections["esl_first_stage"]
    stage["rows"] = {str(g): int(n) for g, n in positives.value_counts(sort=False).items()
                     if n}
    stage["groups_left_out"] = left_out and (
        f"group(s) {', '.join(left_out)} left out of the ESL values: no test row of label "
        "1, so no TPR")
    if audit.figures:
        audit.figure("First-stage ESL shares", plot_group_shares(first))
        audit.figure("ESL values and differences with their intervals",
                     plot_esl_intervals(first))
        audit.figure("Second-stage contributions", plot_esl_contributions(second))


def _check_method(method: str, model, X: pd.DataFrame, description: str) -> None:
    """Refuse, before any analysis, a ``method`` the model has no path for."""
    if method == "bounds":
        reading, reason = read_ensemble_or_reason(
            FrozenEstimator(model), estimator_columns(model, list(X.columns)))
        if reading is None:
            raise ValueError(
                f"method='bounds' verifies a tree ensemble, and the model ({description}) "
                f"is not one the bounds path reads: {str(reason).rstrip('.')}. Leave "
                "method='auto'.")
    if method == "exact" and read_model(FrozenEstimator(model)).kind is None:
        raise ValueError(
            f"method='exact' needs a linear model or a decision tree; the model "
            f"({description}) is neither. Leave method='auto' (it samples any other "
            "model).")


@validate_params(
    {
        "X": [pd.DataFrame],
        "y": ["array-like"],
        "sensitive_features": [str, list, tuple, "array-like"],
        "model": [HasMethods(["fit", "predict"]), None],
        "dataset_name": [str],
        "steps": [list, tuple],
        "test_size": [Interval(RealNotInt, 0, 1, closed="neither")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "n_esl_features": [Interval(Integral, 1, None, closed="left")],
        "max_fits": [Interval(Integral, 1, None, closed="left")],
        "privileged": "no_validation",
        "figures": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "provenance": [dict, None],
        "method": [StrOptions({"auto", "exact", "bounds", "sampling"})],
    },
    prefer_skip_nested_validation=True,
)
def run_audit(
    X: pd.DataFrame,
    y,
    sensitive_features,
    *,
    model=None,
    dataset_name: str = "data",
    steps: Sequence[str] = STEPS,
    test_size: float = 0.3,
    k: int = 10,
    n_esl_features: int = 4,
    figures: bool = False,
    random_state: int | None = 0,
    verbose: int = 1,
    privileged=None,
    max_fits: int = 2**12,
    provenance: dict | None = None,
    method: str = "auto",
) -> AuditReport:
    """Audit a linear model for fairness on one dataset.

    Parameters
    ----------
    X : pandas.DataFrame
        Features, sensitive columns included (or given as values).
    y : array-like of shape (n_samples,)
        Binary labels, 1 = favorable outcome.
    sensitive_features : str, list of str, array-like, Series or DataFrame
        A sensitive column of ``X``, a list of them, or the values themselves (one row
        per row of ``X``; they join ``X`` as columns under their names). The verifier
        uses all of them (compound groups), and so do the counterfactual and ESL steps.
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
    privileged : label or tuple, default=None
        Privileged group of the counterfactual step, which compares the compound groups
        of every sensitive feature (that group against all the others): a value of the
        one sensitive feature, or a tuple of values of all of them. ``None``:
        :class:`~skfairverify.CounterfactualFairness`'s own rule
        (:func:`~skfairverify.counterfactual.privileged_group`). The report's
        ``counterfactual`` section names the group used and the rule
        (``privileged``, ``privileged_rule``).
    max_fits : int, default=4096
        Largest number of coalition models the ESL second stage may fit
        (``2 ** n_esl_features - 1`` for the Shapley member); beyond it the audit is
        refused with :class:`~skfairverify.s3p.TableTooLargeError` before any fit.
    provenance : dict, default=None
        What the data's loading did, shown on the first lines of every report and kept
        in its ``dataset``: ``rows_read``, ``dropped_rows`` (``{"rows", "reason"}``
        records), ``favorable_label`` (``{"column", "value", "rule", "labels"}``: a
        user ``model`` fitted on those labels is read through them),
        ``columns_left_out`` (``{"columns", "reason"}`` records); ``missing_values``
        (column -> count) is counted on ``X``. The command line fills it in.
    method : {"auto", "exact", "bounds", "sampling"}, default="auto"
        The verifier's path (:class:`~skfairverify.FairnessVerifier`'s ``method``):
        ``"auto"`` bounds a tree-ensemble ``model`` where the check of the verifier
        says the bounds pay and samples it otherwise (the report's ``method_reason``
        says why), ``"bounds"`` bounds it whatever it costs; on the bounds path
        ``rate_lower``, ``rate_upper`` and ``settled`` are in the report's verified
        groups.

    Returns
    -------
    AuditReport
        Every section, labelled; ``to_text()``, ``to_html()``, ``to_dict()``.

    See Also
    --------
    AuditReport : the report and its renderings.

    Examples
    --------
    >>> from skfairverify.audit import run_audit
    >>> from skfairverify.datasets import load_german
    >>> data = load_german()
    >>> report = run_audit(data.data, data.target, "sex", steps=["esl"],
    ...                    verbose=0)  # doctest: +SKIP
    >>> report.sections["esl_first_stage"]["metric"]  # doctest: +SKIP
    'tpr'
    """
    X, y, sensitive_features = _check_inputs(X, y, sensitive_features, steps)
    timings: dict[str, float] = {}
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=random_state
    )
    t0 = time.perf_counter()
    provenance = {"rows_read": int(len(X)), "missing_values": missing_counts(X),
                  **(provenance or {})}
    model, description = _fit_model(model, X_train, y_train, X, sensitive_features, verbose,
                                    provenance.get("favorable_label"))
    _check_missing(model, X, description)
    _check_method(method, model, X, description)
    timings["model"] = time.perf_counter() - t0
    report = AuditReport(
        dataset={
            "name": dataset_name,
            "rows": int(len(X)),
            "features": int(X.shape[1]),
            "favorable_rate": float(y.mean()),
            "sensitive_features": sensitive_features,
            "train_rows": int(len(X_train)),
            "test_rows": int(len(X_test)),
            **provenance,
        },
        model={
            "description": description,
            "train_accuracy": float(model.score(X_train, y_train)),
            "test_accuracy": float(model.score(X_test, y_test)),
        },
        settings={"random_state": random_state, "test_size": test_size, "k": k,
                  "n_esl_features": n_esl_features, "max_fits": max_fits,
                  "steps": list(steps), "method": method},
    )
    audit = _Audit(X_train, X_test, y_train, y_test, model, model.predict(X_test),
                   sensitive_features, random_state, verbose, figures, report, privileged,
                   method)
    empirical = empirical_group_metrics(y_test, audit.y_pred, X_test[sensitive_features])
    empirical["small_samples"] = small_samples({
        " / ".join(str(g[c]) for c in sensitive_features): g["rows"]
        for g in empirical["groups"]})
    report.sections["empirical"] = empirical
    if "verify" in steps:
        _verify_step(audit, timings)
    if "counterfactual" in steps:
        _counterfactual_step(audit, timings, k)
    if "esl" in steps:
        _esl_step(audit, timings, n_esl_features, max_fits)
    report.timings = {k_: round(v, 3) for k_, v in timings.items()}
    return report
