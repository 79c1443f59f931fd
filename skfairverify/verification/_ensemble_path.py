"""The tree-ensemble path: sound bounds of the group rates of a boosted or bagged ensemble.

A fitted ``HistGradientBoostingClassifier``, ``GradientBoostingClassifier``,
``RandomForestClassifier``, ``ExtraTreesClassifier``, XGBoost or LightGBM binary
classifier, alone or behind the per-column steps the tree path reads, is read into one
structure (:func:`skfairverify.ensembles.read_ensemble`; the steps by
:func:`skfairverify.rules._tree_steps.push`). The variables are the sensitive columns
and the raw columns the trees split on, with states refined so that every split
threshold is a state boundary, as on the tree path (:func:`._trees_states.tree_encoding`):
each state then sends every split one way, and the ensemble is restated on the ranks
of the states (``skfairverify.ensembles._states.index_ensemble``, the states' values
passed through the fitted steps). The network is learned from the states as on the
other paths, and every group's ``Pr[Yhat = 1 | A = a]`` under it is bounded from below
and above with certainty (:func:`skfairverify.ensembles.ensemble_bounds`, branching
over the variables' states) until the bounds are within ``tolerance``; when the budget
ends first, the mass left unsettled is sampled, stratified by the unsettled nodes, and
the interval is the sound part plus a Clopper-Pearson interval of the unsettled share
(``skfairverify.ensembles._unsettled.sample_unsettled``): of draws in proportion to
the nodes' mass (conservative), or, where the draws are many, of Neyman draws at their
effective size (asymptotic; :func:`sample_to_tolerance`). The rate is the midpoint of
the bounds (the exact rate when everything is settled) or the sampled estimate;
``groups_`` carries ``rate_lower``, ``rate_upper``, ``settled`` and
``unsettled_interval`` (which of those intervals, or ``"none"``). The posterior draws
and the bootstrap replicates reweigh the nodes of the point network's search
(``skfairverify.ensembles._reweight.reweighted_bounds``): no new search.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..ensembles import FeatureStates, ensemble_bounds, read_ensemble
from ..ensembles._cost import branching_cost
from ..ensembles._reweight import Reweighing, same_structure
from ..ensembles._states import index_ensemble
from ..ensembles._structure import complement
from ..ensembles._unsettled import design_for_width, sample_unsettled
from ..rules import CategorySet, TreeLeaves
from ..rules._steps import split_final, unwrap_frozen
from ..rules._tree_steps import NumericFeature, push
from ..s3p import BayesNet, TableTooLargeError
from ._evaluation import RATE_COLUMNS, Evaluation, Evaluator
from ._intervals import hull_bounds
from ._learning import NetworkLearner
from ._quantization import Quantized
from ._trees_states import MAX_STATES, tree_encoding, tree_encoding_from_network
from ._warnings import LowAgreementWarning

__all__ = ["AUTO_MAX_COST", "ENSEMBLE_BINS", "BoundsPlan", "EnsemblePath",
           "EnsembleReading", "StateModel", "estimator_columns", "plan_bounds",
           "read_ensemble_or_reason"]

#: Quantile bins merged with a numeric column's thresholds with ``n_bins="auto"`` (at
#: most ``max_bins``), as on the tree path.
ENSEMBLE_BINS = 10
#: Largest number of states of a binned column: HistGradientBoosting splits a column at
#: up to 254 bin edges, every one a state boundary.
MAX_ENSEMBLE_STATES = 1024
#: Largest estimated cost of the branching (``BranchingCost.cost``: ``log2`` of the joint
#: states of the variables the trees read) at which ``method="auto"`` takes the
#: tree-ensemble path: 2**22, about 4 million joint states; chosen by measurement
#: (``docs/benchmarks.md``, "method='auto' on tree ensembles").
AUTO_MAX_COST = 22.0
#: Measured cost of the bounds' search: 154-247 ns per node expanded and tree of the
#: ensemble (Titanic, a random forest of 100 trees of depth 6), rounded up; estimates
#: the searches of the fairness influence's draws from the nodes of the point search
#: (``docs/benchmarks.md``, "Fairness influence: the draws estimated from sizes").
SEARCH_NS_PER_NODE_TREE = 250.0
#: Leaf values (rows x trees) computed at once when the ensemble decides rows.
_CHUNK_ENTRIES = 4_000_000


@dataclass(frozen=True)
class EnsembleReading:
    """A fitted ensemble, alone or behind per-column steps, as the path reads it."""

    ensemble: object  # TreeEnsemble of the final step
    steps: list  # the (name, step) before it, fitted
    features: list  # per input feature of the ensemble, the raw column it is a map of


def read_ensemble_or_reason(estimator, columns):
    """``(EnsembleReading, None)`` when the model is read, else ``(None, why)``.

    The final step is read by :func:`skfairverify.ensembles.read_ensemble`; the steps
    before it by the tree reader's per-column maps (:mod:`skfairverify.rules`), which
    refuse any other step by name. A favorable-label wrapper (the audit's
    ``FavorableDecisions``: 1 where the model decides its ``favorable`` class) is read
    through: when that class is the model's
    ``classes_[0]``, the ensemble's decision is complemented
    (``skfairverify.ensembles._structure.complement``), so the bounds of its rate are
    ``1 - upper`` and ``1 - lower`` of the model's.
    """
    try:
        inner, favorable = _favorable_wrapper(estimator)
        steps, final = split_final(inner)
        ensemble = read_ensemble(final)
        if favorable is not None:
            ensemble = (complement(ensemble, [0, 1]) if favorable == 0
                        else replace(ensemble, classes=np.array([0, 1])))
        features = [NumericFeature(c) for c in columns]
        for name, step in steps:
            features = push(step, features, name if name is not None else type(step).__name__)
    except (TypeError, ValueError) as exc:
        return None, exc
    if len(features) != ensemble.n_features:
        return None, TypeError(
            f"the steps before the ensemble produce {len(features)} features but it was "
            f"fitted on {ensemble.n_features}")
    return EnsembleReading(ensemble, list(steps), features), None


@dataclass(frozen=True)
class BoundsPlan:
    """What ``method="auto"`` checks of a model before it takes the tree-ensemble path.

    ``path`` is the prepared :class:`EnsemblePath` (None when the model is not read,
    or its variables are refused), ``reason`` why it is not taken (None when it is),
    ``cost`` the :class:`~skfairverify.ensembles._cost.BranchingCost` (None when
    unknown).
    """

    path: object
    reason: str | None
    cost: object = None

    @property
    def takes(self) -> bool:
        """Whether ``method="auto"`` takes the path."""
        return self.reason is None


def plan_bounds(settings, estimator, frame, weight, sensitive, feature_names) -> BoundsPlan:
    """The check of ``method="auto"``, whether the tree-ensemble path will work and pay off.

    Deterministic from the model and the encoding of ``frame``, before any search: the
    model is read (:func:`read_ensemble_or_reason`), every column's states are within
    the path's limit and every split sends a range of them left
    (:meth:`EnsemblePath.prepare`), and the estimated cost of the branching
    (:func:`~skfairverify.ensembles._cost.branching_cost`) is at most
    :data:`AUTO_MAX_COST`.
    """
    columns = estimator_columns(estimator, feature_names)
    reading, reason = read_ensemble_or_reason(estimator, columns)
    if reading is None:
        return BoundsPlan(None, f"not read: {reason}")
    path = EnsemblePath(settings, estimator, reading, columns)
    try:
        model = path.prepare(frame, sensitive, weight)
    except (TypeError, ValueError, TableTooLargeError) as exc:
        return BoundsPlan(None, f"refused: {exc}")
    cost = branching_cost(model.indexed, model.states)
    if cost.cost > AUTO_MAX_COST:
        return BoundsPlan(path, f"2**{cost.cost:.1f} joint states of the variables the "
                                f"trees read, above 2**{AUTO_MAX_COST:g}", cost)
    return BoundsPlan(path, None, cost)


def _favorable_wrapper(estimator):
    """``(model, index of its favorable class)`` of a favorable-label wrapper, else ``(it, None)``.

    A wrapper is an estimator whose parameters are ``estimator`` (a fitted binary
    classifier) and ``favorable`` (one of its classes), with ``classes_`` 0 and 1: it
    decides 1 where the model decides ``favorable`` (the audit's
    ``FavorableDecisions``, read by its parameters: the audit is a layer above).
    """
    est = unwrap_frozen(estimator)
    get_params = getattr(est, "get_params", None)
    if get_params is None or set(get_params(deep=False)) != {"estimator", "favorable"}:
        return estimator, None
    if [str(c) for c in getattr(est, "classes_", [])] != ["0", "1"]:
        return estimator, None
    classes = [str(c) for c in getattr(est.estimator, "classes_", [])]
    if str(est.favorable) not in classes or len(classes) != 2:
        raise ValueError(f"The favorable class {est.favorable!r} is not one of the two "
                         f"classes {classes} of the wrapped model.")
    return est.estimator, classes.index(str(est.favorable))


def _chunked(n_trees: int, max_table_size: int) -> int:
    """Rows decided at once: their leaf values within the working memory."""
    return max(1, min(_CHUNK_ENTRIES, max_table_size) // max(n_trees, 1))


class StateModel:
    """The ensemble restated on the ranks of the states of one encoding's variables.

    Every column the trees read is a map of one variable; its values on the
    variable's states rank them (``skfairverify.ensembles._states.index_ensemble``).
    The networks are permuted to the ranks (:meth:`network`), the codes and groups
    mapped to them (:meth:`codes`): ``verify`` may add a value unseen in ``fit`` after
    the others, a user network may list its states in any order.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    encoding : Encoding
        The variables (the states of every column the trees read refined at their
        thresholds).
    values : dict
        Per input column of the ensemble it splits on, ``(variable, value on each of
        its states)``.
    """

    def __init__(self, ensemble, encoding, values):
        n_vars = len(encoding.variables)
        missing = {v: var.cardinality - 1 for v, var in enumerate(encoding.variables)
                   if var.missing}
        self.indexed, orders, by_variable = index_ensemble(ensemble, values, n_vars,
                                                           encoding.names, missing)
        self.order = {v: o for v, o in orders.items() if np.any(o != np.arange(o.size))}
        self.states = [by_variable[v] if v in by_variable
                       else FeatureStates(None, [], n_states=var.cardinality)
                       for v, var in enumerate(encoding.variables)]

    def codes(self, codes, variables) -> np.ndarray:
        """``codes`` (columns: ``variables``) as the ranks of the states."""
        codes = np.array(codes, dtype=np.int64)
        for k, v in enumerate(variables):
            if v in self.order:
                codes[:, k] = np.argsort(self.order[v])[codes[:, k]]
        return codes

    def network(self, network: BayesNet) -> BayesNet:
        """``network`` with every read variable's states in the order of their ranks."""
        if not self.order:
            return network
        cpts = []
        for u, cpt in enumerate(network.cpts):
            for axis, p in enumerate(network.parents[u]):
                if p in self.order:
                    cpt = np.take(cpt, self.order[p], axis=axis)
            cpts.append(np.take(cpt, self.order[u], axis=-1) if u in self.order else cpt)
        names = [[network.state_names[v][i] for i in self.order[v]] if v in self.order
                 else list(network.state_names[v]) for v in range(network.n_variables)]
        return BayesNet(network.cardinalities, network.parents, cpts, names=network.names,
                        state_names=names)

    def decisions(self, codes, max_table_size) -> np.ndarray:
        """The ensemble's positive decision on every row of state ``codes``.

        Decided once per distinct row of states (rows of data share them).
        """
        distinct, inverse = np.unique(np.asarray(codes, dtype=np.int64), axis=0,
                                      return_inverse=True)
        ranks = self.codes(distinct, range(distinct.shape[1])).astype(np.float64)
        for v, st in enumerate(self.states):  # a missing state is given as NaN
            if st.missing:
                ranks[ranks[:, v] == st.n_states - 1, v] = np.nan
        out = np.empty(len(ranks), dtype=bool)
        step = _chunked(self.indexed.n_trees, max_table_size)
        for i in range(0, len(ranks), step):
            out[i: i + step] = self.indexed.positive(self.indexed.raw_score(ranks[i: i + step]))
        return out[inverse.ravel()]


