"""CounterfactualFairness: the audit of Cornacchia et al. as an estimator."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
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

from ._crossfit import CrossFittedSensitiveClassifier, group_report
from ._generators import GENERATORS, CounterfactualSet, _is_categorical, make_generator
from ._metrics import _curves, _flip_matrix

__all__ = ["CounterfactualFairness"]


def default_sensitive_classifier(X: pd.DataFrame, random_state=None) -> Pipeline:
    """The default sensitive-feature classifier for the columns of ``X``.

    Categorical columns are ordinal-encoded (unknown categories become missing) and
    handled natively by :class:`~sklearn.ensemble.HistGradientBoostingClassifier`;
    numeric columns pass through.
    """
    cat = [c for c in X.columns if _is_categorical(X[c])]
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
    sensitive_feature : str
        Column of ``X`` with the sensitive attribute. With two values the attribute
        is used as is; with more, ``privileged`` names the privileged value and all
        other values form the unprivileged group.
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
    cv : int, default=5
        Number of cross-fitting folds of the sensitive-feature classifier (>= 2).
        Folds are drawn over distinct rows (copies of a row share a fold),
        stratified by group.
    privileged : label, default=None
        Privileged value of the sensitive attribute. ``None``: the group with the
        higher rate of favorable decisions of the fitted model on the training data
        (required when the attribute has more than two values).
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
    sensitive_classifier_ : classifier
        The cross-fitted sensitive-feature classifier
        (``estimators_``: the fold models; ``predict`` / ``predict_proba`` of a
        training row use the model that did not see it), or the frozen one.
    sensitive_classifier_report_ : pandas.DataFrame
        Precision, recall, F1 and support of the sensitive classifier per group
        (index ``"privileged"``, ``"unprivileged"``), out-of-fold on the training
        rows (on the training rows as given for a frozen classifier).
    generator_ : generator object
        The fitted counterfactual generator.
    privileged_ : label
        The privileged value.
    groups_ : numpy.ndarray
        The values of the sensitive attribute seen in ``fit``.
    favorable_ : label
        The favorable class of the model.
    feature_names_in_ : numpy.ndarray
        Columns of ``X``.
    n_features_in_ : int

    See Also
    --------
    counterfactual_flips, ndccf : the per-row metrics.
    skfairverify.metrics.make_cflips_scorer : the audit as a GridSearchCV scorer.

    Notes
    -----
    Group metrics are means over the rows of :math:`\\mathcal{X}^-` of the group
    that have at least one counterfactual (rows without any are counted in
    ``n_without_counterfactuals``). A group with no such row gets ``NaN`` values,
    is listed under ``"empty_groups"`` and a warning is issued: the gap is then
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
    >>> audit.privileged_, res["cflips"]["delta"] > 0.3
    ('M', True)
    """

    def __init__(self, estimator, sensitive_feature, *, generator="kdtree", k=10,
                 sensitive_classifier=None, privileged=None, cv=5, random_state=None,
                 n_jobs=None, verbose=0):
        self.estimator = estimator
        self.sensitive_feature = sensitive_feature
        self.generator = generator
        self.k = k
        self.sensitive_classifier = sensitive_classifier
        self.privileged = privileged
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    def _check_X(self, X, *, fitting: bool) -> pd.DataFrame:
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                "CounterfactualFairness needs X as a pandas DataFrame holding the "
                f"sensitive column {self.sensitive_feature!r}; got {type(X).__name__}."
            )
        if self.sensitive_feature not in X.columns:
            raise ValueError(
                f"Sensitive column {self.sensitive_feature!r} not found in X; available "
                f"columns: {list(X.columns)}."
            )
        if not fitting:
            missing = [c for c in self.feature_names_in_ if c not in X.columns]
            if missing:
                raise ValueError(f"X lacks the columns {missing} seen in fit.")
            X = X[list(self.feature_names_in_)]
        nan_cols = [c for c in X.columns if X[c].isna().any()]
        if nan_cols:
            raise ValueError(f"X contains missing values (NaN) in the columns {nan_cols}.")
        if len(X) == 0:
            raise ValueError("X is empty.")
        return X

    def _check_params(self):
        if isinstance(self.k, bool) or not isinstance(self.k, Integral):
            raise TypeError(f"k must be a positive integer; got {self.k!r}.")
        if self.k < 1:
            raise ValueError(f"k must be >= 1; got k={self.k}.")
        if isinstance(self.generator, str) and self.generator not in GENERATORS:
            raise ValueError(
                f"Unknown generator {self.generator!r}; valid names are {list(GENERATORS)}."
            )
        if not isinstance(self.sensitive_feature, str):
            raise TypeError(
                f"sensitive_feature must be a column name; got {self.sensitive_feature!r}."
            )
        if isinstance(self.cv, bool) or not isinstance(self.cv, Integral) or self.cv < 2:
            raise ValueError(f"cv must be an integer >= 2; got {self.cv!r}.")
        gen = self.generator
        if gen == "dice-kdtree" or (type(gen).__name__ == "DiceCounterfactuals"
                                    and getattr(gen, "method", None) == "kdtree"):
            raise ValueError(
                "generator='dice-kdtree' cannot audit counterfactual fairness: dice-ml's "
                "kdtree method only returns training rows whose immutable columns equal "
                "the query's, so with the sensitive column held fixed every "
                "counterfactual is a person of the query's own group and CFlips would "
                "measure the sensitive classifier's errors, not the model. Use "
                "generator='kdtree' (the same nearest accepted training rows, the "
                "sensitive value carried over from the query)."
            )

    # ------------------------------------------------------------------ fit
    def fit(self, X: pd.DataFrame, y) -> CounterfactualFairness:
        """Fit the decision model, the sensitive-feature classifier and the generator.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_features)
            Training data, sensitive column included.
        y : array-like of shape (n_samples,)
            Target of the decision model.

        Returns
        -------
        self
        """
        self._check_params()
        X = self._check_X(X, fitting=True)
        sf = self.sensitive_feature
        s = X[sf]
        groups = pd.unique(s)
        if len(groups) < 2:
            raise ValueError(
                f"Sensitive feature {sf!r} has a single group ({groups[0]!r}); the audit "
                "compares two."
            )
        if isinstance(self.estimator, FrozenEstimator):
            est = self.estimator
        else:
            est = clone(self.estimator).fit(X, y)
        classes = getattr(est, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError(
                "The estimator must be a binary classifier; got classes "
                f"{None if classes is None else list(classes)}."
            )
        self.estimator_ = est
        self.favorable_ = classes[-1]
        self.groups_ = np.asarray(groups, dtype=object)

        if self.privileged is None:
            if len(groups) > 2:
                raise ValueError(
                    f"Sensitive feature {sf!r} has {len(groups)} values {list(groups)}; pass "
                    "privileged=<value> to binarise it (that value against all others)."
                )
            from fairlearn.metrics import MetricFrame, selection_rate

            accepted = (np.asarray(est.predict(X)) == self.favorable_).astype(int)
            rates = MetricFrame(metrics=selection_rate, y_true=accepted, y_pred=accepted,
                                sensitive_features=s.astype(object)).by_group
            self.privileged_ = rates.idxmax()
            self.selection_rates_ = rates
        else:
            if self.privileged not in set(groups):
                raise ValueError(
                    f"privileged={self.privileged!r} is not a value of {sf!r}: {list(groups)}."
                )
            self.privileged_ = self.privileged

        s_bin = (s.to_numpy(dtype=object) == self.privileged_).astype(int)
        X_ns = X.drop(columns=[sf])
        self._fit_sensitive_classifier(X_ns, s_bin)

        gen = make_generator(self.generator, random_state=self.random_state)
        if hasattr(gen, "get_params") and "immutable_features" in gen.get_params(deep=False):
            own = gen.get_params(deep=False)["immutable_features"] or []
            gen.set_params(immutable_features=list(dict.fromkeys([*own, sf])))
        self.generator_ = gen.fit(X, est)
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_sensitive_classifier(self, X_ns: pd.DataFrame, s_bin: np.ndarray) -> None:
        clf = self.sensitive_classifier
        if isinstance(clf, FrozenEstimator):
            labels = [v.item() if isinstance(v, np.generic) else v
                      for v in getattr(clf, "classes_", [])]
            known = set(self.groups_)
            unknown = [v for v in labels if v not in known]
            if unknown or self.privileged_ not in labels:
                raise ValueError(
                    "The frozen sensitive_classifier must predict the raw values of "
                    f"{self.sensitive_feature!r} {list(self.groups_)}; its classes_ are "
                    f"{labels} (not sensitive values: {unknown}"
                    + ("" if self.privileged_ in labels else
                       f"; the privileged value {self.privileged_!r} is missing") + ")."
                )
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
                base, self.cv, self.random_state).fit(X_ns, s_bin)
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
            index = pd.MultiIndex.from_arrays([Xq.index[:0], np.zeros(0, dtype=int)],
                                              names=["row", "rank"])
            empty = Xq.iloc[:0].copy()
            empty.index = index
            return CounterfactualSet(empty, pd.Series([], index=index, dtype=float,
                                                      name="distance"), np.zeros(0, int), 0)
        # The chunks never depend on n_jobs: a model's decisions on a batch may depend on
        # the batch (e.g. a ColumnTransformer switches between sparse and dense output
        # with the batch's density) and a seeded generator draws per call.
        size = 4 if type(self.generator_).__name__ == "DiceCounterfactuals" else 512
        starts = list(range(0, n, size))
        jobs = (delayed(self.generator_.generate)(Xq.iloc[i:i + size], self.k) for i in starts)
        results = Parallel(n_jobs=self.n_jobs, return_as="generator")(jobs)
        sets = []
        with tqdm(total=n, disable=not self.verbose, desc="counterfactuals",
                  unit="row") as bar:
            for i, res in zip(starts, results):
                sets.append((i, res))
                bar.update(res.n_queries)
        frames = [r.counterfactuals for _, r in sets]
        pos = np.concatenate([r.query_positions + i for i, r in sets])
        dist = np.concatenate([r.distances.to_numpy() for _, r in sets])
        cfs = pd.concat(frames)
        return CounterfactualSet(cfs, pd.Series(dist, index=cfs.index, name="distance"),
                                 pos, n)

    def _audit(self, X: pd.DataFrame) -> dict:
        """Rows of X^-, their groups, their counterfactuals and predicted groups."""
        check_is_fitted(self, "generator_")
        X = self._check_X(X, fitting=False)
        sf = self.sensitive_feature
        values = X[sf].to_numpy(dtype=object)
        known = pd.Index(self.groups_)
        unseen = pd.unique(values[known.get_indexer(values) < 0])
        if len(unseen):
            raise ValueError(
                f"X[{sf!r}] holds values {list(unseen)} not seen in fit (seen: "
                f"{list(self.groups_)}); they cannot be assigned to a group."
            )
        s_bin = (values == self.privileged_).astype(int)
        refused = np.asarray(self.estimator_.predict(X)) != self.favorable_
        X_ns = X.drop(columns=[sf])
        recognised = self._sensitive_pred(X_ns) == s_bin
        keep = refused & recognised
        Xq = X.loc[keep]
        cs = self._generate(Xq)
        if len(cs.counterfactuals):
            s_cf_pred = self._sensitive_pred(
                cs.counterfactuals.drop(columns=[sf]).reset_index(drop=True))
        else:
            s_cf_pred = np.zeros(0, dtype=int)
        return {
            "X": Xq,
            "group": s_bin[keep],
            "counterfactuals": cs,
            "s_cf": cs.to_matrix(s_cf_pred, self.k),
            "n_refused_all": {1: int((refused & (s_bin == 1)).sum()),
                              0: int((refused & (s_bin == 0)).sum())},
        }

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, X: pd.DataFrame) -> dict:
        """CFlips and nDCCF per group on the refused, correctly recognised rows of X.

        Parameters
        ----------
        X : DataFrame
            Rows to audit (e.g. a test set), sensitive column included.

        Returns
        -------
        dict
            ``"cflips"`` and ``"ndccf"``: dicts with ``"privileged"``,
            ``"unprivileged"`` (group means at ``k``) and ``"delta"``
            (unprivileged - privileged for CFlips, privileged - unprivileged for
            nDCCF: positive means the unprivileged are pushed to look privileged);
            ``"per_k"``: DataFrame indexed by ``k = 1..K`` with both metrics per
            group and both deltas; ``"n_refused"``: rows of each group in
            :math:`\\mathcal{X}^-` (refused and recognised by the sensitive
            classifier); ``"n_refused_all"``: refused rows of each group before that
            filter; ``"n_without_counterfactuals"``: rows of :math:`\\mathcal{X}^-`
            with no counterfactual; ``"empty_groups"``: groups with no usable row
            (their metrics are NaN, with a warning); ``"sensitive_classifier"``:
            ``{"held_out": bool, "accuracy": float, "roc_auc": float, "by_group":
            DataFrame}``, the sensitive classifier's accuracy, ROC AUC (privileged
            as positive) and precision, recall, F1 and support per group (the
            paper's Table 2), out-of-fold on the training rows (``held_out=False`` for a frozen
            classifier, scored on the rows passed to ``fit``).
        """
        audit = self._audit(X)
        out = self._summarise(audit["group"], audit["s_cf"], audit["n_refused_all"])
        out["sensitive_classifier"] = dict(self._sensitive_summary)
        return out

    def _summarise(self, group: np.ndarray, s_cf: np.ndarray, n_refused_all: dict) -> dict:
        K = self.k
        flips, n_av = _flip_matrix(group.astype(object), s_cf)
        cflips, nd = _curves(flips, n_av, K)
        names = {1: "privileged", 0: "unprivileged"}
        curves = {}
        n_refused, n_without, empty = {}, {}, []
        for g, name in names.items():
            rows = (group == g) & (n_av > 0)
            n_refused[name] = int((group == g).sum())
            n_without[name] = int(((group == g) & (n_av == 0)).sum())
            if rows.any():
                curves[("cflips", name)] = cflips[rows].mean(axis=0)
                curves[("ndccf", name)] = nd[rows].mean(axis=0)
            else:
                empty.append(name)
                curves[("cflips", name)] = np.full(K, np.nan)
                curves[("ndccf", name)] = np.full(K, np.nan)
        if empty:
            warnings.warn(
                f"No refused row with a counterfactual in the {' and '.join(empty)} group(s) "
                f"(n_refused={n_refused}); their CFlips/nDCCF and the deltas are NaN.",
                UserWarning, stacklevel=3,
            )
        per_k = pd.DataFrame({
            "cflips_privileged": curves[("cflips", "privileged")],
            "cflips_unprivileged": curves[("cflips", "unprivileged")],
            "ndccf_privileged": curves[("ndccf", "privileged")],
            "ndccf_unprivileged": curves[("ndccf", "unprivileged")],
        }, index=pd.RangeIndex(1, K + 1, name="k"))
        per_k["delta_cflips"] = per_k["cflips_unprivileged"] - per_k["cflips_privileged"]
        per_k["delta_ndccf"] = per_k["ndccf_privileged"] - per_k["ndccf_unprivileged"]
        last = per_k.iloc[-1]
        return {
            "cflips": {"privileged": float(last["cflips_privileged"]),
                       "unprivileged": float(last["cflips_unprivileged"]),
                       "delta": float(last["delta_cflips"])},
            "ndccf": {"privileged": float(last["ndccf_privileged"]),
                      "unprivileged": float(last["ndccf_unprivileged"]),
                      "delta": float(last["delta_ndccf"])},
            "per_k": per_k,
            "n_refused": n_refused,
            "n_refused_all": {names[g]: v for g, v in n_refused_all.items()},
            "n_without_counterfactuals": n_without,
            "empty_groups": empty,
        }

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
        audit = self._audit(X)
        cs = audit["counterfactuals"]
        if len(cs.counterfactuals) < 3:
            raise ValueError(
                "Too few counterfactuals for X (refused rows recognised by the sensitive "
                f"classifier: {len(audit['X'])}) to correlate perturbations."
            )
        sf = self.sensitive_feature
        base = audit["X"].drop(columns=[sf]).iloc[cs.query_positions].reset_index(drop=True)
        cf = cs.counterfactuals.drop(columns=[sf]).reset_index(drop=True)
        delta = self._sensitive_proba(cf) - self._sensitive_proba(base)
        eps = {}
        for c in base.columns:
            if _is_categorical(base[c]):
                old = base[c].astype(object).to_numpy()
                new = cf[c].astype(object).to_numpy()
                for v in pd.unique(np.concatenate([old, new])):
                    eps[f"{c}={v}"] = (new == v).astype(float) - (old == v).astype(float)
            else:
                eps[c] = cf[c].to_numpy(dtype=float) - base[c].to_numpy(dtype=float)
        rows = []
        for name, e in eps.items():
            if np.ptp(e) == 0 or np.ptp(delta) == 0:
                continue
            r, p = stats.pearsonr(e, delta)
            rows.append((name, float(r), float(p), int(np.count_nonzero(e))))
        out = pd.DataFrame(rows, columns=["feature", "correlation", "p_value", "n_changed"])
        return out.sort_values("correlation", ascending=False, ignore_index=True)
