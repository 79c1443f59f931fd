"""CounterfactualFairness: the audit of Cornacchia et al. as an estimator."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from pandas.api.types import is_scalar
from scipy import stats
from sklearn.base import BaseEstimator, clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from ..utils._compat import HasMethods, Interval
from ..utils._fitting import fit_with_weights
from ..utils._validation import check_sample_weight
from ._base import K_CONSTRAINT, CounterfactualSet, check_frame, is_categorical
from ._crossfit import CrossFittedSensitiveClassifier, group_report
from ._metrics import _curves, _flip_matrix
from ._registry import GENERATOR_CONSTRAINT, check_audit_generator, make_generator
from ._results import CounterfactualResult

__all__ = ["CounterfactualFairness", "default_sensitive_classifier"]

_NAMES = {1: "privileged", 0: "unprivileged"}


def default_sensitive_classifier(X: pd.DataFrame, random_state=None) -> Pipeline:
    """The default sensitive-feature classifier for the columns of ``X`` (unfitted).

    Categorical columns are ordinal-encoded (unknown categories become missing) and
    handled natively by :class:`~sklearn.ensemble.HistGradientBoostingClassifier`;
    numeric columns pass through. :class:`CounterfactualFairness` cross-fits it when
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
        Steps ``"encode"`` (a ColumnTransformer) and ``"classify"``.

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
    cat = [c for c in X.columns if is_categorical(X[c])]
    num = [c for c in X.columns if c not in cat]
    encoder = ColumnTransformer(
        [
            ("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                                   dtype=float), cat),
            ("num", "passthrough", num),
        ],
        verbose_feature_names_out=False,
    )
    mask = [True] * len(cat) + [False] * len(num)
    hgb = HistGradientBoostingClassifier(
        categorical_features=mask if cat else None, random_state=random_state
    )
    return Pipeline([("encode", encoder), ("classify", hgb)])


@dataclass
class _Audit:
    """The rows of X^- of one call, their groups, weights and counterfactuals."""

    X: pd.DataFrame              # the audited rows (refused, group recognised)
    group: np.ndarray            # 1 = privileged, 0 = unprivileged
    weight: np.ndarray           # their weights (ones when unweighted)
    counterfactuals: CounterfactualSet
    s_cf: np.ndarray             # predicted group (0/1) of each counterfactual, (n, k)
    refused_all: dict            # {1: weight, 0: weight} of the refused rows per group


class CounterfactualFairness(BaseEstimator):
    """Counterfactual fairness under unawareness: CFlips and nDCCF per group.

    The method of Cornacchia et al. (*Counterfactual Fair Opportunity*): for every
    row that the decision model refuses and whose group the sensitive-feature
    classifier recognises (the set :math:`\\mathcal{X}^-` of the paper), generate
    ``k`` ranked counterfactuals that the model accepts, ask the sensitive-feature
    classifier which group each one looks like, and average CFlips@k and nDCCF@k
    (see :func:`counterfactual_flips`, :func:`ndccf`) over the rows of each group.
    A model that accepts the unprivileged mostly after they come to look
    privileged shows a large ``delta``.

    Counterfactuals keep the row's sensitive value (it is an immutable feature of
    the generator and takes no part in the distance); the sensitive-feature
    classifier never sees the sensitive column.

    The sensitive-feature classifier never judges a row it was fitted on: it is
    *cross-fitted* over ``cv`` folds of the training rows. The kd-tree generator
    returns training rows as counterfactuals; each is judged by the fold model whose
    training folds exclude it, and any other row (a synthetic counterfactual, a test
    row) by the mean of the fold models' probabilities. A classifier fitted on the
    counterfactuals themselves would recognise the group of rows it memorised and
    bias CFlips towards 0. Its held-out (out-of-fold) precision and recall per group,
    on which every CFlips value depends (Table 2 of the paper), are reported by
    :meth:`evaluate`.

    Parameters
    ----------
    estimator : classifier
        The decision model, fitted on ``X`` (all columns, sensitive one included) by
        ``fit`` after :func:`~sklearn.base.clone`. A pipeline that drops the
        sensitive column realises *unawareness*. A
        :class:`~sklearn.frozen.FrozenEstimator` is used as is. Binary; the
        favorable decision is ``classes_[-1]`` (1 for 0/1 labels).
    sensitive_features : str or list of one str
        The column of ``X`` with the sensitive attribute: **one** column name (a list
        holding one name is accepted; several columns are refused: to audit an
        intersection, add a column that combines them). Values (an array or Series)
        are refused too: the generator must find the attribute in ``X`` to keep it
        fixed. With two values the attribute is used as is; with more,
        ``privileged`` names the privileged value and all other values form the
        unprivileged group.
    generator : str or generator object, default="kdtree"
        ``"kdtree"`` (:class:`KDTreeCounterfactuals`), ``"linear"``
        (:class:`LinearCounterfactuals`, linear models only), ``"dice-genetic"``,
        ``"dice-random"`` (:class:`DiceCounterfactuals`, needs
        ``pip install 'skfairverify[dice]'``), or an object with
        ``fit(X, estimator)`` and ``generate(X, k)`` (cloned). ``"dice-kdtree"`` is
        refused: dice-ml's kdtree method only returns training rows whose immutable
        columns equal the query's, so with the sensitive column held fixed every
        counterfactual is a person of the query's own group and CFlips measures the
        sensitive classifier's error, not the model; ``"kdtree"`` is the same
        nearest-accepted-training-row strategy with the sensitive value carried
        over from the query.
    k : int, default=10
        Number of counterfactuals per refused row (``K`` of the ``per_k`` curves).
    sensitive_classifier : classifier, default=None
        Classifier of the sensitive group from the other columns. ``None``: a
        :class:`~sklearn.ensemble.HistGradientBoostingClassifier` with native
        categorical support. An unfitted classifier is cloned and cross-fitted (see
        ``cv``) on the non-sensitive columns against ``1 = privileged`` /
        ``0 = unprivileged``. A :class:`~sklearn.frozen.FrozenEstimator` is used as
        is and must predict the raw sensitive values; then no cross-fitting takes
        place and *the user* must make sure it was not fitted on the rows passed to
        ``fit`` (the kd-tree counterfactuals), or CFlips is biased towards 0.
    privileged : label, default=None
        Privileged value of the sensitive attribute. ``None``: the group with the
        higher rate of favorable decisions of the fitted model on the training data
        (required when the attribute has more than two values).
    cv : int, default=5
        Number of cross-fitting folds of the sensitive-feature classifier (>= 2).
        Folds are drawn over distinct rows (copies of a row share a fold),
        stratified by group.
    random_state : int, RandomState instance or None, default=None
        Seed of the default sensitive classifier and of randomised generators.
    n_jobs : int, default=None
        Number of joblib workers over chunks of query rows.
    verbose : int, default=0
        Show a tqdm progress bar over the refused rows when > 0.

    Attributes
    ----------
    estimator_ : classifier
        The fitted decision model.
    sensitive_features_ : list of str
        The sensitive column, as a list of one name.
    sensitive_classifier_ : classifier
        The cross-fitted sensitive-feature classifier
        (``estimators_``: the fold models; ``predict`` / ``predict_proba`` of a
        training row use the model that did not see it), or the frozen one.
    sensitive_classifier_report_ : pandas.DataFrame
        Precision, recall, F1 and support of the sensitive classifier per group
        (index ``"privileged"``, ``"unprivileged"``), out-of-fold on the training
        rows (on the training rows as given for a frozen classifier); unweighted.
    generator_ : generator object
        The fitted counterfactual generator.
    privileged_ : label
        The privileged value.
    selection_rates_ : pandas.Series
        Rate of favorable decisions of each group on the training rows (weighted by
        ``sample_weight``), when ``privileged`` is chosen from them.
    groups_ : numpy.ndarray
        The values of the sensitive attribute seen in ``fit``.
    favorable_ : label
        The favorable class of the model.
    sample_weight_ : numpy.ndarray or None
        The weights passed to ``fit``.
    feature_names_in_ : numpy.ndarray
        Columns of ``X``.
    n_features_in_ : int

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
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "sensitive_features": "no_validation",  # one column name: _sensitive_column
        "generator": GENERATOR_CONSTRAINT,
        "k": [K_CONSTRAINT],
        "sensitive_classifier": [HasMethods(["fit", "predict"]), None],
        "privileged": "no_validation",
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator, sensitive_features, *, generator="kdtree", k=10,
                 sensitive_classifier=None, privileged=None, cv=5, random_state=None,
                 n_jobs=None, verbose=0):
        self.estimator = estimator
        self.sensitive_features = sensitive_features
        self.generator = generator
        self.k = k
        self.sensitive_classifier = sensitive_classifier
        self.privileged = privileged
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    def _sensitive_column(self):
        """The one sensitive column named by ``sensitive_features``."""
        sf = self.sensitive_features
        if isinstance(sf, (pd.Series, pd.DataFrame, np.ndarray)) or (
            not is_scalar(sf) and not isinstance(sf, (list, tuple, pd.Index))
        ):
            raise TypeError(
                "CounterfactualFairness needs sensitive_features as the name of a column "
                f"of X (the generator keeps that column fixed); got {type(sf).__name__}."
            )
        if is_scalar(sf):
            return sf
        names = list(sf)
        if len(names) != 1 or not is_scalar(names[0]):
            raise ValueError(
                "CounterfactualFairness audits one sensitive attribute: pass one column "
                f"name; got {names}. To audit an intersection, add a column that combines "
                "them, e.g. X['sex_race'] = X['sex'].astype(str) + '_' + X['race']."
            )
        return names[0]

    def _check_X(self, X, column, *, fitting: bool) -> pd.DataFrame:
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                "CounterfactualFairness needs X as a pandas DataFrame holding the "
                f"sensitive column {column!r}; got {type(X).__name__}."
            )
        if column not in X.columns:
            raise ValueError(
                f"Sensitive column {column!r} not found in X; available "
                f"columns: {list(X.columns)}."
            )
        X = check_frame(X, None if fitting else list(self.feature_names_in_))
        if len(X) == 0:
            raise ValueError("X is empty.")
        return X

    # ------------------------------------------------------------------ fit
    def fit(self, X: pd.DataFrame, y=None, *, sample_weight=None) -> CounterfactualFairness:
        """Fit the decision model, the sensitive-feature classifier and the generator.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_features)
            Training data, sensitive column included.
        y : array-like of shape (n_samples,), default=None
            Target of the decision model (ignored for a frozen estimator).
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
        column = self._sensitive_column()
        X = self._check_X(X, column, fitting=True)
        weights = check_sample_weight(sample_weight, len(X))
        groups = pd.unique(X[column])
        if len(groups) < 2:
            raise ValueError(
                f"Sensitive feature {column!r} has a single group ({groups[0]!r}); the "
                "audit compares two."
            )
        self.sensitive_features_ = [column]
        self.groups_ = np.asarray(groups, dtype=object)
        self.sample_weight_ = weights
        self.estimator_ = self._fit_estimator(X, y, weights)
        self.privileged_ = self._choose_privileged(X, column, weights)
        s_bin = (X[column].to_numpy(dtype=object) == self.privileged_).astype(int)
        self._fit_sensitive_classifier(X.drop(columns=[column]), s_bin, weights)
        gen = make_generator(self.generator, random_state=self.random_state)
        if hasattr(gen, "get_params") and "immutable_features" in gen.get_params(deep=False):
            own = gen.get_params(deep=False)["immutable_features"] or []
            gen.set_params(immutable_features=list(dict.fromkeys([*own, column])))
        self.generator_ = gen.fit(X, self.estimator_)
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_estimator(self, X, y, weights):
        if isinstance(self.estimator, FrozenEstimator):
            est = self.estimator
        else:
            est = fit_with_weights(clone(self.estimator), X, y, weights,
                               what="the decision model")
        classes = getattr(est, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError(
                "The estimator must be a binary classifier; got classes "
                f"{None if classes is None else list(classes)}."
            )
        self.favorable_ = classes[-1]
        return est

    def _choose_privileged(self, X, column, weights):
        groups = list(self.groups_)
        if self.privileged is not None:
            if self.privileged not in set(groups):
                raise ValueError(
                    f"privileged={self.privileged!r} is not a value of {column!r}: {groups}."
                )
            return self.privileged
        if len(groups) > 2:
            raise ValueError(
                f"Sensitive feature {column!r} has {len(groups)} values {groups}; pass "
                "privileged=<value> to binarise it (that value against all others)."
            )
        w = np.ones(len(X)) if weights is None else weights
        accepted = (np.asarray(self.estimator_.predict(X)) == self.favorable_) * w
        s = X[column].astype(object).to_numpy()
        totals = pd.Series(w).groupby(s).sum()
        self.selection_rates_ = (pd.Series(accepted).groupby(s).sum() / totals).rename(
            "selection_rate").rename_axis(column)
        return self.selection_rates_.idxmax()

    def _fit_sensitive_classifier(self, X_ns: pd.DataFrame, s_bin: np.ndarray,
                                  weights) -> None:
        clf = self.sensitive_classifier
        if isinstance(clf, FrozenEstimator):
            self._check_frozen_classifier(clf)
            self._s_label = self.privileged_
            self.sensitive_classifier_ = clf
            held_out = False
            pred = self._sensitive_pred(X_ns)
            score = self._sensitive_proba(X_ns) if hasattr(clf, "predict_proba") else pred
        else:
            self._s_label = 1
            base = (default_sensitive_classifier(X_ns, self.random_state) if clf is None
                    else clf)
            self.sensitive_classifier_ = CrossFittedSensitiveClassifier(
                base, self.cv, self.random_state).fit(X_ns, s_bin, sample_weight=weights)
            held_out = True
            score = self.sensitive_classifier_.oof_proba_
            pred = (score > 0.5).astype(int)
        self.sensitive_classifier_report_ = group_report(s_bin, pred)
        self._sensitive_summary = {
            "held_out": held_out,
            "accuracy": float(np.mean(pred == s_bin)),
            "roc_auc": float(roc_auc_score(s_bin, score)),
            "by_group": self.sensitive_classifier_report_,
        }

    def _check_frozen_classifier(self, clf) -> None:
        labels = [v.item() if isinstance(v, np.generic) else v
                  for v in getattr(clf, "classes_", [])]
        known = set(self.groups_)
        unknown = [v for v in labels if v not in known]
        if unknown or self.privileged_ not in labels:
            raise ValueError(
                "The frozen sensitive_classifier must predict the raw values of "
                f"{self.sensitive_features_[0]!r} {list(self.groups_)}; its classes_ are "
                f"{labels} (not sensitive values: {unknown}"
                + ("" if self.privileged_ in labels else
                   f"; the privileged value {self.privileged_!r} is missing") + ")."
            )

    # ------------------------------------------------------------------ audit
    def _sensitive_proba(self, X_ns: pd.DataFrame) -> np.ndarray:
        clf = self.sensitive_classifier_
        col = list(clf.classes_).index(self._s_label)
        return np.asarray(clf.predict_proba(X_ns))[:, col]

    def _sensitive_pred(self, X_ns: pd.DataFrame) -> np.ndarray:
        return (np.asarray(self.sensitive_classifier_.predict(X_ns)) == self._s_label).astype(int)

    def _generate(self, Xq: pd.DataFrame) -> CounterfactualSet:
        n = len(Xq)
        if n == 0:
            return CounterfactualSet.empty(Xq)
        # The chunks never depend on n_jobs: a model's decisions on a batch may depend on
        # the batch (e.g. a ColumnTransformer switches between sparse and dense output
        # with the batch's density) and a seeded generator draws per call.
        size = int(getattr(self.generator_, "query_chunk_size", 512))
        starts = list(range(0, n, size))
        jobs = (delayed(self.generator_.generate)(Xq.iloc[i:i + size], self.k) for i in starts)
        results = Parallel(n_jobs=self.n_jobs, return_as="generator")(jobs)
        parts = []
        with tqdm(total=n, disable=not self.verbose, desc="counterfactuals",
                  unit="row") as bar:
            for i, res in zip(starts, results):
                parts.append((i, res))
                bar.update(res.n_queries)
        return CounterfactualSet.concat(parts, n)

    def _check_groups(self, values: np.ndarray, column) -> None:
        known = pd.Index(self.groups_)
        unseen = pd.unique(values[known.get_indexer(values) < 0])
        if len(unseen):
            raise ValueError(
                f"X[{column!r}] holds values {list(unseen)} not seen in fit (seen: "
                f"{list(self.groups_)}); they cannot be assigned to a group."
            )

    def _audit_rows(self, X: pd.DataFrame, sample_weight=None) -> _Audit:
        """Rows of X^-, their groups, their counterfactuals and predicted groups."""
        check_is_fitted(self, "generator_")
        column = self.sensitive_features_[0]
        X = self._check_X(X, column, fitting=False)
        weights = check_sample_weight(sample_weight, len(X))
        weights = np.ones(len(X)) if weights is None else weights
        values = X[column].to_numpy(dtype=object)
        self._check_groups(values, column)
        s_bin = (values == self.privileged_).astype(int)
        refused = np.asarray(self.estimator_.predict(X)) != self.favorable_
        recognised = self._sensitive_pred(X.drop(columns=[column])) == s_bin
        keep = refused & recognised
        cs = self._generate(X.loc[keep])
        s_cf_pred = np.zeros(0, dtype=int)
        if len(cs.counterfactuals):
            s_cf_pred = self._sensitive_pred(
                cs.counterfactuals.drop(columns=[column]).reset_index(drop=True))
        return _Audit(
            X=X.loc[keep], group=s_bin[keep], weight=weights[keep], counterfactuals=cs,
            s_cf=cs.to_matrix(s_cf_pred, self.k),
            refused_all={g: weights[refused & (s_bin == g)].sum() for g in (1, 0)},
        )

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, X: pd.DataFrame, *, sample_weight=None) -> CounterfactualResult:
        """CFlips and nDCCF per group on the refused, correctly recognised rows of X.

        Parameters
        ----------
        X : DataFrame
            Rows to audit (e.g. a test set), sensitive column included.
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
        audit = self._audit_rows(X, sample_weight)
        with_weights = sample_weight is not None
        return self._summarise(audit, with_weights)

    def _summarise(self, audit: _Audit, with_weights: bool) -> CounterfactualResult:
        K = self.k
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
            privileged=self.privileged_, k=K,
            n_refused_all={_NAMES[g]: count(v) for g, v in audit.refused_all.items()},
            n_without_counterfactuals=n_without, empty_groups=empty,
            counterfactuals=audit.counterfactuals,
        )

    # ------------------------------------------------------------------ proxies
    def proxy_correlations(self, X: pd.DataFrame) -> pd.DataFrame:
        """Which feature changes move counterfactuals towards the other group (Section 6.3).

        For every row of :math:`\\mathcal{X}^-` and each of its counterfactuals
        ``c``, the perturbation ``eps = c - x`` (a numeric column: the difference; a
        categorical column: +1 on the new category ``"col=value"``, -1 on the old
        one) is correlated (Pearson) with ``delta = P_s(c) - P_s(x)``, the change of
        the sensitive classifier's probability of the privileged group.

        Parameters
        ----------
        X : DataFrame
            Rows to audit, sensitive column included.

        Returns
        -------
        DataFrame
            Columns ``feature``, ``correlation``, ``p_value`` and ``n_changed`` (number
            of counterfactuals that change the feature), sorted by decreasing
            correlation; features that never change (constant ``eps``) are omitted.

        Raises
        ------
        ValueError
            If no counterfactual can be generated for X.
        """
        audit = self._audit_rows(X)
        cs = audit.counterfactuals
        if len(cs.counterfactuals) < 3:
            raise ValueError(
                "Too few counterfactuals for X (refused rows recognised by the sensitive "
                f"classifier: {len(audit.X)}) to correlate perturbations."
            )
        column = self.sensitive_features_[0]
        base = audit.X.drop(columns=[column]).iloc[cs.query_positions].reset_index(drop=True)
        cf = cs.counterfactuals.drop(columns=[column]).reset_index(drop=True)
        delta = self._sensitive_proba(cf) - self._sensitive_proba(base)
        rows = []
        for name, e in _perturbations(base, cf).items():
            if np.ptp(e) == 0 or np.ptp(delta) == 0:
                continue
            r, p = stats.pearsonr(e, delta)
            rows.append((name, float(r), float(p), int(np.count_nonzero(e))))
        out = pd.DataFrame(rows, columns=["feature", "correlation", "p_value", "n_changed"])
        return out.sort_values("correlation", ascending=False, ignore_index=True)


def _mean(values: np.ndarray, weights: np.ndarray, with_weights: bool) -> np.ndarray:
    """Column means of the rows (weighted when weights were given)."""
    if with_weights:
        return np.average(values, axis=0, weights=weights)
    return values.mean(axis=0)


def _perturbations(base: pd.DataFrame, cf: pd.DataFrame) -> dict:
    """``eps = c - x`` per numeric column, +1/-1 per category ``"col=value"``."""
    eps = {}
    for c in base.columns:
        if is_categorical(base[c]):
            old = base[c].astype(object).to_numpy()
            new = cf[c].astype(object).to_numpy()
            for v in pd.unique(np.concatenate([old, new])):
                eps[f"{c}={v}"] = (new == v).astype(float) - (old == v).astype(float)
        else:
            eps[c] = cf[c].to_numpy(dtype=float) - base[c].to_numpy(dtype=float)
    return eps
