"""
Verify any classifier: gradient boosting and fairlearn mitigators on Adult
===========================================================================

`skfairverify.FairnessVerifier` computes ``Pr[Yhat = 1 | A = a]`` for every sensitive
group under a Bayesian network of the inputs learned from the data. Linear models and
decision trees are verified exactly; every other classifier by *certified sampling*:
rows are drawn from the network with the sensitive variables set to each group, the
model's own ``predict`` decides them, and the sampler stops when every group's
Clopper-Pearson interval is narrower than ``tolerance``; these Monte Carlo intervals
hold jointly with probability ``confidence``. With the default ``n_draws=50`` every
rate is also sampled under 50 posterior draws of the network, so ``ci_low`` /
``ci_high`` and ``metric_intervals_`` are ``credible_level`` (95%) intervals of the
*population* rates: the uncertainty of the network learned from a finite sample plus
the Monte Carlo error (``n_draws=0`` keeps the Monte Carlo intervals only).

This example verifies on Adult (sensitive feature ``sex``; the favorable outcome is an
income above 50k):

* a ``HistGradientBoostingClassifier`` (sex x race groups);
* a fairlearn ``ThresholdOptimizer`` (demographic parity post-processing; its
  ``predict`` takes the sensitive values and is randomized);
* a fairlearn ``ExponentiatedGradient`` (a randomized classifier).

Next to each verified statistical parity gap, fairlearn's empirical one on the rows.
Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (a subsample, a looser tolerance).
"""

import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from fairlearn.metrics import demographic_parity_difference
from fairlearn.postprocessing import ThresholdOptimizer
from fairlearn.reductions import DemographicParity, ExponentiatedGradient
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import FairnessVerifier
from skfairverify.datasets import load_adult
from skfairverify.plotting import plot_group_rates

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
TOLERANCE = 0.03 if QUICK else 0.005

data = load_adult(dropna=True)
X = data.data.drop(columns=["split"], errors="ignore")
y = data.target.to_numpy()
if QUICK:
    rows = np.random.default_rng(0).choice(len(X), 8000, replace=False)
    X, y = X.iloc[rows].reset_index(drop=True), y[rows]
print(f"Adult: {len(X)} rows, tolerance={TOLERANCE}, confidence=0.99")


def report(name, ver, empirical_sp):
    """Print the verified groups and the gap next to the empirical one."""
    sp = ver.metrics_["statistical_parity"]
    low, high = ver.metric_intervals_["statistical_parity"]
    print(f"\n{name}: method_={ver.method_}, {ver.n_samples_:,} rows sampled")
    print(ver.groups_.drop(columns="support").round(4).to_string(index=False))
    print(f"verified SP = {sp:.4f} in [{low:.4f}, {high:.4f}]; empirical SP on the rows "
          f"= {empirical_sp:.4f}")
    print(f"CHECK {name} method={ver.method_} SP={sp:.4f} SP_low={low:.4f} "
          f"SP_high={high:.4f} empirical_SP={empirical_sp:.4f} "
          f"widest={float((ver.groups_['ci_high'] - ver.groups_['ci_low']).max()):.4f}")


# %%
# Gradient boosting, groups sex x race
# ------------------------------------
hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
hgb.fit(X, y)
start = time.perf_counter()
ver = FairnessVerifier(FrozenEstimator(hgb), ["sex", "race"], tolerance=TOLERANCE,
                       random_state=0).fit(X)
print(f"(verified in {time.perf_counter() - start:.1f} s)")
groups = X["sex"].astype(str) + "|" + X["race"].astype(str)
report("hgb", ver, demographic_parity_difference(y, hgb.predict(X), sensitive_features=groups))

# %%
# The sampled rates with their intervals (error bars), and the four-fifths
# line at 0.8 times the largest rate.
ax = plot_group_rates(ver)
ax.set_title(f"HistGradientBoosting on Adult: sampled rates, 95% intervals\n"
             f"(posterior draws + Monte Carlo, tolerance {TOLERANCE})", fontsize="medium")

# %%
# fairlearn mitigators, groups sex
# --------------------------------
# Both read a one-hot encoded logistic regression; the verifier passes the sampled
# ``sex`` to ``ThresholdOptimizer.predict`` and a seed to the randomized ``predict``
# of both, so the verification is reproducible.
numeric = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
categorical = ["workclass", "marital-status", "occupation", "relationship", "race", "sex"]
Xm = X[numeric + categorical]
base = make_pipeline(
    make_column_transformer((StandardScaler(), numeric),
                            (OneHotEncoder(handle_unknown="ignore"), categorical)),
    LogisticRegression(max_iter=500),
)
to = ThresholdOptimizer(estimator=base, constraints="demographic_parity",
                        predict_method="predict_proba")
to.fit(Xm, y, sensitive_features=Xm["sex"])
ver_to = FairnessVerifier(FrozenEstimator(to), "sex", tolerance=TOLERANCE,
                          random_state=0).fit(Xm, y)
pred_to = to.predict(Xm, sensitive_features=Xm["sex"], random_state=0)
report("threshold_optimizer", ver_to,
       demographic_parity_difference(y, pred_to, sensitive_features=Xm["sex"]))

with warnings.catch_warnings():
    # fairlearn's reductions use a pandas assignment pandas has deprecated
    warnings.filterwarnings("ignore", message=".*Setting a value on a Series via.*")
    eg = ExponentiatedGradient(base, DemographicParity(), max_iter=10 if QUICK else 50,
                               sample_weight_name="logisticregression__sample_weight")
    eg.fit(Xm, y, sensitive_features=Xm["sex"])
ver_eg = FairnessVerifier(FrozenEstimator(eg), "sex", tolerance=TOLERANCE,
                          random_state=0).fit(Xm, y)
pred_eg = eg.predict(Xm, random_state=0)
report("exponentiated_gradient", ver_eg,
       demographic_parity_difference(y, pred_eg, sensitive_features=Xm["sex"]))

plt.show()
