"""Linear models behind their own binning steps are verified exactly (issue 12).

The model's bins become the verifier's states (``rule_bins`` variables), so the integer
rule decides as the model on every row, and the exact rates agree with the sampling
path's certified intervals on the same model.
"""

import numpy as np
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer

from skfairverify import FairnessVerifier
from skfairverify.preprocessing import BinningDiscretizer


def _kbins(encode):
    return KBinsDiscretizer(n_bins=5, encode=encode, strategy="quantile",
                            quantile_method="averaged_inverted_cdf")


@pytest.mark.parametrize("binner", [
    lambda: _kbins("onehot-dense"), lambda: _kbins("onehot"), lambda: _kbins("ordinal"),
    lambda: BinningDiscretizer(n_bins=5)])
def test_binned_linear_pipeline_is_exact_and_agrees_with_sampling(binner, rebuilt,
                                                                  two_group_data):
    X, y = two_group_data(n=3000, z_weight=0.5)
    model = make_pipeline(
        make_column_transformer((binner(), ["x"]), ("passthrough", ["z"])),
        LogisticRegression())
    exact = FairnessVerifier(model, "a", network="independent", n_draws=0,
                             random_state=0).fit(X, y)
    assert exact.method_ == "exact"
    assert exact.agreement_ >= 0.99
    kinds = {v.name: v.kind for v in rebuilt(exact, X, y, evaluate=False).encoding.variables}
    assert kinds["x"] == "rule_bins"
    sampled = FairnessVerifier(model, "a", network="independent", method="sampling",
                               tolerance=0.02, random_state=0).fit(X, y)
    rates = exact.groups_["positive_rate"].to_numpy()
    low, high = sampled.groups_["ci_low"].to_numpy(), sampled.groups_["ci_high"].to_numpy()
    # the two paths quantize the other column differently; allow the sampled interval
    # plus the integer rule's disagreement with the model
    slack = 1 - exact.agreement_ + 0.01
    assert np.all(rates >= low - slack) and np.all(rates <= high + slack)


def test_rule_bins_states_are_the_models_bins(rebuilt, two_group_data):
    """Every row's state is the model's own bin: the contributions reproduce the
    model's decision function up to the quantization of the raw column z."""
    X, y = two_group_data(n=1500, seed=3, z_weight=0.5)
    model = make_pipeline(
        make_column_transformer((_kbins("onehot-dense"), ["x"]), ("passthrough", ["z"])),
        LogisticRegression()).fit(X, y)
    ver = FairnessVerifier(model, "a", network="independent", n_draws=0, n_bins=1000,
                           random_state=0).fit(X, y)
    enc = rebuilt(ver, X, y).encoding
    bins = model[0].named_transformers_["kbinsdiscretizer"].transform(X[["x"]])
    state = enc.codes(X)[:, enc.index("x")]
    np.testing.assert_array_equal(state, bins.argmax(axis=1))
