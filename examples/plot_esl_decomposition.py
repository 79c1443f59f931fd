"""
Two-stage ESL decomposition of the gender gap on Adult
======================================================

Amri-Jouidel, Kemel et al. (*Shapley meets Rawls*) measure and explain group
unfairness with ESL (Efficient-Symmetric-Linear) values:

1. **First stage** (`skfairverify.group_esl`): the groups (women, men) are
   the players; the worth of a set of groups is the true positive rate (TPR) of
   the classifier on their rows divided by 0.5 (a random classifier's TPR). Equal
   group values is equal opportunity (Theorems 3.1 and 4.1), tested with a Wald
   test on plug-in (delta-method) variances. Values are in ESL units (TPR / 0.5):
   for two groups the difference of the values is twice the raw TPR gap.
2. **Second stage** (`skfairverify.esl_decomposition`): for each group, the
   features are the players; the worth of a set of features is the group's
   first-stage value for the model re-fitted on those features only. A feature
   whose contribution differs significantly between the groups drives the gap;
   it is flagged when a majority of the five ESL members (Shapley, Equal Surplus,
   Solidarity, Consensus, LSP) reject equality.

Setting of the paper's Section 5: UCI Adult, 70/30 train-test split, features age,
years of education, hours per week and marital status (married / never married /
other), sensitive feature sex, a soft-voting ensemble (here logistic regression,
decision tree and random forest; the paper adds XGBoost and a linear SVM). A random
subsample of Adult is used. Efficiency means each group's contributions add up to
its first-stage value; the script checks it.

Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (fewer rows, smaller ensemble).
"""

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.ensemble import RandomForestClassifier, VotingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skfairverify import esl_decomposition
from skfairverify.datasets import load_adult
from skfairverify.plotting import plot_esl_contributions, plot_esl_intervals

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_ROWS = 4000 if QUICK else 15000

adult = load_adult(dropna=True)
X = adult.data.drop(columns="split")
marital = X["marital-status"].astype(str)
X["marital-status"] = np.where(marital.str.startswith("Married"), "married",
                               np.where(marital == "Never-married", "never-married", "other"))
features = ["age", "education-num", "hours-per-week", "marital-status"]
rows = np.random.default_rng(0).choice(len(X), N_ROWS, replace=False)
X = X[features + ["sex"]].iloc[rows].reset_index(drop=True)
X["sex"] = X["sex"].astype(str)
y = np.asarray(adult.target)[rows]

# Every coalition model is a clone fitted on a subset of the columns: the column
# selectors pick whatever numeric / text columns the subset has.
voters = [("lr", LogisticRegression(max_iter=1000)),
          ("dt", DecisionTreeClassifier(max_depth=6, random_state=0))]
if not QUICK:
    voters.append(("rf", RandomForestClassifier(n_estimators=50, max_depth=8,
                                                random_state=0)))
model = make_pipeline(
    make_column_transformer(
        (StandardScaler(), make_column_selector(dtype_include="number")),
        (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_include=object)),
    ),
    VotingClassifier(voters, voting="soft"),
)

result = esl_decomposition(model, X, y, sensitive_features="sex", metric="tpr",
                           test_size=0.3, random_state=0)
first = result.first_stage
print(f"Units: {result.units}")
print("First stage: group ESL values of TPR / 0.5, Female - Male difference in ESL units")
print("(esl_*) and the raw TPR gap in TPR units (metric_*), one test (z, p_value)")
print(first.to_string(float_format="{:.4f}".format))
print()
print("Second stage: contributions of every feature to each group's value (ESL units)")
contributions = result.contributions
print(contributions.drop(columns=["z"]).to_string(float_format="{:.4f}".format))

# efficiency: the contributions of a group add up to its first-stage value
sums = contributions[["Female", "Male"]].groupby(level="value", sort=False).sum()
error = float((sums - first[["Female", "Male"]]).abs().to_numpy().max())
flagged = sorted(result.flagged)
print()
print(f"{result.n_fits} coalition models fitted in {result.wall_time:.1f} s; "
      f"features flagged by majority: {flagged}")
print(f"CHECK efficiency_error={error:.2e} first_stage_p={first['p_value'].iloc[0]:.4g} "
      f"tpr_gap={first['metric_difference'].iloc[0]:.4f} "
      f"esl_gap={first['esl_difference'].iloc[0]:.4f} flagged={','.join(flagged) or 'none'}")

# %%
# The Shapley contributions of every feature to each group's value, with their 95%
# intervals, then the difference of the two groups' contributions for every ESL
# member: an interval that excludes 0 marks a feature that drives the gap.
plot_esl_contributions(result, value="shapley")
plot_esl_intervals(result)
plt.show()
