"""One rule for matching the values of a column against categories.

Every place that asks "is this value that category?" (the linear rule's indicators
``[x[c] == v]``, :class:`~skfairverify.preprocessing.IntegerWeightScaler`, the
verifier's variables, the counterfactual proximity and the linear counterfactuals)
goes through :func:`match_categories`, so that they can never disagree:

* numbers (Python and NumPy integers, floats and booleans) are equal when they are
  numerically equal: ``1``, ``1.0``, ``True`` and ``np.int64(1)`` are one category;
* strings are equal when they are the same string, and never equal a number:
  ``"1"`` is not ``1``;
* a missing value (``None``, ``NaN``, ``pandas.NA``, ``NaT``) equals only a missing
  category;
* a column (values and categories together) holding a string and a number that print
  alike (``"1"`` and ``1``, ``"1.0"`` and ``1``, ``"True"`` and ``True``) is refused with a
  ValueError naming the column: merging them or keeping them apart would both be a
  guess, and one of the two readings would be silently wrong;
* a pandas ``Categorical`` is read through its values, under the same rule.

The favorable label of binary labels (:func:`positive_label`) is chosen under the same
rule, as scikit-learn's metrics choose it: ``pos_label`` when given, else ``1`` for labels
in ``{0, 1}`` or ``{-1, 1}``; two other labels (``"died"`` / ``"survived"``) without
``pos_label`` are refused, never guessed.
"""

from __future__ import annotations

from numbers import Number

import numpy as np
import pandas as pd

__all__ = ["category_codes", "equals", "match_categories", "positive_label"]

_MISSING = ("missing",)


def _key(value):
    """Hashable key of a value under the matching rule (see the module docstring)."""
    if isinstance(value, (str, np.str_)):
        return ("str", str(value))
    if value is None or value is pd.NA or value is pd.NaT:
        return _MISSING
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Number) and not isinstance(value, complex):
        if value != value:  # NaN
            return _MISSING
        return ("num", value)  # 1 == 1.0 == True: one hash, one key
    if isinstance(value, (float, np.floating)) and np.isnan(value):  # pragma: no cover
        return _MISSING
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"Cannot match the unhashable value {value!r} ({type(value).__name__}) against "
            "categories."
        ) from None
    return ("obj", value)


def _printed(key) -> set[str]:
    """How a number and those equal to it print (``1`` -> ``{"1", "1.0", "True"}``)."""
    v = key[1]
    forms = {str(v)}
    if v == 0 or v == 1:  # True == 1 and False == 0: one category, printed either way
        forms.add(str(bool(v)))
    if isinstance(v, bool) or (isinstance(v, float) and v.is_integer()) or isinstance(v, int):
        try:
            forms |= {str(int(v)), str(float(v))}
        except OverflowError:  # infinity
            pass
    return forms


def _check_ambiguous(keys, name) -> None:
    """Refuse strings that print like one of the numbers (``"1"`` next to ``1``)."""
    numbers = [k for k in keys if k[0] == "num"]
    strings = [k for k in keys if k[0] == "str"]
    if not numbers or not strings:
        return
    printed = {}
    for k in numbers:
        for form in _printed(k):
            printed.setdefault(form, k[1])
    for k in strings:
        s = k[1].strip()
        clash = printed.get(s)
        if clash is None:
            try:
                f = float(s)
            except ValueError:
                continue
            clash = next((k2[1] for k2 in numbers if k2[1] == f), None)
            if clash is None:
                continue
        raise ValueError(
            f"Column {name!r} mixes values that print alike: {clash!r} "
            f"({type(clash).__name__}) and {k[1]!r} (str); a string never equals a number, "
            "so they would be taken for two categories that look the same (or one side "
            "would silently match nothing). Convert the column to one type first, e.g. "
            "X[col] = X[col].astype(str) or pd.to_numeric(X[col])."
        )


