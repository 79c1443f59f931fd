"""Issue 11, section 3: one category-matching rule for the rule, the scaler and the proximity.

The reference below states the rule independently of the implementation (exact rational
equality of numbers, string identity, missing only equal to missing) and every user of
categories is checked against it on random mixed columns (hypothesis).
"""

import functools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfairverify import linear_rule
from skfairverify.counterfactual._base import _Proximity
from skfairverify.preprocessing import IntegerWeightScaler
from skfairverify.utils._categories import category_codes, equals, match_categories

POOL = [1, 1.0, True, False, 0, np.int64(1), np.float64(1.0), np.bool_(True), "1", "1.0",
        "a", "True", 2, "2", None, np.nan, 0.5, "0.5", "b", np.int32(2)]


def _kind(v):
    if isinstance(v, (str, np.str_)):
        return "str"
    if v is None or (isinstance(v, (float, np.floating)) and np.isnan(v)):
        return "missing"
    return "num"


def ref_equal(a, b) -> bool:
    """The documented rule, stated independently: exact numbers, strings, missing."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == "missing":
        return True
    if ka == "str":
        return str(a) == str(b)
    return Fraction(int(a) if isinstance(a, (bool, np.bool_)) else a) == Fraction(
        int(b) if isinstance(b, (bool, np.bool_)) else b)


def ref_ambiguous(values) -> bool:
    """Some string prints like, or parses to, one of the numbers."""
    nums = [v for v in values if _kind(v) == "num"]
    for s in (v for v in values if _kind(v) == "str"):
        for n in nums:
            forms = {str(n), str(n.item() if isinstance(n, np.generic) else n)}
            if float(n).is_integer():
                forms |= {str(int(n)), str(float(n))}
            if float(n) in (0.0, 1.0):  # equal to False / True, which print so
                forms.add(str(float(n) == 1.0))
            try:
                parsed = float(s) == float(n)
            except ValueError:
                parsed = False
            if s in forms or parsed:
                return True
    return False


def _distinct(cats):
    out = []
    for c in cats:
        if not any(ref_equal(c, o) for o in out):
            out.append(c)
    return out


column = st.lists(st.sampled_from(POOL), min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(values=column, cats=st.lists(st.sampled_from(POOL), min_size=1, max_size=6))
def test_match_categories_is_the_reference_rule(values, cats):
    cats = _distinct(cats)
    if ref_ambiguous(list(values) + cats):
        with pytest.raises(ValueError, match="print alike"):
            match_categories(np.asarray(values, dtype=object), cats, name="col")
        return
    codes = match_categories(np.asarray(values, dtype=object), cats, name="col")
    expected = [next((k for k, c in enumerate(cats) if ref_equal(v, c)), -1) for v in values]
    assert codes.tolist() == expected
    for k, c in enumerate(cats):  # equals() is the same rule, one category at a time
        assert equals(np.asarray(values, dtype=object), c, name="col").tolist() == [
            e == k for e in expected]


@settings(max_examples=200, deadline=None)
@given(values=column)
def test_category_codes_groups_exactly_the_equal_values(values):
    arr = np.asarray(values, dtype=object)
    if ref_ambiguous(values):
        with pytest.raises(ValueError, match="'col'"):
            category_codes(arr, name="col")
        return
    codes, cats = category_codes(arr, name="col")
    for i, a in enumerate(values):
        assert ref_equal(a, cats[codes[i]])
        for j, b in enumerate(values):
            assert (codes[i] == codes[j]) == ref_equal(a, b)


def test_pandas_categorical_is_read_through_its_values():
    col = pd.Series(pd.Categorical(["a", "b", None, "a"]))
    assert match_categories(col, ["b", "a"], name="c").tolist() == [1, 0, -1, 1]
    num = pd.Series(pd.Categorical([1, 2, 1]))
    assert match_categories(num, [2.0, True], name="c").tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="Column 'c' mixes"):
        match_categories(num, ["1", "2"], name="c")


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.sampled_from(["a", "b", "c", None]), min_size=0, max_size=12),
       unused=st.lists(st.sampled_from(["d", "1"]), max_size=2, unique=True),
       cats=st.lists(st.sampled_from(["a", "b", "d", np.nan, 1]), min_size=1, max_size=4,
                     unique=True))
def test_categorical_column_matches_as_its_values(values, unused, cats):
    """The categorical fast path (codes, never the rows as objects) is the rule itself:
    the same positions and the same refusals as the values as objects, whatever the
    unused categories of the dtype."""
    dtype = sorted({v for v in values if v is not None} | set(unused))
    col = pd.Series(pd.Categorical(values, categories=dtype))
    try:
        expected = match_categories(np.asarray(values, dtype=object), cats, name="c")
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)[:20]):
            match_categories(col, cats, name="c")
        return
    assert match_categories(col, cats, name="c").tolist() == expected.tolist()


def test_equal_categories_are_refused():
    with pytest.raises(ValueError, match="categories 1 and 1.0 are equal"):
        match_categories([1], [1, 1.0], name="c")


# ------------------------------------------------- the users agree with the rule

@functools.cache
def _fitted(which):
    model, X = _one_hot_model(TRAININGS[which])
    scaler = IntegerWeightScaler(model).fit(X, np.arange(len(X)) % 2)
    return model, X, scaler, _Proximity(X, ["c", "x"])


def _one_hot_model(train_col):
    X = pd.DataFrame({"c": pd.Series(train_col, dtype=object), "x": np.arange(len(train_col))})
    y = np.arange(len(train_col)) % 2
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["c"]), ("passthrough", ["x"])),
        LogisticRegression(C=100.0),
    ).fit(X, y)
    return model, X


TRAININGS = [[1, 2, 3, 1, 2, 3], ["1", "2", "3", "1", "2", "3"], ["a", "b", "a", "b"],
             [True, False, True, False]]
QUERY = st.lists(st.sampled_from([1, 2, 3, 1.0, np.int64(2), True, False, "1", "2", "a",
                                  "b", "z", 7]), min_size=1, max_size=10)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(TRAININGS) - 1), query=QUERY)
def test_rule_scaler_and_proximity_never_disagree_about_1_and_str_1(which, query):
    model, X, scaler, prox = _fitted(which)
    rule = linear_rule(model)
    cats = rule.categorical_features["c"]
    Q = pd.DataFrame({"c": pd.Series(query, dtype=object), "x": np.zeros(len(query))})
    ambiguous = ref_ambiguous(list(query) + list(cats))
    users = {
        "rule": lambda: rule.decision_function(Q),
        "scaler": lambda: scaler.decision_function(Q),
        "proximity": lambda: prox.encode(Q),
    }
    if ambiguous:  # every user refuses, naming the column
        for _name, call in users.items():
            with pytest.raises(ValueError, match="Column 'c' mixes"):
                call()
        return
    expected = np.array([[ref_equal(v, c) for c in cats] for v in query], dtype=float)
    coef = rule.category_coef("c").to_numpy()
    np.testing.assert_allclose(rule.decision_function(Q) - rule.intercept,
                               expected @ coef + 0.0 * Q.x.to_numpy(),
                               atol=1e-12)
    # the integer rule's decision at x = 0: the coefficients of the categories matched
    np.testing.assert_array_equal(scaler.decision_function(Q) - scaler.intercept_[0],
                                  expected @ scaler.coef_[0, 1:])  # term 0 is x
    pcats = prox.categories["c"]
    pexp = np.array([[ref_equal(v, c) for c in pcats] for v in query], dtype=float) * 0.5
    np.testing.assert_array_equal(prox.encode(Q)[:, 1:], pexp)
    # Where the pipeline itself answers (no unknown category), the rule equals it.
    if expected.sum(axis=1).min() == 1 and all(_kind(v) == _kind(cats[0]) for v in query):
        try:
            direct = model.decision_function(Q)
        except (ValueError, TypeError):
            return
        np.testing.assert_allclose(rule.decision_function(Q), direct, atol=1e-9)


def test_proximity_distance_uses_the_rule():
    X = pd.DataFrame({"c": pd.Series([1, 2, 1], dtype=object)})
    prox = _Proximity(X, ["c"])
    A = pd.DataFrame({"c": pd.Series([1, 2, True], dtype=object)})
    B = pd.DataFrame({"c": pd.Series([1.0, 1, 1], dtype=object)})
    assert prox.distance(A, B).tolist() == [0.0, 1.0, 0.0]


def test_verifier_encoding_agrees_with_the_rule():
    from skfairverify.verification._variables import _map_categories

    with pytest.raises(ValueError, match="mixes"):
        _map_categories(pd.Series(["1", "2"], dtype=object), [1, 2], "c")
