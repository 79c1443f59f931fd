"""Benchmark of the ESL box: the paper's Section 5 on Adult (Census Income).

Features age, education-num, hours-per-week and marital status (married / never married /
other, one-hot inside the pipeline); sensitive attribute sex; class-balanced logistic
regression; 70/30 split stratified by label and sex; metric TPR with baseline 0.5 (a
random classifier under balanced class weights), as in Amri-Jouidel et al., Section 5.

Prints the first-stage table, the second-stage table for the five ESL members with the
asymptotic and bootstrap intervals side by side (width ratio) and the paper's numbers next
to ours, and the timings:

* the decomposition with asymptotic intervals for all five members versus the time of
  only fitting and predicting the coalition models it needs (target <= 2x);
* asymptotic versus bootstrap interval widths (target: within 30%);
* integer sample weights of the test rows (1 to 3 per row, seeded) versus the same rows
  repeated: time of both and the largest difference of the contributions and standard
  errors (zero up to round-off: frequency weights are repeated rows).

Differences are reported as men minus women, the paper's orientation. The paper uses a
soft-voting ensemble of five classifiers; we use a single balanced logistic regression,
so numbers are comparable in sign and size, not equal.

Usage: python benchmarks/bench_esl.py [--quick] [--n-jobs N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import esl_decomposition
from skfairverify.datasets import load_adult

MEMBERS = ("equal_surplus", "shapley", "solidarity", "consensus", "lsp")
FEATURES = ["age", "education-num", "hours-per-week", "marital"]

# the paper's Table 1 (men, women) and Table 3 (difference men - women, 95% CI)
PAPER_FIRST = {"shapley": (1.047, 0.565), "equal_surplus": (1.047, 0.565),
               "consensus": (1.047, 0.565), "lsp": (1.047, 0.565),
               "solidarity": (0.926, 0.685)}
PAPER_SECOND = {
    "equal_surplus": {"age": (0.817, 0.707, 0.928), "education-num": (-0.152, -0.337, 0.033),
                      "hours-per-week": (0.218, 0.100, 0.337),
                      "marital": (-0.402, -0.598, -0.205)},
    "shapley": {"age": (0.430, 0.366, 0.493), "education-num": (0.067, -0.035, 0.169),
                "hours-per-week": (0.281, 0.217, 0.344), "marital": (-0.296, -0.439, -0.152)},
    "solidarity": {"age": (0.131, 0.105, 0.157), "education-num": (0.042, 0.010, 0.074),
                   "hours-per-week": (0.087, 0.061, 0.113),
                   "marital": (-0.019, -0.059, 0.021)},
    "consensus": {"age": (0.624, 0.549, 0.698), "education-num": (-0.043, -0.176, 0.091),
                  "hours-per-week": (0.250, 0.170, 0.329), "marital": (-0.349, -0.508, -0.190)},
    "lsp": {"age": (0.409, 0.340, 0.479), "education-num": (0.076, -0.025, 0.178),
            "hours-per-week": (0.288, 0.219, 0.357), "marital": (-0.292, -0.434, -0.151)},
}


def load():
    bunch = load_adult(as_frame=True)
    data = bunch.data
    status = data["marital-status"].astype(str)
    marital = np.where(status.str.startswith("Married"), "married",
                       np.where(status == "Never-married", "never married", "other"))
    X = pd.DataFrame({
        "age": data["age"].astype(float),
        "education-num": data["education-num"].astype(float),
        "hours-per-week": data["hours-per-week"].astype(float),
        "marital": pd.Categorical(marital),
        "sex": data["sex"].astype(str).to_numpy(),
    })
    return X, np.asarray(bunch.target).astype(int)


def model():
    return make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"),
             make_column_selector(dtype_include="category")),
            (StandardScaler(), make_column_selector(dtype_include="number")),
        ),
        LogisticRegression(class_weight="balanced", max_iter=1000),
    )


def plain_fits(X_tr, y_tr, X_te, coalitions):
    """Only fit and predict the coalition models (the decomposition's unavoidable cost)."""
    start = time.perf_counter()
    for cols in coalitions:
        clone(model()).fit(X_tr[list(cols)], y_tr).predict(X_te[list(cols)])
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 bootstrap replicates")
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args(argv)
    n_boot = 200 if args.quick else 1000

    X, y = load()
    strata = pd.Series(y.astype(str)) + X["sex"]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0,
                                              stratify=strata)
    common = dict(X_test=X_te, y_test=y_te, sensitive_features="sex", features=FEATURES,
                  metric="tpr", baseline=0.5, values=MEMBERS, n_jobs=args.n_jobs)
    print(f"Adult: {len(X_tr)} train / {len(X_te)} test rows; features {FEATURES}; "
          f"sensitive sex; TPR / 0.5; n_bootstrap={n_boot}")

    start = time.perf_counter()
    asym = esl_decomposition(model(), X_tr, y_tr, ci="asymptotic", **common)
    t_asym = time.perf_counter() - start
    t_plain = plain_fits(X_tr, y_tr, X_te, asym.coalitions)
    start = time.perf_counter()
    boot = esl_decomposition(model(), X_tr, y_tr, ci="bootstrap", n_bootstrap=n_boot,
                             random_state=0, **common)
    t_boot = time.perf_counter() - start
    t_es_start = time.perf_counter()
    es = esl_decomposition(model(), X_tr, y_tr, ci="asymptotic",
                           **{**common, "values": ("equal_surplus",)})
    t_es = time.perf_counter() - t_es_start
    t_weighted, t_repeated, weight_error = weighted_versus_repeated(X_tr, y_tr, X_te, y_te,
                                                                    common)

    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    first = asym.first_stage
    fb = boot.first_stage
    rows = []
    for v in MEMBERS:
        rows.append({
            "value": v, "total": first.loc[v, "total"],
            "men": first.loc[v, "Male"], "women": first.loc[v, "Female"],
            "share_men_%": 100 * first.loc[v, "Male"] / first.loc[v, "total"],
            "paper_men": PAPER_FIRST[v][0], "paper_women": PAPER_FIRST[v][1],
            "esl_diff_m-w": -first.loc[v, "esl_difference"],
            "asym_ci": (f"[{-first.loc[v, 'esl_ci_high']:.3f}, "
                        f"{-first.loc[v, 'esl_ci_low']:.3f}]"),
            "boot_ci": f"[{-fb.loc[v, 'esl_ci_high']:.3f}, {-fb.loc[v, 'esl_ci_low']:.3f}]",
            "tpr_gap_m-w": -first.loc[v, "metric_difference"],
            "p_value": first.loc[v, "p_value"],
        })
    print("\nFirst stage (full model; paper: total 1.61, difference 0.482 [0.407, 0.557]"
          " for ES/Shapley/Consensus/LSP)\nvalues, esl_diff and CIs in ESL units "
          "(TPR / 0.5); tpr_gap in TPR units (raw rates)")
    print(pd.DataFrame(rows).set_index("value").round(3).to_string())

    rows = []
    for v in MEMBERS:
        for f in FEATURES:
            a, b = asym.contributions.loc[(v, f)], boot.contributions.loc[(v, f)]
            p = PAPER_SECOND[v][f]
            w_a, w_b = a.esl_ci_high - a.esl_ci_low, b.esl_ci_high - b.esl_ci_low
            rows.append({
                "value": v, "feature": f, "C_men": a["Male"], "C_women": a["Female"],
                "esl_diff_m-w": -a.esl_difference,
                "asym_ci": f"[{-a.esl_ci_high:.3f}, {-a.esl_ci_low:.3f}]",
                "boot_ci": f"[{-b.esl_ci_high:.3f}, {-b.esl_ci_low:.3f}]",
                "width_ratio": w_a / w_b, "se_ratio": a.esl_std_error / b.esl_std_error,
                "p_value": a.p_value, "majority": a.majority,
                "paper_diff": p[0], "paper_ci": f"[{p[1]:.3f}, {p[2]:.3f}]",
            })
    second = pd.DataFrame(rows).set_index(["value", "feature"])
    print("\nSecond stage (contributions, ESL units; difference men - women; asymptotic vs "
          "i.i.d. row bootstrap)")
    print(second.round(3).to_string())
    ratios = second["width_ratio"]
    print(f"\nasymptotic / bootstrap interval width: min {ratios.min():.3f}, "
          f"median {ratios.median():.3f}, max {ratios.max():.3f} "
          f"(target within 30%: {bool(ratios.between(0.7, 1.3).all())})")

    print("\nTimings (wall, seconds)")
    timing = pd.DataFrame([
        {"what": "fit+predict the coalition models only",
         "n_fits": asym.n_fits, "seconds": t_plain, "ratio": 1.0},
        {"what": "decomposition, 5 members, asymptotic intervals",
         "n_fits": asym.n_fits, "seconds": t_asym, "ratio": t_asym / t_plain},
        {"what": f"decomposition, 5 members, bootstrap B={n_boot}",
         "n_fits": boot.n_fits, "seconds": t_boot, "ratio": t_boot / t_plain},
        {"what": "decomposition, Equal Surplus only, asymptotic",
         "n_fits": es.n_fits, "seconds": t_es, "ratio": t_es / t_plain},
        {"what": "decomposition, 5 members, integer sample_weight_test",
         "n_fits": asym.n_fits, "seconds": t_weighted, "ratio": t_weighted / t_plain},
        {"what": "decomposition, 5 members, those test rows repeated",
         "n_fits": asym.n_fits, "seconds": t_repeated, "ratio": t_repeated / t_plain},
    ]).set_index("what")
    print(timing.round(3).to_string())
    print(f"\ntarget asymptotic decomposition <= 2x plain fits: {t_asym / t_plain <= 2}")
    print(f"sample_weight vs repeated rows: max |difference| of contributions and standard "
          f"errors {weight_error:.2e}; time ratio {t_weighted / t_repeated:.3f}")


def weighted_versus_repeated(X_tr, y_tr, X_te, y_te, common):
    """Integer weights of the test rows against the test rows repeated (same fits).

    Returns (weighted seconds, repeated seconds, largest difference of the estimates).
    """
    w_te = np.random.default_rng(0).integers(1, 4, len(y_te))
    start = time.perf_counter()
    weighted = esl_decomposition(model(), X_tr, y_tr, sample_weight_test=w_te, **common)
    t_weighted = time.perf_counter() - start
    rep = np.repeat(np.arange(len(y_te)), w_te)
    kw = {**common, "X_test": X_te.iloc[rep], "y_test": np.asarray(y_te)[rep]}
    start = time.perf_counter()
    repeated = esl_decomposition(model(), X_tr, y_tr, **kw)
    t_repeated = time.perf_counter() - start
    columns = [c for c in weighted.contributions.columns if c != "majority"]
    diff = weighted.contributions[columns] - repeated.contributions[columns]
    se_diff = weighted.group_std_error - repeated.group_std_error
    return t_weighted, t_repeated, float(max(diff.abs().max().max(), se_diff.abs().max().max()))


if __name__ == "__main__":
    main()
