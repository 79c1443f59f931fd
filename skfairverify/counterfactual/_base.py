"""What every counterfactual generator shares: the output, the distance, the checks.

Every generator is a scikit-learn style object (``get_params``/``clone`` work) with

* ``fit(X, estimator)``: ``X`` a DataFrame of training rows (the reference data),
  ``estimator`` a *fitted* binary classifier taking ``X``;
* ``generate(X_query, k) -> CounterfactualSet``: up to ``k`` counterfactuals per
  query row that the estimator assigns to the desired class, ranked (rank 1 first).

Distance (the ranking, which nDCCF depends on): L1 over the mutable columns, a
numeric column counted after min-max scaling on the training rows
(``|c_j - x_j| / (max_j - min_j)``) and a categorical column (pandas ``category``,
``object``, ``string`` or ``bool``) counting 1 when its value changes. This is the
proximity of DiCE with min-max scaled features. Missing values: a missing category is
a category of its own (missing against missing counts 0, against a value 1), and for
the distance only a missing numeric value counts as the column's training median (the
rows keep their NaN; the model reads them as it does, e.g. through its imputer).
With ``ranking="prediction"`` the generated set is re-ranked by
``|E[f(x)] - E[f(c)]|`` (Section 6.4 of the paper), where ``E[f]`` is ``predict_proba``
of the desired class (``decision_function`` when there is no ``predict_proba``).

This module is the one place where ``k`` (:data:`K_CONSTRAINT`) and the rows of a
frame (:func:`check_frame`: a DataFrame, unique column names, the columns of ``fit``)
are checked.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._categories import category_codes, match_categories
from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._validation import check_unique_columns
from ._budget import GenerationTimeout

__all__ = [
    "K_CONSTRAINT",
    "BaseGenerator",
    "CounterfactualSet",
    "check_frame",
    "is_categorical",
    "missing_columns",
]

#: The constraint on ``k`` (number of counterfactuals per row) used everywhere.
K_CONSTRAINT = Interval(Integral, 1, None, closed="left")


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
        Distance of each counterfactual to its query (same index), see
        :mod:`skfairverify.counterfactual` for the metric.
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

    @classmethod
    def empty(cls, X: pd.DataFrame) -> CounterfactualSet:
        """No counterfactual for any of the rows of ``X``."""
        index = pd.MultiIndex.from_arrays([X.index[:0], np.zeros(0, dtype=int)],
                                          names=["row", "rank"])
        frame = X.iloc[:0].copy()
        frame.index = index
        return cls(frame, pd.Series([], index=index, dtype=float, name="distance"),
                   np.zeros(0, dtype=int), len(X))

    @classmethod
    def concat(cls, parts: list[tuple[int, CounterfactualSet]],
               n_queries: int) -> CounterfactualSet:
        """Join the sets of consecutive chunks ``(start position, set)`` of one batch."""
        cfs = pd.concat([p.counterfactuals for _, p in parts])
        pos = np.concatenate([p.query_positions + start for start, p in parts])
        dist = np.concatenate([p.distances.to_numpy() for _, p in parts])
        return cls(cfs, pd.Series(dist, index=cfs.index, name="distance"), pos, n_queries)

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


# --------------------------------------------------------------------------- checks
def is_categorical(series: pd.Series) -> bool:
    """Whether a column counts as categorical (not numeric, or boolean)."""
    return not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


def check_frame(X, columns=None, *, what: str = "X") -> pd.DataFrame:
    """``X`` as a DataFrame with unique column names, restricted to ``columns``.

    Missing values are accepted (the model reads them as it does; see the module's
    distance); infinite numbers are refused (the distance scales by the range).

    Parameters
    ----------
    X : DataFrame
    columns : list, default=None
        Columns required (those seen in ``fit``), in this order; ``None``: all.
    what : str, default="X"
        How ``X`` is called in the messages.

    Returns
    -------
    DataFrame
    """
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame; got {type(X).__name__}.")
    check_unique_columns(X, what)
    if columns is not None:
        missing = [c for c in columns if c not in X.columns]
        if missing:
            raise ValueError(f"{what} lacks the columns {missing} seen in fit.")
        X = X[list(columns)]
    infinite = [c for c in X.columns if not is_categorical(X[c])
                and np.isinf(X[c].to_numpy(dtype=float, na_value=np.nan)).any()]
    if infinite:
        raise ValueError(
            f"{what} holds infinite values in the columns {infinite}: the counterfactual "
            "distance scales every numeric column by its range, which infinity makes "
            "undefined. Replace them first (e.g. clip to the finite values, or NaN, which "
            "the audit reads as missing)."
        )
    return X


def missing_columns(X: pd.DataFrame) -> list:
    """The columns of ``X`` holding a missing value (for the messages that name them)."""
    return [c for c in X.columns if X[c].isna().any()]


class _Proximity:
    """Encode rows so that L1 distance equals the documented proximity.

    Categories are matched with :func:`~skfairverify.utils._categories.match_categories`
    (numbers numerically, strings never equal to numbers), the rule every other part
    of the package uses.
    """

    def __init__(self, X: pd.DataFrame, features: list[str]):
        self.features = list(features)
        self.numeric = [c for c in features if not is_categorical(X[c])]
        self.categorical = [c for c in features if is_categorical(X[c])]
        values = self._numbers(X)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
            lo, hi = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
            median = np.nanmedian(values, axis=0)
        lo[~np.isfinite(lo)] = 0.0  # a column without any value
        hi[~np.isfinite(hi)] = 0.0
        # half the range, which cannot overflow (hi - lo can, near 1e308); halving is
        # exact, so (x - lo) / (hi - lo) is computed as (x/2 - lo/2) / (hi/2 - lo/2)
        half = 0.5 * hi - 0.5 * lo
        half[~(half > 0)] = 0.5
        self.low, self.high, self.half = lo, hi, half
        with np.errstate(over="ignore"):
            self.range = 2.0 * half  # infinite for a span beyond the float range
        self.median = np.where(np.isfinite(median), median, lo)
        self.categories = {c: category_codes(X[c], name=c)[1] for c in self.categorical}

    def _numbers(self, X: pd.DataFrame) -> np.ndarray:
        """The numeric columns as floats (NaN where missing)."""
        if not self.numeric:
            return np.zeros((len(X), 0))
        return X[self.numeric].to_numpy(dtype=float, na_value=np.nan)

    def _filled(self, X: pd.DataFrame) -> np.ndarray:
        """The numeric columns, a missing value replaced by the column's training median."""
        values = self._numbers(X)
        missing = np.isnan(values)
        if missing.any():
            values = np.where(missing, self.median, values)
        return values

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        parts = []
        if self.numeric:
            parts.append((0.5 * self._filled(X) - 0.5 * self.low) / self.half)
        for c in self.categorical:
            cats = self.categories[c]
            codes = match_categories(X[c], cats, name=c)
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
            gap = np.abs(0.5 * self._filled(A) - 0.5 * self._filled(B))
            d += gap.dot(1.0 / self.half)  # = |a - b| . (1 / range), bit for bit
        for c in self.categorical:
            both = np.concatenate([A[c].to_numpy(dtype=object), B[c].to_numpy(dtype=object)])
            codes, _ = category_codes(both, name=c)
            d += codes[: len(A)] != codes[len(A):]
        return d


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