def _state_column(var, dtype, n: int) -> pd.Series:
    """The values a variable's states stand for, padded to ``n`` rows.

    Numbers (a value, a bin's mean) as float64, so that a bin's mean is not rounded
    into another bin; categories in the column's ``dtype`` where they fit it.
    """
    if var.values is not None and var.kind in ("values", "binned"):
        values = np.asarray(var.values, dtype=np.float64)
        return pd.Series(np.append(values, np.repeat(values[-1:], n - values.size)))
    values = list(var.states)
    column = pd.Series(values + [values[-1]] * (n - len(values)), dtype=object)
    try:
        return column.astype(dtype)
    except (TypeError, ValueError):  # a missing category in an integer column, say
        return column.infer_objects()


@dataclass
class BoundedRates:
    """Every group's rate under one network: the bounds, the interval, the rate."""

    rate: np.ndarray  # midpoint of the bounds, or the estimate with the unsettled sampled
    lower: np.ndarray  # sound bounds
    upper: np.ndarray
    low: np.ndarray  # the interval: the sound bounds, or sound part + Clopper-Pearson
    high: np.ndarray
    settled: np.ndarray  # settled share of each group's probability
    n_evaluations: int = 0  # rows the ensemble decided (the unsettled mass sampled)
    search: object = None  # the EnsembleBounds, with its settled nodes when kept
    network: object = None  # the network bounded
    interval: object = None  # per group: "none", "conservative" or "asymptotic"


