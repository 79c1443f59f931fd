"""FairnessVerifier: fairness verification of any classifier over a Bayesian network."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_regressor,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..s3p import BayesNet
from ..utils._compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._fitting import fit_with_weights
from ..utils._validation import check_sample_weight
from ._checks import (
    check_fit_labels,
    check_frame,
    check_verify_frame,
    check_y_shape,
    estimator_has,
    missing_values_error,
    positive_labels,
    positive_rows,
    take_rows,
    takes_sensitive_features,
)
from ._dask import (
    SAMPLE_ROWS,
    VERIFY_SAMPLE_ROWS,
    DaskRows,
    DaskSource,
    FixedCodes,
    check_dask_call,
    fitted_estimator,
    is_dask_collection,
)
from ._display import influence_note, interval_note, verifier_html
from ._fif import Influence
from ._network import resolve_structure_search
from ._paths import run_path, select_path
from ._population import Observed
from ._results import FairnessInfluenceResult, VerificationResult
from ._sensitive import SensitiveColumns
from ._settings import Settings, Variables
from ._variables import bins_formed

__all__ = ["FairnessVerifier"]


class FairnessVerifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Group fairness of any classifier over a Bayesian network of its inputs.

    FVGM (Ghosh et al., AAAI 2022) as a scikit-learn meta-estimator: ``fit`` turns the
    columns the fitted ``estimator`` reads and the sensitive ones into discrete variables,
    learns a Bayesian network of them from ``X`` and computes each compound group's
    ``Pr[Yhat = 1 | A = a]`` under it, with an interval and a population estimate: exactly
    for a linear classifier or a decision tree, by certified sampling otherwise
    (``method_``). DI, SP, EO and PCF are defined in FVGM Section 2 (items 1-4; Appendix
    B.1) and computed as in Section 3.4; FIF as in Section 5 and Appendix E. Every step
    and parameter in detail: ``docs/verification.md``.

    Parameters
    ----------
    estimator : estimator
        A binary classifier, cloned and fitted on ``X``; wrap a fitted model in
        :class:`~sklearn.frozen.FrozenEstimator` to verify it as it is.
    sensitive_features : str, int, list, array-like, Series or DataFrame, default=None
        A column of ``X``, a list of them (groups: their intersections) or the values, as
        in fairlearn; None: give the values to ``fit`` and ``verify``.
    n_bins : "auto" or int, default="auto"
        Quantile bins per numeric column; ``"auto"``: by held-out agreement (``n_bins_reason_``).
    max_bins : int, default=60
        Largest number of bins tried by ``n_bins="auto"``.
    multiplier : "auto" or int, default="auto"
        Integer multiplier ``l`` of the linear rule; ``"auto"``: by held-out agreement.
    max_multiplier : int, default=1000
        Largest multiplier tried by ``multiplier="auto"``.
    network : {"learn", "independent"} or BayesNet, default="learn"
        ``"learn"``: a K2-scored structure, the sensitive variables parents of every
        other; ``"independent"``: smoothed marginals; a BayesNet: taken as it is.
    method : {"auto", "exact", "bounds", "sampling"}, default="auto"
        ``"auto"``: exact for linear models and trees, bounds for an ensemble read with at most
        ``2**22`` joint states (``docs/any-classifier.md``), else sampling; ``"bounds"``: ensembles.
    tolerance : float in (0, 1), default=0.005
        Sampling path: largest width of every point estimate's Monte Carlo interval;
        bounds path: of every rate's bounds (the branching stops there).
    confidence : float in (0, 1), default=0.99
        Sampling path: joint confidence of the Monte Carlo intervals.
    max_samples : int, default=2_000_000
        Sampling path: most rows sampled per group and rate (then a warning).
    max_time : float, default=600.0
        Budget in CPU seconds: sampled rows beyond it refused; the bounds then sample.
    n_draws : int, default=50
        Posterior draws of the learned network, each solved: the credible intervals of
        ``groups_`` and ``metric_intervals_``; 0: point estimates.
    credible_level : float in (0, 1), default=0.95
        Posterior probability of every credible interval of ``n_draws``.
    n_bootstrap : int, default=30
        Bayesian bootstrap replicates of the population estimate and model check (0: none).
    prior : {"bdeu", "hierarchical"}, default="bdeu"
        Prior of the network's tables: BDeu (equivalent sample size 1), or shrunk
        towards the additive fit where two or more sensitive variables are parents.
    mediators : str or list of str, default=None
        Columns mediating the sensitive features' effect, for ``path_specific_causal``.
    pcf_definition : {"fvgm", "edge_specific"}, default="fvgm"
        How the mediators follow the most favored group: FVGM's ``Pr[Z | A = a_max]``
        (Section 2, item 4), or along the edges ``A -> Z`` only.
    max_indegree : int or None, default=1
        Most parents of a variable besides the sensitive ones (None: no bound).
    max_table_size : int, default=50_000_000
        Largest working table of the engine (it also bounds the network learning and
        the rows sampled at once); beyond it a :class:`~skfairverify.s3p.TableTooLargeError`.
    sample_rows : int, default=200_000
        Rows drawn at random for the choice of ``n_bins`` and ``multiplier``.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split, the binning, the draws and the sampling path.
    n_jobs : int or None, default=None
        Parallel jobs (joblib) over the networks and the features of FIF.
    verbose : int, default=0
        Progress bars when > 0 (the long loops show theirs after 5 s anyway).

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator (``predict``, ``predict_proba``, ... delegate to it).
    classes_ : ndarray
        Classes of the estimator; a positive decision means ``classes_[1]``.
    method_, method_reason_ : {"exact", "bounds", "sampling"}, str
        The path that computed the rates, and why ``method`` chose it.
    rule_ : LinearRule or None
        The estimator as a rule on raw columns (None off the linear path).
    discretizer_ : BinningDiscretizer or None
        Bins of the binned numeric columns (None when there is none).
    n_bins_, n_bins_reason_ : int or None, str
        Bins used (None with a user network), and why: the candidates, their agreement.
    decision_scale_ : float or None
        Linear path: root mean square of the rule's decision, divided out before quantizing.
    multiplier_ : int or None
        The integer multiplier ``l``; None off the linear path.
    agreement_ : float
        Share of the rows where the integer rule (tree path: the positive leaves) agrees
        with the estimator; 1.0 on the sampling path.
    variables_ : list of str
        The variables, in the order of the network.
    weights_, threshold_ : dict or None, int or None
        Linear path: the integer weight of every state; positive when their sum reaches
        the threshold.
    network_ : BayesNet
        The distribution of the variables (learned on all rows of ``X``).
    groups_ : pandas.DataFrame
        One row per compound group: the sensitive features, ``positive_rate``,
        ``support``, ``ci_low`` / ``ci_high``, the true and false positive rates (with
        ``y``), ``path_specific_rate`` (with mediators), the population estimate;
        ``rate_lower``, ``rate_upper``, ``settled``, ``unsettled_interval`` on the bounds path.
    population_ : pandas.DataFrame or None
        Per group and rate: the network's and the direct rate, the estimate, its
        interval and the model check (``pvalue``). None with ``n_bootstrap=0``.
    population_metrics_, population_metric_intervals_ : dict
        The metrics of the population estimates, and their intervals.
    metrics_, metric_intervals_ : dict
        ``disparate_impact``, ``statistical_parity``, ``equalized_odds`` (with ``y``),
        ``path_specific_causal`` (with mediators), and their intervals.
    n_samples_ : int
        Rows sampled by ``fit`` (0 on an exact path).
    structure_search_ : {"tan", "hill_climb"} or None
        The structure search that learned ``network_``.
    most_favored_group_, least_favored_group_ : dict
        Sensitive feature -> value of the group with the largest (smallest) rate.
    sensitive_features_ : list of str
        Names of the sensitive columns (variables of the network).
    feature_names_in_ : ndarray of str
        Columns of ``X``.
    n_features_in_ : int
        Number of columns of ``X``.

    See Also
    --------
    skfairverify.s3p.positive_probability : The exact engine.
    skfairverify.make_verifier_scorer : The verified metrics as a GridSearchCV scorer.
    VerificationResult : What :meth:`verify` returns.

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
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "sensitive_features": [None, str, Integral, "array-like"],
        "n_bins": [StrOptions({"auto"}), Interval(Integral, 2, None, closed="left")],
        "max_bins": [Interval(Integral, 2, None, closed="left")],
        "multiplier": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "max_multiplier": [Interval(Integral, 1, None, closed="left")],
        "network": [StrOptions({"learn", "independent"}), BayesNet],
        "method": [StrOptions({"auto", "exact", "bounds", "sampling"})],
        "tolerance": [Interval(Real, 0, 1, closed="neither")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "max_samples": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither")],
        "n_draws": [Interval(Integral, 0, None, closed="left")],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "credible_level": [Interval(Real, 0, 1, closed="neither")],
        "prior": [StrOptions({"hierarchical", "bdeu"})],
        "mediators": [None, str, list, tuple],
        "pcf_definition": [StrOptions({"fvgm", "edge_specific"})],
        "max_indegree": [None, Interval(Integral, 1, None, closed="left")],
        "max_table_size": [Interval(Integral, 1, None, closed="left")],
        "sample_rows": [Interval(Integral, 2, None, closed="left")],
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
        method="auto",
        tolerance=0.005,
        confidence=0.99,
        max_samples=2_000_000,
        max_time=600.0,
        n_draws=50,
        credible_level=0.95,
        n_bootstrap=30,
        prior="bdeu",
        mediators=None,
        pcf_definition="fvgm",
        max_indegree=1,
        max_table_size=50_000_000,
        sample_rows=SAMPLE_ROWS,
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
        self.method = method
        self.tolerance = tolerance
        self.confidence = confidence
        self.max_samples = max_samples
        self.max_time = max_time
        self.n_draws = n_draws
        self.n_bootstrap = n_bootstrap
        self.credible_level = credible_level
        self.prior = prior
        self.mediators = mediators
        self.pcf_definition = pcf_definition
        self.max_indegree = max_indegree
        self.max_table_size = max_table_size
        self.sample_rows = sample_rows
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_draws(self) -> None:
        """Refuse, before any work, fewer posterior draws than the credible level needs."""
        needed = int(np.ceil(2.0 / (1.0 - self.credible_level)))
        if 0 < self.n_draws < needed:
            raise ValueError(
                f"n_draws={self.n_draws} posterior draws are too few for credible_level="
                f"{self.credible_level} intervals (one draw beyond each bound needs at "
                f"least {needed}); raise n_draws, lower credible_level, or set n_draws=0 "
                "for point estimates only."
            )

    def _refuse_regressor(self) -> None:
        if is_regressor(self.estimator):
            raise TypeError(
                f"FairnessVerifier verifies binary classifiers; {type(self.estimator).__name__}"
                " is a regressor (its predictions are not decisions). Threshold it into a "
                "classifier first."
            )

    def _fit_estimator(self, X, y, weight, sensitive, frame):
        """Fit a clone of ``estimator`` on ``X, y`` (with the weights when given).

        A fairlearn mitigator (its ``fit`` takes ``sensitive_features``) also gets the
        sensitive values of the rows.
        """
        self._refuse_regressor()
        estimator = clone(self.estimator)
        if takes_sensitive_features(estimator, "fit"):
            if weight is not None:
                raise TypeError(
                    f"sample_weight cannot be passed to {type(estimator).__name__}.fit with "
                    "its sensitive_features; fit the model with the weights yourself and "
                    "pass FrozenEstimator(model)."
                )
            values = sensitive.iloc[:, 0] if sensitive.shape[1] == 1 else sensitive
            return estimator.fit(X, y, sensitive_features=values.to_numpy())
        try:
            return fit_with_weights(estimator, X, y, weight)
        except ValueError as exc:
            raise missing_values_error(exc, frame, estimator) from exc

    def _observed(self, path, X, frame: pd.DataFrame, sensitive) -> Observed | None:
        """The model's positive decisions on the rows (the direct rates' numerators).

        On the linear path the rule read from the model (equal to its decision function,
        and defined on categories the model's encoder has not seen), on the tree path
        its positive leaves, on the sampling path its own ``predict`` (a fairlearn
        mitigator's gets the sensitive values and a seed). None with ``n_bootstrap=0``.
        """
        if self.n_bootstrap == 0:
            return None
        if path.name == "sampling":
            return Observed(path.decisions(X, frame[list(sensitive)],
                                           Settings.of(self).population_rng(4)))
        return Observed(path.decisions(frame))

    def _store(self, path, variables: Variables, quantized, ev, agreement: float) -> None:
        """Every fitted attribute, from the path, the variables and fit's evaluation."""
        encoding = variables.encoding
        self._path, self._variables = path, variables
        self.method_, self.method_reason_ = path.name, path.reason
        self.classes_ = path.classes
        self.structure_search_ = (resolve_structure_search("auto", self.max_indegree)
                                  if path.settings.learned else None)
        self.rule_, self.decision_scale_ = path.rule, path.decision_scale
        self.n_bins_, fewer = bins_formed(encoding, quantized.n_bins)  # the bins formed
        self.n_bins_reason_ = quantized.reason + fewer
        self.discretizer_ = encoding.discretizer
        self.variables_ = encoding.names
        self.sensitive_features_ = list(variables.sensitive)
        self.multiplier_ = None if ev.multiplier is None else int(ev.multiplier)
        self.agreement_ = agreement
        self.threshold_ = ev.threshold
        self.weights_ = None if ev.weights is None else {
            v.name: pd.Series(w, index=pd.Index(v.states, dtype=object), name=v.name)
            for v, w in zip(encoding.variables, ev.weights)
        }
        self.metric_intervals_ = ev.metric_intervals
        self.n_samples_ = ev.n_samples
        self.network_ = ev.network
        self.groups_ = ev.groups
        self.metrics_ = ev.metrics
        self.population_ = ev.population_table
        self.population_metrics_ = dict(ev.population_metrics)
        self.population_metric_intervals_ = dict(ev.population_metric_intervals)
        self.most_favored_group_ = self._favored(ev.groups, ev.most_favored)
        self.least_favored_group_ = self._favored(ev.groups, ev.least_favored)

    def _favored(self, groups: pd.DataFrame, i: int) -> dict:
        return {s: groups[s].iloc[i] for s in self._variables.sensitive}

    def _fit_path(self, path, settings, X, frame, sensitive, y_pos, weight) -> None:
        """Encode, evaluate and store: the sequence of every path on pandas rows."""
        observed = self._observed(path, X, frame, sensitive)
        run = run_path(path, settings, frame, sensitive, y_pos, weight, observed)
        self._store(path, run.variables, run.quantized, run.evaluation, run.agreement)
        path.check_agreement(run.quantized.encoding, frame, weight, run.agreement,
                             run.evaluation.multiplier)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, sensitive_features=None, sample_weight=None):
        """Fit the estimator, learn the network and verify it (exactly or by sampling).

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_samples, n_features) or dask DataFrame
            Training data, given as is to the estimator; it includes the sensitive
            columns when the constructor names them (the estimator may drop them).
            A ``dask.dataframe.DataFrame`` is read partition by partition (the counts
            exact on all rows, the bins on ``sample_rows`` rows; ``docs/scale.md``): the
            estimator must then be fitted already (a
            :class:`~sklearn.frozen.FrozenEstimator` or a fitted model, not refitted),
            the sensitive features named in the constructor, ``y`` and
            ``sample_weight`` dask Series with the partitions of ``X``; the linear and
            tree paths take it, the sampling path does not.
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
            weights give the verified values of repeating the rows (with fixed
            ``n_bins`` and ``multiplier``: the automatic choice holds out a random
            share of the rows, which repeated rows change); the population estimate
            and the draws' rule read them as sampling weights (Kish's effective
            rows), so their intervals may differ. A weight of 0 is the same as
            dropping the row.

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
            When ``X`` is sparse, or with ``method="exact"`` the estimator has no exact
            path (neither a linear classifier nor a decision tree), with
            ``method="bounds"`` it is not a tree ensemble the path reads, or ``X`` is a
            dask DataFrame and it has none.
        NotFittedError
            When ``X`` is a dask DataFrame and the estimator is not fitted.
        TableTooLargeError
            When ``X`` is a dask DataFrame whose gathered codes would exceed
            ``8 * max_table_size`` bytes (see ``max_table_size``).

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

        A dask DataFrame, with a fitted model (the counts by partition; on a cluster,
        create a ``distributed.Client`` first):

        >>> import dask.dataframe as dd
        >>> from sklearn.frozen import FrozenEstimator
        >>> data = X.assign(group=group, label=y)
        >>> model = LogisticRegression().fit(X, y)
        >>> ddf = dd.from_pandas(data, npartitions=4)
        >>> ver = FairnessVerifier(FrozenEstimator(model), "group", network="independent",
        ...                        n_bins=10, n_draws=0)
        >>> ver = ver.fit(ddf[["x", "group"]], ddf["label"])
        >>> ver.groups_["support"].tolist() == data["group"].value_counts().sort_index().tolist()
        True
        """
        self._check_draws()
        if is_dask_collection(X):
            check_dask_call(Settings.of(self), sensitive_features, "fit")
            return self._fit_dask(X, y, sample_weight)
        frame, positional = self._read_frame(X, fitting=True)
        self._input_labels = list(X.columns) if isinstance(X, pd.DataFrame) else None
        weight = check_sample_weight(sample_weight, len(frame))
        y = check_fit_labels(y, len(frame), self.estimator)
        self._sensitive_columns = SensitiveColumns(self.sensitive_features)
        frame, sensitive = self._sensitive_columns.resolve(
            frame, sensitive_features, fitting=True, positional_labels=positional)
        if weight is not None and not weight.all():
            keep = np.flatnonzero(weight > 0)
            X = take_rows(X, keep)
            frame, y, weight = positive_rows(frame, y, weight)
        self.estimator_ = self._fit_estimator(X, y, weight, frame[sensitive], frame)
        settings = Settings.of(self)
        path = select_path(settings, self.estimator_, frame, weight, y,
                           feature_names=self.feature_names_in_,
                           input_labels=self._input_labels, sensitive=sensitive)
        y_pos = None if y is None else positive_labels(y, len(frame), path.classes)
        self._fit_path(path, settings, X, frame, sensitive, y_pos, weight)
        return self

    def _read_frame(self, X, *, fitting: bool):
        """``X`` as a frame (:func:`check_frame`); ``fit`` records its feature names."""
        frame, positional = check_frame(X, fitting=fitting)
        if fitting:
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
            self.n_features_in_ = frame.shape[1]
        return frame, positional

    def _fit_dask(self, X, y, sample_weight):
        """``fit`` on a dask DataFrame: the rows summarised, gathered, then evaluated."""
        settings = Settings.of(self)
        source = DaskSource(settings, DaskRows.check(X, y, sample_weight))
        self._refuse_regressor()
        self.estimator_ = fitted_estimator(self.estimator)
        path = source.select_path(self.estimator_, X)
        stats, summary, n_sample = source.statistics(
            source.columns(path), path.rule, self.sample_rows, fitting=True,
            classes=path.classes)
        frame, positional = self._read_frame(summary, fitting=True)
        self._input_labels = list(source.rows.columns)
        self._sensitive_columns = SensitiveColumns(self.sensitive_features)
        frame, sensitive = self._sensitive_columns.resolve(frame, None, fitting=True,
                                                           positional_labels=positional)
        quantized = source.encode(path, stats, frame, n_sample, sensitive)
        gathered, encoding = source.gather(path, stats, quantized.encoding, path.classes[1],
                                           exact_means=True)
        variables = Variables.of(encoding, sensitive, self.mediators)
        ev, agreement = source.evaluate(path, variables, gathered, quantized.multipliers)
        path.remember(variables, ev)
        self._store(path, variables, quantized, ev, agreement)
        path.check_agreement(FixedCodes(encoding, gathered.codes), None, gathered.weight,
                             agreement, ev.multiplier, reference=gathered.reference)
        return self

    def _verify_dask(self, X, y, sample_weight):
        """``verify`` on a dask DataFrame: the evaluation of its rows and the agreement."""
        source = DaskSource(Settings.of(self), DaskRows.check(X, y, sample_weight))
        if not self._sensitive_columns.by_name:
            raise ValueError(
                "This verifier was fitted with sensitive values apart from X; with a dask X "
                "the sensitive features must be columns of X named in the constructor."
            )
        if self.method_ == "sampling":
            raise TypeError("The sampling path does not take a dask X; pass pandas data.")
        stats, summary, _ = source.statistics(list(self.variables_), None, VERIFY_SAMPLE_ROWS,
                                              fitting=False, classes=self.classes_)
        frame, positional = self._read_frame(summary, fitting=False)
        frame, _ = self._sensitive_columns.resolve(frame, None, fitting=False,
                                                   positional_labels=positional)
        check_verify_frame(frame, self.network, self.variables_, self.sensitive_features_)
        variables = self._variables.covering(frame)
        gathered, _ = source.gather(self._path, stats, variables.encoding, self.classes_[1],
                                    exact_means=False)
        return source.evaluate(self._path, variables, gathered, [self.multiplier_])

    def verify(self, X, y=None, *, sensitive_features=None,
               sample_weight=None) -> VerificationResult:
        """Re-estimate the distribution on other data and verify the fitted model on it.

        The path, rule, bins, multiplier and network strategy of ``fit`` are kept; only
        the network is learned again from ``X`` (e.g. a test set). A value of a discrete
        numeric column (one state per value) that ``fit`` did not see gets its own
        state, with its exact contribution. On the sampling path the rows are sampled
        from the new network (binned values drawn from the rows of ``X``), with
        intervals as in ``fit`` (``metric_intervals``).

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_samples, n_features) or dask DataFrame
            Data with the columns seen in ``fit``; a dask DataFrame as in :meth:`fit`
            (the sensitive features then columns of ``X``).
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
        if is_dask_collection(X):
            check_dask_call(Settings.of(self), sensitive_features, "verify")
            return self._result(*self._verify_dask(X, y, sample_weight))
        frame, positional = self._read_frame(X, fitting=False)
        weight = check_sample_weight(sample_weight, len(frame))
        y = None if y is None else check_y_shape(y, len(frame))
        frame, _ = self._sensitive_columns.resolve(frame, sensitive_features, fitting=False,
                                                   positional_labels=positional)
        if weight is not None and not weight.all():
            X = take_rows(X, np.flatnonzero(weight > 0))
        frame, y, weight = positive_rows(frame, y, weight)
        check_verify_frame(frame, self.network, self.variables_, self.sensitive_features_)
        y_pos = None if y is None else positive_labels(y, len(frame), self.classes_)
        path = self._path
        observed = self._observed(path, X, frame, self._variables.sensitive)
        # A discrete numeric value absent from the rows of fit gets its own state (its
        # contribution is exact), since the network is learned again from X.
        variables = self._variables.covering(frame)
        multipliers = [self.multiplier_]
        ev = path.evaluate(variables, frame, y_pos, variables.encoding, multipliers, weight,
                           observed)
        return self._result(ev, path.agreement(variables.encoding, frame, self.multiplier_,
                                               weight))

    def _result(self, ev, agreement: float) -> VerificationResult:
        """What :meth:`verify` returns, from an evaluation and the agreement."""
        return VerificationResult(
            groups=ev.groups,
            metrics=ev.metrics,
            most_favored_group=self._favored(ev.groups, ev.most_favored),
            least_favored_group=self._favored(ev.groups, ev.least_favored),
            agreement=agreement,
            metric_intervals=ev.metric_intervals,
            method=self.method_,
            intervals=interval_note(self),
            population_metrics=dict(ev.population_metrics),
            population_metric_intervals=dict(ev.population_metric_intervals),
            population=ev.population_table,
        )

    def fairness_influence(self, features=None, *, reference="support", intervals=True
                           ) -> FairnessInfluenceResult:
        """Fairness influence function (FIF) of features, per sensitive group.

        For a group ``a`` and a set of features ``S``,
        ``FIF_a(S) = P_D(a) - P_D'(a)``, where ``P_D(a) = Pr[Yhat = 1 | A = a]``
        under the fitted network ``D`` and ``P_D'(a)`` is the same probability under
        the network ``D'`` in which the features ``S`` follow independent uniform
        distributions within their support (FVGM Section 5 and Appendix E, the
        group-specific influence ``FIF_a``). A positive value means the real
        distribution of ``S`` raises the group's positive rate.

        On the sampling path ``P_D'(a)`` is sampled under ``D'`` as in ``fit`` (a binned
        feature's value drawn from the data within the bin that ``D'`` picks, so the
        "support" reference is uniform at the resolution of the bins), each rate to
        within ``tolerance`` at ``confidence`` jointly over the table; ``P_D(a)`` is
        ``groups_["positive_rate"]``, so an entry is within about two tolerances of the
        true influence.

        Intervals (exact paths, ``n_draws > 0``, a learned network): for every posterior
        draw ``D_d`` of the network that ``fit`` made, ``FIF_a,d(S) = P_{D_d}(a) -
        P_{D'_d}(a)``, ``D'_d`` the draw with ``S`` replaced by the same (fixed)
        reference distributions, each solved exactly as ``fit`` solves its draws (the
        draws' rates function planned once per subset on ``D'``); ``ci_low`` /
        ``ci_high`` are the equal-tailed intervals of those values at
        ``credible_level``, widened to hold the value (an
        :class:`~skfairverify.verification.EstimateOutsideIntervalWarning` names the
        entries it widens). They hold the uncertainty of the parameters learned from a
        finite sample, not that of the structure (an edge between two features may point
        either way, and the reference replaces a feature's table, not its children's) or
        of the bins. The draws cost one engine run per subset and draw (on the draws'
        coarser rule; ``docs/benchmarks.md`` gives their cost); ``n_jobs`` runs the
        subsets in parallel, ``intervals=False`` skips the draws; a progress bar counts
        the subsets once the call has run 5 s (at once with ``verbose``). Before any
        draw of a subset is solved, their time is estimated from sizes (the engine's plan
        of the draws' rule, the tree's elimination, or the nodes of the point search on
        the tree-ensemble path) and must be within the work bound of ``max_table_size``
        (a TableTooLargeError names ``n_draws`` otherwise). Without draws
        (``n_draws=0``, a user network) and on the sampling path there is no interval,
        and ``intervals["label"]`` says why: the sampling path's influences are Monte
        Carlo estimates, with neither the network's uncertainty nor a joint
        confidence interval.

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
        intervals : bool, default=True
            Compute the credible intervals from the posterior draws (one engine run per
            subset and draw); False gives the point influences only, at the cost of one
            engine run per subset (``intervals["label"]`` then says so).

        Returns
        -------
        FairnessInfluenceResult
            ``table``: one row per feature (subsets joined with ``" + "``), one column
            per group of ``groups_`` (a MultiIndex with several sensitive features);
            ``reference``; ``ci_low`` / ``ci_high`` (None without draws) and
            ``intervals`` (what they are).

        Raises
        ------
        TableTooLargeError
            When the posterior draws of a subset are estimated beyond the work bound of
            ``max_table_size`` (lower ``n_draws``), or an engine run is.

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
        >>> fif = ver.fairness_influence()
        >>> fif.table.index.tolist()
        ['x', 'z']
        >>> fif.intervals["label"]
        '95% credible interval (posterior of the network, 50 draws)'
        >>> bool((fif.ci_low.loc["x"] <= fif.table.loc["x"]).all())
        True
        """
        check_is_fitted(self)
        if reference not in ("support", "states"):
            raise ValueError(
                f"reference must be 'support' (uniform over each feature's observed range, "
                f"FVGM Appendix E) or 'states' (uniform over its states); got {reference!r}."
            )
        if not isinstance(intervals, (bool, np.bool_)):
            raise ValueError(f"intervals must be True or False; got {intervals!r}.")
        influence = Influence(self._path, self._variables, self.network_, self.groups_,
                              Settings.of(self))
        subsets = influence.subsets(features)
        base = self.groups_["positive_rate"].to_numpy()
        draws, base_draws = influence.draws() if intervals else (None, None)
        solved = influence.rates(subsets, reference, draws)
        rows = [base - point for point, _ in solved]
        index = pd.Index([" + ".join(s) for s in subsets], name="feature")
        table = pd.DataFrame(np.vstack(rows), index=index, columns=influence.columns())
        ci_low = ci_high = None
        if draws:
            fif_draws = np.stack([base_draws - values for _, values in solved], axis=1)
            ci_low, ci_high = influence.intervals(table, fif_draws)
        return FairnessInfluenceResult(table=table, reference=reference, ci_low=ci_low,
                                       ci_high=ci_high,
                                       intervals=influence_note(self, draws, intervals))

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

    @available_if(estimator_has("predict_proba"))
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

    @available_if(estimator_has("decision_function"))
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

    def _html_repr(self):
        """Notebook display: scikit-learn's parameter diagram, then what fit found."""
        return super()._html_repr() + (verifier_html(self) if hasattr(self, "groups_") else "")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags
