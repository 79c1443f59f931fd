"""
Bring your own data: a raw CSV with missing values
==================================================

Real data come as a CSV file with missing values, identifiers and text columns. This
example takes the Titanic passengers as such a file (``PassengerId``, ``Name`` and
``Ticket`` identify rows; ``Age`` is missing in 177 rows, ``Cabin`` in 687, ``Embarked``
in 2) and audits a model for the 3-level sensitive column ``Pclass`` (the ticket class):

1. ``pd.read_csv`` of the file, nothing cleaned;
2. a pipeline that imputes the missing values (``SimpleImputer``): the verifier reads the
   imputer as part of the model's rule, and gives a missing value a state of its own in
   the Bayesian network, so the network learns how missingness depends on the class;
3. a model that takes the missing values natively (HistGradientBoosting), verified by
   certified sampling: the sampler gives it NaN when it draws the missing state;
4. the audit from the command line with ``--features``;

and prints what each step cost (seconds, measured here).

Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (no posterior draws, a looser
sampling tolerance).
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import FairnessVerifier
from skfairverify.datasets import load_titanic
from skfairverify.plotting import plot_group_rates

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_DRAWS = 0 if QUICK else 50
TOLERANCE = 0.05 if QUICK else 0.01
costs = {}

# %%
# The file, as it comes
# ---------------------
# The bundled copy of the Titanic CSV is written to a folder and read back with pandas,
# as a user reads their own file.
folder = Path(tempfile.mkdtemp())
csv = folder / "titanic.csv"
load_titanic().frame.to_csv(csv, index=False)
frame = pd.read_csv(csv)
print(frame.isna().sum()[lambda s: s > 0].to_string())

# %%
# A pipeline with an imputer, verified exactly
# --------------------------------------------
# The model does not read the sensitive ``Pclass`` (fairness under unawareness); it
# imputes ``Age`` by its median with a missing-value indicator, and ``Embarked`` by its
# most frequent port. The identifiers and ``Cabin`` are left out.
numeric, categorical = ["Age", "SibSp", "Parch", "Fare"], ["Sex", "Embarked"]
X, y = frame[numeric + categorical + ["Pclass"]], frame["Survived"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)
model = make_pipeline(
    make_column_transformer(
        (make_pipeline(SimpleImputer(strategy="median", add_indicator=True),
                       StandardScaler()), numeric),
        (make_pipeline(SimpleImputer(strategy="most_frequent"),
                       OneHotEncoder(handle_unknown="ignore")), categorical),
    ),
    LogisticRegression(max_iter=1000),
).fit(X_train, y_train)

start = time.perf_counter()
linear = FairnessVerifier(FrozenEstimator(model), "Pclass", n_draws=N_DRAWS,
                          random_state=0).fit(X_train, y_train)
costs["verify the pipeline (exact)"] = time.perf_counter() - start
age = linear.variables_.index("Age")
print(linear.method_, "agreement", round(linear.agreement_, 4))
print("states of Age:", linear.network_.state_names[age][-3:], "(the last: missing)")
print(linear.groups_[["Pclass", "positive_rate", "ci_low", "ci_high", "support"]]
      .to_string(index=False))
print(f"CHECK linear method={linear.method_} agreement={linear.agreement_:.4f} "
      f"missing_state={bool(pd.isna(linear.network_.state_names[age][-1]))} "
      f"rows={int(linear.groups_['support'].sum())} groups={len(linear.groups_)}")

# %%
# How missingness depends on the group
# ------------------------------------
# ``Age`` is missing far more often in third class. The network learns it (``Pclass``
# is a parent of ``Age``), and the fairness influence of ``Age`` includes it: replacing
# the column by its support's reference keeps the share of missing rows but no longer
# lets it depend on the class.
print(X_train.groupby("Pclass")["Age"].apply(lambda s: round(s.isna().mean(), 3))
      .to_string())
start = time.perf_counter()
fif = linear.fairness_influence(["Age", "Fare"])
costs["fairness influence (2 features)"] = time.perf_counter() - start
print(fif.table.round(4).to_string())

# %%
# A model that takes missing values as they are
# ---------------------------------------------
# HistGradientBoosting reads NaN natively: it is verified by certified sampling over the
# network of all its input columns, the missing state drawn as NaN.
X_cat = X_train.astype({"Sex": "category", "Embarked": "category"})
hgb = HistGradientBoostingClassifier(max_iter=50, categorical_features="from_dtype",
                                     random_state=0).fit(X_cat.drop(columns="Pclass"),
                                                         y_train)
start = time.perf_counter()
sampled = FairnessVerifier(
    make_pipeline(make_column_transformer(("drop", ["Pclass"]), remainder="passthrough",
                                          verbose_feature_names_out=False)
                  .set_output(transform="pandas").fit(X_cat), FrozenEstimator(hgb)),
    "Pclass", tolerance=TOLERANCE, n_draws=N_DRAWS, random_state=0).fit(X_cat, y_train)
costs[f"verify HistGradientBoosting (sampling, tolerance {TOLERANCE})"] = (
    time.perf_counter() - start)
sp_low, sp_high = sampled.metric_intervals_["statistical_parity"]
print(sampled.method_, f"{sampled.n_samples_:,} rows sampled")
print(sampled.groups_[["Pclass", "positive_rate", "ci_low", "ci_high"]]
      .to_string(index=False))
print(f"CHECK sampled method={sampled.method_} SP={sampled.metrics_['statistical_parity']:.4f} "
      f"SP_low={sp_low:.4f} SP_high={sp_high:.4f} samples={sampled.n_samples_}")

# %%
# The same audit from the command line
# ------------------------------------
# ``--features`` names the columns to use (the sensitive ``Pclass`` is added); without
# it the audit would leave out the identifiers itself and say which. The first lines of
# the report state the favorable outcome (guessed for 0/1 labels, and said so), the rows
# used and dropped, and the missing values kept.
start = time.perf_counter()
proc = subprocess.run(
    [sys.executable, "-m", "skfairverify", "audit", "--csv", str(csv), "--target",
     "Survived", "--sensitive-features", "Pclass", "--features", *numeric, *categorical,
     "--steps", "verify", "--quiet"], capture_output=True, text=True, check=True)
costs["audit from the command line (verify step)"] = time.perf_counter() - start
print("\n".join(proc.stdout.splitlines()[:6]))
rows_line = next(line for line in proc.stdout.splitlines() if line.startswith("rows:"))
print(f"CHECK cli rows_used={rows_line.split(',')[1].split()[0]} "
      f"guessed={'guessed' in proc.stdout.splitlines()[1]}")

# %%
# What each step cost
# -------------------
print(pd.Series(costs, name="seconds").round(2).to_string())
print("CHECK costs " + " ".join(f"step{i}={v:.2f}" for i, v in enumerate(costs.values())))

plot_group_rates(linear)
plt.show()