def _uniques(values) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of a 1-d array-like as Python objects (missing: code -1)."""
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.array
    if isinstance(values, pd.Categorical):
        values = np.asarray(values, dtype=object)
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.ndim != 1:
        arr = np.asarray(values, dtype=object).ravel()
    if arr.dtype.kind in "SU":
        arr = arr.astype(object)
    codes, uniques = pd.factorize(arr, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


def _present_categories(values) -> tuple[np.ndarray, np.ndarray] | None:
    """``(codes, uniques)`` of a categorical column from its codes, or None for others.

    The categories present in the column are its distinct values (unused ones are left
    out, so that only observed values are checked), in the order of the categories:
    the rows are never converted to Python objects (a 50x speed-up at millions of rows).
    """
    if isinstance(values, pd.Series):
        values = values.array
    if not isinstance(values, pd.Categorical):
        return None
    codes = np.asarray(values.codes, dtype=np.int64)
    cats = np.asarray(values.categories, dtype=object)
    present = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(cats)))
    remap = np.full(len(cats) + 1, -1, dtype=np.int64)  # the last entry: missing (-1)
    remap[present] = np.arange(len(present))
    return remap[codes], cats[present]


def category_codes(values, *, name) -> tuple[np.ndarray, list]:
    """Factorize a column under the matching rule.

    Parameters
    ----------
    values : array-like, Series or Categorical of shape (n_samples,)
        The values of one column.
    name : str
        Name of the column, for the messages.

    Returns
    -------
    codes : ndarray of int64 of shape (n_samples,)
        Index of every value in ``categories``.
    categories : list
        The distinct values in order of first appearance (one representative of each
        group of equal numbers; a missing value, if any, last).

    Raises
    ------
    ValueError
        If the column mixes strings and numbers that print alike.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.utils._categories import category_codes
    >>> codes, cats = category_codes([1, 1.0, True, "a", np.int64(2), None], name="c")
    >>> codes.tolist(), cats
    ([0, 0, 0, 1, 2, 3], [1, 'a', 2, None])
    """
    codes, uniques = _uniques(values)
    keys = [_key(u) for u in uniques]
    _check_ambiguous(keys, name)
    first: dict = {}
    categories: list = []
    remap = np.empty(len(keys), dtype=np.int64)
    for i, (k, u) in enumerate(zip(keys, uniques)):
        if k not in first:
            first[k] = len(categories)
            categories.append(u.item() if isinstance(u, np.generic) else u)
        remap[i] = first[k]
    out = remap[codes] if len(keys) else np.full(len(codes), -1, dtype=np.int64)
    if np.any(codes < 0):
        pos = first.get(_MISSING)
        if pos is None:
            pos = len(categories)
            categories.append(None)
        out = np.where(codes < 0, pos, out)
    return out, categories


def match_categories(values, categories, *, name) -> np.ndarray:
    """Position of every value among ``categories`` under the one matching rule.

    Numbers match numerically (``1``, ``1.0``, ``True``, ``np.int64(1)``), strings match
    strings only, a missing value matches only a missing category; see
    :mod:`skfairverify.utils._categories`.

    Parameters
    ----------
    values : array-like, Series or Categorical of shape (n_samples,)
        The values of one column.
    categories : sequence
        The categories, e.g. a fitted encoder's ``categories_[j]``. They must be
        distinct under the rule.
    name : str
        Name of the column, for the messages.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        The position of each value's category, ``-1`` where none matches.

    Raises
    ------
    ValueError
        If values and categories together mix strings and numbers that print alike
        (``"1"`` and ``1``), or two categories are equal under the rule (``1`` and
        ``1.0``); the message names the column.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.utils._categories import match_categories
    >>> match_categories([1.0, True, np.int64(2), 7, np.nan], [1, 2, np.nan], name="c").tolist()
    [0, 0, 1, -1, 2]
    >>> match_categories(["1", "2"], [1, 2], name="c")
    Traceback (most recent call last):
    ...
    ValueError: Column 'c' mixes values that print alike: 1 (int) and '1' (str); ...
    """
    # Positions do not depend on the order of the uniques: a categorical column is
    # matched by its categories present, the rows never converted to objects.
    codes, uniques = _present_categories(values) or _uniques(values)
    keys = [_key(u) for u in uniques]
    cat_keys = [_key(c) for c in categories]
    _check_ambiguous(cat_keys + keys, name)
    lookup: dict = {}
    for pos, k in enumerate(cat_keys):
        if k in lookup:
            raise ValueError(
                f"Column {name!r}: the categories {categories[lookup[k]]!r} and "
                f"{categories[pos]!r} are equal (numbers match numerically); give each "
                "category once."
            )
        lookup[k] = pos
    remap = np.array([lookup.get(k, -1) for k in keys], dtype=np.int64)
    out = remap[codes] if len(keys) else np.full(len(codes), -1, dtype=np.int64)
    if np.any(codes < 0):
        out = np.where(codes < 0, lookup.get(_MISSING, -1), out)
    return out


def equals(values, category, *, name) -> np.ndarray:
    """``values == category`` under the matching rule, as booleans.

    Parameters
    ----------
    values : array-like, Series or Categorical of shape (n_samples,)
        The values of one column.
    category : object
        One category.
    name : str
        Name of the column, for the messages.

    Returns
    -------
    ndarray of bool of shape (n_samples,)

    Examples
    --------
    >>> from skfairverify.utils._categories import equals
    >>> equals([1, 1.0, True, 0, 2], 1, name="c").tolist()
    [True, True, True, False, False]
    """
    return match_categories(values, [category], name=name) == 0


def _is_numeric_binary(labels) -> bool:
    """Whether every label is a number in ``{0, 1}`` or every one in ``{-1, 1}``."""
    keys = [_key(v) for v in labels]
    if not all(k[0] == "num" for k in keys):
        return False
    values = {k[1] for k in keys}
    return values <= {0, 1} or values <= {-1, 1}


def positive_label(labels, pos_label=None, *, name: str):
    """The favorable label among binary ``labels``, as scikit-learn's metrics choose it.

    Parameters
    ----------
    labels : sequence
        The distinct labels (e.g. a classifier's ``classes_``, or the categories of
        ``y_true`` and ``y_pred`` together), distinct under the matching rule.
    pos_label : object, default=None
        The favorable label. ``None``: ``1`` when the labels are numbers in ``{0, 1}``
        or in ``{-1, 1}`` (booleans included: ``True`` is ``1``); any other labels need
        it.
    name : str
        What the labels are, for the messages (e.g. ``"y_true and y_pred"``).

    Returns
    -------
    object
        The element of ``labels`` matching ``pos_label`` (``1`` matches ``1.0`` and
        ``True``, never ``"1"``); ``pos_label`` itself when it is absent from at most one
        label (e.g. no row has the favorable label).

    Raises
    ------
    ValueError
        More than two labels; two labels other than ``{0, 1}`` / ``{-1, 1}`` without
        ``pos_label``; a ``pos_label`` that is not one of two labels; labels that print
        alike (``1`` and ``"1"``).

    Examples
    --------
    >>> from skfairverify.utils._categories import positive_label
    >>> positive_label([0, 1], name="y")
    1
    >>> positive_label([False, True], name="y")
    True
    >>> positive_label(["died", "survived"], "survived", name="y")
    'survived'
    >>> positive_label(["died", "survived"], name="y")
    Traceback (most recent call last):
    ...
    ValueError: The labels of y are ['died', 'survived'] and pos_label is not given: ...
    """
    labels = list(labels)
    # refuses labels that print alike (1 next to "1"), pos_label included
    category_codes(labels + ([] if pos_label is None else [pos_label]), name=name)
    if len(labels) > 2:
        raise ValueError(
            f"The labels of {name} are {labels[:10]} ({len(labels)} labels); binary labels "
            "are needed: they must contain only 0 and 1 (1 = favorable), or two labels "
            "with pos_label naming the favorable one. Map the labels to two first."
        )
    if pos_label is None:
        if not _is_numeric_binary(labels):
            raise ValueError(
                f"The labels of {name} are {labels} and pos_label is not given: pass "
                "pos_label=<the favorable label> (as scikit-learn's metrics ask), or use "
                "labels in {0, 1} (1 = favorable)."
            )
        pos_label = 1
    position = match_categories([pos_label], labels, name=name)[0]
    if position >= 0:
        return labels[position]
    if len(labels) == 2:
        raise ValueError(f"pos_label={pos_label!r} is not one of the labels {labels} of {name}.")
    return pos_label
