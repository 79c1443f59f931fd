"""A GridSearchCV scorer from the verifier (FVGM metrics, greater is better)."""

from __future__ import annotations

import pandas as pd
from sklearn.frozen import FrozenEstimator

from ..verification import FairnessVerifier
from ._base import _FairnessScorer

__all__ = ["make_verifier_scorer"]

_METRICS = ("disparate_impact", "statistical_parity", "equalized_odds", "path_specific_causal")
_BOUNDS = ("estimate", "pessimistic")
_RATES = ("population", "network")


def _metadata_values(X, sensitive: pd.DataFrame) -> pd.DataFrame:
    """Sensitive values of the metadata route, renamed apart from the columns of ``X``.

    The verifier reads ``X`` and the values side by side; a value column named as a
    column of ``X`` is renamed ``<name>__sensitive``.
    """
    columns = {str(c) for c in X.columns} if isinstance(X, pd.DataFrame) else set()
    return sensitive.rename(
        columns=lambda c: f"{c}__sensitive" if str(c) in columns else c
    )


class _VerifierScorer(_FairnessScorer):
    """Scores a fitted classifier by a metric of :class:`FairnessVerifier`."""

    def __init__(self, metric, sensitive_features=None, verifier_params=None,
                 bound="estimate", rate="population"):
        super().__init__(sensitive_features=sensitive_features)
        self.metric = metric
        self.verifier_params = dict(verifier_params or {})
        self.bound = bound
        self.rate = rate

    def _score(self, estimator, X, y, sensitive: pd.DataFrame, sample_weight=None) -> float:
        if self.metric == "equalized_odds" and y is None:
            raise ValueError("The equalized_odds verifier scorer needs y.")
        names = self._sensitive_names  # columns of X named at creation, or None
        values = None if names is not None else _metadata_values(X, sensitive)
        verifier = FairnessVerifier(FrozenEstimator(estimator), names, **self.verifier_params)
        # Labels only matter for equalized odds; without them the verifier learns one
        # network instead of three (all rows, Y = 1, Y = 0).
        verifier.fit(X, y if self.metric == "equalized_odds" else None,
                     sensitive_features=values, sample_weight=sample_weight)
        value = self._value(verifier)
        return value if self.metric == "disparate_impact" else -value

    def _value(self, verifier) -> float:
        """The metric (population or network), or the worst end of its interval."""
        if self.rate == "population":
            values = verifier.population_metrics_
            intervals = verifier.population_metric_intervals_
        else:
            values, intervals = verifier.metrics_, verifier.metric_intervals_
        if self.metric not in values or values[self.metric] != values[self.metric]:
            raise ValueError(
                f"The verifier has no {self.rate} value of {self.metric} on these rows (for "
                "equalized odds: fewer than two groups have rows of each label); score on "
                "more rows, or use another metric."
            )
        if self.bound == "estimate":
            return float(values[self.metric])
        low, high = intervals[self.metric]  # the worst end: smallest ratio, largest gap
        return float(low if self.metric == "disparate_impact" else high)