class EnsemblePath:
    """The tree-ensemble path (``method_ == "bounds"``) of :func:`._paths.select_path`.

    Parameters
    ----------
    settings : Settings
        The verifier's parameters.
    estimator : estimator
        The fitted model (its own ``predict`` decides the rows).
    reading : EnsembleReading
        Its ensemble (:func:`skfairverify.ensembles.read_ensemble`), the steps before
        it and the raw column of every feature (:func:`read_ensemble_or_reason`).
    feature_names : list of str
        The model's input columns (its ``feature_names_in_``, else those of ``X``).
    """

    name = "bounds"
    kind = "ensemble"
    rule = None
    decision_scale = None

    def __init__(self, settings, estimator, reading, feature_names):
        self.settings = settings
        self.estimator = estimator
        self.ensemble = reading.ensemble
        self.steps = reading.steps
        self.features = reading.features
        self.columns = [str(c) for c in feature_names]
        self.classes = np.asarray(self.ensemble.classes)
        self.fitted = None  # fit's evaluation (remember)
        self.variables = None
        self.model = None
        self.template = None  # one row of fit's inputs: the columns the trees do not read
        self._restated = None  # (encoding, its StateModel)
        self.budget = (settings.max_time, settings.max_time)  # CPU s: point, other searches
        self._prepared = None  # (frame, sensitive, weight, Quantized) of prepare
        self._observed = None  # (frame, the model's decisions on it) given to evaluate
        self._searched = None  # (network, estimated seconds of a search of its structure)

    # ------------------------------------------------------------------ variables
    def _used(self) -> list[int]:
        """The ensemble's input features the trees split on."""
        return sorted({int(f) for t in self.ensemble.trees for f in t.feature[t.feature >= 0]})

    @property
    def read(self) -> list[str]:
        """The raw columns the trees split on, in input order."""
        used = {self.features[j].column for j in self._used()}
        return [c for c in self.columns if c in used]

    @property
    def leaves(self):
        """Refused: the dask reader of the tree path does not read ensembles."""
        raise TypeError(
            f"{self.settings.estimator_name} is verified by the tree-ensemble path "
            "(method_='bounds'), which does not take a dask X; pass pandas data.")

    def _thresholds(self) -> TreeLeaves:
        """The trees' thresholds on the raw columns, as the tree path's encoding reads them.

        A feature that is a raw column (or its imputation) keeps its thresholds; any
        other is mapped back through the steps (the tree reader's conditions): the
        bounds of the raw values it sends left, or the encoder's categories.
        """
        thresholds, categories = {}, {}
        for j in self._used():
            f, t = self.features[j], self.ensemble.thresholds(j)
            t = t[np.isfinite(t)]
            if getattr(f, "is_raw", False):
                thresholds.setdefault(f.column, set()).update(t.tolist())
                continue
            for x in t:
                cond = f.left(float(x))
                if isinstance(cond, CategorySet):
                    categories[f.column] = sorted(cond.universe, key=str)
                else:
                    thresholds.setdefault(f.column, set()).update(cond.finite_bounds())
        both = sorted(set(thresholds) & set(categories))
        if both:
            raise TypeError(f"Column {both[0]!r} enters the ensemble both as a number and "
                            "through a one-hot encoder; the path reads each column one way.")
        return TreeLeaves(regions=[], thresholds={c: np.array(sorted(v), dtype=float)
                                                  for c, v in thresholds.items()},
                          categories=categories, read=self.read,
                          feature_names_in=list(self.columns), classes=self.classes,
                          n_leaves=self.ensemble.n_leaves)

    def _bins(self) -> int:
        s = self.settings
        return min(ENSEMBLE_BINS, s.max_bins) if s.n_bins == "auto" else int(s.n_bins)

    def prepare(self, frame, sensitive, weight) -> StateModel:
        """The encoding of ``frame`` and the ensemble restated on it, kept for ``encode``.

        Raises what :meth:`encode` and :meth:`model_of` refuse: a column with more
        states than the path takes (``TableTooLargeError``), a split that sends no
        range of a variable's states left (``ValueError``: a one-hot encoder of three
        or more categories), a column read both as a number and through a one-hot
        encoder (``TypeError``). A column's missing value is its own state, sent as each
        node sends it (left at some, right at others in a model fitted without them).
        """
        quantized = self._encode(frame, sensitive, weight)
        self._prepared = (frame, list(sensitive), weight, quantized)
        return self.model_of(quantized.encoding)

    def encode(self, frame, sensitive, weight) -> Quantized:
        """The variables: the ensemble's columns, refined at its thresholds."""
        kept = self._prepared
        if (kept is not None and kept[0] is frame and kept[1] == list(sensitive)
                and kept[2] is weight):
            return kept[3]
        return self._encode(frame, sensitive, weight)

    def _encode(self, frame, sensitive, weight) -> Quantized:
        s = self.settings
        leaves = self._thresholds()
        self.template = frame[self.columns].iloc[[0]].reset_index(drop=True)
        if s.user_network:
            encoding = tree_encoding_from_network(s.network, leaves, sensitive)
            return Quantized(encoding, [None], None, "a user network: its own states, no bins")
        n_bins = self._bins()
        reason = (f"{n_bins} quantile bins: tree-ensemble path ("
                  + ("fixed n_bins" if s.n_bins != "auto"
                     else f"{ENSEMBLE_BINS}, at most max_bins")
                  + "), merged with the trees' split thresholds")
        encoding = tree_encoding(frame, leaves, sensitive, n_bins=n_bins,
                                 max_states=max(MAX_STATES, s.max_bins, MAX_ENSEMBLE_STATES),
                                 sample_weight=weight)
        return Quantized(encoding, [None], n_bins, reason)

    def values_of(self, encoding) -> dict:
        """Per feature the trees split on, its variable and its value on every state.

        The states' values (padded to the largest variable), the other columns at
        fit's first row, through the fitted steps before the ensemble.
        """
        var_of = {var.name: v for v, var in enumerate(encoding.variables)}
        used = self._used()
        absent = sorted({self.features[j].column for j in used} - set(var_of))
        if absent:
            raise ValueError(f"The ensemble reads the column(s) {absent}, which are not "
                             f"variables of the network ({list(var_of)}).")
        read = {self.features[j].column for j in used}
        n = max((encoding.variables[var_of[c]].cardinality for c in read), default=1)
        rows = self.template.iloc[np.zeros(n, dtype=np.int64)].reset_index(drop=True)
        for c in read:
            rows[c] = _state_column(encoding.variables[var_of[c]], rows[c].dtype, n)
        X = rows
        for _, step in self.steps:
            X = unwrap_frozen(step).transform(X)
        X = X.toarray() if hasattr(X, "toarray") else X
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{self.settings.estimator_name} reads a column that is not "
                             f"numeric ({exc}); encode it before the ensemble.") from exc
        out = {}
        for j in used:
            v = var_of[self.features[j].column]
            out[j] = (v, X[: encoding.variables[v].cardinality, j])
        return out

    def model_of(self, encoding) -> StateModel:
        """The ensemble restated on ``encoding``'s states (the last one kept)."""
        if self._restated is None or self._restated[0] is not encoding:
            self._restated = (encoding, StateModel(self.ensemble, encoding,
                                                   self.values_of(encoding)))
        return self._restated[1]

    # ------------------------------------------------------------------ decisions
    def decisions(self, frame) -> np.ndarray:
        """The model's own positive decision on every row of ``frame``, a chunk at a time."""
        rows = frame[self.columns]
        out = np.empty(len(rows), dtype=bool)
        step = _chunked(self.ensemble.n_trees, self.settings.max_table_size)
        for i in range(0, len(rows), step):
            out[i: i + step] = (np.asarray(self.estimator.predict(rows.iloc[i: i + step]))
                                == self.classes[1])
        return out

    def agreement(self, encoding, frame, multiplier, weight) -> float:
        """Share of the rows where the decision on their states is the model's (1 or near).

        The model's decisions on ``frame`` are those :meth:`evaluate` was given for
        the population estimate when it was given them on this frame, else computed.
        """
        codes = encoding.codes(frame)
        kept, self._observed = self._observed, None
        model = kept[1] if kept is not None and kept[0] is frame else self.decisions(frame)
        same = (self.model_of(encoding).decisions(codes, self.settings.max_table_size)
                == model)
        return float(np.average(same, weights=weight))

    def check_agreement(self, encoding, frame, weight, agreement, multiplier,
                        reference=None) -> None:
        """LowAgreementWarning when the ensemble read decides a row unlike the model.

        The states carry every threshold, so the decision on a row's states is the
        model's on every row: ``agreement_`` is 1. Below 1 the ensemble was read
        wrongly (a setting of the model the reader does not know), and the bounds are
        those of the ensemble read, not of the model: said, never silent.
        """
        if agreement < 1.0:
            warnings.warn(
                f"The tree ensemble read from {self.settings.estimator_name} decides "
                f"as the model on only {agreement:.4f} of the rows of X (agreement_; "
                "1 is expected, the states carry every split), so the bounds describe "
                "the ensemble read, not the model: a setting of the model the reader "
                "does not know. Use method='sampling', which evaluates the model itself.",
                LowAgreementWarning, stacklevel=4)

    # ------------------------------------------------------------------ rates
    def _budget(self, y_pos, variables) -> tuple[float, float]:
        """CPU seconds of a search: of a point network's, and of any other's.

        Half of ``max_time`` is shared by the searches of the point networks (all rows,
        ``Y = 1``, ``Y = 0``, the mediated one); the other half by the searches of the
        draws and replicates that cannot reuse a point search (another structure), as
        if every one needed its own.
        """
        s = self.settings
        networks = 1 + 2 * (y_pos is not None) + bool(variables.mediators)
        runs = (s.n_draws if s.draws_wanted else 0) + s.n_bootstrap
        self.budget = (s.max_time / (2 * networks), s.max_time / (2 * networks * max(runs, 1)))
        return self.budget

    def _unsettled(self, model, network, bounds, group_index) -> tuple:
        """The unsettled mass sampled: (estimate, low, high, rows decided, interval kind)."""
        s = self.settings
        result = sample_to_tolerance(model.indexed, network, model.states, bounds,
                                     s.tolerance, s.confidence, s.max_samples, s.seed(),
                                     s.max_table_size)
        kind = np.where(result.unsettled > 0, result.interval, "none")
        return (result.estimate[group_index], result.interval_lower[group_index],
                result.interval_upper[group_index], int(result.n_evaluations),
                kind[group_index])

    def bounded_rates(self, model, network, sens_idx, group_codes, max_time,
                      keep=False) -> BoundedRates:
        """Sound bounds of every group's rate under ``network`` (the unsettled sampled).

        With ``keep``, the search keeps its settled nodes, for :meth:`reweighed`.
        """
        s = self.settings
        network = model.network(network)
        bounds = ensemble_bounds(model.indexed, network, model.states,
                                 sensitive_features=list(sens_idx), tolerance=s.tolerance,
                                 max_time=max_time, max_table_size=s.max_table_size,
                                 keep_settled=keep)
        at = _group_index(network, sens_idx, model.codes(group_codes, sens_idx))
        lower, upper = bounds.lower[at], bounds.upper[at]
        rate, low, high, n = (lower + upper) / 2, lower, upper, 0
        kind = np.full(at.size, "none", dtype=object)
        if bounds.stopped in ("max_time", "max_nodes") and np.any(upper - lower > s.tolerance):
            rate, low, high, n, kind = self._unsettled(model, network, bounds, at)
        rate = np.where(lower == upper, lower, rate)
        return BoundedRates(rate, lower, upper, low, high, bounds.settled[at], n,
                            search=bounds, network=network, interval=kind)

    def draw_rates(self, point: BoundedRates, model, sens_idx, group_codes):
        """Rates function of the networks of ``point``'s structure (draws, replicates).

        The settled nodes of the point network's search, reweighed under each network
        (:class:`skfairverify.ensembles._reweight.Reweighing`, its indices computed
        once for all the networks): sound bounds without a new search; the rate is
        their midpoint. A network of another structure, or a search that kept no
        nodes, is bounded by a search of its own.
        """
        s = self.settings
        at = _group_index(point.network, sens_idx, model.codes(group_codes, sens_idx))
        plan = (Reweighing(point.search, point.network, list(sens_idx), s.max_table_size)
                if point.search.settled_nodes is not None else None)

        def rates_of(net):
            if plan is None or not same_structure(point.network, net):
                return self.bounded_rates(model, net, sens_idx, group_codes,
                                          self.budget[1]).rate
            lower, upper, _ = plan.bounds(model.network(net))
            return np.where(lower[at] == upper[at], lower[at], (lower[at] + upper[at]) / 2)

        return rates_of

    def evaluate(self, variables, frame, y_pos, encoding, multipliers, weight,
                 observed=None) -> Evaluation:
        """Networks, bounded group rates and metrics of the ensemble on ``frame``."""
        learner = NetworkLearner(self.settings, variables)
        data = learner.groups_and_networks(frame, y_pos, encoding, weight)
        model = self.model_of(encoding)
        self._observed = (None if observed is None or observed.square is not None
                          or len(observed.decisions) != len(frame)
                          else (frame, np.asarray(observed.decisions, dtype=bool)))
        max_time, _ = self._budget(y_pos, variables)
        found, rows = {}, [0]  # id of a network bounded -> (it, its BoundedRates)

        def point(net) -> BoundedRates:
            if id(net) not in found or found[id(net)][0] is not net:
                found[id(net)] = (net, self.bounded_rates(model, net, variables.sens_idx,
                                                          data.group_codes, max_time,
                                                          keep=True))
                rows[0] += found[id(net)][1].n_evaluations
            return found[id(net)][1]

        def plan_of(net, mask):
            return self.draw_rates(point(net), model, variables.sens_idx, data.group_codes)

        evaluator = Evaluator(self.settings, variables, learner)
        ev = evaluator.exact(lambda net: point(net).rate, plan_of, encoding, data, y_pos,
                             weight, observed)
        add_bounds(ev, [point(n) if n is not None else None for n in data.networks])
        ev.n_samples = rows[0]
        return ev

    def remember(self, variables, ev: Evaluation, frame=None, weight=None) -> None:
        """Keep fit's evaluation and the ensemble restated on fit's variables."""
        self.variables, self.fitted = variables, ev
        self.model = self.model_of(variables.encoding)

    def point_rates(self, network) -> np.ndarray:
        """The bounded group rates under ``network`` (after ``fit``): their midpoints.

        The size of the search is kept for :meth:`draws_seconds` (the last network's).
        """
        found = self.bounded_rates(self.model, network, self.variables.sens_idx,
                                   self.fitted.group_codes, self.budget[0])
        self._searched = (network, self.search_seconds(found.search))
        return found.rate

    def search_seconds(self, search) -> float:
        """Estimated time of a search like ``search`` (seconds), from its size.

        Its deadline (the parameter ``budget[0]``) when it stopped there, else the nodes
        it expanded times the ensemble's trees times :data:`SEARCH_NS_PER_NODE_TREE`
        (within the deadline): no timing.
        """
        if search.stopped == "max_time":
            return float(self.budget[0])
        units = float(np.sum(search.nodes_expanded)) * len(self.ensemble.trees)
        return min(units * SEARCH_NS_PER_NODE_TREE * 1e-9, float(self.budget[0]))

    def draw_rates_of(self, network, exact=None):
        """Rates function for posterior draws of ``network``'s structure."""
        return self.point_rates

    def draws_seconds(self, network, n_draws: int, rates_of) -> float:
        """Estimated time of ``n_draws`` draws of ``network`` (seconds), from sizes.

        Every draw is a search of its own (``rates_of``, :meth:`draw_rates_of`'s); each
        is estimated as the search of ``network`` (:meth:`search_seconds`), the one
        :meth:`point_rates` made, or made here when it was of another network.
        """
        if self._searched is None or self._searched[0] is not network:
            self.point_rates(network)
        return n_draws * self._searched[1]