def _rank_within_rows(pos: np.ndarray) -> np.ndarray:
    """1-based rank of every entry among the entries of its (sorted) query position."""
    starts = np.r_[0, np.flatnonzero(np.diff(pos)) + 1]
    counts = np.diff(np.r_[starts, len(pos)])
    return np.arange(len(pos)) - np.repeat(starts, counts) + 1


# --------------------------------------------------------------------------- base
class BaseGenerator(BaseEstimator):
    """Base of the generators: shared parameters, checks, ranking and chunking.

    Subclasses implement ``fit(X, estimator)`` (calling :meth:`_fit_common` first) and
    ``_generate(X, k)`` on rows already checked; :meth:`generate` checks ``k`` and the
    rows. ``query_chunk_size`` is the number of query rows that
    :class:`~skfairverify.CounterfactualFairness` hands to one ``generate`` call (a
    generator whose per-row cost is high asks for small chunks).

    Examples
    --------
    >>> from skfairverify.counterfactual import BaseGenerator, KDTreeCounterfactuals
    >>> issubclass(KDTreeCounterfactuals, BaseGenerator)
    True
    >>> KDTreeCounterfactuals.query_chunk_size
    512
    """

    query_chunk_size = 512
    _fitted_attribute = "proximity_"

    _parameter_constraints: dict = {
        "immutable_features": ["array-like", None],
        "desired_class": "no_validation",
        "ranking": [StrOptions({"distance", "prediction"})],
    }

    def _fit_common(self, X, estimator) -> pd.DataFrame:
        self._validate_params()
        X = check_frame(X)
        if len(X) == 0:
            raise ValueError("X is empty.")
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

    @validate_params({"k": [K_CONSTRAINT],
                      "max_time": [Interval(Real, 0, None, closed="neither"), None]},
                     prefer_skip_nested_validation=True)
    def generate(self, X: pd.DataFrame, k: int, *, max_time=None) -> CounterfactualSet:
        """Up to ``k`` ranked counterfactuals of every query row.

        Parameters
        ----------
        X : DataFrame
            Query rows (typically refused by the model), with the columns of ``fit``.
        k : int
            Number of counterfactuals per row (fewer when not enough are found).
        max_time : float, default=None
            CPU seconds (``time.process_time``) this call may spend; a generator that
            loops over rows (dice-ml's) stops beyond it with a
            :class:`~skfairverify.s3p.TableTooLargeError`. ``None``: no limit. The
            vectorised generators are bounded by the rows and ignore it.

        Returns
        -------
        CounterfactualSet
        """
        check_is_fitted(self, self._fitted_attribute)
        Xq = check_frame(X, list(self.feature_names_in_))
        self._deadline = np.inf if max_time is None else time.process_time() + max_time
        return self._generate(Xq, int(k))

    def max_counterfactuals(self, k: int) -> int:
        """Largest number of counterfactuals this generator returns for one row.

        Parameters
        ----------
        k : int
            The number asked for.

        Returns
        -------
        int
            ``k`` here; a generator with fewer candidates returns fewer.
        """
        return int(k)

    def _check_time(self, rows_done: int) -> None:
        """Raise :class:`GenerationTimeout` once this call's CPU budget is spent."""
        now = time.process_time()
        deadline = getattr(self, "_deadline", np.inf)
        if now > deadline:
            raise GenerationTimeout(
                f"{type(self).__name__}.generate spent its max_time after {rows_done} row(s).",
                rows_done)

    def _generate(self, Xq: pd.DataFrame, k: int) -> CounterfactualSet:  # pragma: no cover
        raise NotImplementedError

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
        rank = np.zeros(0, dtype=int)
        if len(cfs):
            key = self._ranking_key(Xq, cfs, pos, dist, search_key)
            order = np.lexsort((tiebreak, key, pos))
            pos, dist, cfs = pos[order], dist[order], cfs.iloc[order].reset_index(drop=True)
            rank = _rank_within_rows(pos)
            keep = rank <= k
            pos, dist, rank = pos[keep], dist[keep], rank[keep]
            cfs = cfs.loc[keep].reset_index(drop=True)
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

    def _ranking_key(self, Xq, cfs, pos, dist, search_key) -> np.ndarray:
        if self.ranking == "prediction":
            fx = _expected_output(self.estimator_, Xq, self.desired_class_)
            fc = _expected_output(self.estimator_, cfs, self.desired_class_)
            return np.abs(fx[pos] - fc)
        return dist if search_key is None else np.asarray(search_key, dtype=float)

    def _accepted(self, frame: pd.DataFrame) -> np.ndarray:
        if not len(frame):
            return np.zeros(0, dtype=bool)
        return np.asarray(self.estimator_.predict(frame)) == self.desired_class_
