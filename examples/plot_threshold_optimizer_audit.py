"""
Audit fairlearn's ThresholdOptimizer with the black-box tools
=============================================================

fairlearn's `ThresholdOptimizer` (Hardt et al.,
2016) post-processes a classifier with one threshold per group, chosen so that a
parity constraint holds on the training data. It is not linear, so the exact
verifier does not apply; the black-box audits of skfairverify do:

* **ESL values** (Amri-Jouidel, Kemel et al., *Shapley meets Rawls*):
  `skfairverify.group_esl` splits a metric among the groups with a test of
  equal values. With ``metric="selection_rate"`` equal values is statistical
  parity, with ``metric="tpr"`` equal opportunity (Theorems 3.1 and 4.1).
* **CFlips / nDCCF** (Cornacchia et al., *Counterfactual Fair Opportunity*):
  `skfairverify.CounterfactualFairness` generates, for every refused
  person, counterfactuals the model would accept, and measures how often they look
  like the other group (the sensitive feature itself never changes). The group a
  counterfactual looks like is predicted by a classifier of ``sex`` from the other
  columns (here a logistic regression fitted once on the training rows).

The ThresholdOptimizer needs ``sensitive_features=`` in ``fit`` *and* in
``predict``, whereas the audits call ``fit(X, y)`` and ``predict(X)`` like any
scikit-learn classifier. `SensitiveFromX` below bridges the two: it keeps
the sensitive attribute as a column of ``X``, hands it to the ThresholdOptimizer
as ``sensitive_features`` and lets the inner model drop it. ThresholdOptimizer
randomises the decision of rows between its two thresholds of a group; a fixed
``random_state`` makes the predictions reproducible.

Models on UCI Adult (subsample; age, education, hours per week, marital status,
occupation; sensitive feature ``sex``): a logistic regression that never reads
``sex`` and the ThresholdOptimizer on top of it for demographic parity and for
equal opportunity (``true_positive_rate_parity``), audited on held-out rows.

Reading the table: the demographic-parity thresholds close the selection-rate gap
(the raw gap and the ESL difference, twice it, are near 0 and the test does not
reject equality) but open a TPR gap in favor of women; the equal-opportunity
thresholds close the TPR gap and leave a selection-rate gap. The CFlips/nDCCF
gaps, which ask whom the refused must come to resemble to be accepted, move with the
thresholds too, without following either group criterion: the criteria disagree,
and each audit shows a different side of the same post-processing.

Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (fewer rows, smaller k).
"""

import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fairlearn.postprocessing import ThresholdOptimizer
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import CounterfactualFairness, group_esl
from skfairverify.datasets import load_adult

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_ROWS = 3000 if QUICK else 10000
K = 5 if QUICK else 10


class SensitiveFromX(ClassifierMixin, BaseEstimator):
    """A ThresholdOptimizer that reads the sensitive feature from a column of ``X``.

    Parameters
    ----------
    estimator : classifier
        Inner model, given the whole of ``X`` (drop the sensitive column in it for
        unawareness).
    sensitive_features : str or list of str
        Column(s) of ``X`` passed as ``sensitive_features`` to the ThresholdOptimizer.
    constraints : str, default="demographic_parity"
    random_state : int, default=0
        Seed of the ThresholdOptimizer's randomised predictions.
    """

    def __init__(self, estimator, sensitive_features, constraints="demographic_parity",
                 random_state=0):
        self.estimator = estimator
        self.sensitive_features = sensitive_features
        self.constraints = constraints
        self.random_state = random_state

    def fit(self, X, y):
        self.optimizer_ = ThresholdOptimizer(
            estimator=clone(self.estimator), constraints=self.constraints,
            predict_method="predict_proba",
        ).fit(X, y, sensitive_features=X[self.sensitive_features])
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return self.optimizer_.predict(X, sensitive_features=X[self.sensitive_features],
                                       random_state=self.random_state)


adult = load_adult(dropna=True)
X = adult.data.drop(columns="split")
marital = X["marital-status"].astype(str)
X["marital-status"] = np.where(marital.str.startswith("Married"), "married",
                               np.where(marital == "Never-married", "never-married", "other"))
