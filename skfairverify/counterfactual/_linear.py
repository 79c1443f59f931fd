"""LinearCounterfactuals: closed-form counterfactuals across a linear boundary."""

from __future__ import annotations

from itertools import combinations
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator

from ..rules import linear_rule
from ..s3p import TableTooLargeError
from ..utils._categories import match_categories
from ..utils._compat import Interval
from ._base import BaseGenerator, CounterfactualSet
from ._column_subset import ColumnSubsetClassifier

__all__ = ["LinearCounterfactuals"]


def _unwrap(estimator):
    """The model to read as a linear rule: the inner model of (nested) column subset views."""
    while True:
        inner = estimator.estimator if isinstance(estimator, FrozenEstimator) else estimator
        if not isinstance(inner, ColumnSubsetClassifier):
            return estimator
        estimator = inner.estimator

class LinearCounterfactuals(BaseGenerator):
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

    Missing values: a counterfactual never changes a missing value (the rule does not
    know it), so a plan that would is not used for that row; the row keeps its NaN and
    the model reads it as it does (through its imputer). The need of such a row is the
    model's own decision value (``decision_function``), not the rule's. The plans number
    ``p + p (p - 1) / 2 + sum_c m_c (1 + p)`` for ``p`` numeric features and ``m_c``
    categories of column ``c``; beyond ``MAX_PLANS`` (65,536) ``fit`` raises
    :class:`~skfairverify.s3p.TableTooLargeError`, and rows are evaluated in blocks of at
    most ``2**22`` (row, plan) pairs.

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

    _fitted_attribute = "rule_"
    _parameter_constraints: dict = {
        **BaseGenerator._parameter_constraints,
        "margin": [Interval(Real, 0, None, closed="neither")],
    }

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
        X = self._fit_common(X, estimator)
        rule = linear_rule(_unwrap(estimator))
        sign = 1.0 if self.desired_class_ == rule.classes[-1] else -1.0
        self.rule_ = rule
        self.sign_ = sign
        prox = self.proximity_
        column = _rule_columns(rule, X)
        num = [(c, column[c]) for c in rule.numeric_features if column[c] in prox.numeric]
        w = np.array([sign * float(rule.coef[c]) for c, _ in num])
        keep = w != 0
        self.num_ = [x for (_, x), kk in zip(num, keep) if kk]
        self.w_ = w[keep]
        where = [prox.numeric.index(c) for c in self.num_]
        self.low_, self.high_ = prox.low[where], prox.high[where]
        self.range_ = prox.range[where]
        self.integer_ = np.array(
            [pd.api.types.is_integer_dtype(X[c]) or bool(np.all(np.mod(X[c].dropna(), 1) == 0))
             for c in self.num_], dtype=bool)
        self.cat_ = {
            column[c]: sign * rule.category_coef(c)
            for c in rule.categorical_features
            if column[c] in self.features_
        }
        _check_plans(len(self._plans()), len(self.num_), self.cat_)
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
            # the rule's matching: the row's category, -1 (weight 0) when none
            codes = match_categories(Xq[c], list(coefs.index), name=c)
            cur_coef = np.append(coefs.to_numpy(dtype=float), 0.0)[codes]
            target = match_categories([v], list(coefs.index), name=c)[0]
            gain = float(coefs.iloc[target]) - cur_coef
            changed = (codes != target) & Xq[c].notna().to_numpy()  # a NaN stays NaN
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

    def _generate(self, Xq: pd.DataFrame, k: int) -> CounterfactualSet:
        """Closed-form counterfactuals of every query row, the ``k`` best kept."""
        plans = self._plans()
        n = len(Xq)
        if not plans or n == 0:
            return self._finalize(Xq, Xq.iloc[:0], np.zeros(0, int), np.zeros(0), k)
        block = max(1, _PAIRS_PER_BLOCK // len(plans))
        if n > block:  # bound the (rows, plans) distance array
            parts = [(i, self._generate(Xq.iloc[i:i + block], k)) for i in range(0, n, block)]
            return CounterfactualSet.concat(parts, n)
        x = (Xq[self.num_].to_numpy(dtype=float, na_value=np.nan) if self.num_
             else np.zeros((n, 0)))
        need = np.maximum(self.margin - self._decision(Xq), 1e-12)
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
            frames.append(self._apply(Xq.iloc[rows], x[rows], delta, cat))
            positions.append(rows)
            dists.append(dd)
        cfs = pd.concat(frames, ignore_index=True)
        pos = np.concatenate(positions)
        dist_all = np.concatenate(dists)
        ok = self._accepted(cfs)
        return self._finalize(Xq, cfs.loc[ok], pos[ok], dist_all[ok], k)

    def max_counterfactuals(self, k: int) -> int:
        """Largest number of counterfactuals of one row: ``k``, or the plans if fewer."""
        return min(int(k), len(self._plans()))

    def _decision(self, Xq: pd.DataFrame) -> np.ndarray:
        """The signed decision value: the rule's, the model's on rows with missing values."""
        d = self.sign_ * self.rule_.decision_function(Xq)
        unknown = ~np.isfinite(d)
        if unknown.any() and hasattr(self.estimator_, "decision_function"):
            model = np.asarray(self.estimator_.decision_function(Xq.loc[unknown]), dtype=float)
            d[unknown] = self.sign_ * model
        return d

    def _apply(self, rows: pd.DataFrame, x: np.ndarray, delta: np.ndarray, cat) -> pd.DataFrame:
        """The rows changed by a plan's numeric deltas and categorical switch."""
        frame = rows.copy()
        for j, c in enumerate(self.num_):
            if np.any(delta[:, j]):
                new = x[:, j] + delta[:, j]
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
        return frame


#: Largest number of plans of one row (``fit`` refuses more), and of (row, plan) pairs of
#: one block of the distance array.
MAX_PLANS = 2**16
_PAIRS_PER_BLOCK = 2**22


def _check_plans(n_plans: int, n_numeric: int, categories: dict) -> None:
    """Refuse, at fit, more plans per row than :data:`MAX_PLANS`."""
    if n_plans <= MAX_PLANS:
        return
    n_cats = sum(len(c) for c in categories.values())
    raise TableTooLargeError(
        f"LinearCounterfactuals would evaluate {n_plans:,} plans per row ({n_numeric:,} "
        f"numeric features: every one and every pair; {n_cats:,} categories, each alone and "
        f"with every numeric feature), beyond {MAX_PLANS:,}. Use generator='kdtree', or "
        "audit a model of fewer features (immutable_features= also removes them)."
    )


def _rule_columns(rule, X: pd.DataFrame) -> dict:
    """The column of ``X`` that each of the rule's input names reads.

    A model fitted without string column names (integer labels, an array) has the
    positional names ``x0, x1, ...``; its rule reads ``X`` by position, as
    :meth:`~skfairverify.LinearRule.decision_function` does.
    """
    names = list(rule.feature_names_in)
    positional = names == [f"x{i}" for i in range(len(names))]
    if positional and not all(isinstance(c, str) for c in X.columns):
        if X.shape[1] != len(names):
            raise ValueError(
                f"The model was fitted without column names on {len(names)} columns, read "
                f"by position; X has {X.shape[1]} columns {list(X.columns)[:10]}."
            )
        return dict(zip(names, X.columns))
    return {c: c for c in names}
