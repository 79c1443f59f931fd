"""Sets of values of one raw column: unions of intervals, sets of categories.

The tree reader states every leaf of a decision tree as a product of such sets, one
per raw column it splits on. All intervals are left-open and right-closed,
``(lo, hi]``, as scikit-learn's ``x <= t`` goes left.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..utils._categories import match_categories

__all__ = ["CategorySet", "Intervals"]

_INF = float("inf")


# ------------------------------------------------------------------------ constraints
@dataclass(frozen=True)
class Intervals:
    """A union of disjoint intervals ``(lo, hi]`` of a numeric column, sorted.

    ``missing`` says whether a missing value is in the set: the side of a split that a
    missing value takes (the imputed value's side behind an imputer, else the tree's
    own ``missing_go_to_left``).

    Examples
    --------
    >>> from skfairverify.rules import Intervals
    >>> a = Intervals(((-float("inf"), 2.0),))
    >>> (~a).bounds
    ((2.0, inf),)
    >>> (a & Intervals(((1.0, 5.0),))).bounds
    ((1.0, 2.0),)
    >>> a.contains([1.0, 2.0, 2.5]).tolist()
    [True, True, False]
    """

    bounds: tuple[tuple[float, float], ...]
    missing: bool = False  # whether a missing value (NaN) is in the set

    @classmethod
    def everything(cls) -> Intervals:
        return cls(((-_INF, _INF),), True)

    @property
    def is_empty(self) -> bool:
        return not self.bounds and not self.missing

    def __and__(self, other: Intervals) -> Intervals:
        out = []
        for lo, hi in self.bounds:
            for lo2, hi2 in other.bounds:
                a, b = max(lo, lo2), min(hi, hi2)
                if a < b:
                    out.append((a, b))
        return Intervals(tuple(sorted(out)), self.missing and other.missing)

    def __or__(self, other: Intervals) -> Intervals:
        return ~((~self) & (~other))

    def __invert__(self) -> Intervals:
        out, start = [], -_INF
        for lo, hi in self.bounds:
            if lo > start:
                out.append((start, lo))
            start = hi
        if start < _INF:
            out.append((start, _INF))
        return Intervals(tuple(out), not self.missing)

    def contains(self, x) -> np.ndarray:
        """Whether each value of ``x`` lies in the union (a missing one: ``missing``)."""
        x = np.asarray(x, dtype=float)
        out = np.zeros(x.shape, dtype=bool)
        for lo, hi in self.bounds:
            out |= (x > lo) & (x <= hi)
        return np.where(np.isnan(x), self.missing, out)

    def covers(self, lo: float, hi: float) -> bool | None:
        """Whether the cell ``(lo, hi]`` is inside (True), outside (False) or neither (None)."""
        inside = any(a <= lo and hi <= b for a, b in self.bounds)
        if inside:
            return True
        overlaps = any(max(a, lo) < min(b, hi) for a, b in self.bounds)
        return None if overlaps else False

    def finite_bounds(self) -> set[float]:
        return {v for pair in self.bounds for v in pair if np.isfinite(v)}


@dataclass(frozen=True)
class CategorySet:
    """A set of categories of a one-hot encoded column.

    ``values`` are allowed categories among the encoder's ``universe``; ``others``
    says whether a category the encoder does not know (all indicators 0 with
    ``handle_unknown="ignore"``) is allowed.

    Examples
    --------
    >>> from skfairverify.rules import CategorySet
    >>> s = CategorySet(frozenset({"a"}), False, frozenset({"a", "b", "c"}))
    >>> sorted((~s).values), (~s).others
    (['b', 'c'], True)
    >>> s.contains(["a", "b", "z"]).tolist()
    [True, False, False]
    """

    values: frozenset
    others: bool
    universe: frozenset = field(repr=False)

    @classmethod
    def everything(cls, universe) -> CategorySet:
        universe = frozenset(universe)
        return cls(universe, True, universe)

    @property
    def is_empty(self) -> bool:
        return not self.values and not self.others

    def __and__(self, other: CategorySet) -> CategorySet:
        return CategorySet(self.values & other.values, self.others and other.others,
                           self.universe)

    def __or__(self, other: CategorySet) -> CategorySet:
        return CategorySet(self.values | other.values, self.others or other.others,
                           self.universe)

    def __invert__(self) -> CategorySet:
        return CategorySet(self.universe - self.values, not self.others, self.universe)

    def contains(self, x, name="column") -> np.ndarray:
        """Whether each value of ``x`` is in the set.

        The package's one matching rule: numbers match numerically, strings only
        strings (see ``utils._categories``).
        """
        cats = list(self.universe)
        allowed = np.array([c in self.values for c in cats] + [self.others], dtype=bool)
        return allowed[match_categories(x, cats, name=name)]  # -1: not a known category

    def contains_one(self, value, name="column") -> bool:
        """Whether one category is in the set."""
        return bool(self.contains(np.array([value], dtype=object), name)[0])
