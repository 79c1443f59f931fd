"""CounterfactualFairness: the audit of Cornacchia et al. as an estimator."""

from __future__ import annotations

import hashlib
import time
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.utils.validation import check_is_fitted

from ..rules import Term, term_names
from ..s3p import TableTooLargeError
from ..s3p._errors import DEFAULT_MAX_TABLE_SIZE
from ..utils._categories import category_codes, equals, match_categories, positive_label
from ..utils._compat import N_JOBS, HasMethods, Interval, StrOptions
from ..utils._fitting import fit_with_weights
from ..utils._validation import check_sample_weight
from ._base import (
    K_CONSTRAINT,
    BaseGenerator,
    CounterfactualSet,
    check_frame,
    is_categorical,
    missing_columns,
)
from ._budget import Budget, GenerationTimeout, single_threaded
from ._column_subset import ColumnSubsetClassifier
from ._crossfit import (
    CrossFittedSensitiveClassifier,
    KeyedCache,
    fit_cross_fitted,
    group_report,
)
from ._groups import MIN_GROUP_SIZE, group_table, privileged_group
from ._metrics import _curves, _flip_matrix
from ._registry import GENERATOR_CONSTRAINT, check_audit_generator, make_generator
from ._results import CounterfactualResult
from ._sensitive import SEPARATOR, group_labels, method_values, resolve_fit_sensitive, with_values

__all__ = ["CounterfactualFairness", "default_sensitive_classifier"]

_NAMES = {1: "privileged", 0: "unprivileged"}
#: Largest number of entries of the counterfactual frames of one call (rows x
#: counterfactuals per row x columns), the engine's default table size.
MAX_ENTRIES = DEFAULT_MAX_TABLE_SIZE


#: The gradient boosting of :func:`default_sensitive_classifier`: 50 trees of at most 15
#: leaves (scikit-learn's defaults, 100 of 31, before issue 26: a held-out AUC as good on
#: every bundled dataset, in less time; the figures are in ``docs/benchmarks.md``), with
#: scikit-learn's early stopping on more than 10,000 rows (``"auto"``; always on, the
#: validation share of a small fold stops the boosting at random and loses AUC).
DEFAULT_SENSITIVE_PARAMS = {"max_iter": 50, "max_leaf_nodes": 15, "early_stopping": "auto"}


