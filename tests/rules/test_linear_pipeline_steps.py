"""Issue 12, first bullet: linear_rule reads binning, identity and integer-weight steps.

Each rule is compared with the pipeline's own ``decision_function`` (the independent
computation) on random data, on values beyond the outer edges and exactly on the edges.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    StandardScaler,
)

from skfairverify import linear_rule
from skfairverify.preprocessing import BinningDiscretizer, IntegerWeightScaler


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.exponential(size=n),
        "k": rng.integers(0, 6, n).astype(float),  # repeated values: merged quantile bins
        "c": rng.choice(["u", "v", "w"], n),
    })
    y = (X.a + np.log1p(X.b) - 0.3 * X.k + (X.c == "u") + rng.normal(size=n) > 0).astype(int)
    return X, y


def _probe(X, rule, seed=1):
    """Random rows, rows beyond the outer edges, and rows exactly on every bin edge."""
    rng = np.random.default_rng(seed)
    n = 200
    Q = pd.DataFrame({
        "a": rng.normal(scale=2.0, size=n),
        "b": rng.exponential(scale=2.0, size=n),
        "k": rng.integers(-1, 8, n).astype(float),
        "c": rng.choice(["u", "v", "w"], n),
    })
    edge_rows = []
    for col, edges in rule.binned_features.items():
        for e in edges:
            row = X.iloc[0].copy()
            row[col] = e
            edge_rows.append(row)
    return pd.concat([Q, pd.DataFrame(edge_rows)], ignore_index=True).astype(X.dtypes)


KBINS = [
    KBinsDiscretizer(n_bins=4, encode=enc, strategy=strat, quantile_method="linear",
                     subsample=None, random_state=0)
    for enc in ("onehot", "onehot-dense", "ordinal")
    for strat in ("uniform", "quantile", "kmeans")
]
BINNERS = [*KBINS, BinningDiscretizer(n_bins=5),
           BinningDiscretizer(n_bins=3, strategy="uniform")]


def _label(step):
    if isinstance(step, KBinsDiscretizer):
        return f"KBins-{step.encode}-{step.strategy}"
    return f"Binning-{step.n_bins}-{step.strategy}"


@pytest.mark.parametrize("binner", BINNERS, ids=_label)
def test_binned_columns_are_read_exactly(binner):
    X, y = _data()
    model = make_pipeline(
        make_column_transformer(
            (binner, ["a", "b", "k"]),
            (OneHotEncoder(), ["c"]),
        ),
        LogisticRegression(max_iter=1000),
    ).fit(X, y)
    rule = linear_rule(model, read_bins=True)
    assert set(rule.binned_features) == {"a", "b", "k"}
    assert rule.numeric_features == [] and list(rule.categorical_features) == ["c"]
    Q = _probe(X, rule)
    np.testing.assert_allclose(rule.decision_function(Q), model.decision_function(Q),
                               rtol=0, atol=1e-9)
    # one coefficient per bin, with the fitted edges
    trans = model[0].named_transformers_[type(binner).__name__.lower()]
    for j, col in enumerate(["a", "b", "k"]):
        np.testing.assert_array_equal(rule.binned_features[col], trans.bin_edges_[j])
        assert len(rule.bin_coef(col)) == len(trans.bin_edges_[j]) - 1


def test_ordinal_bins_are_the_bin_index_times_the_weight():
    X, y = _data()
    model = make_pipeline(KBinsDiscretizer(n_bins=3, encode="ordinal",
                                           quantile_method="linear"),
                          StandardScaler(), LogisticRegression()).fit(X[["a"]], y)
    rule = linear_rule(model, read_bins=True)
    w = model[-1].coef_[0, 0] / model[1].scale_[0]
    # closed form: bin k contributes w * (k - mean) ... the intercept takes the mean
    np.testing.assert_allclose(np.diff(rule.bin_coef("a").to_numpy()), [w, w], rtol=1e-12)


def test_binning_directly_on_the_pipeline_and_with_identity_steps():
    X, y = _data()
    num = X[["a", "b"]]
    model = make_pipeline(FunctionTransformer(), BinningDiscretizer(n_bins=4),
                          FunctionTransformer(), LogisticRegression()).fit(num, y)
    rule = linear_rule(model, read_bins=True)
    Q = _probe(num, rule)[["a", "b"]]
    np.testing.assert_allclose(rule.decision_function(Q), model.decision_function(Q),
                               rtol=0, atol=1e-9)


def test_identity_function_transformer_is_read_and_others_are_refused():
    X, y = _data()
    num = X[["a", "b"]]
    ident = make_pipeline(FunctionTransformer(), LogisticRegression()).fit(num, y)
    np.testing.assert_allclose(linear_rule(ident).decision_function(num),
                               ident.decision_function(num), atol=1e-12)
    logged = make_pipeline(FunctionTransformer(np.exp), LogisticRegression()).fit(num, y)
    with pytest.raises(TypeError, match=r"FunctionTransformer\(func=exp\).*identity"):
        linear_rule(logged)


def test_binning_is_refused_unless_read_bins():
    X, y = _data()
    model = make_pipeline(BinningDiscretizer(n_bins=3), LogisticRegression()).fit(
        X[["a"]], y)
    with pytest.raises(TypeError, match=r"bins the column\(s\) \['a'\].*read_bins=True"):
        linear_rule(model)


def test_two_different_binnings_of_one_column_are_refused():
    X, y = _data()
    model = make_pipeline(
        make_column_transformer((BinningDiscretizer(n_bins=3), ["a"]),
                                (BinningDiscretizer(n_bins=4), ["a"])),
        LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match="bins the column 'a' with other edges"):
        linear_rule(model, read_bins=True)


def test_a_numeric_and_a_binned_reading_of_one_column_add_up():
    X, y = _data()
    model = make_pipeline(
        make_column_transformer((BinningDiscretizer(n_bins=3), ["a"]),
                                ("passthrough", ["a", "b"])),
        LogisticRegression()).fit(X, y)
    rule = linear_rule(model, read_bins=True)
    assert rule.numeric_features == ["a", "b"] and list(rule.binned_features) == ["a"]
    Q = _probe(X, rule)
    np.testing.assert_allclose(rule.decision_function(Q), model.decision_function(Q),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("inner", ["plain", "binned"])
def test_integer_weight_scaler_as_a_step_and_as_the_final_step(inner):
    X, y = _data()
    pre = (make_column_transformer((BinningDiscretizer(n_bins=4), ["a", "b"]),
                                   (OneHotEncoder(), ["c"]), ("passthrough", ["k"]))
           if inner == "binned" else
           make_column_transformer((StandardScaler(), ["a", "b", "k"]),
                                   (OneHotEncoder(), ["c"])))
    base = make_pipeline(pre, LogisticRegression(max_iter=1000))
    scaler = IntegerWeightScaler(base, max_multiplier=30).fit(X, y)
    final_rule = linear_rule(scaler, read_bins=True)
    Q = _probe(X, final_rule)
    np.testing.assert_allclose(final_rule.decision_function(Q), scaler.decision_function(Q),
                               rtol=0, atol=1e-9)
    # integer weights: every coefficient of the rule is an integer
    np.testing.assert_array_equal(final_rule.coef, np.rint(final_rule.coef))
    stacked = make_pipeline(IntegerWeightScaler(base, max_multiplier=30),
                            LogisticRegression()).fit(X, y)
    rule = linear_rule(stacked, read_bins=True)
    np.testing.assert_allclose(rule.decision_function(Q), stacked.decision_function(Q),
                               rtol=0, atol=1e-9)


def test_integer_weight_scaler_reads_a_binned_pipeline():
    X, y = _data()
    base = make_pipeline(BinningDiscretizer(n_bins=5), LogisticRegression())
    scaler = IntegerWeightScaler(base, max_multiplier=50).fit(X[["a", "b"]], y)
    assert [t.kind for t in scaler.rule_.terms] == ["bin"] * 10
    assert scaler.agreement_ > 0.95
    # transform rows sum to the decision minus the intercept
    T = scaler.transform(X[["a", "b"]])
    np.testing.assert_allclose(T.sum(axis=1) + scaler.intercept_[0],
                               scaler.decision_function(X[["a", "b"]]), atol=1e-9)


def test_sensitive_columns_counts_binned_columns_as_read():
    from skfairverify import sensitive_columns

    X, y = _data()
    model = make_pipeline(
        make_column_transformer((BinningDiscretizer(n_bins=3), ["a"]),
                                (OneHotEncoder(), ["c"])),
        LogisticRegression()).fit(X, y)
    assert sensitive_columns(model, X) == ["b", "k"]


def test_ordinal_encoder_codes_a_missing_value_by_its_encoded_missing_value():
    """A missing category seen in fit takes ``encoded_missing_value`` (not its index in
    ``categories_``): the rule decides every row as the pipeline does."""
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(0)
    n = 1000
    X = pd.DataFrame({"c": rng.choice(["p", "q", "r"], n), "x": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.3, "c"] = np.nan
    y = ((X["x"] - 3 * X["c"].isna() + (X["c"] == "r") + rng.normal(size=n)) > 0)
    for missing in (-1, 5):
        model = make_pipeline(make_column_transformer(
            (OrdinalEncoder(encoded_missing_value=missing), ["c"]), remainder="passthrough"),
            LogisticRegression()).fit(X, y)
        rule = linear_rule(model)
        np.testing.assert_array_equal(rule.predict(X), model.predict(X))
        assert X["c"].isna().any() and (model.predict(X[X["c"].isna()]) == 0).mean() > 0.5


@pytest.mark.parametrize("encoder, match", [
    ({"handle_unknown": "use_encoded_value", "unknown_value": -1},
     "no term for a category the encoder does not know"),
    ({"min_frequency": 200}, "infrequent categories"),
])
def test_ordinal_encoder_options_a_rule_cannot_hold_are_refused(encoder, match):
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"c": rng.choice(["p", "q", "r", "s"], 600, p=[0.6, 0.2, 0.1, 0.1]),
                      "x": rng.normal(size=600)})
    y = X["x"] + (X["c"] == "q") > 0
    model = make_pipeline(make_column_transformer((OrdinalEncoder(**encoder), ["c"]),
                                                  remainder="passthrough"),
                          LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match=match):
        linear_rule(model)
