"""Counterfactual generators: one small interface, ranked output.

Every generator is a scikit-learn style object (``get_params``/``clone`` work) with

* ``fit(X, estimator)``: ``X`` a DataFrame of training rows (the reference data),
  ``estimator`` a *fitted* binary classifier taking ``X``;
* ``generate(X_query, k) -> CounterfactualSet``: up to ``k`` counterfactuals per
  query row that the estimator assigns to the desired class, ranked (rank 1 first).

Distance (the ranking, which nDCCF depends on): L1 over the mutable columns, a
numeric column counted after min-max scaling on the training rows
(``|c_j - x_j| / (max_j - min_j)``) and a categorical column (pandas ``category``,
``object``, ``string`` or ``bool``) counting 1 when its value changes. This is the
proximity of DiCE with min-max scaled features. With ``ranking="prediction"`` the
generated set is re-ranked by ``|E[f(x)] - E[f(c)]|`` (Section 6.4 of the paper),
where ``E[f]`` is ``predict_proba`` of the desired class (``decision_function``
when there is no ``predict_proba``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.neighbors import NearestNeighbors

__all__ = [
    "CounterfactualSet",
    "KDTreeCounterfactuals",
    "LinearCounterfactuals",
    "GENERATORS",
    "make_generator",
]


# --------------------------------------------------------------------------- output
@dataclass
class CounterfactualSet:
    """Ranked counterfactuals of a batch of query rows.

    Attributes
    ----------
    counterfactuals : pandas.DataFrame
        One row per counterfactual, the columns of the query rows, indexed by a
        ``(row, rank)`` MultiIndex: ``row`` is the query's index label, ``rank``
        starts at 1 (the closest, or best by the chosen ranking).
    distances : pandas.Series
        Distance of each counterfactual to its query (same index), see the module
        docstring for the metric.
    query_positions : numpy.ndarray of int
        Position (0-based) of each counterfactual's query in the query batch.
    n_queries : int
        Number of query rows (rows without any counterfactual have no entry).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skfairverify.counterfactual import CounterfactualSet
    >>> idx = pd.MultiIndex.from_tuples([(7, 1), (7, 2)], names=["row", "rank"])
    >>> cs = CounterfactualSet(pd.DataFrame({"a": [1., 2.]}, index=idx),
    ...                        pd.Series([.1, .3], index=idx), np.array([0, 0]), 2)
    >>> cs.to_matrix(np.array(["M", "F"], dtype=object), k=3)
    array([['M', 'F', nan],
           [nan, nan, nan]], dtype=object)
    """

    counterfactuals: pd.DataFrame
    distances: pd.Series
    query_positions: np.ndarray
    n_queries: int

    @property
    def ranks(self) -> np.ndarray:
        """Rank (1-based) of every counterfactual."""
        return self.counterfactuals.index.get_level_values("rank").to_numpy().astype(int)

    def n_found(self) -> np.ndarray:
        """Number of counterfactuals of every query row (0 when none was found)."""
        return np.bincount(self.query_positions, minlength=self.n_queries)

    def to_matrix(self, values, k: int) -> np.ndarray:
        """Lay one value per counterfactual out as an ``(n_queries, k)`` object array.

        Parameters
        ----------
        values : array-like of shape (n_counterfactuals,)
            E.g. the predicted sensitive group of each counterfactual.
        k : int
            Number of columns (ranks); missing counterfactuals are NaN.

        Returns
        -------
        numpy.ndarray of shape (n_queries, k), dtype object
        """
        out = np.full((self.n_queries, k), np.nan, dtype=object)
        values = np.asarray(values, dtype=object)
        ranks = self.ranks
        keep = ranks <= k
        pos = np.asarray(self.query_positions, dtype=int)
        out[pos[keep], ranks[keep] - 1] = values[keep]
        return out


# --------------------------------------------------------------------------- helpers
def _is_categorical(series: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


class _Proximity:
    """Encode rows so that L1 distance equals the documented proximity."""

    def __init__(self, X: pd.DataFrame, features: list[str]):
        self.features = list(features)
        self.numeric = [c for c in features if not _is_categorical(X[c])]
        self.categorical = [c for c in features if _is_categorical(X[c])]
        lo = X[self.numeric].min().to_numpy(dtype=float) if self.numeric else np.zeros(0)
        hi = X[self.numeric].max().to_numpy(dtype=float) if self.numeric else np.zeros(0)
        rng = hi - lo
        rng[~(rng > 0)] = 1.0
        self.low, self.high, self.range = lo, hi, rng
        self.categories = {
            c: pd.Index(pd.unique(X[c].astype(object))) for c in self.categorical
        }

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        parts = []
        if self.numeric:
            parts.append((X[self.numeric].to_numpy(dtype=float) - self.low) / self.range)
        for c in self.categorical:
            cats = self.categories[c]
            codes = cats.get_indexer(X[c].astype(object).to_numpy())
            onehot = np.zeros((len(X), len(cats)))
            hit = codes >= 0
            onehot[np.flatnonzero(hit), codes[hit]] = 0.5
            parts.append(onehot)
        if not parts:
            return np.zeros((len(X), 0))
        return np.hstack(parts)

    def distance(self, A: pd.DataFrame, B: pd.DataFrame) -> np.ndarray:
        """Row-wise distance between two aligned frames."""
        d = np.zeros(len(A))
        if self.numeric:
            a = A[self.numeric].to_numpy(dtype=float)
            b = B[self.numeric].to_numpy(dtype=float)
            d += np.abs(a - b).dot(1.0 / self.range)
        for c in self.categorical:
            d += A[c].astype(object).to_numpy() != B[c].astype(object).to_numpy()
        return d


def _check_frame(X, columns: list[str], what: str = "X") -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame; got {type(X).__name__}.")
    missing = [c for c in columns if c not in X.columns]
    if missing:
        raise ValueError(f"{what} lacks the columns {missing} seen in fit.")
    nan_cols = [c for c in columns if X[c].isna().any()]
    if nan_cols:
        raise ValueError(f"{what} contains missing values (NaN) in the columns {nan_cols}.")
    return X[columns]


def _expected_output(estimator, X: pd.DataFrame, desired) -> np.ndarray:
    """``E[f(x)]`` for the desired class: predict_proba, else the signed decision."""
    if hasattr(estimator, "predict_proba"):
        try:
            proba = estimator.predict_proba(X)
            col = list(estimator.classes_).index(desired)
            return np.asarray(proba)[:, col]
        except (AttributeError, NotImplementedError):
            pass
    dec = np.asarray(estimator.decision_function(X), dtype=float)
    return dec if desired == estimator.classes_[-1] else -dec


class _BaseGenerator(BaseEstimator):
    """Shared parameters, validation and ranking of the generators."""

    _rankings = ("distance", "prediction")

    def _fit_common(self, X, estimator) -> pd.DataFrame:
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                f"{type(self).__name__}.fit needs a pandas DataFrame; got {type(X).__name__}."
            )
        if len(X) == 0:
            raise ValueError("X is empty.")
        nan_cols = [c for c in X.columns if X[c].isna().any()]
        if nan_cols:
            raise ValueError(f"X contains missing values (NaN) in the columns {nan_cols}.")
        if self.ranking not in self._rankings:
            raise ValueError(
                f"ranking must be one of {list(self._rankings)}; got {self.ranking!r}."
            )
        classes = getattr(estimator, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError(
                "The estimator must be a fitted binary classifier (classes_ of length 2)."
            )
        desired = classes[-1] if self.desired_class is None else self.desired_class
        if desired not in list(classes):
            raise ValueError(
                f"desired_class={desired!r} is not one of the estimator's classes "
                f"{list(classes)}."
            )
        immutable = [] if self.immutable_features is None else list(self.immutable_features)
        unknown = [c for c in immutable if c not in X.columns]
        if unknown:
            raise ValueError(f"immutable_features {unknown} are not columns of X.")
        self.estimator_ = estimator
        self.desired_class_ = desired
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.immutable_features_ = immutable
        self.features_ = [c for c in X.columns if c not in immutable]
        if not self.features_:
            raise ValueError("Every column is immutable; nothing can change.")
        self.proximity_ = _Proximity(X, self.features_)
        self.dtypes_ = X.dtypes
        return X

    def _check_k(self, k) -> int:
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"k must be a positive integer; got {k!r}.")
        if k < 1:
            raise ValueError(f"k must be >= 1; got k={k}.")
        return int(k)

    def _finalize(self, Xq: pd.DataFrame, cfs: pd.DataFrame, pos: np.ndarray,
                  dist: np.ndarray, k: int, tiebreak=None,
                  search_key=None) -> CounterfactualSet:
        """Rank (distance or prediction gap), keep the top k, index by (row, rank).

        Ties of the ranking key are broken by ``tiebreak`` (default: generation order);
        ``search_key`` replaces the distance as the key of ``ranking="distance"``.
        """
        cfs = cfs.reset_index(drop=True)
        pos = np.asarray(pos, dtype=int)
        dist = np.asarray(dist, dtype=float)
        tiebreak = np.arange(len(pos)) if tiebreak is None else np.asarray(tiebreak)
        if len(cfs):
            if self.ranking == "prediction":
                fx = _expected_output(self.estimator_, Xq, self.desired_class_)
                fc = _expected_output(self.estimator_, cfs, self.desired_class_)
                key = np.abs(fx[pos] - fc)
            else:
                key = dist if search_key is None else np.asarray(search_key, dtype=float)
            order = np.lexsort((tiebreak, key, pos))
            pos, dist, cfs = pos[order], dist[order], cfs.iloc[order].reset_index(drop=True)
            # rank within each query row
            starts = np.r_[0, np.flatnonzero(np.diff(pos)) + 1]
            counts = np.diff(np.r_[starts, len(pos)])
            rank = np.arange(len(pos)) - np.repeat(starts, counts) + 1
            keep = rank <= k
            pos, dist, rank = pos[keep], dist[keep], rank[keep]
            cfs = cfs.loc[keep].reset_index(drop=True)
        else:
            rank = np.zeros(0, dtype=int)
        labels = Xq.index.to_numpy()[pos] if len(pos) else np.zeros(0, dtype=object)
        index = pd.MultiIndex.from_arrays([labels, rank], names=["row", "rank"])
        cfs.index = index
        cfs = cfs[list(Xq.columns)]
        return CounterfactualSet(
            counterfactuals=cfs,
            distances=pd.Series(dist, index=index, name="distance"),
            query_positions=pos,
            n_queries=len(Xq),
        )

    def _accepted(self, frame: pd.DataFrame) -> np.ndarray:
        if not len(frame):
            return np.zeros(0, dtype=bool)
        return np.asarray(self.estimator_.predict(frame)) == self.desired_class_


# --------------------------------------------------------------------------- kd-tree
_TIE = 1e-9  # scale of the candidate-position offset that breaks distance ties
class KDTreeCounterfactuals(_BaseGenerator):
    """Nearest accepted training rows as counterfactuals (batched nearest neighbours).

    The paper's *KDtree* strategy without dice-ml's per-query cost: at ``fit``, the
    training rows that the model assigns to the desired class (duplicates removed)
    are indexed once with :class:`~sklearn.neighbors.NearestNeighbors` (Manhattan
    metric on min-max scaled numeric columns and one-hot categorical columns with
    weight 1/2, i.e. exactly the module's distance). ``generate`` answers all queries
    in batches. Immutable columns (the sensitive feature in
    :class:`CounterfactualFairness`) keep the query's values, take no part in the
    distance, and every counterfactual is re-checked with the model; rows short of
    ``k`` accepted ones are searched again with more neighbours. Candidates at equal
    distance (or within ``1e-9``) are ranked by their position in ``candidates_``:
    the index adds ``1e-9 * position / n_candidates`` to each candidate's distance
    (removed from the reported distance), so the neighbour search has no ties and
    its output never depends on how ties would be ordered (by the batch or the
    number of threads).

    Parameters
    ----------
    immutable_features : list of str, default=None
        Columns that counterfactuals never change.
    desired_class : label, default=None
        Class the counterfactuals must get; ``None`` means ``estimator.classes_[-1]``
        (1 for 0/1 labels, the favorable class of the bundled datasets).
    ranking : {"distance", "prediction"}, default="distance"
        ``"prediction"`` re-ranks the k nearest by ``|E[f(x)] - E[f(c)]|``.
    batch_size : int, default=2048
        Number of queries per nearest-neighbour call (bounds memory).
    n_jobs : int, default=None
        Passed to :class:`~sklearn.neighbors.NearestNeighbors`.

    Attributes
    ----------
    candidates_ : pandas.DataFrame
        The accepted, de-duplicated training rows.
    features_ : list of str
        Mutable columns (used in the distance).
    desired_class_ : label

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.counterfactual import KDTreeCounterfactuals
    >>> X = pd.DataFrame({"a": np.arange(10.0)})
    >>> model = DecisionTreeClassifier().fit(X, (X["a"] > 4).astype(int))
    >>> cs = KDTreeCounterfactuals().fit(X, model).generate(X.iloc[[0, 3]], k=2)
    >>> cs.counterfactuals["a"].tolist()
    [5.0, 6.0, 5.0, 6.0]
    """

    def __init__(self, *, immutable_features=None, desired_class=None, ranking="distance",
                 batch_size=2048, n_jobs=None):
        self.immutable_features = immutable_features
        self.desired_class = desired_class
        self.ranking = ranking
        self.batch_size = batch_size
        self.n_jobs = n_jobs

    def fit(self, X: pd.DataFrame, estimator) -> KDTreeCounterfactuals:
        """Index the training rows the model accepts.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_features)
            Reference rows (e.g. the training data).
        estimator : fitted binary classifier
            The decision model; it is called on frames with the columns of ``X``.

        Returns
        -------
        self
        """
        X = self._fit_common(X, estimator)
        if not isinstance(self.batch_size, Integral) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer; got {self.batch_size!r}.")
        accepted = self._accepted(X)
        cand = X.loc[accepted]
        cand = cand.loc[~cand[self.features_].duplicated()]
        if len(cand) == 0:
            raise ValueError(
                "The model assigns no row of X to the desired class "
                f"{self.desired_class_!r}; the kdtree generator has no candidate."
            )
        self.candidates_ = cand.reset_index(drop=True)
        n = len(self.candidates_)
        tie = _TIE * np.arange(n, dtype=float)[:, None] / n  # canonical order of ties
        self.nn_ = NearestNeighbors(metric="manhattan", n_jobs=self.n_jobs).fit(
            np.hstack([self.proximity_.encode(self.candidates_), tie])
        )
        return self

    def _compose(self, Xq: pd.DataFrame, qpos: np.ndarray, cidx: np.ndarray) -> pd.DataFrame:
        mut = self.candidates_[self.features_].iloc[cidx].reset_index(drop=True)
        if self.immutable_features_:
            imm = Xq[self.immutable_features_].iloc[qpos].reset_index(drop=True)
            mut = pd.concat([mut, imm], axis=1)
        return mut[list(Xq.columns)]

    def generate(self, X: pd.DataFrame, k: int) -> CounterfactualSet:
        """The ``k`` nearest accepted rows of every query row.

        Parameters
        ----------
        X : DataFrame
            Query rows (typically refused by the model), with the columns of ``fit``.
        k : int
            Number of counterfactuals per row (fewer when not enough candidates).

        Returns
        -------
        CounterfactualSet
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "nn_")
        k = self._check_k(k)
        Xq = _check_frame(X, list(self.feature_names_in_))
        n_cand = len(self.candidates_)
        enc = np.hstack([self.proximity_.encode(Xq), np.zeros((len(Xq), 1))])
        frames, positions, dists, cands = [], [], [], []
        pending = np.arange(len(Xq))
        n_nb = min(k, n_cand)
        while len(pending):
            next_pending = []
            for start in range(0, len(pending), self.batch_size):
                rows = pending[start:start + self.batch_size]
                d, idx = self.nn_.kneighbors(enc[rows], n_neighbors=n_nb)
                qpos = np.repeat(rows, n_nb)
                frame = self._compose(Xq, qpos, idx.ravel())
                dist = d.ravel()
                ok = np.ones(len(qpos), dtype=bool)
                if self.immutable_features_:
                    ok = self._accepted(frame)
                    n_ok = ok.reshape(len(rows), n_nb).sum(axis=1)
                    short = (n_ok < k) & (n_nb < n_cand)
                    if short.any():
                        next_pending.append(rows[short])
                        ok &= np.repeat(~short, n_nb)
                frames.append(frame.loc[ok])
                positions.append(qpos[ok])
                dists.append(dist[ok])
                cands.append(idx.ravel()[ok])
            pending = np.concatenate(next_pending) if next_pending else np.zeros(0, int)
            n_nb = min(2 * n_nb, n_cand)
        cfs = pd.concat(frames, ignore_index=True) if frames else Xq.iloc[:0]
        key, cand = np.concatenate(dists), np.concatenate(cands)
        return self._finalize(Xq, cfs, np.concatenate(positions), key - _TIE * cand / n_cand,
                              k, tiebreak=cand, search_key=key)