#: ``unsettled_interval`` of ``groups_``, from the strongest guarantee to the weakest:
#: nothing sampled (sound bounds), the proportional draws' Clopper-Pearson interval
#: (conservative, Hoeffding), the Neyman draws' (at the effective size: asymptotic).
UNSETTLED_INTERVALS = ("none", "conservative", "asymptotic")


def sample_to_tolerance(ensemble, network, states, bounds, tolerance, confidence,
                        max_samples, seed, max_table_size):
    """The unsettled mass of ``bounds`` sampled for intervals ``tolerance`` wide.

    Each group's interval at ``confidence`` over the groups (Bonferroni); the
    proportional draws a Clopper-Pearson width of ``tolerance`` needs in the worst case
    of the unsettled share's variance (at most ``max_samples`` a group), or the Neyman
    design where it pays
    (:func:`skfairverify.ensembles._unsettled.design_for_width`). Returns the
    :class:`~skfairverify.ensembles._unsettled.UnsettledSample`.
    """
    confidence = 1.0 - (1.0 - confidence) / len(bounds.groups)
    z = norm.ppf(1.0 - (1.0 - confidence) / 2)
    share = bounds.upper - bounds.lower
    n = np.clip(np.ceil((z * share / tolerance) ** 2), 1, max_samples).astype(np.int64)
    return sample_unsettled(ensemble, network, states, bounds, confidence=confidence,
                            random_state=seed, max_table_size=max_table_size,
                            **design_for_width(n, tolerance, share))


