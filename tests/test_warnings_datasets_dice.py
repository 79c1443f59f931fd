"""Warnings a user can act on: no leaked files, dice-ml muted only where known harmless."""

import gc
import warnings

import numpy as np
import pandas as pd
import pytest

from skfairverify.datasets import load_adult, load_compas, load_german
from skfairverify.datasets._base import open_data_file


@pytest.mark.parametrize("loader", [load_adult, load_german, load_compas])
def test_loaders_close_their_files(loader):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        loader()
        gc.collect()
    leaks = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaks, [str(w.message) for w in leaks]


def test_open_data_file_closes_the_compressed_file_too():
    with open_data_file("german.data") as stream:
        assert stream.read(10)
    assert stream.closed


def _fit_dice(method="random"):
    pytest.importorskip("dice_ml")
    from sklearn.linear_model import LogisticRegression

    from skfairverify.counterfactual import DiceCounterfactuals

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=120), "z": rng.normal(size=120)})
    y = (X.x > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    return DiceCounterfactuals(method, random_state=0).fit(X, model), X, model


def test_dice_known_pandas_deprecations_are_silenced_only():
    from skfairverify.counterfactual._dice import _dice_warnings_filtered

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _dice_warnings_filtered():
            # a known-harmless deprecation attributed to dice_ml: silenced
            warnings.warn_explicit(
                "The inplace keyword in DataFrame.drop_duplicates is deprecated and will "
                "be removed", DeprecationWarning, "dice_random.py", 1,
                module="dice_ml.explainer_interfaces.dice_random")
            # the same message from another module, and another dice_ml warning: kept
            warnings.warn_explicit(
                "The inplace keyword in DataFrame.drop_duplicates is deprecated",
                DeprecationWarning, "mine.py", 1, module="mine")
            warnings.warn_explicit("sklearn backend not in supported backends",
                                   UserWarning, "model.py", 35, module="dice_ml.model")
    messages = [str(w.message) for w in caught]
    assert messages == ["The inplace keyword in DataFrame.drop_duplicates is deprecated",
                        "sklearn backend not in supported backends"]


def test_unrelated_warning_inside_dice_reaches_the_user():
    gen, X, model = _fit_dice()

    class Noisy:
        """The model dice-ml calls warns: the user must see it (stderr is redirected)."""

        def __init__(self, inner):
            self.inner = inner

        def predict(self, X):
            warnings.warn("model drifted: check your inputs", RuntimeWarning, stacklevel=2)
            return self.inner.predict(X)

        def predict_proba(self, X):
            warnings.warn("model drifted: check your inputs", RuntimeWarning, stacklevel=2)
            return self.inner.predict_proba(X)

    gen.explainer_.model.model = Noisy(gen.explainer_.model.model)
    with pytest.warns(RuntimeWarning, match="model drifted"):
        gen.generate(X[model.predict(X) == 0].iloc[:1], k=2)
