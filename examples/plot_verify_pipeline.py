"""
Verify a model and a pipeline that drops the sensitive column
=============================================================

FVGM (Ghosh, Basu and Meel, AAAI 2022) verifies a *linear* classifier over a
Bayesian network learned from the data: it computes the exact probability of a
favorable decision for every sensitive group under that distribution, instead of
counting decisions on the rows at hand.

This example trains two logistic regressions on German credit (the favorable
outcome is "good credit", the sensitive feature is ``sex``):

* ``aware``: reads every column, ``sex`` included;
* ``unaware``: a pipeline whose ``ColumnTransformer`` drops ``sex``.
  `skfairverify.sensitive_columns` shows which input columns a fitted
  pipeline never reads, i.e. where fairness *under unawareness* is at stake.

Both are verified with `skfairverify.FairnessVerifier` (each model is
wrapped in `sklearn.frozen.FrozenEstimator` so it is verified as fitted)
and the verified disparate impact (DI = min/max positive rate) and statistical
parity (SP = max - min) are put next to fairlearn's empirical ones
(``MetricFrame`` and ``demographic_parity_ratio`` on the same rows).
Dropping ``sex`` does not make the model blind to it: proxies in the network keep
a gap, which the verifier measures over the whole learned distribution.

Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run: coarser quantisation and no
labels given to the verifier, so it learns one network instead of three (all rows,
``Y = 1`` and ``Y = 0``, the last two for equalized odds).
"""

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    selection_rate,
)
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import FairnessVerifier, sensitive_columns
from skfairverify.datasets import load_german
from skfairverify.plotting import plot_fairness_influence, plot_group_rates

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
# quantile bins of near-constant columns collapse; the verifier handles it

german = load_german()
columns = ["checking_status", "duration", "credit_history", "credit_amount",
           "savings_status", "employment", "age", "housing", "sex"]
X, y = german.data[columns], np.asarray(german.target)
numeric = X.select_dtypes("number").columns.tolist()
categorical = [c for c in columns if c not in numeric]


def make_model(drop=()):
    """One-hot + scaling + logistic regression; columns in ``drop`` are never read."""
    cats = [c for c in categorical if c not in drop]
    return make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), cats),
            (StandardScaler(), numeric),
            remainder="drop",
        ),
        LogisticRegression(max_iter=1000),
    )


models = {"aware": make_model().fit(X, y), "unaware": make_model(drop=["sex"]).fit(X, y)}
print("columns never read by the aware model:  ", sensitive_columns(models["aware"], X))
print("columns never read by the unaware model:", sensitive_columns(models["unaware"], X))
print(f"CHECK unaware_unread={sensitive_columns(models['unaware'], X)}")

labels = None if QUICK else y  # labels add equalized odds (two more networks)
rows, verifiers = [], {}
for name, model in models.items():
    verifier = FairnessVerifier(
        FrozenEstimator(model), "sex", network="learn",
        max_bins=5 if QUICK else 10, max_multiplier=20 if QUICK else 100, random_state=0,
    ).fit(X, labels)
    verifiers[name] = verifier
    pred = model.predict(X)
    frame = MetricFrame(metrics=selection_rate, y_true=y, y_pred=pred,
                        sensitive_features=X["sex"])
    rates = verifier.groups_.set_index("sex")["positive_rate"]
    rows.append({
        "model": name,
        "verified_female": rates["Female"],
        "verified_male": rates["Male"],
        "verified_DI": verifier.metrics_["disparate_impact"],
        "verified_SP": verifier.metrics_["statistical_parity"],
        "verified_EO": verifier.metrics_.get("equalized_odds", np.nan),
        "empirical_female": frame.by_group["Female"],
        "empirical_male": frame.by_group["Male"],
        "empirical_DI": demographic_parity_ratio(y, pred, sensitive_features=X["sex"]),
        "empirical_SP": demographic_parity_difference(y, pred, sensitive_features=X["sex"]),
        "agreement": verifier.agreement_,
    })

table = pd.DataFrame(rows).set_index("model")
with pd.option_context("display.width", 140, "display.precision", 3):
    print(table.T)
for name, row in table.iterrows():
    print(f"CHECK {name} verified_DI={row['verified_DI']:.4f} "
          f"empirical_DI={row['empirical_DI']:.4f}")

# %%
# The verified positive rates of both models (the dashed line is four fifths of the
# largest rate), then the fairness influence of the features on the unaware model:
# the proxies through which ``sex`` still acts.
fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.6), layout="constrained", sharex=True)
for ax, (name, verifier) in zip(axes, verifiers.items()):
    plot_group_rates(verifier, ax=ax)
    ax.set_title(f"{name}: DI {verifier.metrics_['disparate_impact']:.3f}")
plot_fairness_influence(verifiers["unaware"], top=6)
plt.show()
