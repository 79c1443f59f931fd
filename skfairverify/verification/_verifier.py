"""FairnessVerifier: exact fairness verification of a linear classifier (FVGM)."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from .._linear import linear_rule
from ..utils._validation import check_unambiguous
from ..preprocessing import decision_scale, integer_threshold, quantize, select_multiplier
from ..s3p import BayesNet, TableTooLargeError
from ._influence import (
    edge_specific_network,
    fvgm_mediated_network,
    group_rates,
    uniform_network,
)
from ._metrics import disparate_impact, favored_indices, rate_gap
from ._network import independent_network, learn_network
from ._variables import MAX_SENSITIVE_VALUES, Encoding
from ._warnings import MIN_AGREEMENT, LowAgreementWarning

__all__ = ["FairnessVerifier"]

#: Candidate numbers of bins for ``n_bins="auto"`` (those <= max_bins, and max_bins).
BIN_GRID = (5, 10, 20, 30, 40, 60, 80, 100, 150, 200)
#: Candidate multipliers for ``multiplier="auto"`` (those <= max_multiplier, and it).
MULTIPLIER_GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
#: Largest number of states of a binned variable during the structure search.
STRUCTURE_BINS = 5
#: BDeu equivalent sample size of the parameter prior (light smoothing).
EQUIVALENT_SAMPLE_SIZE = 1.0
#: Share of X held out to choose the bins and the multiplier.
HELD_OUT = 0.25


def _estimator_has(attr):
    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


def _candidates(grid, largest) -> list[int]:
    """Grid values <= largest plus largest, in decreasing order (finer first on ties)."""
    return sorted({g for g in grid if g <= largest} | {int(largest)}, reverse=True)


def _check_y_shape(y, n_rows: int) -> np.ndarray:
    y = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if y.ndim != 1 or len(y) != n_rows:
        raise ValueError(
            f"y must be 1-dimensional with {n_rows} entries (one per row of X); got shape "
            f"{y.shape}."
        )
    return y


def _same_label(value, cls) -> bool:
    """Whether a label equals a class, refusing ``"1"`` for ``1`` (str vs number)."""
    if isinstance(value, str) != isinstance(cls, str):
        return False
    return bool(value == cls)


class FairnessVerifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Exact group fairness of a linear classifier over a Bayesian network of its inputs.

    FVGM (Ghosh et al., AAAI 2022) as a scikit-learn meta-estimator. ``fit`` fits a
    clone of ``estimator``, reads it as a linear rule on the raw columns
    (:func:`~skfairverify.linear_rule`), turns every column the rule reads and every
    sensitive column into one discrete variable, learns a Bayesian network of those
    variables from ``X`` and computes exactly, for every compound sensitive group
    ``a``, the probability of a positive decision ``Pr[Yhat = 1 | A = a]`` under that
    network (:mod:`skfairverify.s3p`). The metrics follow from those probabilities.

    Variables: a numeric column becomes one variable whose states are quantile bins,
    state ``j`` weighing ``round(l * w * mean_of_bin_j)`` (a column with at most
    ``n_bins`` distinct values keeps one state per value); a categorical (one-hot
    encoded) column becomes one variable with one state per category weighing
    ``round(l * coef[column=category])``; a sensitive column not read by the model
    (fairness under unawareness) is a variable of weight 0. The number of bins and
    the integer multiplier ``l`` are chosen by agreement between the integer rule and
    the estimator on a held-out quarter of ``X``: among the candidates whose agreement
    is within one standard error of the best one, the finest resolution (most bins,
    then largest multiplier) wins, since smaller differences are held-out noise.

    Network: ``network="learn"`` runs pgmpy's hill climbing with the K2 score with no
    edge into a sensitive variable, the sensitive variables as parents of every other
    variable (free for the exact engine, which keeps them in its table to index the
    groups) and at most ``max_indegree`` further parents; the search
    runs on a copy of the data with at most 5 merged bins per numeric variable (fast,
    and robust to sparse counts), the parameters are then estimated on the full bins
    by maximum likelihood with a light BDeu smoothing (equivalent sample size 1), so no
    state is impossible. ``network="independent"`` uses independent smoothed marginals:
    the sensitive variables then influence the decision only through their own weights.
    A user :class:`~skfairverify.s3p.BayesNet` is taken as the distribution: its
    variables are named after the columns; the state names of a numeric column are the
    values the states stand for, those of a categorical column its categories, and
    every value of ``X`` must be one of them (a ValueError names the others; a value
    is never mapped to the nearest state).

    Parameters
    ----------
    estimator : estimator
        A binary linear classifier or a pipeline of affine steps ending in one
        (see :func:`~skfairverify.linear_rule`). It is cloned and fitted on ``X``;
        wrap a fitted model in :class:`~sklearn.frozen.FrozenEstimator` to verify it
        as it is.
    sensitive_features : str, int or list of str or int
        Columns of ``X`` holding the sensitive attributes (positions for an array).
        Each must be categorical or discrete (at most 10 distinct numeric values).
    n_bins : "auto" or int, default="auto"
        Quantile bins per numeric column; ``"auto"`` picks among 5, 10, 20, 30, 40, 60,
        ... up to ``max_bins`` by agreement.
    max_bins : int, default=60
        Largest number of bins tried by ``n_bins="auto"``.
    multiplier : "auto" or int, default="auto"
        Integer multiplier ``l`` of the contributions; ``"auto"`` picks among 1, 2, 5,
        10, 20, 50, ... up to ``max_multiplier`` by agreement, and steps down to the
        next smaller candidate while the exact computation would exceed
        ``max_table_size`` (the score range, hence the table, grows with ``l``).
    max_multiplier : int, default=1000
        Largest multiplier tried by ``multiplier="auto"``.
    network : {"learn", "independent"} or BayesNet, default="learn"
        Distribution of the variables (see above).
    mediators : str or list of str, default=None
        Columns read by the model that mediate the effect of the sensitive features;
        when given, ``metrics_["path_specific_causal"]`` is computed: the gap of the
        group positive rates when the mediators follow their distribution under the
        most favored group ``a_max`` (see ``pcf_definition``).
    pcf_definition : {"fvgm", "edge_specific"}, default="fvgm"
        How the mediators follow ``a_max`` for path-specific causal fairness.
        ``"fvgm"`` (FVGM Section 2, item 4; Appendix B.1.2): the mediators ``Z`` are
        drawn from ``Pr[Z | A = a_max]``, computed exactly on the network and marginal
        over the mediators' other parents (a parent that descends from ``A`` follows
        its distribution under ``a_max``), whatever the group evaluated.
        ``"edge_specific"``: each mediator keeps its other parents and only its edges
        from the sensitive variables carry ``a_max``, ``Pr[Z | Pa(Z) \\ A, A = a_max]``
        (a path-specific effect along the edges ``A -> Z``); the two agree when no
        mediator has a parent other than the sensitive ones.
    max_indegree : int or None, default=1
        Largest number of parents of a variable in the learned network, besides the
        sensitive variables. The default
        (a forest) keeps the engine's table small with many-state variables: on Adult
        (13 variables, up to 60 states) a fit takes ~15 s, while ``max_indegree=2``
        makes the exact table wider and the fit several times slower.
    max_table_size : int, default=50_000_000
        Largest number of entries of the engine's working table; beyond it a
        :class:`~skfairverify.s3p.TableTooLargeError` explains what to lower.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split and the binning subsample.
    n_jobs : int or None, default=None
        Parallel jobs (joblib) over the networks (all rows, ``Y = 1``, ``Y = 0``) and
        over the features of :meth:`fairness_influence`.
    verbose : int, default=0
        Progress bars when > 0.

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator (``predict``, ``predict_proba``, ``decision_function``,
        ``score`` delegate to it).
    classes_ : ndarray
        Classes of the estimator; a positive decision means ``classes_[1]``.
    rule_ : LinearRule
        The estimator as a rule on raw columns.
    discretizer_ : BinningDiscretizer or None
        Bins of the binned numeric columns (None when there is none).
    n_bins_ : int or None
        Number of bins used (None with a user network).
    decision_scale_ : float
        Root mean square of the rule's decision function on ``X``
        (:func:`~skfairverify.preprocessing.decision_scale`). The rule is divided by it
        before its weights are quantized, so that the integer rule, hence every
        verified number, does not change when the model's decision function is
        multiplied by a positive constant.
    multiplier_ : int
        The integer multiplier ``l`` (of the rule divided by ``decision_scale_``).
    agreement_ : float
        Share of the rows of ``X`` where the integer rule agrees with the estimator.
        Below ``MIN_AGREEMENT`` (0.95) ``fit`` emits a
        :class:`~skfairverify.verification.LowAgreementWarning` naming the likely
        cause (bins or multiplier) and the parameter to raise.
    variables_ : list of str
        The variables, in the order of the network.
    weights_ : dict
        Integer weight of every state of every variable.
    threshold_ : int
        The integer rule predicts positive when the sum of the weights reaches it.
    network_ : BayesNet
        The distribution of the variables (learned on all rows of ``X``).
    groups_ : pandas.DataFrame
        One row per compound group observed in ``X``: a column per sensitive feature,
        ``positive_rate`` (exact ``Pr[Yhat = 1 | A = a]``), ``support`` (rows of ``X``),
        and with ``y``: ``true_positive_rate`` and ``false_positive_rate`` (NaN for a
        group without rows of that label); with mediators: ``path_specific_rate``.
    metrics_ : dict
        ``disparate_impact`` (min/max rate, 1 is fair), ``statistical_parity``
        (max - min), ``equalized_odds`` (with ``y`` and a learned or independent
        network: the larger of the gaps over ``Y = 1`` and ``Y = 0``, each on a network
        learned from those rows), ``path_specific_causal`` (with ``mediators``).
    most_favored_group_ : dict
        Sensitive feature -> value of the group with the largest positive rate.
    least_favored_group_ : dict
        Same for the smallest positive rate.
    feature_names_in_ : ndarray of str
        Columns of ``X``.
    n_features_in_ : int
        Number of columns of ``X``.

    See Also
    --------
    skfairverify.s3p.positive_probability : The exact engine.
    skfairverify.make_verifier_scorer : The verified metrics as a GridSearchCV scorer.

    Notes
    -----
    The definitions follow FVGM: DI, SP, EO and PCF as in its Section 2 (items 1-4;
    Appendix B.1) computed as in its Section 3.4, the fairness influence function as in
    its Section 5 and Appendix E (the paper does not number these equations); see
    ``docs/verification.md``.
    When every group has a positive rate of 0, disparate impact is defined as 1.
    The sensitive variables get no parents, so with several sensitive features the
    network treats them as independent; that does not affect ``Pr[Yhat = 1 | A = a]``,
    which conditions on all of them, and only groups observed in ``X`` are reported.

    References
    ----------
    Ghosh, B., Basu, D., Meel, K. S. "Algorithmic Fairness Verification with Graphical
    Models", AAAI 2022.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 2000)
    >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0)})
    >>> y = (X["x"] + rng.normal(0, 1, 2000) > 0.5).astype(int)
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=20, random_state=0).fit(X, y)
    >>> sorted(ver.metrics_)
    ['disparate_impact', 'equalized_odds', 'statistical_parity']
    >>> ver.groups_.columns.tolist()[:3]
    ['a', 'positive_rate', 'support']
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "sensitive_features": [str, Integral, list, tuple],
        "n_bins": [StrOptions({"auto"}), Interval(Integral, 2, None, closed="left")],
        "max_bins": [Interval(Integral, 2, None, closed="left")],
        "multiplier": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "max_multiplier": [Interval(Integral, 1, None, closed="left")],
        "network": [StrOptions({"learn", "independent"}), BayesNet],
        "mediators": [None, str, list, tuple],
        "pcf_definition": [StrOptions({"fvgm", "edge_specific"})],
        "max_indegree": [None, Interval(Integral, 1, None, closed="left")],
        "max_table_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [None, Integral],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        sensitive_features,
        *,
        n_bins="auto",
        max_bins=60,
        multiplier="auto",
        max_multiplier=1000,
        network="learn",
        mediators=None,
        pcf_definition="fvgm",
        max_indegree=1,
        max_table_size=50_000_000,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.sensitive_features = sensitive_features
        self.n_bins = n_bins
        self.max_bins = max_bins
        self.multiplier = multiplier
        self.max_multiplier = max_multiplier
        self.network = network
        self.mediators = mediators
        self.pcf_definition = pcf_definition
        self.max_indegree = max_indegree
        self.max_table_size = max_table_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ input checks
    def _frame(self, X, *, reset: bool) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            frame = X.copy()
            frame.columns = [str(c) for c in frame.columns]
        else:
            arr = np.asarray(X, dtype=object) if not hasattr(X, "toarray") else X.toarray()
            if arr.ndim != 2:
                raise ValueError(
                    f"X must be 2-dimensional (n_samples, n_features); got shape {arr.shape}."
                )
            frame = pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])
            frame = frame.infer_objects()
        if len(frame) == 0:
            raise ValueError("X has no rows; FairnessVerifier needs data.")
        if reset:
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
            self.n_features_in_ = frame.shape[1]
        nan_cols = [c for c in frame.columns if frame[c].isna().any()]
        if nan_cols:
            raise ValueError(
                f"X contains missing values (NaN) in the column(s) {nan_cols}; impute or "
                "drop them before verifying."
            )
        return frame

    def _sensitive_names(self, frame: pd.DataFrame) -> list[str]:
        raw = self.sensitive_features
        items = [raw] if isinstance(raw, (str, Integral)) else list(raw)
        if not items:
            raise ValueError("sensitive_features is empty; name at least one column.")
        names = []
        for item in items:
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, (str, Integral)):
                raise TypeError(
                    f"sensitive_features must hold column names or positions; got {item!r}."
                )
            if isinstance(item, Integral):
                if not 0 <= int(item) < frame.shape[1]:
                    raise ValueError(
                        f"Sensitive feature position {item} is out of range for X with "
                        f"{frame.shape[1]} columns."
                    )
                name = str(frame.columns[int(item)])
            else:
                name = item
            if name not in frame.columns:
                raise ValueError(
                    f"Sensitive feature {name!r} is not a column of X; columns: "
                    f"{list(frame.columns)}."
                )
            if name in names:
                raise ValueError(f"Sensitive feature {name!r} is listed twice.")
            names.append(name)
        for name in names:
            col = frame[name]
            check_unambiguous(col, name)
            n_values = col.nunique()
            if n_values < 2:
                raise ValueError(
                    f"Sensitive feature {name!r} has a single group ({col.iloc[0]!r}); "
                    "fairness needs at least two."
                )
            if pd.api.types.is_float_dtype(col) and n_values > MAX_SENSITIVE_VALUES:
                raise ValueError(
                    f"Sensitive feature {name!r} is continuous ({n_values} distinct values); "
                    "bin it into groups first, e.g. X[col] = pd.cut(X[col], bins=[...]) or "
                    "(X[col] >= 25).map({True: '>=25', False: '<25'})."
                )
            if pd.api.types.is_numeric_dtype(col) and n_values > MAX_SENSITIVE_VALUES:
                raise ValueError(
                    f"Sensitive feature {name!r} has {n_values} distinct numeric values; a "
                    f"sensitive feature must be categorical (at most {MAX_SENSITIVE_VALUES} "
                    "values). Bin it into groups first."
                )
        return names

    def _positive_labels(self, y, n_rows: int) -> np.ndarray:
        """Whether each label is the positive class; refuses labels it cannot read."""
        y = _check_y_shape(y, n_rows)
        classes = self.classes_.tolist()
        values = pd.unique(y.astype(object))
        missing = [v for v in values if pd.isna(v)]
        if missing:
            raise ValueError(
                f"y contains missing labels ({int(pd.isna(y).sum())} NaN/None); a label "
                "must be one of the estimator's classes "
                f"{classes}. Drop or impute those rows."
            )
        if len(values) > 2:
            raise ValueError(
                f"y has {len(values)} distinct labels {sorted(values, key=str)[:10]}; "
                "equalized odds needs binary labels, the estimator's classes "
                f"{classes}."
            )
        unknown = [v for v in values if not any(_same_label(v, c) for c in classes)]
        if unknown:
            raise ValueError(
                f"y has label(s) {sorted(unknown, key=str)} (type "
                f"{sorted({type(v).__name__ for v in unknown})}) that are not in the "
                f"estimator's classes {classes} (type "
                f"{sorted({type(c).__name__ for c in classes})}); encode y as in fit."
            )
        return np.asarray(y.astype(object) == self.classes_[1], dtype=bool)

    def _mediator_names(self, encoding: Encoding, sensitive: list[str]) -> list[str]:
        if self.mediators is None:
            return []
        items = [self.mediators] if isinstance(self.mediators, str) else list(self.mediators)
        out = []
        for m in items:
            if not isinstance(m, str):
                raise TypeError(f"mediators must be column names; got {m!r}.")
            if m in sensitive:
                raise ValueError(f"Mediator {m!r} is a sensitive feature; it cannot mediate.")
            if m not in encoding.names:
                raise ValueError(
                    f"Mediator {m!r} is not a variable of the verifier (a column read by the "
                    f"model); variables: {encoding.names}."
                )
            out.append(m)
        return out

    # ------------------------------------------------------------------ quantization
    def _agreement(self, encoding, frame, reference, multipliers):
        codes = encoding.codes(frame)
        contrib = encoding.contributions(codes)
        return select_multiplier(
            contrib, self._unit_rule.intercept, reference, max(multipliers),
            multipliers=multipliers
        )

    def _choose_quantization(self, frame, sensitive):
        rule = self._unit_rule
        if self.multiplier == "auto":
            multipliers = _candidates(MULTIPLIER_GRID, self.max_multiplier)
        else:
            multipliers = [int(self.multiplier)]
        if self.n_bins == "auto":
            bins = _candidates(BIN_GRID, self.max_bins)
        else:
            bins = [int(self.n_bins)]
        if len(bins) == 1 and len(multipliers) == 1:
            return bins[0], multipliers[0]
        idx = np.arange(len(frame))
        if len(frame) >= 40:
            fit_idx, hold_idx = train_test_split(
                idx, test_size=HELD_OUT, random_state=self.random_state
            )
        else:
            fit_idx = hold_idx = idx
        hold = frame.iloc[hold_idx]
        reference = rule.decision_function(hold) > 0
        scores = []  # (agreement, k, l), finest resolution first
        for k in tqdm(bins, desc="bins", disable=not self.verbose):
            enc = Encoding.from_data(frame, rule, sensitive, k, self.random_state,
                                     bin_rows=fit_idx)
            contrib = enc.contributions(enc.codes(hold))
            for l in multipliers:
                _, agree = select_multiplier(
                    contrib, rule.intercept, reference, l, multipliers=[l]
                )
                scores.append((agree, k, l))
        best = max(s[0] for s in scores)
        # Differences within one standard error of the best agreement are noise of the
        # held-out sample; among those candidates the finest resolution wins.
        tol = np.sqrt(best * (1.0 - best) / len(hold)) + 1.0 / len(hold)
        agree, k, l = next(s for s in scores if s[0] >= best - tol)
        return k, l

    def _warn_low_agreement(self, encoding, frame, reference):
        """LowAgreementWarning naming the agreement, its likely cause and the fix."""
        contrib = encoding.contributions(encoding.codes(frame))
        real = contrib.sum(axis=1) + self._unit_rule.intercept
        unrounded = float(np.mean((real > 0) == reference))
        if unrounded < MIN_AGREEMENT:
            if isinstance(self.network, BayesNet):
                fix = "give the network more states (finer values) for the numeric columns"
            elif self.n_bins == "auto":
                fix = f"raise max_bins (now {self.max_bins})"
            else:
                fix = f"raise n_bins (now {self.n_bins}) or use n_bins='auto'"
            cause = (f"the discretization: with the states' real values the rule already "
                     f"agrees on only {unrounded:.3f} of the rows; {fix}")
        else:
            fix = (f"raise max_multiplier (now {self.max_multiplier})"
                   if self.multiplier == "auto"
                   else f"raise multiplier (now {self.multiplier}) or use multiplier='auto'")
            cause = (f"the rounding of the weights to integers (multiplier_={self.multiplier_}; "
                     f"before rounding the agreement is {unrounded:.3f}); {fix}")
        warnings.warn(
            f"The integer rule that is verified decides as {type(self.estimator).__name__} "
            f"on only {self.agreement_:.3f} of the rows of X (agreement_ < {MIN_AGREEMENT}), "
            "so the verified metrics describe a different classifier. Likely cause: "
            f"{cause}.",
            LowAgreementWarning,
            stacklevel=4,
        )

    # ------------------------------------------------------------------ networks
    def _network_for(self, encoding, codes, sensitive):
        names, cards = encoding.names, encoding.cardinalities
        if isinstance(self.network, BayesNet):
            return self.network
        if self.network == "independent":
            return independent_network(codes, names, cards, EQUIVALENT_SAMPLE_SIZE)
        return learn_network(
            codes,
            names,
            cards,
            sensitive,
            coarsenable=[v.kind == "binned" for v in encoding.variables],
            structure_bins=STRUCTURE_BINS,
            max_indegree=self.max_indegree,
            equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
        )

    def _learn_networks(self, encoding, codes, y_pos, sensitive):
        """Networks on all rows, and on the rows with ``Y = 1`` and ``Y = 0``."""
        subsets = [np.ones(len(codes), dtype=bool)]
        if y_pos is not None:
            subsets += [y_pos, ~y_pos]
        tasks = [delayed(self._network_for)(encoding, codes[m], sensitive)
                 for m in subsets if m.any()]
        parallel = Parallel(n_jobs=self.n_jobs if len(tasks) > 1 else None,
                            return_as="generator")
        learned = iter(
            tqdm(parallel(tasks), total=len(tasks), desc="networks", disable=not self.verbose)
        )
        return [next(learned) if m.any() else None for m in subsets]

    def _evaluate(self, frame, y_pos, encoding, sensitive, mediators, multipliers):
        """Networks, group rates and metrics on ``frame`` (labels ``y_pos`` or None).

        ``multipliers`` lists the multipliers to try in order: when the engine's table
        for one is too large, the next (smaller) one is used.
        """
        codes = encoding.codes(frame)
        sens_codes = codes[:, self._sens_idx]
        group_codes, support = np.unique(sens_codes, axis=0, return_counts=True)
        if len(group_codes) < 2:
            raise ValueError("X holds a single compound sensitive group; fairness needs two.")
        networks = self._learn_networks(encoding, codes, y_pos, sensitive)
        for k, l in enumerate(multipliers):
            weights = [quantize(v.contribution, l) for v in encoding.variables]
            threshold = integer_threshold(int(quantize(self._unit_rule.intercept, l)))
            try:
                result = self._rates_and_metrics(
                    networks, weights, threshold, group_codes, support, sens_codes, y_pos,
                    encoding, sensitive, mediators,
                )
            except TableTooLargeError:
                if k + 1 == len(multipliers):
                    raise
                continue
            return (l, weights, threshold, networks[0], group_codes) + result
        raise RuntimeError("no multiplier to try")  # pragma: no cover

    def _rates_and_metrics(self, networks, weights, threshold, group_codes, support,
                           sens_codes, y_pos, encoding, sensitive, mediators):
        def rates_of(net):
            return group_rates(net, weights, threshold, self._sens_idx, group_codes,
                               self.max_table_size)

        rates = rates_of(networks[0])
        groups = pd.DataFrame(
            {
                name: [encoding.variables[i].states[int(s)] for s in group_codes[:, k]]
                for k, (name, i) in enumerate(zip(sensitive, self._sens_idx))
            }
        )
        groups["positive_rate"] = rates
        groups["support"] = support.astype(np.int64)
        metrics = {
            "disparate_impact": disparate_impact(rates),
            "statistical_parity": rate_gap(rates),
        }
        if y_pos is not None:
            gaps = []
            for mask, net, column in (
                (y_pos, networks[1], "true_positive_rate"),
                (~y_pos, networks[2], "false_positive_rate"),
            ):
                values = np.full(len(group_codes), np.nan)
                if net is not None:
                    present = {tuple(g) for g in np.unique(sens_codes[mask], axis=0)}
                    in_subset = np.array([tuple(g) in present for g in group_codes])
                    values[in_subset] = rates_of(net)[in_subset]
                    if in_subset.sum() >= 2:
                        gaps.append(rate_gap(values[in_subset]))
                groups[column] = values
            if gaps:
                metrics["equalized_odds"] = max(gaps)
        i_max, i_min = favored_indices(rates)
        if mediators:
            med_idx = [encoding.index(m) for m in mediators]
            if self.pcf_definition == "fvgm":
                med_net = fvgm_mediated_network(
                    networks[0], med_idx, self._sens_idx, list(group_codes[i_max]),
                    self.max_table_size,
                )
            else:
                med_net = edge_specific_network(
                    networks[0], med_idx, self._sens_idx, list(group_codes[i_max])
                )
            pcf_rates = rates_of(med_net)
            groups["path_specific_rate"] = pcf_rates
            metrics["path_specific_causal"] = rate_gap(pcf_rates)
        return groups, metrics, (i_max, i_min)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the estimator, quantize its rule, learn the network and verify.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Training data including the sensitive columns (the estimator may drop them).
        y : array-like of shape (n_samples,), default=None
            Labels; needed to fit an unfitted estimator, and for equalized odds.
            May be None when ``estimator`` is a :class:`~sklearn.frozen.FrozenEstimator`.
            Every label must be one of the estimator's classes (same type: ``"1"`` is
            not ``1``); NaN labels or more than two classes raise a ValueError.

        Returns
        -------
        self : FairnessVerifier
        """
        frame = self._frame(X, reset=True)
        sensitive = self._sensitive_names(frame)
        frozen = type(self.estimator).__name__ == "FrozenEstimator"
        if y is None and not frozen:
            raise ValueError(
                "y is required to fit the estimator; pass y, or wrap a fitted model in "
                "sklearn.frozen.FrozenEstimator."
            )
        if y is not None:
            y = _check_y_shape(y, len(frame))
        estimator = clone(self.estimator)
        estimator.fit(X, y)
        self.estimator_ = estimator
        try:
            rule = linear_rule(estimator)
        except TypeError as exc:
            raise TypeError(
                f"FairnessVerifier verifies binary linear classifiers; "
                f"{type(self.estimator).__name__} cannot be read as one: {exc}"
            ) from exc
        self.rule_ = rule
        self.classes_ = np.asarray(rule.classes) if rule.classes is not None else np.array([0, 1])
        # Quantize the rule divided by the scale of its decision function, so that the
        # integer rule does not depend on a positive rescaling of the model.
        self.decision_scale_ = decision_scale(rule.decision_function(frame))
        self._unit_rule = rule.scaled(1.0 / self.decision_scale_)
        rule = self._unit_rule
        y_pos = None if y is None else self._positive_labels(y, len(frame))

        auto_l = self.multiplier == "auto"
        reference = rule.decision_function(frame) > 0
        if isinstance(self.network, BayesNet):
            encoding = Encoding.from_network(self.network, rule, sensitive)
            self.n_bins_ = None
            multipliers = (
                _candidates(MULTIPLIER_GRID, self.max_multiplier) if auto_l
                else [int(self.multiplier)]
            )
            l, _ = self._agreement(encoding, frame, reference, multipliers)
        else:
            k, l = self._choose_quantization(frame, sensitive)
            encoding = Encoding.from_data(frame, rule, sensitive, k, self.random_state)
            self.n_bins_ = k
        # With multiplier="auto", fall back to smaller multipliers (a shorter score
        # range) when the exact computation would not fit in max_table_size.
        fallback = [l] + ([m for m in _candidates(MULTIPLIER_GRID, self.max_multiplier)
                           if m < l] if auto_l else [])
        self._encoding = encoding
        self.discretizer_ = encoding.discretizer
        self.variables_ = encoding.names
        self._sens_idx = [encoding.index(s) for s in sensitive]
        self._sensitive = sensitive
        mediators = self._mediator_names(encoding, sensitive)
        self._mediators = mediators
        eo_labels = None if isinstance(self.network, BayesNet) else y_pos
        l, weights, threshold, net, group_codes, groups, metrics, (i_max, i_min) = (
            self._evaluate(frame, eo_labels, encoding, sensitive, mediators, fallback)
        )
        _, agreement = self._agreement(encoding, frame, reference, [l])
        self.multiplier_ = int(l)
        self.agreement_ = float(agreement)
        if self.agreement_ < MIN_AGREEMENT:
            self._warn_low_agreement(encoding, frame, reference)
        self._weights = weights
        self.threshold_ = threshold
        self.weights_ = {
            v.name: pd.Series(w, index=pd.Index(v.states, dtype=object), name=v.name)
            for v, w in zip(encoding.variables, weights)
        }
        self.network_ = net
        self.groups_ = groups
        self.metrics_ = metrics
        self._group_codes = group_codes
        self.most_favored_group_ = {s: groups[s].iloc[i_max] for s in sensitive}
        self.least_favored_group_ = {s: groups[s].iloc[i_min] for s in sensitive}
        return self

    # ------------------------------------------------------------------ verification
    def verify(self, X, y=None) -> dict:
        """Re-estimate the distribution on other data and verify the fitted rule on it.

        The rule, bins, multiplier and network strategy of ``fit`` are kept; only the
        network is learned again from ``X`` (e.g. a test set). A value of a discrete
        numeric column (one state per value) that ``fit`` did not see gets its own
        state, with its exact contribution.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Data with the columns seen in ``fit``.
        y : array-like of shape (n_samples,), default=None
            Labels, for equalized odds; validated as in :meth:`fit`.

        Returns
        -------
        dict
            The metrics, as in ``metrics_``.

        Raises
        ------
        ValueError
            With a user-given network (there is nothing to re-estimate), on missing
            columns, NaN, unseen categories, a sensitive column mixing values
            that print alike (``1`` and ``"1"``), a single sensitive group, or labels
            ``y`` that are missing, not binary or not among ``classes_``.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from sklearn.linear_model import LogisticRegression
        >>> from skfairverify import FairnessVerifier
        >>> rng = np.random.default_rng(0)
        >>> a = rng.integers(0, 2, 1000)
        >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0)})
        >>> y = (X["x"] > 0.5).astype(int)
        >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
        ...                        n_bins=10).fit(X[:500], y[:500])
        >>> sorted(ver.verify(X[500:], y[500:]))
        ['disparate_impact', 'equalized_odds', 'statistical_parity']
        """
        check_is_fitted(self)
        if isinstance(self.network, BayesNet):
            raise ValueError(
                "verify re-estimates the network from data; this verifier was given a "
                "fixed BayesNet. Use network='learn' or 'independent'."
            )
        frame = self._frame(X, reset=False)
        missing = [c for c in self.variables_ if c not in frame.columns]
        if missing:
            raise ValueError(f"X lacks the column(s) {missing} used by the verifier.")
        for s in self._sensitive:
            check_unambiguous(frame[s], s)
            if frame[s].nunique() < 2:
                raise ValueError(
                    f"Sensitive feature {s!r} has a single group in X; fairness needs two."
                )
        y_pos = None if y is None else self._positive_labels(y, len(frame))
        # A discrete numeric value absent from the rows of fit gets its own state (its
        # contribution is exact), since the network is learned again from X.
        result = self._evaluate(
            frame, y_pos, self._encoding.covering(frame), self._sensitive, self._mediators,
            [self.multiplier_],
        )
        return result[6]

    def fairness_influence(self, features=None, *, reference="support") -> pd.DataFrame:
        """Fairness influence function (FIF) of features, per sensitive group.

        ``FIF_a(S) = Pr[Yhat = 1 | A = a, D] - Pr[Yhat = 1 | A = a, D_-S]``, where
        ``D_-S`` replaces the distribution of the features ``S`` by independent uniform
        ones within their support (FVGM Section 5 and Appendix E, the group-specific
        influence ``FIF_a``). A positive value means the real distribution of ``S``
        raises the group's positive rate.

        Parameters
        ----------
        features : list of str or list of list of str, default=None
            Features (non-sensitive variables) or subsets of features; every
            non-sensitive variable on its own when None.
        reference : {"support", "states"}, default="support"
            The uniform distribution that replaces a feature. ``"support"`` (FVGM
            Appendix E, "a uniform distribution within the support"): a binned numeric
            feature is uniform over its observed range ``[min, max]`` in ``X`` of
            ``fit``, so each bin has the probability ``width / (max - min)`` (its width
            clipped to that range); a categorical feature, or a numeric one with one
            state per value, is uniform over its categories / values. ``"states"``:
            uniform over the states, i.e. over the quantile bins of a binned feature
            (nearly its own marginal distribution, so its influence is understated).

        Returns
        -------
        pandas.DataFrame
            One row per feature (subsets joined with ``" + "``), one column per group
            of ``groups_`` (a MultiIndex with several sensitive features).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from sklearn.linear_model import LogisticRegression
        >>> from skfairverify import FairnessVerifier
        >>> rng = np.random.default_rng(0)
        >>> a = rng.integers(0, 2, 1000)
        >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0), "z": rng.normal(0, 1, 1000)})
        >>> y = (X["x"] + X["z"] > 0.5).astype(int)
        >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
        ...                        n_bins=10).fit(X, y)
        >>> ver.fairness_influence().index.tolist()
        ['x', 'z']
        """
        check_is_fitted(self)
        non_sensitive = [n for n in self.variables_ if n not in self._sensitive]
        if features is None:
            subsets = [[n] for n in non_sensitive]
        else:
            if isinstance(features, str):
                features = [features]
            subsets = [[f] if isinstance(f, str) else list(f) for f in features]
        for subset in subsets:
            if not subset:
                raise ValueError("An empty feature subset has no influence to measure.")
            for f in subset:
                if f in self._sensitive:
                    raise ValueError(
                        f"{f!r} is a sensitive feature; FIF is defined for non-sensitive "
                        "features."
                    )
                if f not in self.variables_:
                    raise ValueError(
                        f"{f!r} is not a variable of the verifier; variables: "
                        f"{non_sensitive}."
                    )
        base = self.groups_["positive_rate"].to_numpy()

        if reference not in ("support", "states"):
            raise ValueError(
                f"reference must be 'support' (uniform over each feature's observed range, "
                f"FVGM Appendix E) or 'states' (uniform over its states); got {reference!r}."
            )

        def one(subset):
            idx = [self.variables_.index(f) for f in subset]
            dists = None
            if reference == "support":
                dists = [self._encoding.variables[i].support_distribution() for i in idx]
            net = uniform_network(self.network_, idx, dists)
            return base - group_rates(
                net, self._weights, self.threshold_, self._sens_idx, self._group_codes,
                self.max_table_size,
            )

        tasks = [delayed(one)(s) for s in subsets]
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
        rows = list(tqdm(parallel(tasks), total=len(tasks), desc="FIF",
                         disable=not self.verbose))
        if len(self._sensitive) == 1:
            columns = pd.Index(self.groups_[self._sensitive[0]].tolist(),
                               name=self._sensitive[0])
        else:
            columns = pd.MultiIndex.from_frame(self.groups_[self._sensitive])
        index = pd.Index([" + ".join(s) for s in subsets], name="feature")
        result = pd.DataFrame(np.vstack(rows), index=index, columns=columns)
        result.attrs["reference"] = reference
        return result

    # ------------------------------------------------------------------ delegation
    def predict(self, X):
        """Predictions of the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.estimator_.decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags
