"""KDTreeCounterfactuals: the nearest accepted training rows (batched neighbours)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from ..utils._compat import N_JOBS, Interval
from ._base import BaseGenerator, CounterfactualSet

__all__ = ["KDTreeCounterfactuals"]

_TIE = 1e-9  # scale of the candidate-position offset that breaks distance ties
_PAIRS = 2**19  # (query, neighbour) pairs of one neighbour search (rows of its frame)
#: The model judges every candidate once per combination of the queries' immutable values
#: when that is at most this many times the pairs of a first round (k per query).
_TABLE_RATIO = 2


class KDTreeCounterfactuals(BaseGenerator):
    """Nearest accepted training rows as counterfactuals (batched nearest neighbours).

    The paper's *KDtree* strategy without dice-ml's per-query cost: at ``fit``, the
    training rows that the model assigns to the desired class (duplicates removed)
    are indexed once with :class:`~sklearn.neighbors.NearestNeighbors` (Manhattan
    metric on min-max scaled numeric columns and one-hot categorical columns with
    weight 1/2, i.e. exactly the module's distance). ``generate`` answers all queries
    in batches. Immutable columns (the sensitive feature in
    :class:`CounterfactualFairness`) keep the query's values, take no part in the
    distance, and every counterfactual is checked with the model: when the queries hold
    few combinations of immutable values, every candidate is judged once per
    combination and each query's ``k`` nearest accepted ones are found in one search;
    otherwise rows short of ``k`` accepted ones are searched again with more
    neighbours (the same counterfactuals either way). Candidates at equal
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
        Number of queries per nearest-neighbour call (bounds memory); fewer when a call
        would exceed 2**19 (query, neighbour) pairs (rows searched again with more
        neighbours).
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

    _fitted_attribute = "nn_"
    _parameter_constraints: dict = {
        **BaseGenerator._parameter_constraints,
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": N_JOBS,
    }

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
        self._index_rows = np.hstack([self.proximity_.encode(self.candidates_), tie])
        self.nn_ = NearestNeighbors(metric="manhattan", n_jobs=self.n_jobs).fit(
            self._index_rows)
        # the method scikit-learn's "auto" chose, for the indices of accepted subsets
        dims = self._index_rows.shape[1]
        self._method = "brute" if dims > 15 or 5 >= n // 2 else "kd_tree"
        return self

    def max_counterfactuals(self, k: int) -> int:
        """Largest number of counterfactuals of one row: ``k``, or the candidates if fewer."""
        return min(int(k), len(self.candidates_))

    def _compose(self, Xq: pd.DataFrame, qpos: np.ndarray, cidx: np.ndarray) -> pd.DataFrame:
        """Candidates ``cidx`` with the immutable values of query rows ``qpos``.

        Built column by column (``take`` on each column's array keeps its dtype): a
        frame-wide selection, ``iloc`` and ``concat`` cost a third of a search call.
        """
        immutable = set(self.immutable_features_)
        return pd.DataFrame({
            c: (Xq[c].array.take(qpos) if c in immutable
                else self.candidates_[c].array.take(cidx))
            for c in Xq.columns
        })

    def _generate(self, Xq: pd.DataFrame, k: int) -> CounterfactualSet:
        """The ``k`` nearest accepted rows of every query row (see :meth:`generate`)."""
        n_cand = len(self.candidates_)
        enc = np.hstack([self.proximity_.encode(Xq), np.zeros((len(Xq), 1))])
        table = self._acceptance(Xq, k)
        parts = (self._search_rounds(Xq, enc, k) if table is None
                 else self._search_accepted(Xq, enc, k, *table))
        frames, positions, dists, cands = parts
        cfs = pd.concat(frames, ignore_index=True) if frames else Xq.iloc[:0]
        key, cand = np.concatenate([[], *dists]), np.concatenate([[], *cands]).astype(int)
        return self._finalize(Xq, cfs, np.concatenate([[], *positions]).astype(int),
                              key - _TIE * cand / n_cand, k, tiebreak=cand, search_key=key)

    def _acceptance(self, Xq: pd.DataFrame, k: int):
        """Which candidates the model accepts with each query's immutable values, or ``None``.

        A counterfactual is a candidate with the query's immutable values; its decision
        depends on the query only through them. When the queries hold few combinations
        of immutable values (the sensitive groups of the audit), the model judges every
        candidate once per combination: ``(combination of each query, accepted table of
        shape (n_combinations, n_candidates))``. ``None`` (no immutable column, or more
        pairs than ``_TABLE_RATIO`` times the first round's): the rounds of
        :meth:`_search_rounds`.
        """
        immutable = self.immutable_features_
        if not immutable or not len(Xq):
            return None
        combination = Xq.groupby(immutable, sort=False, dropna=False,
                                 observed=True).ngroup().to_numpy()
        n_comb, n_cand = int(combination.max()) + 1, len(self.candidates_)
        if n_comb * n_cand > _TABLE_RATIO * len(Xq) * min(k, n_cand):
            return None
        first = np.unique(combination, return_index=True)[1]  # a query of each one
        qpos, cidx = np.repeat(first, n_cand), np.tile(np.arange(n_cand), n_comb)
        ok = np.concatenate([
            self._accepted(self._compose(Xq, qpos[i:i + _PAIRS], cidx[i:i + _PAIRS]))
            for i in range(0, len(qpos), _PAIRS)])
        return combination, ok.reshape(n_comb, n_cand)

    def _search_accepted(self, Xq, enc, k: int, combination, table):
        """The ``k`` nearest accepted candidates of each query, one index per combination.

        The candidates' rows of the fitted index (with their tie offsets) restricted to
        those accepted with a combination's immutable values: the same neighbours, in
        the same order and at the same distances, as the rounds would find.
        """
        frames, positions, dists, cands = [], [], [], []
        for g, accepted in enumerate(table):
            rows, sub = np.flatnonzero(combination == g), np.flatnonzero(accepted)
            if not len(sub):
                continue
            index = self.nn_ if len(sub) == len(accepted) else NearestNeighbors(
                metric="manhattan", algorithm=self._method, n_jobs=self.n_jobs,
            ).fit(self._index_rows[sub])
            n_nb = min(k, len(sub))
            batch = max(1, min(self.batch_size, _PAIRS // n_nb))
            for start in range(0, len(rows), batch):
                query = rows[start:start + batch]
                d, idx = index.kneighbors(enc[query], n_neighbors=n_nb)
                qpos, cidx = np.repeat(query, n_nb), sub[idx.ravel()]
                frames.append(self._compose(Xq, qpos, cidx))
                positions.append(qpos)
                dists.append(d.ravel())
                cands.append(cidx)
        return frames, positions, dists, cands

    def _search_rounds(self, Xq, enc, k: int):
        """The nearest candidates, checked by the model, searched again with more when short."""
        n_cand = len(self.candidates_)
        frames, positions, dists, cands = [], [], [], []
        pending = np.arange(len(Xq))
        n_nb = min(k, n_cand)
        while len(pending):
            next_pending = []
            # at most _PAIRS (query, neighbour) pairs per call: n_nb grows up to n_cand
            batch = max(1, min(self.batch_size, _PAIRS // n_nb))
            for start in range(0, len(pending), batch):
                rows = pending[start:start + batch]
                frame, qpos, dist, cidx, short = self._search(Xq, enc[rows], rows, n_nb, k)
                next_pending.append(short)
                frames.append(frame)
                positions.append(qpos)
                dists.append(dist)
                cands.append(cidx)
            pending = np.concatenate(next_pending)
            n_nb = min(2 * n_nb, n_cand)
        return frames, positions, dists, cands

    def _search(self, Xq: pd.DataFrame, enc: np.ndarray, rows: np.ndarray, n_nb: int, k: int):
        """The ``n_nb`` nearest candidates of a batch of query rows, checked by the model.

        Returns the accepted counterfactuals (frame, query positions, distances,
        candidate indices) and the rows short of ``k`` accepted ones, to be searched
        again with more neighbours (their counterfactuals are dropped here).
        """
        n_cand = len(self.candidates_)
        d, idx = self.nn_.kneighbors(enc, n_neighbors=n_nb)
        qpos = np.repeat(rows, n_nb)
        frame = self._compose(Xq, qpos, idx.ravel())
        ok = np.ones(len(qpos), dtype=bool)
        short = np.zeros(len(rows), dtype=bool)
        if self.immutable_features_:
            ok = self._accepted(frame)
            n_ok = ok.reshape(len(rows), n_nb).sum(axis=1)
            short = (n_ok < k) & (n_nb < n_cand)
            ok &= np.repeat(~short, n_nb)
        return frame.loc[ok], qpos[ok], d.ravel()[ok], idx.ravel()[ok], rows[short]