def make_verifier_scorer(*, sensitive_features=None, metric="statistical_parity",
                         bound="estimate", rate=None, **verifier_params):
    """Scorer that verifies each candidate on the validation fold.

    The candidate (any fitted binary classifier: exact for linear models and decision
    trees, certified sampling otherwise, see ``method``) is wrapped in
    :class:`~sklearn.frozen.FrozenEstimator` and given to a
    :class:`~skfairverify.FairnessVerifier` fitted on the validation rows, so the
    Bayesian network is learned on them. Greater is better: the scorer returns the
    disparate impact ratio, or minus the gap for the other metrics (like
    scikit-learn's ``neg_*`` scorers). Sample weights (passed by a search, or by
    metadata routing with ``set_score_request(sample_weight=True)``) go to the
    verifier's ``fit``: every count of the verification is weighted.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` with the sensitive attributes. Leave None to receive their
        values as metadata (``scorer.set_score_request(sensitive_features=True)`` with
        metadata routing enabled); they are then given to the verifier's ``fit`` as
        ``sensitive_features`` values (the candidate never sees them).
    metric : {"statistical_parity", "disparate_impact", "equalized_odds", \
"path_specific_causal"}, default="statistical_parity"
        The verified metric. ``"path_specific_causal"`` needs ``mediators=...``.
    bound : {"estimate", "pessimistic"}, default="estimate"
        ``"estimate"``: the metric's point estimate. ``"pessimistic"``: the worst end of
        the metric's interval: the upper end of a gap, the lower end of disparate
        impact. This is the bound a fairness constraint in model selection should
        use: a candidate is then fair enough only if it is so over the whole interval,
        so a small validation fold cannot make an unfair model look fair by chance.
    rate : {"population", "network"}, default=None
        Which value of the metric. ``"population"`` (the default for disparate impact,
        statistical parity and equalized odds): the population estimate
        (``population_metrics_``, intervals ``population_metric_intervals_``), which
        combines the network's exact rates with the groups' rows and holds when the
        network does not fit (``n_bootstrap`` replicates; ``n_draws=0`` unless given,
        the network's own intervals being unused). ``"network"`` (the default and the
        only value for ``path_specific_causal``, an intervention on the network):
        the rates verified under the learned network (``metrics_``, intervals
        ``metric_intervals_``: ``n_draws`` posterior draws on the exact paths, so
        ``bound="pessimistic"`` needs ``n_draws > 0`` there; the sound bounds of
        ``method="bounds"`` and the Monte Carlo intervals of sampling hold without
        draws). The verifier then runs with ``n_bootstrap=0`` unless given (the
        population estimate, which draws its replicates apart, is not read: the same
        score, without its cost), and with ``bound="estimate"`` with ``n_draws=0``.
    **verifier_params
        Further parameters of :class:`~skfairverify.FairnessVerifier` (``n_bins``,
        ``network``, ``mediators``, ``method``, ``tolerance``, ``random_state``, ...).
        ``random_state`` is 0 unless given, so that every candidate is scored on the
        same bootstrap replicates, held-out split and draws (a score is then a
        deterministic function of the candidate and the rows).

    Returns
    -------
    callable
        A scorer ``scorer(estimator, X, y, *, sensitive_features=None,
        sample_weight=None)`` with ``set_score_request``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skfairverify.metrics import make_verifier_scorer
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 600)
    >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0)})
    >>> y = (X["x"] + rng.normal(0, 1, 600) > 0.5).astype(int)
    >>> scorer = make_verifier_scorer(sensitive_features="a", metric="disparate_impact",
    ...                               network="independent", n_bins=10)
    >>> search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, scoring=scorer,
    ...                       cv=2).fit(X, y)
    >>> bool(0.0 <= search.best_score_ <= 1.0)
    True

    The pessimistic bound of the gap, for a fairness constraint (it is below the
    estimate's score: the upper end of the interval of the gap):

    >>> model = LogisticRegression().fit(X, y)
    >>> worst = make_verifier_scorer(sensitive_features="a", bound="pessimistic",
    ...                              network="independent", n_bins=10, random_state=0)
    >>> point = make_verifier_scorer(sensitive_features="a", network="independent",
    ...                              n_bins=10)
    >>> bool(worst(model, X, y) < point(model, X, y) < 0)
    True
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {list(_METRICS)}; got {metric!r}.")
    if "estimator" in verifier_params:
        raise TypeError("make_verifier_scorer sets 'estimator' itself; do not pass it.")

    valid = set(FairnessVerifier(None).get_params()) - {"estimator", "sensitive_features"}
    unknown = sorted(set(verifier_params) - valid)
    if unknown:
        raise TypeError(f"Unknown FairnessVerifier parameter(s) {unknown}; valid: "
                        f"{sorted(valid)}.")
    if metric == "path_specific_causal" and not verifier_params.get("mediators"):
        raise ValueError("metric='path_specific_causal' needs mediators=[...].")
    if bound not in _BOUNDS:
        raise ValueError(f"bound must be one of {list(_BOUNDS)}; got {bound!r}.")
    rate = _check_rate(rate, metric)
    _check_interval_params(bound, rate, verifier_params)
    if rate == "population" or bound == "estimate":
        verifier_params.setdefault("n_draws", 0)
    if rate == "network":  # the population estimate (its own draws) is not read
        verifier_params.setdefault("n_bootstrap", 0)
    # every candidate scored on the same replicates (and held-out split, and draws)
    verifier_params.setdefault("random_state", 0)
    return _VerifierScorer(metric, sensitive_features, verifier_params, bound, rate)


def _check_rate(rate, metric: str) -> str:
    """``rate``, resolved: the population's but for path-specific causal fairness."""
    if rate is None:
        return "network" if metric == "path_specific_causal" else "population"
    if rate not in _RATES:
        raise ValueError(f"rate must be one of {list(_RATES)} or None; got {rate!r}.")
    if rate == "population" and metric == "path_specific_causal":
        raise ValueError(
            "path_specific_causal is an intervention on the network: it has no population "
            "estimate from the rows. Use rate='network' (or leave rate=None)."
        )
    return rate


def _check_interval_params(bound: str, rate: str, verifier_params: dict) -> None:
    """Refuse, at creation, a bound the verifier's parameters leave without an interval."""
    if bound != "pessimistic":
        return
    if rate == "population" and verifier_params.get("n_bootstrap") == 0:
        raise ValueError(
            "bound='pessimistic' with n_bootstrap=0: there is then no population estimate. "
            "Give n_bootstrap > 0 (default 30), use bound='estimate', or rate='network'."
        )
    if rate == "network" and verifier_params.get("n_draws") == 0 \
            and verifier_params.get("method") not in ("sampling", "bounds"):
        raise ValueError(
            "bound='pessimistic' with n_draws=0: the exact paths then have no interval "
            "(it is the point estimate). Give n_draws > 0 (default 50), or use "
            "bound='estimate'."
        )
