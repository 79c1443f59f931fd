"""FairnessVerifier: exact fairness verification of a linear classifier (FVGM)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d
from tqdm.auto import tqdm

from .._linear import linear_rule
from ..preprocessing import decision_scale, integer_threshold, quantize
from ..s3p import BayesNet, TableTooLargeError
from ..utils._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._fitting import fit_with_weights
from ..utils._validation import check_sample_weight, check_sensitive, check_unambiguous
from ._influence import (
    edge_specific_network,
    fvgm_mediated_network,
    group_rates,
    uniform_network,
)
from ._metrics import disparate_impact, favored_indices, rate_gap
from ._network import check_learning_size, independent_network, learn_network
from ._results import FairnessInfluenceResult, VerificationResult
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
    if y.ndim == 2 and y.shape[1] == 1:  # a column vector, as scikit-learn: warn, ravel
        y = column_or_1d(y, warn=True)
    if y.ndim != 1 or len(y) != n_rows:
        raise ValueError(
            f"y must be 1-dimensional with {n_rows} entries (one per row of X); got shape "
            f"{y.shape}."
        )
    return y


def _check_binary(y) -> None:
    """Refuse more than two distinct labels before fitting (NaN labels are not counted)."""
    values = [v for v in pd.unique(y.astype(object)) if not pd.isna(v)]
    if len(values) > 2 and y.dtype.kind == "f" and np.any(np.asarray(values) % 1 != 0):
        raise ValueError(
            f"Unknown label type: continuous (y has {len(values)} distinct non-integer "
            "values). FairnessVerifier verifies binary classifiers: y must hold two classes."
        )
    if len(values) > 2:
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"multiclass: y has {len(values)} classes "
            f"{sorted(values, key=str)[:10]}; equalized odds and the integer rule need two."
        )


def _same_label(value, cls) -> bool:
    """Whether a label equals a class, refusing ``"1"`` for ``1`` (str vs number)."""
    if isinstance(value, str) != isinstance(cls, str):
        return False
    return bool(value == cls)


def _take_rows(X, rows):
    """Take the rows ``rows`` of ``X`` (DataFrame, sparse matrix or array-like)."""
    if isinstance(X, (pd.DataFrame, pd.Series)):
        return X.iloc[rows]
    if isinstance(X, np.ndarray) or hasattr(X, "toarray"):
        return X[rows]
    return [X[int(i)] for i in rows]


def _positive_rows(frame: pd.DataFrame, y, weight):
    """``frame``, ``y`` and ``weight`` without the rows of weight 0 (same as no row)."""
    if weight is None or weight.all():
        return frame, y, weight
    keep = weight > 0
    return (frame[keep].reset_index(drop=True), None if y is None else y[keep],
            weight[keep])


def _weighted_scale(decision, weight) -> float:
    """Root mean square of ``decision``, weighted by ``weight`` when given."""
    decision = np.asarray(decision, dtype=float)
    if weight is None:
        return decision_scale(decision)
    # The root mean square of d * sqrt(w / mean(w)) is sqrt(sum(w d^2) / sum(w)).
    return decision_scale(decision * np.sqrt(weight / weight.mean()))


def _effective_size(weight, n_rows: int) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` (``n_rows`` without weights)."""
    if weight is None:
        return float(n_rows)
    return float(weight.sum() ** 2 / np.sum(weight**2))


def _finest_within_noise(scores, n_effective: float) -> tuple[int, int]:
    """Finest ``(k, l)`` whose agreement is within one standard error of the best.

    ``scores`` lists ``(agreement, k, l)`` finest resolution first; differences within
    one standard error of the best agreement are noise of the held-out sample.
    """
    best = max(s[0] for s in scores)
    tol = np.sqrt(best * (1.0 - best) / n_effective) + 1.0 / n_effective
    _, k, l = next(s for s in scores if s[0] >= best - tol)
    return k, l


def _group_support(sens_codes: np.ndarray, weight):
    """Distinct compound groups (rows of codes) and their rows, or summed weights."""
    group_codes, inverse, counts = np.unique(
        sens_codes, axis=0, return_inverse=True, return_counts=True
    )
    if weight is None:
        return group_codes, counts.astype(np.int64)
    return group_codes, np.bincount(inverse.ravel(), weights=weight,
                                    minlength=len(group_codes))


def _groups_present(group_codes: np.ndarray, sens_codes: np.ndarray) -> np.ndarray:
    """Whether each group (row of ``group_codes``) has a row in ``sens_codes``."""
    present = {tuple(g) for g in np.unique(sens_codes, axis=0)}
    return np.array([tuple(g) in present for g in group_codes], dtype=bool)


def _is_column_reference(item, frame: pd.DataFrame) -> bool:
    """Whether ``item`` is the name or the position of a column of ``frame``."""
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, str):
        return item in frame.columns
    if isinstance(item, Integral):
        return 0 <= int(item) < frame.shape[1]
    return False