numeric = ["age", "education-num", "hours-per-week"]
categorical = ["marital-status", "occupation"]
rows = np.random.default_rng(0).choice(len(X), N_ROWS, replace=False)
X = X[numeric + categorical + ["sex"]].iloc[rows].reset_index(drop=True)
X["occupation"] = X["occupation"].astype(str)
X["marital-status"] = X["marital-status"].astype(str)
X["sex"] = X["sex"].astype(str)
y = np.asarray(adult.target)[rows]
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y)

unaware = make_pipeline(
    make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categorical),
                            (StandardScaler(), numeric), remainder="drop"),
    LogisticRegression(max_iter=1000),
)
models = {
    "logistic (unaware)": unaware,
    "TO demographic parity": SensitiveFromX(unaware, "sex", "demographic_parity"),
    "TO equal opportunity": SensitiveFromX(unaware, "sex", "true_positive_rate_parity"),
}

# One classifier of the sensitive group from the other columns, shared by the three
# audits (a FrozenEstimator predicting the raw values of ``sex`` is used as is).
others = [c for c in X.columns if c != "sex"]
sex_classifier = FrozenEstimator(make_pipeline(
    make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categorical),
                            (StandardScaler(), numeric)),
    LogisticRegression(max_iter=1000),
).fit(X_train[others], X_train["sex"]))

results, tests = {}, {}
with warnings.catch_warnings():
    # a group without refused rows gives NaN deltas, visible in the table
    warnings.filterwarnings("ignore", message="No refused row with a counterfactual",
                            category=UserWarning)
    for name, model in models.items():
        audit = CounterfactualFairness(model, sensitive_features="sex", k=K,
                                       sensitive_classifier=sex_classifier,
                                       random_state=0).fit(X_train, y_train)
        pred = audit.estimator_.predict(X_test)
        sel = group_esl(y_test, pred, sensitive_features=X_test["sex"],
                        metric="selection_rate", value="equal_surplus")
        tpr = group_esl(y_test, pred, sensitive_features=X_test["sex"], metric="tpr",
                        value="equal_surplus")
        cf = audit.evaluate(X_test)
        tests[name] = {"selection rate": sel, "TPR": tpr}
        results[name] = {
            "accuracy": float(np.mean(pred == y_test)),
            "sel. rate gap F-M": sel.metric_difference,
            "ESL sel. rate F-M": sel.esl_difference,
            "p (sel. rate)": sel.p_value,
            "TPR gap F-M": tpr.metric_difference,
            "ESL TPR F-M": tpr.esl_difference,
            "p (TPR)": tpr.p_value,
            "CFlips delta": cf.cflips["delta"],
            "nDCCF delta": cf.ndccf["delta"],
            "refused audited": sum(cf.n_refused.values()),
        }

table = pd.DataFrame.from_dict(results, orient="index")
print("Differences are Female - Male. 'gap': raw difference of the rates (metric units, "
      "fairlearn's MetricFrame difference);\n'ESL': difference of the Equal Surplus values "
      "(ESL units = rate / 0.5, so twice the raw gap for two groups); one test, one p.")
print(table.to_string(float_format="{:.3f}".format))
for name, row in table.iterrows():
    print(f"CHECK {name.replace(' ', '_')} sel_gap={row['sel. rate gap F-M']:.4f} "
          f"esl_sel_diff={row['ESL sel. rate F-M']:.4f} "
          f"p_sel={row['p (sel. rate)']:.4g} cflips_delta={row['CFlips delta']:.4f}")

# %%
# The two group criteria side by side: the Female - Male gap of each model's selection
# rate and TPR on the held-out rows, with its 95% confidence interval. Demographic
# parity closes the first, equal opportunity the second.
fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.6), layout="constrained", sharey=True)
for ax, metric in zip(axes, ["selection rate", "TPR"]):
    gaps = [tests[name][metric] for name in models]
    centre = np.array([g.metric_difference for g in gaps])
    low, high = np.array([g.metric_ci for g in gaps]).T
    pos = np.arange(len(gaps))
    ax.errorbar(centre, pos, xerr=[centre - low, high - centre], fmt="o", capsize=3)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(pos, list(models))
    ax.set_ylim(len(gaps) - 0.5, -0.5)
    ax.set_xlabel(f"{metric} gap, Female - Male")
fig.suptitle("Group criteria after each post-processing (95% intervals)")
plt.show()