def default_sensitive_classifier(X: pd.DataFrame, random_state=None) -> Pipeline:
    """The default sensitive-feature classifier for the columns of ``X`` (unfitted).

    Categorical columns are ordinal-encoded (unknown categories become missing) and
    handled natively by :class:`~sklearn.ensemble.HistGradientBoostingClassifier`
    (``max_iter=50`` trees of ``max_leaf_nodes=15`` leaves, ``early_stopping="auto"``:
    scikit-learn's early stopping, on a validation share of the rows, beyond 10,000
    rows; a ``random_state`` integer makes that split, hence the fit, repeatable);
    numeric columns pass through. Missing values are accepted (the gradient boosting
    handles them natively); a column with no value at all is left out. Columns are
    selected by name when every column label is a string, by position otherwise (integer
    labels ``{1: ..., 2: ...}`` are not positions). When every column is numeric and
    named by a string, the ``"encode"`` step is ``"passthrough"``: the boosting reads
    the frame itself, with the same values (and fits, bit for bit) as through the column
    transformer, without its cost. The classifier depends only on ``X``'s columns and
    ``random_state``. :class:`CounterfactualFairness` cross-fits it when
    ``sensitive_classifier=None``; tune a copy (e.g. with ``GridSearchCV`` over
    ``classify__*`` parameters) and pass the unfitted best one instead.

    Parameters
    ----------
    X : DataFrame
        The non-sensitive columns the classifier will read.
    random_state : int, RandomState instance or None, default=None
        Seed of the gradient boosting.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Steps ``"encode"`` (a ColumnTransformer, or ``"passthrough"`` for numeric
        columns named by strings) and ``"classify"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.counterfactual import default_sensitive_classifier
    >>> X = pd.DataFrame({"job": ["a", "b", "a", "b"], "age": [20.0, 30.0, 40.0, 50.0]})
    >>> clf = default_sensitive_classifier(X, random_state=0)
    >>> [name for name, _ in clf.steps]
    ['encode', 'classify']
    >>> clf.fit(X, [0, 1, 0, 1]).predict(X).shape
    (4,)
    """
    # a column without a value says nothing of the group (and the boosting cannot bin it)
    kept = [j for j in range(X.shape[1]) if not X.iloc[:, j].isna().all()]
    flags = {j: is_categorical(X.iloc[:, j]) for j in kept}
    cat = [j for j in kept if flags[j]]
    num = [j for j in kept if not flags[j]]
    named = all(isinstance(c, str) for c in X.columns)
    hgb = HistGradientBoostingClassifier(
        categorical_features=[True] * len(cat) + [False] * len(num) if cat else None,
        random_state=random_state, **DEFAULT_SENSITIVE_PARAMS,
    )
    if named and not cat and len(kept) == X.shape[1]:  # numbers only: the frame as it is
        return Pipeline([("encode", "passthrough"), ("classify", hgb)])
    if named:  # names; positions for other labels
        cat, num = [X.columns[j] for j in cat], [X.columns[j] for j in num]
    encoder = ColumnTransformer(
        [
            ("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                                   dtype=float), cat),
            ("num", "passthrough", num),
        ],
        verbose_feature_names_out=False,
    )
    return Pipeline([("encode", encoder), ("classify", hgb)])


@dataclass
class _Audit:
    """The rows of X^- of one call, their groups, weights and counterfactuals."""

    X: pd.DataFrame              # the audited rows (refused, group recognised)
    group: np.ndarray            # 1 = privileged, 0 = unprivileged
    codes: np.ndarray            # the (compound) group of each row: index in groups_
    weight: np.ndarray           # their weights (ones when unweighted)
    counterfactuals: CounterfactualSet
    s_cf: np.ndarray             # predicted group (0/1) of each counterfactual, (n, k)
    refused_all: dict            # {1: weight, 0: weight} of the refused rows per group


class CounterfactualFairness(BaseEstimator):
    """Counterfactual fairness under unawareness: CFlips and nDCCF per group.

    The method of Cornacchia et al. (*Counterfactual Fair Opportunity*, Sections
    4.1-4.5): for every row that the decision model refuses and whose group the
    sensitive-feature classifier recognises (the set :math:`\\mathcal{X}^-` of the
    paper), generate ``k`` ranked counterfactuals that the model accepts, ask the
    sensitive-feature classifier which group each one looks like, and average CFlips@k
    and nDCCF@k (see :func:`counterfactual_flips`, :func:`ndccf`) over the rows of each
    group. A model that accepts the unprivileged mostly after they come to look
    privileged shows a large ``delta``. Counterfactuals keep the row's sensitive values;
    the sensitive-feature classifier never judges a row it was fitted on. The
    conventions, the cross-fitting and every parameter in detail:
    ``docs/counterfactual.md``.

    Parameters
    ----------
    estimator : classifier
        The binary decision model, cloned and fitted on ``X`` as given (a
        :class:`~sklearn.frozen.FrozenEstimator` as is); a pipeline that drops the
        sensitive columns, or values passed apart from ``X``, realise *unawareness*.
    sensitive_features : str, list of str, array-like, Series or DataFrame, default=None
        A column name of ``X``, a list of them (their intersection), or the values for
        the rows passed to ``fit``; ``None``: pass the values to ``fit(X, y,
        sensitive_features=...)`` and ``evaluate``. Exactly one source per call.
    generator : str or generator object, default="kdtree"
        ``"kdtree"`` (:class:`KDTreeCounterfactuals`), ``"linear"``
        (:class:`LinearCounterfactuals`, linear models only), ``"dice-genetic"``,
        ``"dice-random"`` (:class:`DiceCounterfactuals`, the ``dice`` extra), or an
        object with ``fit(X, estimator)`` and ``generate(X, k)`` (cloned).
    k : int, default=10
        Number of counterfactuals per refused row (``K`` of the ``per_k`` curves); a
        row never has more than the generator finds.
    sensitive_classifier : classifier, default=None
        Classifier of the sensitive group from the other columns, cross-fitted over
        ``cv`` folds (``None``: 50 trees of at most 15 leaves,
        :func:`~skfairverify.counterfactual.default_sensitive_classifier`); a
        :class:`~sklearn.frozen.FrozenEstimator` (predicting the raw sensitive values)
        is used as is; :func:`~skfairverify.counterfactual.fit_sensitive_classifier`
        of a larger data set holding the rows (a search's) judges them out of fold.
    privileged : label or tuple, default=None
        Privileged group: a value of the sensitive attribute, or for several a compound
        label ``"a|b"`` or a tuple ``(a, b)``. ``None``: the group with the highest
        rate of favorable decisions on the training rows
        (:func:`~skfairverify.counterfactual.privileged_group`).
    pos_label : label, default=None
        The favorable decision of the model, as in scikit-learn's metrics. ``None``:
        ``1`` for classes in ``{0, 1}`` or ``{-1, 1}``; other labels need it.
    min_group_size : int, default=30
        Rows a group needs to be chosen as the privileged one (refused training rows)
        and for its comparison not to be flagged ``small_sample`` (audited rows).
    cv : int, default=5
        Number of cross-fitting folds of the sensitive-feature classifier (>= 2).
    random_state : int, RandomState instance or None, default=None
        Seed of the default sensitive classifier and of randomised generators.
    max_time : float, default=600.0
        Budget of the counterfactual generation of one ``evaluate`` /
        ``proxy_correlations`` call, in CPU seconds; refused beyond it with
        :class:`~skfairverify.s3p.TableTooLargeError`.
    n_jobs : int, default=None
        Number of joblib workers over chunks of query rows.
    verbose : int, bool or "auto", default="auto"
        Progress bar (tqdm) over the refused rows: ``"auto"`` shows it when the
        generation is expected to take more than 5 s, ``0`` / ``False`` never.

    Attributes
    ----------
    estimator_ : classifier
        The fitted decision model.
    sensitive_features_ : list of str
        The sensitive columns: names in ``X``, or the names the values were appended as.
    sensitive_classifier_ : classifier
        The cross-fitted sensitive-feature classifier (``estimators_``: the fold
        models), or the frozen one.
    sensitive_classifier_report_ : pandas.DataFrame
        Precision, recall, F1 and support of the sensitive classifier per group,
        out-of-fold on the training rows.
    generator_ : generator object
        The fitted counterfactual generator.
    privileged_ : label
        The privileged group (a compound ``"a|b"`` label for several attributes).
    privileged_rule_ : str
        How it was chosen: ``"given (privileged=)"`` or the rule of
        :func:`~skfairverify.counterfactual.privileged_group`.
    selection_rates_ : pandas.Series
        Rate of favorable decisions of each group on the training rows, when
        ``privileged`` is chosen from them.
    groups_ : numpy.ndarray
        The groups seen in ``fit`` (values of the attribute, or compound labels).
    favorable_ : label
        The favorable class of the model.
    sample_weight_ : numpy.ndarray or None
        The weights passed to ``fit``.
    feature_names_in_ : numpy.ndarray
        Columns of ``X``.
    n_features_in_ : int
        Number of columns of ``X``.

    See Also
    --------
    counterfactual_flips, ndccf : the per-row metrics.
    CounterfactualResult : what :meth:`evaluate` returns.
    skfairverify.metrics.make_cflips_scorer : the audit as a GridSearchCV scorer.

    Notes
    -----
    Group metrics are (weighted) means over the rows of :math:`\\mathcal{X}^-` of
    the group that have at least one counterfactual (rows without any are counted in
    ``n_without_counterfactuals``). A group with no such row gets ``NaN`` values,
    is listed under ``empty_groups`` and a warning is issued: the gap is then
    undefined, never 0.

    References
    ----------
    Cornacchia, G., Anelli, V. W., Narducci, F., Ragone, A., Di Sciascio, E.
    "Counterfactual Fair Opportunity: Measuring Decision Model Fairness with
    Counterfactual Reasoning".

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from skfairverify import CounterfactualFairness
    >>> rng = np.random.default_rng(0)
    >>> n = 600
    >>> sex = rng.choice(["F", "M"], n)
    >>> X = pd.DataFrame({"sex": sex, "proxy": (sex == "M") + rng.normal(0, .25, n),
    ...                   "skill": rng.normal(size=n)})
    >>> y = (X.skill + 3 * (sex == "M") > 1.5).astype(int)  # biased labels
    >>> model = make_pipeline(make_column_transformer(("passthrough", ["proxy", "skill"])),
    ...                       LogisticRegression())  # never reads "sex", but the proxy
    >>> audit = CounterfactualFairness(model, "sex", k=5, random_state=0).fit(X, y)
    >>> res = audit.evaluate(X)
    >>> audit.privileged_, res.cflips["delta"] > 0.3
    ('M', True)
    >>> list(res.to_frame().columns)
    ['cflips', 'ndccf', 'n_refused', 'n_refused_all', 'n_without_counterfactuals']

    The same audit with the sensitive values passed apart from ``X`` (the model
    never sees them, so it can be fitted on ``X`` directly):

    >>> Xns = X.drop(columns="sex")
    >>> by_value = CounterfactualFairness(LogisticRegression(), k=5, random_state=0)
    >>> res2 = by_value.fit(Xns, y, sensitive_features=X["sex"]).evaluate(
    ...     Xns, sensitive_features=X["sex"])
    >>> bool(np.isclose(res2.cflips["delta"], res.cflips["delta"]))
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "sensitive_features": "no_validation",  # names or values: _sensitive
        "generator": GENERATOR_CONSTRAINT,
        "k": [K_CONSTRAINT],
        "sensitive_classifier": [HasMethods(["fit", "predict"]), None],
        "privileged": "no_validation",
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "pos_label": "no_validation",  # any label: checked against the model's classes
        "min_group_size": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": N_JOBS,
        "verbose": ["verbose", StrOptions({"auto"})],
    }

    def __init__(self, estimator, sensitive_features=None, *, generator="kdtree", k=10,
                 sensitive_classifier=None, privileged=None, pos_label=None,
                 min_group_size=MIN_GROUP_SIZE, cv=5, random_state=None, max_time=600.0,
                 n_jobs=None, verbose="auto"):
        self.estimator = estimator
        self.sensitive_features = sensitive_features
        self.generator = generator
        self.k = k
        self.sensitive_classifier = sensitive_classifier
        self.privileged = privileged
        self.pos_label = pos_label
        self.min_group_size = min_group_size
        self.cv = cv
        self.random_state = random_state
        self.max_time = max_time
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    def _describe(self) -> str:
        """The sensitive attribute(s), for messages."""
        return " x ".join(repr(c) for c in self.sensitive_features_)

    def _check_X(self, X, *, fitting: bool) -> pd.DataFrame:
        if issparse(X):
            raise TypeError(
                "Sparse data was passed for X, but dense data is required: the "
                "counterfactuals are rows of a DataFrame. Convert it with X.toarray()."
            )
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                "CounterfactualFairness needs X as a pandas DataFrame; got "
                f"{type(X).__name__}."
            )
        if X.shape[1] == 0:
            raise ValueError(
                f"0 feature(s) (shape={X.shape}) while a minimum of 1 is required by "
                "CounterfactualFairness."
            )
        if not fitting and not self._from_values:
            missing = [c for c in self.sensitive_features_ if c not in X.columns]
            if missing:
                raise ValueError(
                    f"Sensitive column {missing[0]!r} not found in X; available "
                    f"columns: {list(X.columns)}."
                )
        X = check_frame(X, None if fitting else list(self.feature_names_in_))
        if len(X) == 0:
            raise ValueError("X is empty.")
        return X

    def _audit_frame(self, X: pd.DataFrame, sensitive_features, method: str) -> pd.DataFrame:
        """``X`` with the sensitive values appended (values route), or ``X``."""
        if not self._from_values:
            if sensitive_features is not None:
                raise ValueError(
                    f"This audit was fitted with the columns {self.sensitive_features_} of "
                    f"X as sensitive features; {method} reads them from X: do not pass "
                    "sensitive_features values."
                )
            return X
        if sensitive_features is None:
            raise ValueError(
                f"This audit was fitted with sensitive values; pass {method}(X, "
                "sensitive_features=...) with the values for the rows of X."
            )
        frame = method_values(sensitive_features, X, method)
        if frame.shape[1] != len(self.sensitive_features_):
            raise ValueError(
                f"sensitive_features has {frame.shape[1]} attribute(s) but the audit was "
                f"fitted with {len(self.sensitive_features_)}."
            )
        return with_values(X, frame, self.sensitive_features_)

    # ------------------------------------------------------------------ fit
    def fit(self, X: pd.DataFrame, y=None, *, sensitive_features=None,
            sample_weight=None) -> CounterfactualFairness:
        """Fit the decision model, the sensitive-feature classifier and the generator.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_features)
            Training data (with the sensitive columns when the constructor names
            them).
        y : array-like of shape (n_samples,), default=None
            Target of the decision model (ignored for a frozen estimator).
        sensitive_features : array-like, Series or DataFrame, default=None
            The sensitive values of the rows of ``X`` (one per row; a DataFrame or
            2-d array gives several attributes, whose intersections are the groups),
            when the constructor's ``sensitive_features`` is ``None``. The decision
            model does not see them; :meth:`evaluate` then needs the values of its
            rows too.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the training rows. They are passed to the fit of the decision
            model and of the sensitive-feature classifier (to each fold model; for a
            pipeline, to its final step); a model whose fit takes no ``sample_weight``
            is refused with a ``TypeError`` (a frozen one is not refitted). They also
            weight the favorable rates that choose the privileged group. They do not
            change the generator's reference rows (a row of weight 0 can still be a
            kd-tree counterfactual) nor the
            sensitive classifier's report. Stored as ``sample_weight_``. To weight
            the audited rows, pass weights to :meth:`evaluate`.

        Returns
        -------
        self
        """
        self._validate_params()
        check_audit_generator(self.generator)
        X = self._check_X(X, fitting=True)
        Xa, columns, from_values = resolve_fit_sensitive(self.sensitive_features,
                                                         sensitive_features, X)
        weights = check_sample_weight(sample_weight, len(X))
        self.sensitive_features_ = columns
        self._from_values = from_values
        codes, groups = category_codes(group_labels(Xa[columns]), name=self._describe())
        self.groups_ = np.asarray(groups, dtype=object)
        self.sample_weight_ = weights
        self.estimator_ = self._fit_estimator(X, y, weights)
        self.privileged_ = self._choose_privileged(X, codes, weights)
        s_bin = (codes == self._privileged_code()).astype(int)
        with single_threaded():  # the fold models in a loop (OpenMP slows 10x when busy)
            self._fit_sensitive_classifier(Xa.drop(columns=columns), s_bin, weights)
        self.generator_ = self._fit_generator(Xa, X.columns)
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_generator(self, Xa: pd.DataFrame, model_columns):
        """The generator, fitted on the audit frame with the sensitive columns fixed."""
        gen = make_generator(self.generator, random_state=self.random_state,
                             desired_class=self.favorable_)
        columns = self.sensitive_features_
        if hasattr(gen, "get_params") and "immutable_features" in gen.get_params(deep=False):
            own = gen.get_params(deep=False)["immutable_features"] or []
            gen.set_params(immutable_features=list(dict.fromkeys([*own, *columns])))
        model = self.estimator_
        if self._from_values:  # the model reads X as given, not the appended values
            model = FrozenEstimator(ColumnSubsetClassifier(model, model_columns))
        return gen.fit(Xa, model)

    def _fit_estimator(self, X, y, weights):
        if isinstance(self.estimator, FrozenEstimator):
            est = self.estimator
        else:
            try:
                est = fit_with_weights(clone(self.estimator), X, y, weights,
                                       what="the decision model")
            except ValueError as exc:
                missing = missing_columns(X)
                if not missing:
                    raise
                raise ValueError(
                    f"The decision model refused X, which has missing values (NaN) in the "
                    f"columns {missing}: give it an imputer (a Pipeline with SimpleImputer) "
                    f"or use a model that handles NaN (HistGradientBoostingClassifier). "
                    f"The model said: {exc}"
                ) from exc
        classes = getattr(est, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError(
                "The estimator must be a binary classifier; got classes "
                f"{None if classes is None else list(classes)}."
            )
        self.favorable_ = positive_label(list(classes), self.pos_label,
                                         name="the estimator's classes_")
        return est

    def _privileged_label(self):
        """``privileged`` as a group label (a tuple of values becomes ``"a|b"``)."""
        priv = self.privileged
        if isinstance(priv, tuple) and len(priv) == len(self.sensitive_features_) > 1:
            return SEPARATOR.join(str(v) for v in priv)
        return priv

    def _choose_privileged(self, X, codes: np.ndarray, weights):
        groups = list(self.groups_)
        if self.privileged is not None:
            position = match_categories([self._privileged_label()], groups,
                                        name=self._describe())[0]
            if position < 0:
                raise ValueError(
                    f"privileged={self.privileged!r} is not a value of "
                    f"{self._describe()}: {groups}."
                )
            self.privileged_rule_ = "given (privileged=)"
            return groups[position]
        chosen = privileged_group(self.estimator_.predict(X), self.groups_[codes],
                                  favorable=self.favorable_, sample_weight=weights,
                                  min_group_size=self.min_group_size)
        name = SEPARATOR.join(str(c) for c in self.sensitive_features_)
        self.selection_rates_ = chosen.rates["selection_rate"].rename_axis(name)
        self.privileged_rule_ = chosen.rule
        return chosen.label

    def _privileged_code(self) -> int:
        """Position of the privileged group in ``groups_``."""
        return int(match_categories([self.privileged_], list(self.groups_),
                                    name=self._describe())[0])

    def _fit_sensitive_classifier(self, X_ns: pd.DataFrame, s_bin: np.ndarray,
                                  weights) -> None:
        clf = self.sensitive_classifier
        if isinstance(clf, FrozenEstimator):
            self._check_frozen_classifier(clf)
            self._s_label = self.privileged_
            self.sensitive_classifier_ = clf
            # a cross-fit on these rows (and more) judges each of them out of fold
            held_out = isinstance(clf.estimator, CrossFittedSensitiveClassifier)
            pred = self._sensitive_pred(X_ns)
            score = self._sensitive_proba(X_ns) if hasattr(clf, "predict_proba") else pred
        else:
            self._s_label = 1
            base = (default_sensitive_classifier(X_ns, self.random_state) if clf is None
                    else clf)
            self.sensitive_classifier_ = fit_cross_fitted(
                base, self.cv, self.random_state, X_ns, s_bin, sample_weight=weights)
            held_out = True
            score = self.sensitive_classifier_.oof_proba_[:, 1]
            pred = (score > 0.5).astype(int)
        accuracy, roc_auc, report = _classifier_scores(s_bin, pred, score)
        self.sensitive_classifier_report_ = report
        self._sensitive_summary = {"held_out": held_out, "accuracy": accuracy,
                                   "roc_auc": roc_auc, "by_group": report}

    def _check_frozen_classifier(self, clf) -> None:
        labels = [v.item() if isinstance(v, np.generic) else v
                  for v in getattr(clf, "classes_", [])]
        name = f"the classes_ of the sensitive_classifier and {self._describe()}"
        known = match_categories(labels, list(self.groups_), name=name)
        unknown = [v for v, position in zip(labels, known) if position < 0]
        has_privileged = match_categories([self.privileged_], labels, name=name)[0] >= 0
        if unknown or not has_privileged:
            raise ValueError(
                "The frozen sensitive_classifier must predict the raw values of "
                f"{self._describe()} {list(self.groups_)}; its classes_ are "
                f"{labels} (not sensitive values: {unknown}"
                + ("" if has_privileged else
                   f"; the privileged value {self.privileged_!r} is missing") + ")."
            )

    # ------------------------------------------------------------------ audit
    def _sensitive_proba(self, X_ns: pd.DataFrame) -> np.ndarray:
        clf = self.sensitive_classifier_
        col = match_categories([self._s_label], list(clf.classes_),
                               name="the sensitive classifier's classes_")[0]
        return np.asarray(clf.predict_proba(X_ns))[:, col]

    def _sensitive_pred(self, X_ns: pd.DataFrame) -> np.ndarray:
        pred = np.asarray(self.sensitive_classifier_.predict(X_ns), dtype=object)
        return equals(pred, self._s_label,
                      name="the sensitive classifier's predictions").astype(int)

    def _generate(self, Xq: pd.DataFrame) -> CounterfactualSet:
        n = len(Xq)
        if n == 0:
            return CounterfactualSet.empty(Xq)
        # The chunks never depend on n_jobs: a model's decisions on a batch may depend on
        # the batch (e.g. a ColumnTransformer switches between sparse and dense output
        # with the batch's density) and a seeded generator draws per call.
        self._check_output_size(Xq)
        starts = chunk_starts(n, int(getattr(self.generator_, "query_chunk_size", 512)))
        budget = Budget(self.max_time, n, self.verbose, type(self.generator_).__name__)
        bounded = isinstance(self.generator_, BaseGenerator)  # takes generate(max_time=)
        jobs = (delayed(_timed_generate)(self.generator_, Xq.iloc[i:j], self.k,
                                         budget.remaining() if bounded else None)
                for i, j in zip(starts, [*starts[1:], n]))  # lazy: the budget left

        parts = []
        try:
            with single_threaded():
                results = Parallel(n_jobs=self.n_jobs, return_as="generator")(jobs)
                for i, (res, seconds) in zip(starts, results):
                    parts.append((i, res))
                    budget.add(res.n_queries, seconds)
        except GenerationTimeout as exc:
            raise budget.timeout(exc, exc.seconds) from None
        finally:
            budget.close()
        return CounterfactualSet.concat(parts, n)

    def _check_output_size(self, Xq: pd.DataFrame) -> None:
        """Refuse, before generating, counterfactual frames beyond ``MAX_ENTRIES`` entries."""
        gen = self.generator_
        per_row = (gen.max_counterfactuals(self.k) if isinstance(gen, BaseGenerator)
                   else int(self.k))
        entries = len(Xq) * per_row * (Xq.shape[1] + 2)  # values, distance and rank
        if entries <= MAX_ENTRIES:
            return
        raise TableTooLargeError(
            f"The counterfactuals of {len(Xq):,} audited rows would take {entries:,} entries "
            f"({entries * 8 / 2**30:,.1f} GiB): up to {per_row:,} per row (k={self.k:,}) x "
            f"{Xq.shape[1] + 2} values, beyond {MAX_ENTRIES:,}. Lower k, or audit fewer rows "
            "at a time (the per-group means of several calls combine by their n_refused)."
        )

    def _group_codes(self, values: np.ndarray) -> np.ndarray:
        """The group (position in ``groups_``) of every value; unseen values refused."""
        codes = match_categories(values, list(self.groups_), name=self._describe())
        unseen = pd.unique(values[codes < 0])
        if len(unseen):
            raise ValueError(
                f"{self._describe()} holds values {list(unseen)} not seen in fit (seen: "
                f"{list(self.groups_)}); they cannot be assigned to a group."
            )
        return codes

    def _audit_rows(self, X: pd.DataFrame, sensitive_features=None, sample_weight=None,
                    method: str = "evaluate") -> _Audit:
        """Rows of X^-, their groups, their counterfactuals and predicted groups."""
        check_is_fitted(self, "generator_")
        columns = self.sensitive_features_
        X = self._check_X(X, fitting=False)
        Xa = self._audit_frame(X, sensitive_features, method)
        weights = check_sample_weight(sample_weight, len(X))
        weights = np.ones(len(X)) if weights is None else weights
        codes = self._group_codes(group_labels(Xa[columns]))
        s_bin = (codes == self._privileged_code()).astype(int)
        with single_threaded():  # the fold models' predictions, one after the other
            refused = ~equals(np.asarray(self.estimator_.predict(X), dtype=object),
                              self.favorable_, name="the estimator's decisions")
            recognised = self._sensitive_pred(Xa.drop(columns=columns)) == s_bin
            keep = refused & recognised
            cs = self._generate(Xa.loc[keep])
            s_cf_pred = np.zeros(0, dtype=int)
            if len(cs.counterfactuals):
                s_cf_pred = self._sensitive_pred(
                    cs.counterfactuals.drop(columns=columns).reset_index(drop=True))
        return _Audit(
            X=Xa.loc[keep], group=s_bin[keep], codes=codes[keep], weight=weights[keep],
            counterfactuals=cs,
            s_cf=cs.to_matrix(s_cf_pred, _matrix_width(cs, self.k)),
            refused_all={g: weights[refused & (s_bin == g)].sum() for g in (1, 0)},
        )

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, X: pd.DataFrame, *, sensitive_features=None,
                 sample_weight=None) -> CounterfactualResult:
        """CFlips and nDCCF per group on the refused, correctly recognised rows of X.

        Parameters
        ----------
        X : DataFrame
            Rows to audit (e.g. a test set), with the sensitive columns when the audit
            was fitted with column names.
        sensitive_features : array-like, Series or DataFrame, default=None
            The sensitive values of the rows of ``X``: required when the audit was
            fitted with values (passed to ``fit`` or to the constructor), refused when
            it was fitted with columns of ``X`` (then read from ``X``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows of ``X``: the group values are weighted means over
            the audited rows of each group (a row of weight 2 counts as two copies
            of the row), and the row counts of the result become sums of weights.

        Returns
        -------
        CounterfactualResult
            ``cflips`` and ``ndccf`` (``"privileged"``, ``"unprivileged"``,
            ``"delta"``), ``per_k`` (both metrics per group for ``k = 1..K``),
            ``n_refused``, ``sensitive_classifier`` (its held-out accuracy, ROC AUC
            and per-group report), ``privileged``, ``k``; ``to_frame()`` gives one
            row per group.
        """
        audit = self._audit_rows(X, sensitive_features, sample_weight)
        with_weights = sample_weight is not None
        return self._summarise(audit, with_weights)

    def _summarise(self, audit: _Audit, with_weights: bool) -> CounterfactualResult:
        # per_k stops at the most counterfactuals a row has (constant beyond): k=10**7
        # costs what the data allows, never an (n, k) array
        K = max(min(int(self.k), audit.s_cf.shape[1]), 1)
        flips, n_av = _flip_matrix(audit.group.astype(object), audit.s_cf)
        cflips, nd = _curves(flips, n_av, K)
        count = (lambda v: float(v)) if with_weights else (lambda v: int(round(v)))
        curves, n_refused, n_without, empty = {}, {}, {}, []
        for g, name in _NAMES.items():
            members = audit.group == g
            rows = members & (n_av > 0)
            w = audit.weight[rows]
            n_refused[name] = count(audit.weight[members].sum())
            n_without[name] = count(audit.weight[members & (n_av == 0)].sum())
            if w.sum() > 0:
                curves[f"cflips_{name}"] = _mean(cflips[rows], w, with_weights)
                curves[f"ndccf_{name}"] = _mean(nd[rows], w, with_weights)
            else:
                empty.append(name)
                curves[f"cflips_{name}"] = curves[f"ndccf_{name}"] = np.full(K, np.nan)
        if empty:
            warnings.warn(
                f"No refused row with a counterfactual in the {' and '.join(empty)} group(s) "
                f"(n_refused={n_refused}); their CFlips/nDCCF and the deltas are NaN.",
                UserWarning, stacklevel=3,
            )
        order = ["cflips_privileged", "cflips_unprivileged", "ndccf_privileged",
                 "ndccf_unprivileged"]
        per_k = pd.DataFrame({c: curves[c] for c in order},
                             index=pd.RangeIndex(1, K + 1, name="k"))
        return CounterfactualResult.from_per_k(
            per_k, n_refused=n_refused,
            sensitive_classifier=dict(self._sensitive_summary),
            privileged=self.privileged_, k=int(self.k),
            n_refused_all={_NAMES[g]: count(v) for g, v in audit.refused_all.items()},
            n_without_counterfactuals=n_without, empty_groups=empty,
            counterfactuals=audit.counterfactuals,
            by_group=self._by_group(audit, cflips[:, K - 1], nd[:, K - 1], n_av, count),
            groups=self._sides(), min_group_size=int(self.min_group_size),
            privileged_rule=self.privileged_rule_,
        )

    def _sides(self) -> dict:
        """The groups on each side of the comparison, for the legends."""
        privileged = self._privileged_code()
        return {"privileged": [self.groups_[privileged]],
                "unprivileged": [g for j, g in enumerate(self.groups_) if j != privileged]}

    def _by_group(self, audit: _Audit, cflips, nd, n_av, count) -> pd.DataFrame:
        """One row per (compound) group: values at k and the comparison with the privileged."""
        table = group_table(audit.codes, list(self.groups_), self._privileged_code(),
                            {"cflips": cflips, "ndccf": nd, "available": n_av},
                            audit.weight, int(self.min_group_size), count)
        table.index.name = SEPARATOR.join(str(c) for c in self.sensitive_features_)
        return table

    # ------------------------------------------------------------------ proxies
    def proxy_correlations(self, X: pd.DataFrame, *, sensitive_features=None) -> pd.DataFrame:
        """Which feature changes move counterfactuals towards the other group (Section 6.3).

        For every row of :math:`\\mathcal{X}^-` and each of its counterfactuals
        ``c``, the perturbation ``eps = c - x`` (a numeric column: the difference; a
        categorical column: +1 on the new category ``"col=value"``, -1 on the old
        one) is correlated (Pearson) with ``delta = P_s(c) - P_s(x)``, the change of
        the sensitive classifier's probability of the privileged group.

        Parameters
        ----------
        X : DataFrame
            Rows to audit, with the sensitive columns when the audit was fitted with
            column names.
        sensitive_features : array-like, Series or DataFrame, default=None
            The sensitive values of the rows of ``X``, as in :meth:`evaluate`.

        Returns
        -------
        DataFrame
            Columns ``feature``, ``correlation``, ``p_value`` and ``n_changed`` (number
            of counterfactuals that change the feature), sorted by decreasing
            correlation; features that never change (constant ``eps``) are omitted. A
            numeric perturbation with a missing value on either side has no difference
            and is left out of that feature's correlation.

        Raises
        ------
        ValueError
            If no counterfactual can be generated for X.
        """
        audit = self._audit_rows(X, sensitive_features, method="proxy_correlations")
        cs = audit.counterfactuals
        if len(cs.counterfactuals) < 3:
            raise ValueError(
                "Too few counterfactuals for X (refused rows recognised by the sensitive "
                f"classifier: {len(audit.X)}) to correlate perturbations."
            )
        columns = self.sensitive_features_
        base = audit.X.drop(columns=columns).iloc[cs.query_positions].reset_index(drop=True)
        cf = cs.counterfactuals.drop(columns=columns).reset_index(drop=True)
        delta = self._sensitive_proba(cf) - self._sensitive_proba(base)
        rows = []
        for name, e in _perturbations(base, cf).items():
            known = np.isfinite(e)  # a missing numeric value has no difference
            e, d = e[known], delta[known]
            if len(e) < 3 or np.ptp(e) == 0 or np.ptp(d) == 0:
                continue
            r, p = stats.pearsonr(e, d)
            rows.append((name, float(r), float(p), int(np.count_nonzero(e))))
        out = pd.DataFrame(rows, columns=["feature", "correlation", "p_value", "n_changed"])
        return out.sort_values("correlation", ascending=False, ignore_index=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


#: The sensitive classifier's scores of the last audits, by their inputs: every candidate
#: of a search scored on one fold has the same (its ROC AUC took 3 ms of a 40 ms call).
_SCORES = KeyedCache(max_entries=32)


def _classifier_scores(s_bin: np.ndarray, pred: np.ndarray, score: np.ndarray):
    """Accuracy, ROC AUC and per-group report of the groups ``pred`` / ``score``."""
    arrays = [np.ascontiguousarray(a) for a in (s_bin, pred, score)]
    digest = hashlib.blake2b(digest_size=16)
    for a in arrays:
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    key = digest.hexdigest()
    kept = _SCORES.get(key)
    if kept is None:
        kept = (float(np.mean(pred == s_bin)), float(roc_auc_score(s_bin, score)),
                group_report(s_bin, pred))
        _SCORES.put(key, kept, size=1)
    accuracy, roc_auc, report = kept
    return accuracy, roc_auc, report.copy()  # a result's table is the caller's to change


def chunk_starts(n: int, size: int) -> list[int]:
    """First positions of the chunks of ``n`` query rows: ``size`` rows each.

    A last chunk shorter than half of ``size`` joins the one before it (555 rows in
    chunks of 512: one chunk, not 512 and 43; a generator's fixed cost per call, e.g.
    the rounds of the kd-tree search, would be paid again for the 43). The chunks
    depend on ``n`` and ``size`` only, never on ``n_jobs``.

    Examples
    --------
    >>> from skfairverify.counterfactual._fairness import chunk_starts
    >>> chunk_starts(555, 512), chunk_starts(800, 512), chunk_starts(9, 4)
    ([0], [0, 512], [0, 4])
    """
    starts = list(range(0, n, size))
    if len(starts) > 1 and n - starts[-1] < size / 2:
        starts.pop()
    return starts


def _timed_generate(generator, X: pd.DataFrame, k: int, max_time):
    """``generator.generate`` on one chunk and the CPU seconds it took in its process."""
    start = time.process_time()
    try:
        result = (generator.generate(X, k) if max_time is None
                  else generator.generate(X, k, max_time=max(max_time, 1e-9)))
    except GenerationTimeout as exc:
        exc.seconds = time.process_time() - start
        raise
    return result, time.process_time() - start


def _mean(values: np.ndarray, weights: np.ndarray, with_weights: bool) -> np.ndarray:
    """Column means of the rows (weighted when weights were given)."""
    if with_weights:
        return np.average(values, axis=0, weights=weights)
    return values.mean(axis=0)


def _perturbations(base: pd.DataFrame, cf: pd.DataFrame) -> dict:
    """``eps = c - x`` per numeric column, +1/-1 per category term (named as the rule's).

    Old and new categories are matched by the package's one rule
    (:func:`~skfairverify.utils._categories.category_codes`: ``1`` is ``1.0``, never
    ``"1"``), and named like :class:`~skfairverify.LinearRule`'s terms (``col=cat``,
    quoted when a name holds ``=``), so that a column or category with ``=`` in its
    name cannot produce two terms of one name.
    """
    eps = {}
    for c in base.columns:
        if is_categorical(base[c]):
            joined = pd.concat([base[c], cf[c]], ignore_index=True).astype(object)
            codes, cats = category_codes(joined, name=str(c))
            old, new = codes[: len(base)], codes[len(base):]
            names = term_names([Term("category", c, v) for v in cats])
            for j, name in enumerate(names):
                eps[name] = (new == j).astype(float) - (old == j).astype(float)
        else:
            eps[c] = cf[c].to_numpy(dtype=float) - base[c].to_numpy(dtype=float)
    return eps


def _matrix_width(cs: CounterfactualSet, k: int) -> int:
    """Columns of the (rows, ranks) matrix: ``k`` or the largest rank present if smaller."""
    ranks = np.asarray(cs.ranks)
    return max(min(int(k), int(ranks.max()) if ranks.size else 1), 1)