def _names_columns(raw, frame: pd.DataFrame) -> bool:
    """Whether the constructor's ``sensitive_features`` names columns (else: values).

    A scalar is a name or a position; a Series, DataFrame or ndarray holds values; a
    list holds values when it has one entry per row of ``X`` and they are not all
    columns of ``X`` (or there are more rows than columns, so they cannot all be).
    """
    if isinstance(raw, (str, Integral)):
        return True
    if isinstance(raw, (pd.Series, pd.DataFrame, np.ndarray)):
        return False
    items = list(raw)
    if len(items) != len(frame):
        return True
    return len(frame) <= frame.shape[1] and all(_is_column_reference(i, frame) for i in items)


def _check_value_columns(sens: pd.DataFrame, frame: pd.DataFrame) -> None:
    """Refuse sensitive values whose names repeat or clash with a column of ``X``."""
    if pd.Index([str(c) for c in sens.columns]).duplicated().any():
        raise ValueError(
            f"sensitive_features has duplicate column names {list(sens.columns)}; give "
            "each attribute its own name."
        )
    clash = [c for c in sens.columns if c in frame.columns]
    if clash:
        raise ValueError(
            f"The sensitive_features values are named {clash}, as column(s) of X: the "
            "network reads X and the sensitive values side by side, so their names must "
            f"differ. Rename the values (e.g. a Series named otherwise), or name the column "
            f"of X instead: FairnessVerifier(estimator, sensitive_features={clash[0]!r})."
        )


def _short(raw) -> str:
    """A short description of the constructor's ``sensitive_features`` for messages."""
    if isinstance(raw, (str, Integral)):
        return repr(raw)
    if isinstance(raw, (list, tuple)) and len(raw) <= 5:
        return repr(raw)
    return f"<{type(raw).__name__} of {len(raw)} values>"


def _sensitive_column_name(item, frame: pd.DataFrame) -> str:
    """Return the column of ``frame`` named (or, for an integer, positioned) by ``item``."""
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
        return str(frame.columns[int(item)])
    if item not in frame.columns:
        raise ValueError(
            f"Sensitive feature {item!r} is not a column of X; columns: "
            f"{list(frame.columns)}."
        )
    return item


def _check_sensitive_column(col: pd.Series, name: str) -> None:
    """Refuse a sensitive column with one group, ambiguous or too many numeric values."""
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


def _rates_in_subset(rates_of, network, group_codes, subset_codes) -> np.ndarray:
    """Rates under ``network`` of the groups with rows in the subset (NaN for others)."""
    values = np.full(len(group_codes), np.nan)
    if network is not None:
        present = _groups_present(group_codes, subset_codes)
        values[present] = rates_of(network)[present]
    return values


def _gap_of_present(values: np.ndarray) -> float | None:
    """Statistical parity gap of the groups with a rate (None for fewer than two)."""
    present = values[~np.isnan(values)]
    return rate_gap(present) if present.size >= 2 else None