# --------------------------------------------------------------------------- linear
def _unwrap(estimator):
    inner = getattr(estimator, "_skfv_inner_estimator", None)
    return estimator if inner is None else inner


class LinearCounterfactuals(_BaseGenerator):
    """Closed-form counterfactuals across the boundary of a linear model.

    The fitted model is read with :func:`skfairverify.linear_rule` as
    ``d(x) = b + sum_j w_j x_j + sum_(c, v) w_(c=v) [x_c = v]`` on the raw columns.
    For a refused row, a counterfactual must raise ``d`` by ``need = margin - d(x)``.
    Each *plan* below gives, in closed form, the point of least distance that reaches
    ``d = margin`` while changing only its features (numeric values stay within the
    training range and integer columns stay integers, rounded away from the row):

    * one numeric feature ``j``: ``c_j = x_j + need / w_j``;
    * two numeric features ``i, j`` sharing the need equally (diversity), one
      covering what the other cannot reach within its range;
    * one categorical switch ``c: x_c -> v`` (distance 1), alone when it suffices,
      otherwise completed by one numeric feature.

    Plans are ranked by distance (or by the prediction gap), so the ``k``
    counterfactuals of a row change diverse feature subsets. Each one is re-checked
    with the model.

    Parameters
    ----------
    immutable_features : list of str, default=None
        Columns that never change.
    desired_class : label, default=None
        Target class; ``None`` means ``estimator.classes_[-1]``.
    ranking : {"distance", "prediction"}, default="distance"
    margin : float, default=1e-3
        Decision value reached on the desired side of the boundary.

    Attributes
    ----------
    rule_ : LinearRule
        The model read as a rule on raw columns.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify.counterfactual import LinearCounterfactuals
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    >>> model = LogisticRegression().fit(X, (X.a + X.b > 0).astype(int))
    >>> cs = LinearCounterfactuals().fit(X, model).generate(X[model.predict(X) == 0], k=3)
    >>> bool((model.predict(cs.counterfactuals) == 1).all())
    True
    """

    def __init__(self, *, immutable_features=None, desired_class=None, ranking="distance",
                 margin=1e-3):
        self.immutable_features = immutable_features
        self.desired_class = desired_class
        self.ranking = ranking
        self.margin = margin

    def fit(self, X: pd.DataFrame, estimator) -> LinearCounterfactuals:
        """Read the linear rule and the ranges of the numeric columns.

        Parameters
        ----------
        X : DataFrame
            Training rows (give the numeric ranges and categories).
        estimator : fitted linear binary classifier or pipeline
            Anything :func:`skfairverify.linear_rule` reads.

        Returns
        -------
        self
        """
        from .._linear import linear_rule

        X = self._fit_common(X, estimator)
        if not (isinstance(self.margin, (int, float)) and self.margin > 0):
            raise ValueError(f"margin must be a positive number; got {self.margin!r}.")
        rule = linear_rule(_unwrap(estimator))
        sign = 1.0 if self.desired_class_ == rule.classes[-1] else -1.0
        self.rule_ = rule
        self.sign_ = sign
        prox = self.proximity_
        self.num_ = [c for c in rule.numeric_features if c in prox.numeric]
        w = np.array([sign * float(rule.coef[c]) for c in self.num_])
        keep = w != 0
        self.num_ = [c for c, kk in zip(self.num_, keep) if kk]
        self.w_ = w[keep]
        where = [prox.numeric.index(c) for c in self.num_]
        self.low_, self.high_ = prox.low[where], prox.high[where]
        self.range_ = prox.range[where]
        self.integer_ = np.array(
            [pd.api.types.is_integer_dtype(X[c]) or bool(np.all(np.mod(X[c], 1) == 0))
             for c in self.num_], dtype=bool)
        self.cat_ = {
            c: pd.Series([sign * float(rule.coef[f"{c}={v}"]) for v in cats],
                         index=pd.Index(cats, dtype=object))
            for c, cats in rule.categorical_features.items()
            if c in self.features_
        }
        return self

    # each plan returns (deltas (n, p) for numeric, feasible mask) given need (n,)
    def _fill(self, x: np.ndarray, need: np.ndarray, feats: tuple, shares: tuple):
        n = len(need)
        delta = np.zeros((n, len(self.num_)))
        rem = need.copy()
        gains = []
        for j, share in zip(feats, shares):
            w = self.w_[j]
            head = np.where(w > 0, self.high_[j] - x[:, j], x[:, j] - self.low_[j])
            cap = np.abs(w) * np.maximum(head, 0.0)
            target = np.minimum(np.maximum(rem * share, 0.0), cap)
            gains.append(target)
            rem = rem - target
        # a feature that reached its cap leaves the remainder to the others
        for idx, j in enumerate(feats):
            w = self.w_[j]
            head = np.where(w > 0, self.high_[j] - x[:, j], x[:, j] - self.low_[j])
            cap = np.abs(w) * np.maximum(head, 0.0)
            extra = np.minimum(np.maximum(rem, 0.0), cap - gains[idx])
            gains[idx] = gains[idx] + extra
            rem = rem - extra
        for idx, j in enumerate(feats):
            step = gains[idx] / np.abs(self.w_[j])
            if self.integer_[j]:
                step = np.ceil(step - 1e-9)
                head = np.where(self.w_[j] > 0, self.high_[j] - x[:, j], x[:, j] - self.low_[j])
                step = np.minimum(step, np.maximum(head, 0.0))
            delta[:, j] = np.sign(self.w_[j]) * step
        feasible = rem <= 1e-12 * (1.0 + np.abs(need))
        used = np.all(np.stack([np.abs(delta[:, j]) > 0 for j in feats]), axis=0)
        return delta, feasible & used

    def _plans(self):
        p = len(self.num_)
        plans = [("num", (j,), (1.0,)) for j in range(p)]
        plans += [("num", (i, j), (0.5, 0.5)) for i, j in combinations(range(p), 2)]
        for c, coefs in self.cat_.items():
            for v in coefs.index:
                plans.append(("cat", c, v, None))
                plans += [("cat", c, v, j) for j in range(p)]
        return plans

    def _run_plan(self, plan, Xq: pd.DataFrame, x: np.ndarray, need: np.ndarray):
        """Numeric deltas, categorical switch, distance and feasibility of one plan."""
        n = len(need)
        if plan[0] == "num":
            delta, ok = self._fill(x, need, plan[1], plan[2])
            cat = None
        else:
            _, c, v, j = plan
            coefs = self.cat_[c]
            current = Xq[c].astype(object).to_numpy()
            cur_coef = coefs.reindex(current).fillna(0.0).to_numpy()
            gain = coefs[v] - cur_coef
            changed = current != v
            rest = need - gain
            if j is None:
                delta = np.zeros((n, len(self.num_)))
                ok = changed & (rest <= 0)
            else:
                delta, ok = self._fill(x, rest, (j,), (1.0,))
                ok = ok & changed & (rest > 0)
            cat = (c, v)
        dist = np.abs(delta).dot(1.0 / self.range_) + (0.0 if cat is None else 1.0)
        return delta, cat, np.where(ok, dist, np.inf)

    def generate(self, X: pd.DataFrame, k: int) -> CounterfactualSet:
        """Closed-form counterfactuals of every query row, the ``k`` best kept.

        Parameters
        ----------
        X : DataFrame
            Query rows, with the columns of ``fit``.
        k : int
            Number of counterfactuals per row.

        Returns
        -------
        CounterfactualSet
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "rule_")
        k = self._check_k(k)
        Xq = _check_frame(X, list(self.feature_names_in_))
        x = Xq[self.num_].to_numpy(dtype=float) if self.num_ else np.zeros((len(Xq), 0))
        d = self.sign_ * self.rule_.decision_function(Xq)
        need = np.maximum(self.margin - d, 1e-12)
        plans = self._plans()
        n = len(Xq)
        if not plans or n == 0:
            return self._finalize(Xq, Xq.iloc[:0], np.zeros(0, int), np.zeros(0), k)
        dist = np.column_stack([self._run_plan(p, Xq, x, need)[2] for p in plans])
        # a margin of candidates, as some may fail the model's re-check
        take = min(len(plans), 2 * k)
        best = np.argsort(dist, axis=1, kind="stable")[:, :take]
        frames, positions, dists = [], [], []
        for pi in np.unique(best):
            rows = np.flatnonzero((best == pi).any(axis=1) & np.isfinite(dist[:, pi]))
            if not len(rows):
                continue
            delta, cat, dd = self._run_plan(plans[pi], Xq.iloc[rows], x[rows], need[rows])
            frame = Xq.iloc[rows].copy()
            for j, c in enumerate(self.num_):
                if np.any(delta[:, j]):
                    new = x[rows, j] + delta[:, j]
                    if pd.api.types.is_integer_dtype(frame[c]):
                        new = np.round(new).astype(frame[c].dtype)
                    frame[c] = new
            if cat is not None:
                c, v = cat
                col = frame[c]
                if isinstance(col.dtype, pd.CategoricalDtype):
                    frame[c] = pd.Categorical([v] * len(frame), dtype=col.dtype)
                else:
                    frame[c] = pd.Series([v] * len(frame), index=frame.index, dtype=col.dtype)
            frames.append(frame)
            positions.append(rows)
            dists.append(dd)
        cfs = pd.concat(frames, ignore_index=True)
        pos = np.concatenate(positions)
        dist_all = np.concatenate(dists)
        ok = self._accepted(cfs)
        return self._finalize(Xq, cfs.loc[ok], pos[ok], dist_all[ok], k)


# --------------------------------------------------------------------------- registry
GENERATORS = ("kdtree", "linear", "dice-genetic", "dice-random", "dice-kdtree")


def make_generator(generator, **params):
    """Build a generator from its name (or clone a generator object).

    Parameters
    ----------
    generator : str or generator object
        One of ``"kdtree"``, ``"linear"``, ``"dice-genetic"``, ``"dice-random"``,
        ``"dice-kdtree"``, or an object with ``fit(X, estimator)`` and
        ``generate(X, k)`` (cloned when it is a scikit-learn estimator).
    **params
        Parameters set on the generator when it accepts them (e.g.
        ``immutable_features``, ``random_state``, ``n_jobs``).

    Returns
    -------
    generator object (unfitted)

    Examples
    --------
    >>> from skfairverify.counterfactual import make_generator
    >>> make_generator("kdtree", immutable_features=["sex"])
    KDTreeCounterfactuals(immutable_features=['sex'])
    """
    from sklearn.base import clone

    if isinstance(generator, str):
        if generator == "kdtree":
            gen = KDTreeCounterfactuals()
        elif generator == "linear":
            gen = LinearCounterfactuals()
        elif generator in ("dice-genetic", "dice-random", "dice-kdtree"):
            from ._dice import DiceCounterfactuals

            gen = DiceCounterfactuals(method=generator.split("-", 1)[1])
        else:
            raise ValueError(
                f"Unknown generator {generator!r}; valid names are {list(GENERATORS)} "
                "(or pass a generator object)."
            )
    elif hasattr(generator, "fit") and hasattr(generator, "generate"):
        gen = clone(generator) if hasattr(generator, "get_params") else generator
    else:
        raise TypeError(
            "generator must be a name in "
            f"{list(GENERATORS)} or an object with fit(X, estimator) and generate(X, k); "
            f"got {type(generator).__name__}."
        )
    if hasattr(gen, "get_params"):
        valid = gen.get_params(deep=False)
        gen.set_params(**{k: v for k, v in params.items() if k in valid and v is not None})
    return gen