def _weakest(kinds) -> np.ndarray:
    """Per group, the weakest of the ``UNSETTLED_INTERVALS`` of its rates."""
    rank = np.max([[UNSETTLED_INTERVALS.index(k) for k in kind] for kind in kinds], axis=0)
    return np.array(UNSETTLED_INTERVALS, dtype=object)[rank]


def add_bounds(ev: Evaluation, results) -> None:
    """``rate_lower``, ``rate_upper``, ``settled`` in ``ev.groups``; the intervals sound.

    ``results``: the :class:`BoundedRates` of the networks of all rows, ``Y = 1`` and
    ``Y = 0`` (None where there is none). Without posterior draws a rate's interval is
    its bounds (or the sound part plus the Clopper-Pearson interval of the unsettled
    share); with draws, the hull of their credible interval and that.
    ``unsettled_interval`` says, per group, what the weakest of its rates' intervals
    is (:data:`UNSETTLED_INTERVALS`).
    """
    groups = ev.groups
    kinds = [r.interval for c, r in zip(RATE_COLUMNS, results)
             if r is not None and c in groups]
    for column, result in zip(RATE_COLUMNS, results):
        if result is None or column not in groups:
            continue
        absent = np.isnan(groups[column].to_numpy(dtype=float))
        sound = (np.where(absent, np.nan, result.low), np.where(absent, np.nan, result.high))
        ev.bounds[column] = hull_bounds(ev.bounds[column], sound) if ev.draws else sound
        if column == "positive_rate":
            at = groups.columns.get_loc("positive_rate") + 1
            groups.insert(at, "rate_lower", result.lower)
            groups.insert(at + 1, "rate_upper", result.upper)
            groups.insert(at + 2, "settled", result.settled)
            groups.insert(at + 3, "unsettled_interval", _weakest(kinds))
    groups["ci_low"], groups["ci_high"] = ev.bounds["positive_rate"]


def _group_index(network, sens_idx, group_codes) -> np.ndarray:
    """Index of every group of ``group_codes`` among the joint states of ``sens_idx``."""
    cards = [network.cardinalities[v] for v in sens_idx]
    return np.ravel_multi_index(tuple(np.asarray(group_codes, dtype=np.int64).T), cards)


def estimator_columns(estimator, feature_names) -> list[str]:
    """The model's input columns: its ``feature_names_in_``, else those of ``X``."""
    names = getattr(unwrap_frozen(estimator), "feature_names_in_", None)
    return [str(c) for c in (feature_names if names is None else names)]