@dataclass
class _Evaluation:
    """What one verification of the integer rule on data yields (``_evaluate``)."""

    multiplier: int
    weights: list
    threshold: int
    network: BayesNet
    group_codes: np.ndarray
    groups: pd.DataFrame
    metrics: dict
    most_favored: int
    least_favored: int



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
    sensitive_features : str, int, list, array-like, Series or DataFrame, default=None
        The sensitive attributes, as in fairlearn: the name of a column of ``X``
        (a position for an array), a list of names, or the values themselves for the
        rows of ``fit`` (one row per row of ``X``; several columns: the groups are
        their intersections). Leave None to pass the values to the methods instead,
        ``fit(X, y, sensitive_features=...)`` and ``verify(X, y,
        sensitive_features=...)``; values given here apply to ``fit`` only, so
        ``verify`` then needs the values of its own rows. Each attribute must be
        categorical or discrete (at most 10 distinct numeric values). The estimator
        sees ``X`` as given: values passed apart from ``X`` never reach it (a column
        named here does, and the model may drop it); the network reads ``X`` and the
        sensitive values side by side.
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
        from the sensitive variables carry ``a_max``, ``Pr[Z | Pa(Z) without A, A = a_max]``
        (a path-specific effect along the edges ``A -> Z``); the two agree when no
        mediator has a parent other than the sensitive ones.
    max_indegree : int or None, default=1
        Largest number of parents of a variable in the learned network, besides the
        sensitive variables. The default 1 lets every feature have the sensitive
        variables and at most one other feature as parents (the edges between
        features form a forest, augmented by the sensitive variables), which keeps
        the engine's table small with many-state variables: on Adult (13 variables,
        up to 60 states) a fit takes ~15 s, while ``max_indegree=2`` makes the exact
        table wider and the fit several times slower. None: no bound.
    max_table_size : int, default=50_000_000
        Largest number of entries of the engine's working table; beyond it a
        :class:`~skfairverify.s3p.TableTooLargeError` explains what to lower. The
        same budget bounds, before anything is allocated, the network learning
        (pgmpy's largest count table, at ~256 bytes per entry, within
        ``8 * max_table_size`` bytes) and the engine's estimated running time
        (2.4 s per million entries: 120 s by default); raising it raises all three.
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
        Root mean square of the rule's decision function on ``X`` (weighted with
        ``sample_weight``)
        (:func:`~skfairverify.preprocessing.decision_scale`). The rule is divided by it
        before its weights are quantized, so that the integer rule, hence every
        verified number, does not change when the model's decision function is
        multiplied by a positive constant.
    multiplier_ : int
        The integer multiplier ``l`` (of the rule divided by ``decision_scale_``).
    agreement_ : float
        Share of the rows of ``X`` (of their weight with ``sample_weight``) where the
        integer rule agrees with the estimator.
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
        ``positive_rate`` (exact ``Pr[Yhat = 1 | A = a]``), ``support`` (rows of ``X``,
        or the sum of their weights with ``sample_weight``),
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
    sensitive_features_ : list of str
        Names of the sensitive columns (variables of the network): the columns named
        in the constructor, or the names of the values (of a Series or DataFrame;
        ``"sensitive_features"``, or ``"sensitive_features_0"``, ``"_1"``, ... for
        the columns of an array).
    feature_names_in_ : ndarray of str
        Columns of ``X``.
    n_features_in_ : int
        Number of columns of ``X``.

    See Also
    --------
    skfairverify.s3p.positive_probability : The exact engine.
    skfairverify.make_verifier_scorer : The verified metrics as a GridSearchCV scorer.
    VerificationResult : What :meth:`verify` returns.

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

    The sensitive values apart from ``X`` (the model never sees them), as in
    fairlearn:

    >>> sex = pd.Series(np.where(a == 1, "M", "F"), name="sex")
    >>> ver = FairnessVerifier(LogisticRegression(), network="independent", n_bins=20,
    ...                        random_state=0).fit(X[["x"]], y, sensitive_features=sex)
    >>> ver.sensitive_features_, ver.groups_["sex"].tolist()
    (['sex'], ['F', 'M'])
    >>> list(ver.estimator_.feature_names_in_)
    ['x']
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "sensitive_features": [None, str, Integral, "array-like"],
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
        sensitive_features=None,
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
        if issparse(X):
            raise TypeError(
                "Sparse data was passed for X, but dense data is required: "
                "FairnessVerifier reads X as a table. Convert it with X.toarray()."
            )
        if isinstance(X, pd.DataFrame):
            frame = X.copy()
            # Not-string column names are not feature names for scikit-learn: the
            # estimator then reads the columns by position, as x0, x1, ...
            named = all(isinstance(c, str) for c in frame.columns)
            frame.columns = [c if named else f"x{i}" for i, c in enumerate(frame.columns)]
        else:
            arr = np.asarray(X, dtype=object)
            if arr.ndim != 2:
                raise ValueError(
                    f"X must be 2-dimensional (n_samples, n_features); got shape {arr.shape}."
                )
            frame = pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])
            frame = frame.infer_objects()
        if len(frame) == 0:
            raise ValueError("X has no rows; FairnessVerifier needs data.")
        if frame.shape[1] == 0:
            raise ValueError(
                f"0 feature(s) (shape={frame.shape}) while a minimum of 1 is required by "
                "FairnessVerifier."
            )
        if reset and len(frame) == 1:
            raise ValueError(
                "FairnessVerifier needs at least 2 samples (two groups); got n_samples = 1."
            )
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
            name = _sensitive_column_name(item, frame)
            if name in names:
                raise ValueError(f"Sensitive feature {name!r} is listed twice.")
            names.append(name)
        for name in names:
            _check_sensitive_column(frame[name], name)
        return names

    def _with_sensitive_values(self, frame, values, *, fitting: bool):
        """``frame`` with the sensitive values as columns, and the names of those columns."""
        if isinstance(values, pd.DataFrame):
            _check_value_columns(values, frame)
        sens = check_sensitive(values, n_rows=len(frame), name="sensitive_features")
        sens = sens.infer_objects()
        sens.columns = [str(c) for c in sens.columns]
        _check_value_columns(sens, frame)
        if fitting:
            names = list(sens.columns)
            for name in names:
                _check_sensitive_column(sens[name], name)
        else:
            names = list(self._sensitive)
            if sorted(sens.columns) != sorted(names):
                raise ValueError(
                    f"verify got sensitive_features named {list(sens.columns)}, but fit used "
                    f"{names}; pass the values under those names (a Series or DataFrame "
                    "with those columns, or an array of as many columns as in fit)."
                )
        for name in names:  # by position, whatever the index of the values
            frame[name] = sens[name].array
        return frame, names

    def _resolve_sensitive(self, frame, sensitive_features, *, fitting: bool):
        """The frame the network reads (``X`` and the sensitive columns) and their names.

        One source per call: the columns named in the constructor, or the values passed
        to the method; values given to the constructor are those of the rows of ``fit``.
        """
        raw = self.sensitive_features
        method = "fit" if fitting else "verify"
        if fitting:
            self._sensitive_by_name = raw is not None and _names_columns(raw, frame)
        by_name = self._sensitive_by_name
        if sensitive_features is not None:
            if by_name or (fitting and raw is not None):
                raise ValueError(
                    f"{method} got the sensitive features twice: in the constructor "
                    f"(sensitive_features={_short(raw)}) and as {method}(..., "
                    "sensitive_features=...). Give one: FairnessVerifier(estimator, "
                    "sensitive_features=None) to pass the values to the methods."
                )
            return self._with_sensitive_values(frame, sensitive_features, fitting=fitting)
        if by_name:
            return frame, self._sensitive_names(frame) if fitting else list(self._sensitive)
        if raw is None:
            raise ValueError(
                f"{method} needs the sensitive features: name the columns of X in "
                "FairnessVerifier(estimator, sensitive_features=...), or pass their values "
                f"as {method}(X, y, sensitive_features=...)."
            )
        if fitting:
            return self._with_sensitive_values(frame, raw, fitting=True)
        raise ValueError(
            "The constructor's sensitive_features holds the values of the rows of fit; "
            "verify needs the values of its own rows: verify(X, y, sensitive_features=...)."
        )

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
    def _multipliers(self) -> list[int]:
        """Return the multipliers to try, largest first (one with a fixed ``multiplier``)."""
        if self.multiplier == "auto":
            return _candidates(MULTIPLIER_GRID, self.max_multiplier)
        return [int(self.multiplier)]

    def _integer_rule(self, encoding: Encoding, multiplier: int):
        """Integer weights of every state and the threshold of the rule times ``l``."""
        weights = [quantize(v.contribution, multiplier) for v in encoding.variables]
        threshold = integer_threshold(int(quantize(self._unit_rule.intercept, multiplier)))
        return weights, threshold

    def _agreements(self, encoding, frame, reference, multipliers, weight) -> np.ndarray:
        """Share of the rows (weighted) where the integer rule decides as ``reference``.

        One agreement per multiplier; the rule is the verified one: the sum of the
        integer weights of the rows' states reaches the integer threshold.
        """
        codes = encoding.codes(frame)
        out = np.empty(len(multipliers))
        for i, l in enumerate(multipliers):
            weights, threshold = self._integer_rule(encoding, l)
            score = np.zeros(len(codes), dtype=np.int64)
            for j, w in enumerate(weights):
                score += w[codes[:, j]]
            out[i] = np.average((score >= threshold) == reference, weights=weight)
        return out

    def _held_out_split(self, n_rows: int):
        idx = np.arange(n_rows)
        if n_rows < 40:
            return idx, idx
        return train_test_split(idx, test_size=HELD_OUT, random_state=self.random_state)

    def _choose_quantization(self, frame, sensitive, weight):
        """Choose the number of bins and the multiplier by agreement on held-out rows.

        The split is by rows; with ``sample_weight`` the bins are weighted on the
        fitting rows and the agreement on the held-out rows, whose standard error uses
        their effective (Kish) size.
        """
        rule = self._unit_rule
        multipliers = self._multipliers()
        bins = _candidates(BIN_GRID, self.max_bins) if self.n_bins == "auto" else [
            int(self.n_bins)]
        if len(bins) == 1 and len(multipliers) == 1:
            return bins[0], multipliers[0]
        fit_idx, hold_idx = self._held_out_split(len(frame))
        hold = frame.iloc[hold_idx]
        hold_weight = None if weight is None else weight[hold_idx]
        reference = rule.decision_function(hold) > 0
        scores = []  # (agreement, k, l), finest resolution first
        for k in tqdm(bins, desc="bins", disable=not self.verbose):
            enc = Encoding.from_data(frame, rule, sensitive, k, self.random_state,
                                     bin_rows=fit_idx, sample_weight=weight)
            agreements = self._agreements(enc, hold, reference, multipliers, hold_weight)
            scores += [(a, k, l) for a, l in zip(agreements, multipliers)]
        return _finest_within_noise(scores, _effective_size(hold_weight, len(hold)))

    def _encode(self, frame, sensitive, weight):
        """Build the variables; return them and the multipliers to try (chosen, then smaller)."""
        if isinstance(self.network, BayesNet):
            encoding = Encoding.from_network(self.network, self._unit_rule, sensitive)
            self.n_bins_ = None
            multipliers = self._multipliers()
            reference = self._unit_rule.decision_function(frame) > 0
            agreements = self._agreements(encoding, frame, reference, multipliers, weight)
            l = multipliers[int(np.argmax(agreements))]  # ties: the first candidate
        else:
            k, l = self._choose_quantization(frame, sensitive, weight)
            encoding = Encoding.from_data(frame, self._unit_rule, sensitive, k,
                                          self.random_state, sample_weight=weight)
            self.n_bins_ = k
        # With multiplier="auto", fall back to smaller multipliers (a shorter score
        # range) when the exact computation would not fit in max_table_size.
        smaller = [m for m in self._multipliers() if m < l] if self.multiplier == "auto" else []
        return encoding, [l] + smaller

    def _warn_low_agreement(self, encoding, frame, reference, weight):
        """LowAgreementWarning naming the agreement, its likely cause and the fix."""
        contrib = encoding.contributions(encoding.codes(frame))
        real = contrib.sum(axis=1) + self._unit_rule.intercept
        unrounded = float(np.average((real > 0) == reference, weights=weight))
        if unrounded < MIN_AGREEMENT:
            cause = (f"the discretization: with the states' real values the rule already "
                     f"agrees on only {unrounded:.3f} of the rows; {self._finer_states_fix()}")
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

    def _finer_states_fix(self) -> str:
        if isinstance(self.network, BayesNet):
            return "give the network more states (finer values) for the numeric columns"
        if self.n_bins == "auto":
            return f"raise max_bins (now {self.max_bins})"
        return f"raise n_bins (now {self.n_bins}) or use n_bins='auto'"

    # ------------------------------------------------------------------ networks
    def _network_for(self, encoding, codes, weight):
        names, cards = encoding.names, encoding.cardinalities
        if isinstance(self.network, BayesNet):
            return self.network
        if self.network == "independent":
            return independent_network(codes, names, cards, EQUIVALENT_SAMPLE_SIZE,
                                       sample_weight=weight)
        return learn_network(
            codes,
            names,
            cards,
            self._sensitive,
            coarsenable=[v.kind == "binned" for v in encoding.variables],
            structure_bins=STRUCTURE_BINS,
            max_indegree=self.max_indegree,
            equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
            sample_weight=weight,
            max_table_size=self.max_table_size,
        )

    def _learn_networks(self, encoding, codes, y_pos, weight):
        """Networks on all rows, and on the rows with ``Y = 1`` and ``Y = 0``."""
        if isinstance(self.network, str) and self.network == "learn":
            check_learning_size(encoding.names, encoding.cardinalities, self._sensitive,
                                coarsenable=[v.kind == "binned" for v in encoding.variables],
                                structure_bins=STRUCTURE_BINS, max_indegree=self.max_indegree,
                                max_table_size=self.max_table_size)
        subsets = [np.ones(len(codes), dtype=bool)]
        if y_pos is not None:
            subsets += [y_pos, ~y_pos]
        tasks = [delayed(self._network_for)(encoding, codes[m],
                                            None if weight is None else weight[m])
                 for m in subsets if m.any()]
        parallel = Parallel(n_jobs=self.n_jobs if len(tasks) > 1 else None,
                            return_as="generator")
        learned = iter(
            tqdm(parallel(tasks), total=len(tasks), desc="networks", disable=not self.verbose)
        )
        return [next(learned) if m.any() else None for m in subsets]

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, frame, y_pos, encoding, multipliers, weight) -> _Evaluation:
        """Networks, group rates and metrics on ``frame`` (labels ``y_pos`` or None).

        ``multipliers`` lists the multipliers to try in order: when the engine's table
        for one is too large, the next (smaller) one is used.
        """
        codes = encoding.codes(frame)
        sens_codes = codes[:, self._sens_idx]
        group_codes, support = _group_support(sens_codes, weight)
        if len(group_codes) < 2:
            raise ValueError("X holds a single compound sensitive group; fairness needs two.")
        networks = self._learn_networks(encoding, codes, y_pos, weight)
        for k, l in enumerate(multipliers):
            try:
                return self._evaluate_at(l, encoding, networks, group_codes, support,
                                         sens_codes, y_pos)
            except TableTooLargeError:
                if k + 1 == len(multipliers):
                    raise
        raise RuntimeError("no multiplier to try")  # pragma: no cover

    def _evaluate_at(self, multiplier, encoding, networks, group_codes, support, sens_codes,
                     y_pos) -> _Evaluation:
        """Group rates and metrics of the integer rule with the multiplier ``l``."""
        weights, threshold = self._integer_rule(encoding, multiplier)

        def rates_of(net):
            return group_rates(net, weights, threshold, self._sens_idx, group_codes,
                               self.max_table_size)

        rates = rates_of(networks[0])
        groups = self._group_table(encoding, group_codes)
        groups["positive_rate"] = rates
        groups["support"] = support
        metrics = {
            "disparate_impact": disparate_impact(rates),
            "statistical_parity": rate_gap(rates),
        }
        if y_pos is not None:
            for mask, net, column in ((y_pos, networks[1], "true_positive_rate"),
                                      (~y_pos, networks[2], "false_positive_rate")):
                groups[column] = _rates_in_subset(rates_of, net, group_codes,
                                                  sens_codes[mask])
            gaps = [_gap_of_present(groups[c].to_numpy())
                    for c in ("true_positive_rate", "false_positive_rate")]
            if any(g is not None for g in gaps):
                metrics["equalized_odds"] = max(g for g in gaps if g is not None)
        i_max, i_min = favored_indices(rates)
        if self._mediators:
            pcf_rates = rates_of(self._mediated_network(encoding, networks[0],
                                                        group_codes[i_max]))
            groups["path_specific_rate"] = pcf_rates
            metrics["path_specific_causal"] = rate_gap(pcf_rates)
        return _Evaluation(multiplier, weights, threshold, networks[0], group_codes, groups,
                           metrics, i_max, i_min)

    def _group_table(self, encoding, group_codes) -> pd.DataFrame:
        """One column per sensitive feature: the value of each group."""
        return pd.DataFrame(
            {
                name: [encoding.variables[i].states[int(s)] for s in group_codes[:, k]]
                for k, (name, i) in enumerate(zip(self._sensitive, self._sens_idx))
            }
        )

    def _mediated_network(self, encoding, network, favored_codes) -> BayesNet:
        """Return the network in which the mediators follow the most favored group."""
        med_idx = [encoding.index(m) for m in self._mediators]
        if self.pcf_definition == "fvgm":
            return fvgm_mediated_network(network, med_idx, self._sens_idx,
                                         list(favored_codes), self.max_table_size)
        return edge_specific_network(network, med_idx, self._sens_idx, list(favored_codes))

    def _favored(self, groups: pd.DataFrame, i: int) -> dict:
        return {s: groups[s].iloc[i] for s in self._sensitive}

    # ------------------------------------------------------------------ fit
    def _fit_estimator(self, X, y, weight):
        """Fit a clone of ``estimator`` on ``X, y`` (with the weights when given)."""
        return fit_with_weights(clone(self.estimator), X, y, weight)

    def _read_rule(self, frame, weight) -> None:
        """``rule_``, ``classes_`` and the rule divided by its (weighted) scale."""
        try:
            rule = linear_rule(self.estimator_)
        except TypeError as exc:
            raise TypeError(
                f"FairnessVerifier verifies binary linear classifiers; "
                f"{type(self.estimator).__name__} cannot be read as one: {exc}"
            ) from exc
        self.rule_ = rule
        self.classes_ = np.asarray(rule.classes) if rule.classes is not None else np.array([0, 1])
        # Quantize the rule divided by the scale of its decision function, so that the
        # integer rule does not depend on a positive rescaling of the model.
        self.decision_scale_ = _weighted_scale(rule.decision_function(frame), weight)
        self._unit_rule = rule.scaled(1.0 / self.decision_scale_)

    def _check_fit_labels(self, y, n_rows: int):
        if y is None and not isinstance(self.estimator, FrozenEstimator):
            raise ValueError(
                "FairnessVerifier requires y to be passed, but the target y is None: y "
                "is required to fit the estimator; pass y, or wrap a fitted model in "
                "sklearn.frozen.FrozenEstimator."
            )
        if y is None:
            return None
        y = _check_y_shape(y, n_rows)
        _check_binary(y)
        return y

    def _set_variables(self, encoding: Encoding, sensitive: list[str]) -> None:
        self._encoding = encoding
        self.discretizer_ = encoding.discretizer
        self.variables_ = encoding.names
        self._sens_idx = [encoding.index(s) for s in sensitive]
        self._sensitive = sensitive
        self.sensitive_features_ = list(sensitive)
        self._mediators = self._mediator_names(encoding, sensitive)

    def _set_evaluation(self, ev: _Evaluation, encoding: Encoding) -> None:
        self._weights = ev.weights
        self.threshold_ = ev.threshold
        self.weights_ = {
            v.name: pd.Series(w, index=pd.Index(v.states, dtype=object), name=v.name)
            for v, w in zip(encoding.variables, ev.weights)
        }
        self.network_ = ev.network
        self.groups_ = ev.groups
        self.metrics_ = ev.metrics
        self._group_codes = ev.group_codes
        self.most_favored_group_ = self._favored(ev.groups, ev.most_favored)
        self.least_favored_group_ = self._favored(ev.groups, ev.least_favored)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, sensitive_features=None, sample_weight=None):
        """Fit the estimator, quantize its rule, learn the network and verify.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Training data, given as is to the estimator; it includes the sensitive
            columns when the constructor names them (the estimator may drop them).
        y : array-like of shape (n_samples,), default=None
            Labels; needed to fit an unfitted estimator, and for equalized odds.
            May be None when ``estimator`` is a :class:`~sklearn.frozen.FrozenEstimator`.
            Every label must be one of the estimator's classes (same type: ``"1"`` is
            not ``1``); NaN labels or more than two classes raise a ValueError.
        sensitive_features : array-like, Series or DataFrame, default=None
            The sensitive values of the rows of ``X``, taken by position (one row per
            row of ``X``; a DataFrame or 2-d array gives several attributes, whose
            intersections are the groups), when the constructor's
            ``sensitive_features`` is None. They are columns of the network only,
            named after the Series or DataFrame columns (``"sensitive_features"``,
            ``"sensitive_features_0"``, ... for arrays), which must differ from the
            columns of ``X``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row. Every count is weighted: the quantile
            bins and their means, the agreement of the integer rule, the counts of the
            structure search (K2) and of the network's tables, the group supports;
            the estimator is fitted with the weights (a
            :class:`~sklearn.frozen.FrozenEstimator` is not refitted). Integer
            weights give the result of repeating the rows (with fixed ``n_bins`` and
            ``multiplier``: the automatic choice holds out a random share of the
            rows, which repeated rows change); a weight of 0 is the same as dropping
            the row.

        Returns
        -------
        self : FairnessVerifier
            The fitted verifier.

        Raises
        ------
        ValueError
            When the sensitive features are given twice (in the constructor and here)
            or not at all, on values of the wrong length, with NaN, a single group,
            too many numeric values, or a name that is a column of ``X``; when ``y``
            has more than two classes or continuous values (before the estimator is
            fitted), or is None for an estimator to fit.
        TypeError
            When ``X`` is sparse, or the estimator is not a binary linear classifier.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from sklearn.linear_model import LogisticRegression
        >>> from skfairverify import FairnessVerifier
        >>> rng = np.random.default_rng(0)
        >>> group = rng.choice(["F", "M"], 1000)
        >>> X = pd.DataFrame({"x": rng.normal(group == "M", 1.0)})
        >>> y = (X["x"] > 0.5).astype(int)
        >>> ver = FairnessVerifier(LogisticRegression(), network="independent", n_bins=10)
        >>> ver = ver.fit(X, y, sensitive_features=group)
        >>> ver.sensitive_features_
        ['sensitive_features']
        >>> ver.groups_["sensitive_features"].tolist()
        ['F', 'M']
        """
        frame = self._frame(X, reset=True)
        weight = check_sample_weight(sample_weight, len(frame))
        y = self._check_fit_labels(y, len(frame))
        frame, sensitive = self._resolve_sensitive(frame, sensitive_features, fitting=True)
        if weight is not None and not weight.all():
            keep = np.flatnonzero(weight > 0)
            X = _take_rows(X, keep)
            frame, y, weight = _positive_rows(frame, y, weight)
        self.estimator_ = self._fit_estimator(X, y, weight)
        self._read_rule(frame, weight)
        y_pos = None if y is None else self._positive_labels(y, len(frame))
        encoding, multipliers = self._encode(frame, sensitive, weight)
        self._set_variables(encoding, sensitive)
        eo_labels = None if isinstance(self.network, BayesNet) else y_pos
        ev = self._evaluate(frame, eo_labels, encoding, multipliers, weight)
        reference = self._unit_rule.decision_function(frame) > 0
        self.multiplier_ = int(ev.multiplier)
        self.agreement_ = float(
            self._agreements(encoding, frame, reference, [ev.multiplier], weight)[0]
        )
        self._set_evaluation(ev, encoding)
        if self.agreement_ < MIN_AGREEMENT:
            self._warn_low_agreement(encoding, frame, reference, weight)
        return self

    # ------------------------------------------------------------------ verification
    def _check_verify_frame(self, frame: pd.DataFrame) -> None:
        if isinstance(self.network, BayesNet):
            raise ValueError(
                "verify re-estimates the network from data; this verifier was given a "
                "fixed BayesNet. Use network='learn' or 'independent'."
            )
        missing = [c for c in self.variables_ if c not in frame.columns]
        if missing:
            raise ValueError(f"X lacks the column(s) {missing} used by the verifier.")
        for s in self._sensitive:
            check_unambiguous(frame[s], s)
            if frame[s].nunique() < 2:
                raise ValueError(
                    f"Sensitive feature {s!r} has a single group in X; fairness needs two."
                )

    def verify(self, X, y=None, *, sensitive_features=None,
               sample_weight=None) -> VerificationResult:
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
        sensitive_features : array-like, Series or DataFrame, default=None
            The sensitive values of the rows of ``X`` (by position), required when
            ``fit`` did not read them from columns of ``X`` named in the constructor
            (values given to the constructor or to ``fit`` are those of fit's rows);
            refused when it did. The same attributes as in ``fit``: a Series or
            DataFrame with the names of ``sensitive_features_``, or an array with as
            many columns as in ``fit`` when ``fit`` had an array.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row in the counts of the network, of the
            group supports and of the agreement (see :meth:`fit`).

        Returns
        -------
        VerificationResult
            ``groups`` (as ``groups_``), ``metrics`` (as ``metrics_``), the most and
            least favored groups, and the agreement of the integer rule with the
            estimator on ``X``.

        Raises
        ------
        ValueError
            With a user-given network (there is nothing to re-estimate), on missing
            columns or missing (or doubly given) sensitive values, NaN, unseen
            categories, a sensitive column mixing values
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
        >>> result = ver.verify(X[500:], y[500:])
        >>> sorted(result.metrics)
        ['disparate_impact', 'equalized_odds', 'statistical_parity']

        With the sensitive values apart from ``X``, ``verify`` takes those of its rows:

        >>> ver = FairnessVerifier(LogisticRegression(), network="independent",
        ...                        n_bins=10).fit(X[["x"]][:500], y[:500],
        ...                                       sensitive_features=a[:500])
        >>> result = ver.verify(X[["x"]][500:], y[500:], sensitive_features=a[500:])
        >>> result.groups["sensitive_features"].tolist()
        [0, 1]
        """
        check_is_fitted(self)
        frame = self._frame(X, reset=False)
        weight = check_sample_weight(sample_weight, len(frame))
        y = None if y is None else _check_y_shape(y, len(frame))
        frame, _ = self._resolve_sensitive(frame, sensitive_features, fitting=False)
        frame, y, weight = _positive_rows(frame, y, weight)
        self._check_verify_frame(frame)
        y_pos = None if y is None else self._positive_labels(y, len(frame))
        # A discrete numeric value absent from the rows of fit gets its own state (its
        # contribution is exact), since the network is learned again from X.
        encoding = self._encoding.covering(frame)
        ev = self._evaluate(frame, y_pos, encoding, [self.multiplier_], weight)
        reference = self._unit_rule.decision_function(frame) > 0
        agreement = self._agreements(encoding, frame, reference, [self.multiplier_], weight)
        return VerificationResult(
            groups=ev.groups,
            metrics=ev.metrics,
            most_favored_group=self._favored(ev.groups, ev.most_favored),
            least_favored_group=self._favored(ev.groups, ev.least_favored),
            agreement=float(agreement[0]),
        )

    # ------------------------------------------------------------------ influence
    def _feature_subsets(self, features) -> list[list[str]]:
        """Return the feature subsets of :meth:`fairness_influence`, validated."""
        non_sensitive = [n for n in self.variables_ if n not in self._sensitive]
        if features is None:
            return [[n] for n in non_sensitive]
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
        return subsets

    def _rates_without(self, subset, reference) -> np.ndarray:
        """Group positive rates with the features ``subset`` replaced by references."""
        idx = [self.variables_.index(f) for f in subset]
        dists = None
        if reference == "support":
            dists = [self._encoding.variables[i].support_distribution() for i in idx]
        net = uniform_network(self.network_, idx, dists)
        return group_rates(net, self._weights, self.threshold_, self._sens_idx,
                           self._group_codes, self.max_table_size)

    def fairness_influence(self, features=None, *, reference="support"
                           ) -> FairnessInfluenceResult:
        """Fairness influence function (FIF) of features, per sensitive group.

        For a group ``a`` and a set of features ``S``,
        ``FIF_a(S) = P_D(a) - P_D'(a)``, where ``P_D(a) = Pr[Yhat = 1 | A = a]``
        under the fitted network ``D`` and ``P_D'(a)`` is the same probability under
        the network ``D'`` in which the features ``S`` follow independent uniform
        distributions within their support (FVGM Section 5 and Appendix E, the
        group-specific influence ``FIF_a``). A positive value means the real
        distribution of ``S`` raises the group's positive rate.

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
        FairnessInfluenceResult
            ``table``: one row per feature (subsets joined with ``" + "``), one column
            per group of ``groups_`` (a MultiIndex with several sensitive features);
            ``reference``.

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
        >>> ver.fairness_influence().table.index.tolist()
        ['x', 'z']
        """
        check_is_fitted(self)
        if reference not in ("support", "states"):
            raise ValueError(
                f"reference must be 'support' (uniform over each feature's observed range, "
                f"FVGM Appendix E) or 'states' (uniform over its states); got {reference!r}."
            )
        subsets = self._feature_subsets(features)
        base = self.groups_["positive_rate"].to_numpy()
        tasks = [delayed(self._rates_without)(s, reference) for s in subsets]
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
        rows = [base - r for r in tqdm(parallel(tasks), total=len(tasks), desc="FIF",
                                       disable=not self.verbose)]
        if len(self._sensitive) == 1:
            columns = pd.Index(self.groups_[self._sensitive[0]].tolist(),
                               name=self._sensitive[0])
        else:
            columns = pd.MultiIndex.from_frame(self.groups_[self._sensitive])
        index = pd.Index([" + ".join(s) for s in subsets], name="feature")
        table = pd.DataFrame(np.vstack(rows), index=index, columns=columns)
        return FairnessInfluenceResult(table=table, reference=reference)

    # ------------------------------------------------------------------ delegation
    def predict(self, X):
        """Predict the classes with the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict, with the columns seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The estimator's predictions (not those of the integer rule).
        """
        check_is_fitted(self)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Predict the class probabilities with the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict, with the columns seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            The estimator's probabilities of ``classes_``.
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Compute the decision function of the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score, with the columns seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The estimator's decision values (positive for ``classes_[1]``).
        """
        check_is_fitted(self)
        return self.estimator_.decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags
