"""
Fairness-constrained grid search on Adult
=========================================

Choose the most accurate model among those that are fair enough, in an ordinary
`GridSearchCV`:

* ``scoring`` holds accuracy and a fairness scorer,
  `skfairverify.metrics.make_verifier_scorer`, which verifies every
  candidate exactly on each validation fold (FVGM: a Bayesian network is learned on
  the fold and the group positive rates are computed over it). Like scikit-learn's
  ``neg_*`` scorers it is greater-is-better: the score is minus the verified
  statistical parity gap ``max_a P(Yhat=1 | A=a) - min_a P(Yhat=1 | A=a)``.
* ``refit=fairness_constrained_refit("acc", "sp", -BOUND)`` picks, among the
  candidates whose mean ``sp`` score is at least ``-BOUND`` (gap at most
  ``BOUND``), the one with the best mean accuracy; if none qualifies it picks the
  closest one and warns.

The grid is over which columns the logistic regression reads (``sex`` and its
strong proxy marital status, each kept or dropped in the ``ColumnTransformer``)
and the regularisation ``C``. UCI Adult, random subsample, features age, years of
education, hours per week, marital status (married / never married / other) and
sex (the sensitive feature).

Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (fewer rows, folds and
candidates).
"""

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import fairness_constrained_refit
from skfairverify.datasets import load_adult
from skfairverify.metrics import make_verifier_scorer
from skfairverify.plotting import plot_constrained_search

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_ROWS = 2000 if QUICK else 6000
BOUND = 0.10  # largest acceptable verified statistical parity gap

adult = load_adult(dropna=True)
X = adult.data.drop(columns="split")
marital = X["marital-status"].astype(str)
X["marital-status"] = np.where(marital.str.startswith("Married"), "married",
                               np.where(marital == "Never-married", "never-married", "other"))
numeric = ["age", "education-num", "hours-per-week"]
rows = np.random.default_rng(0).choice(len(X), N_ROWS, replace=False)
X = X[numeric + ["marital-status", "sex"]].iloc[rows].reset_index(drop=True)
y = np.asarray(adult.target)[rows]

model = make_pipeline(
    ColumnTransformer([
        ("num", StandardScaler(), numeric),
        ("marital", OneHotEncoder(handle_unknown="ignore"), ["marital-status"]),
        ("sex", OneHotEncoder(handle_unknown="ignore"), ["sex"]),
    ]),
    LogisticRegression(max_iter=1000),
)
grid = {
    "columntransformer__marital": [OneHotEncoder(handle_unknown="ignore"), "drop"],
    "columntransformer__sex": [OneHotEncoder(handle_unknown="ignore"), "drop"],
    "logisticregression__C": [1.0] if QUICK else [0.01, 1.0],
}
scoring = {
    "acc": "accuracy",
    "sp": make_verifier_scorer(sensitive_features="sex", metric="statistical_parity",
                               network="learn", max_bins=5, max_multiplier=20,
                               random_state=0),
}
search = GridSearchCV(model, grid, scoring=scoring, cv=2 if QUICK else 3,
                      refit=fairness_constrained_refit("acc", "sp", -BOUND))
search.fit(X, y)

res = pd.DataFrame(search.cv_results_)
table = pd.DataFrame({
    "marital": ["drop" if v == "drop" else "read" for v in res["param_columntransformer__marital"]],
    "sex": ["drop" if v == "drop" else "read" for v in res["param_columntransformer__sex"]],
    "C": res["param_logisticregression__C"].astype(float),
    "accuracy": res["mean_test_acc"],
    "verified SP gap": -res["mean_test_sp"],
})
unconstrained = int(np.argmax(res["mean_test_acc"]))
table["pick"] = ""
table.loc[unconstrained, "pick"] = "most accurate"
table.loc[search.best_index_, "pick"] += f" chosen (SP gap <= {BOUND:.2f})"
print(table.to_string(float_format="{:.3f}".format))
chosen = table.loc[search.best_index_]
best = table.loc[unconstrained]
feasible = int((table["verified SP gap"] <= BOUND).any())
print(f"CHECK bound={BOUND} chosen_sp_gap={chosen['verified SP gap']:.4f} "
      f"chosen_acc={chosen['accuracy']:.4f} unconstrained_sp_gap={best['verified SP gap']:.4f} "
      f"unconstrained_acc={best['accuracy']:.4f} feasible={feasible}")

# %%
# Every candidate's mean accuracy against its mean fairness score (minus the verified
# SP gap): the dashed line is the bound, the step line the Pareto front and the circle
# the candidate the refit chose.
plot_constrained_search(search)
plt.show()
