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


class KDTreeCounterfactuals(BaseGenerator):
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
        self.nn_ = NearestNeighbors(metric="manhattan", n_jobs=self.n_jobs).fit(
            np.hstack([self.proximity_.encode(self.candidates_), tie])
        )
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
        cfs = pd.concat(frames, ignore_index=True) if frames else Xq.iloc[:0]
        key, cand = np.concatenate(dists), np.concatenate(cands)
        return self._finalize(Xq, cfs, np.concatenate(positions), key - _TIE * cand / n_cand,
                              k, tiebreak=cand, search_key=key)

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
