"""
Counterfactual fairness (CFlips / nDCCF) across model families
==============================================================

Cornacchia et al. (*Counterfactual Fair Opportunity*) audit a model that never
reads the sensitive feature (fairness *under unawareness*): for every person the
model refuses, generate ``k`` counterfactuals that it would accept, ranked by
distance, and ask a classifier of the sensitive group from the other columns which
group each counterfactual looks like.

* **CFlips@k**: share of a person's counterfactuals that look like the *other*
  group. When the unprivileged need to look privileged to be accepted, their
  CFlips is high while the privileged's is low.
* **nDCCF@k**: a discounted gain of the counterfactuals that do *not* flip,
  normalised by the ideal ranking without flips: 1 means no counterfactual changes
  group, and a flip at the top of the ranking costs more than one further down.

`skfairverify.CounterfactualFairness` computes both per group and their
gaps (``delta``, CFlips unprivileged minus privileged and nDCCF privileged minus
unprivileged: positive means the unprivileged are pushed to look privileged).
The privileged group is the one the fitted model accepts more often.

Setting of the paper: UCI Adult, sensitive feature ``sex``, the decision model
trained without ``sex`` (the pipelines drop it), and five model families: logistic
regression, linear SVM, decision tree, random forest and a multilayer perceptron.
Counterfactuals come from the fast ``"kdtree"`` generator (nearest accepted
training rows, ``sex`` kept); the sensitive classifier is a logistic regression,
*cross-fitted* by each audit over 5 folds of the training rows, so that no
counterfactual (a training row) is judged by a model fitted on it; its held-out
precision and recall per group are printed, since every CFlips value depends on
them. Random subsample of Adult; the audit runs on held-out rows.

Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (fewer rows, smaller k and
smaller models).
"""

import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skfairverify import CounterfactualFairness
from skfairverify.datasets import load_adult
from skfairverify.plotting import plot_cflips_at_k

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_ROWS = 2000 if QUICK else 6000
K = 5 if QUICK else 10

adult = load_adult(dropna=True)
X = adult.data.drop(columns="split")
numeric = ["age", "education-num", "hours-per-week", "capital-gain"]
categorical = ["marital-status", "occupation", "relationship"]
rows = np.random.default_rng(0).choice(len(X), N_ROWS, replace=False)
X = X[numeric + categorical + ["sex"]].iloc[rows].reset_index(drop=True)
for col in categorical + ["sex"]:
    X[col] = X[col].astype(str)
y = np.asarray(adult.target)[rows]
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y)


def unaware(classifier):
    """``classifier`` after one-hot encoding and scaling, never reading ``sex``."""
    return make_pipeline(
        make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categorical),
                                (StandardScaler(), numeric), remainder="drop"),
        classifier,
    )


families = {
    "LR": LogisticRegression(max_iter=1000),
    "SVM": LinearSVC(),
    "DT": DecisionTreeClassifier(max_depth=8, random_state=0),
    "RF": RandomForestClassifier(n_estimators=20 if QUICK else 50, max_depth=10,
                                 random_state=0),
    "MLP": MLPClassifier(hidden_layer_sizes=(16,) if QUICK else (32,),
                         max_iter=200 if QUICK else 400, random_state=0),
}

sex_classifier = unaware(LogisticRegression(max_iter=1000))  # unfitted: cross-fitted

rows = []
with warnings.catch_warnings():
    # the small MLP may stop before converging; a group without refused rows is
    # reported as NaN in the table (the audit warns about it)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", message="No refused row with a counterfactual",
                            category=UserWarning)
    for name, clf in families.items():
        audit = CounterfactualFairness(unaware(clf), sensitive_features="sex", k=K,
                                       sensitive_classifier=sex_classifier,
                                       random_state=0).fit(X_train, y_train)
        res = audit.evaluate(X_test)  # a CounterfactualResult
        rows.append({
            "model": name,
            "accuracy": audit.estimator_.score(X_test, y_test),
            "privileged": audit.privileged_,
            "CFlips priv.": res.cflips["privileged"],
            "CFlips unpriv.": res.cflips["unprivileged"],
            "CFlips delta": res.cflips["delta"],
            "nDCCF priv.": res.ndccf["privileged"],
            "nDCCF unpriv.": res.ndccf["unprivileged"],
            "nDCCF delta": res.ndccf["delta"],
            "refused (priv./unpriv.)": "{privileged}/{unprivileged}".format(**res.n_refused),
        })

print(f"Last audit ({name}), one row per group:")
print(res)
print(res.to_frame().to_string(float_format="{:.3f}".format))
print("Sensitive classifier, held out (out of fold) on the training rows:")
print(res.sensitive_classifier["by_group"].to_string(float_format="{:.3f}".format))
table = pd.DataFrame(rows).set_index("model")
print(f"CFlips@{K} and nDCCF@{K} on held-out rows (sensitive feature: sex)")
print(table.to_string(float_format="{:.3f}".format))
for name, row in table.iterrows():
    print(f"CHECK model={name} cflips_delta={row['CFlips delta']:.4f} "
          f"ndccf_delta={row['nDCCF delta']:.4f}")

# %%
# CFlips@k of the refused women and men for each model family (0 is fair: no
# counterfactual has to change group), then the CFlips@k curves of the last audit.
fig, ax = plt.subplots(figsize=(6.5, 3.0), layout="constrained")
cflips = table[["CFlips priv.", "CFlips unpriv."]].rename(
    columns={"CFlips priv.": "privileged", "CFlips unpriv.": "unprivileged"})
cflips.plot.barh(ax=ax, color=["tab:blue", "tab:orange"])
ax.invert_yaxis()
ax.set_xlabel(f"CFlips@{K} (share of counterfactuals that look like the other group)")
ax.set_title("Counterfactual flips per model family (Adult, sex)")
ax.legend(title="refused group", loc="upper left", bbox_to_anchor=(1.01, 1.0),
          frameon=False)
plot_cflips_at_k(res)
plt.show()
