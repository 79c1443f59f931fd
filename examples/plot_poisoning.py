"""
Detect a fairness poisoning attack with the verifier
====================================================

FVGM (Ghosh, Basu and Meel, AAAI 2022, Section 5, Figure 5) verifies a classifier
re-trained after an attacker injected poisoned rows into its training data, in
growing numbers, and raises an alarm once the verified disparate impact (DI) falls
under an acceptable threshold of 0.9.

The attack here is a simple label-poisoning one (FVGM used the attack of Solans et
al., 2020): the attacker adds copies of real rows of women from the training data
with the unfavorable label ("bad credit"). The model is a logistic regression on
German credit that never reads ``sex`` (its ``ColumnTransformer`` drops it), so the
attack can only act through proxies of ``sex``; the verifier still sees it, because
it computes the exact group positive rates over a Bayesian network learned from the
clean data (the population the model is deployed on).

Each line of the table is one re-training; ``ALARM`` marks a verified DI under 0.9.
Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (fewer attack sizes).
"""

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import FairnessVerifier, sensitive_columns
from skfairverify.datasets import load_german

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_POISONED = [0, 50, 400] if QUICK else [0, 25, 50, 100, 200, 300, 400]
DI_THRESHOLD = 0.9

german = load_german()
columns = ["checking_status", "duration", "credit_history", "credit_amount",
           "savings_status", "employment", "age", "housing", "sex"]
X, y = german.data[columns], np.asarray(german.target)
numeric = X.select_dtypes("number").columns.tolist()
read = [c for c in columns if c not in numeric and c != "sex"]
model = make_pipeline(
    make_column_transformer((OneHotEncoder(handle_unknown="ignore"), read),
                            (StandardScaler(), numeric), remainder="drop"),
    LogisticRegression(max_iter=1000),
)

women = np.flatnonzero((X["sex"] == "Female").to_numpy())
# the rows the attacker copies with label 0; each attack extends the previous one
pool = np.random.default_rng(0).choice(women, max(N_POISONED))
rows = []
for n_poisoned in N_POISONED:
    copies = pool[:n_poisoned]
    X_train = pd.concat([X, X.iloc[copies]], ignore_index=True)
    y_train = np.concatenate([y, np.zeros(n_poisoned, dtype=y.dtype)])
    fitted = model.fit(X_train, y_train)
    assert sensitive_columns(fitted, X) == ["sex"]
    verifier = FairnessVerifier(
        FrozenEstimator(fitted), "sex", network="learn", max_bins=10, max_multiplier=100,
        random_state=0,
    ).fit(X)  # verified over the clean population
    di = verifier.metrics_["disparate_impact"]
    rows.append({
        "poisoned rows": n_poisoned,
        "accuracy (clean)": fitted.score(X, y),
        "verified DI": di,
        "verified SP": verifier.metrics_["statistical_parity"],
        "status": "ALARM" if di < DI_THRESHOLD else "ok",
    })
    print(f"CHECK n_poisoned={n_poisoned} DI={di:.4f} status={rows[-1]['status']}")

table = pd.DataFrame(rows).set_index("poisoned rows")
print(table.to_string(float_format="{:.3f}".format))
first = table.index[table["status"] == "ALARM"]
if len(first):
    print(f"ALARM: verified DI under {DI_THRESHOLD} from {first[0]} poisoned rows on")
else:
    print(f"no alarm: verified DI stayed at or above {DI_THRESHOLD}")

# %%
# The verified DI of each re-trained model against the number of poisoned rows; the
# red crosses raise the alarm.
fig, ax = plt.subplots(figsize=(6.5, 3.2), layout="constrained")
alarm = table["status"] == "ALARM"
ax.plot(table.index, table["verified DI"], "-", color="tab:blue")
ax.plot(table.index[~alarm], table["verified DI"][~alarm], "o", color="tab:blue", label="ok")
ax.plot(table.index[alarm], table["verified DI"][alarm], "x", color="tab:red", ms=9,
        mew=2, label="ALARM")
ax.axhline(DI_THRESHOLD, color="k", ls="--", lw=1, label=f"threshold {DI_THRESHOLD}")
ax.set_xlabel("poisoned rows added to the 1,000 training rows")
ax.set_ylabel("verified disparate impact")
ax.set_title("Verified DI under a growing poisoning attack (German credit, sex)")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
plt.show()
