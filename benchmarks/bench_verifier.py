"""Benchmarks of FairnessVerifier (FVGM): accuracy, real data, scalability, definitions.

Five parts, each printing a table:

1. FVGM Section 4.2 accuracy: A ~ Bernoulli(0.5), X_i | A ~ N(mu_i(A), 0.1^2),
   Y = 1[sum X_i >= 0.5 sum (mu_i(0) + mu_i(1))], LR and linear SVM, n = 2..5
   features (A included). The exact DI has a closed form: w.X + b | A is normal,
   so Pr[Yhat = 1 | A = a] = Phi((w.mu(a) + w_A a + b) / (0.1 ||w||)). Our DI
   (default parameters, learned network) next to network="independent" and the
   empirical DI of the sample (fairlearn's demographic_parity_ratio).
2. Real data (Adult by sex and race, COMPAS by race and sex, German by sex and
   age group): the verifier's DI / SP / EO next to fairlearn's empirical ones on
   the same rows, with the fit time.
3. FVGM Fig. 3-style scalability: k-fold CV on Adult, COMPAS, German, Ricci and
   Titanic with 25/50/75/100 % of the non-sensitive features, LR and linear SVM;
   every instance is verified (a FrozenEstimator fitted on the training folds,
   the verifier on the test fold); time per instance.
4. Definitions (German credit by sex, LR pipeline on every other column, all rows):
   path-specific causal fairness with pcf_definition="fvgm" (mediators drawn from
   Z | A = a_max) and "edge_specific", for the mediator credit_amount (whose learned
   parents include duration) and for credit_amount + duration; the fairness influence
   of credit_amount, duration and age with reference="support" (uniform within the
   observed range, FVGM Appendix E) and "states" (uniform over the states). A few
   seconds; --quick changes nothing.
5. Sample weights (German credit by sex, the LR pipeline frozen, all rows, fixed
   n_bins=20 and multiplier=100): a fit with integer weights w in {1, 2, 3} next to
   a fit on the rows repeated w times (the baseline it must equal), and a fit with
   unit weights next to one without weights: the metrics side by side, the largest
   difference, the fit times and their ratio. --quick changes nothing.

Usage::

    python benchmarks/bench_verifier.py            # full run
    python benchmarks/bench_verifier.py --quick    # fewer instances / folds
    python benchmarks/bench_verifier.py --part 1 --quick
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from fairlearn.metrics import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
)
from scipy.stats import norm
from sklearn.compose import make_column_transformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import LinearSVC

from skfairverify import FairnessVerifier
from skfairverify.datasets import load_adult, load_compas, load_german

DATA = Path("/work/shared/datasets")


# ----------------------------------------------------------------------------- part 1
def gaussian_instance(n_features, n_samples, rng):
    d = n_features - 1
    mu1, mu0 = rng.uniform(0, 1, d), rng.uniform(0, 1, d)
    a = rng.integers(0, 2, n_samples)
    X = pd.DataFrame(
        {f"x{i}": rng.normal(np.where(a == 1, mu1[i], mu0[i]), 0.1) for i in range(d)}
    )
    X["a"] = a
    y = (X.iloc[:, :d].sum(axis=1) >= 0.5 * (mu0 + mu1).sum()).astype(int).to_numpy()
    return X, y, mu0, mu1


def exact_di(model, mu0, mu1):
    w, b = model.coef_[0], model.intercept_[0]
    d = len(mu0)
    sd = 0.1 * np.linalg.norm(w[:d])
    rates = [norm.cdf((w[:d] @ mu + w[d] * a + b) / sd) for a, mu in ((0, mu0), (1, mu1))]
    top = max(rates)
    return min(rates) / top if top > 0 else 1.0


def part1(quick, seed=0):
    n_inst = 25 if quick else 80
    n_samples = 5000
    rows = []
    rng = np.random.default_rng(seed)
    for n_features in (2, 3, 4, 5):
        for name, make in (("LR", LogisticRegression), ("SVM", LinearSVC)):
            rec = {"exact": [], "ours": [], "independent": [], "empirical": [], "time": [],
                   "bins": [], "l": [], "agreement": []}
            for _ in range(n_inst):
                X, y, mu0, mu1 = gaussian_instance(n_features, n_samples, rng)
                if len(np.unique(y)) < 2:
                    continue
                model = make().fit(X, y)
                frozen = FrozenEstimator(model)
                t0 = time.perf_counter()
                ver = FairnessVerifier(frozen, "a", random_state=0).fit(X, y)
                rec["time"].append(time.perf_counter() - t0)
                ind = FairnessVerifier(frozen, "a", network="independent",
                                       random_state=0).fit(X, y)
                rec["exact"].append(exact_di(model, mu0, mu1))
                rec["ours"].append(ver.metrics_["disparate_impact"])
                rec["independent"].append(ind.metrics_["disparate_impact"])
                rec["empirical"].append(
                    demographic_parity_ratio(y, model.predict(X), sensitive_features=X["a"])
                )
                rec["bins"].append(ver.n_bins_)
                rec["l"].append(ver.multiplier_)
                rec["agreement"].append(ver.agreement_)
            ex = np.array(rec["exact"])
            row = {"n": n_features, "clf": name, "instances": len(ex),
                   "exact_mean": ex.mean()}
            for key in ("ours", "independent", "empirical"):
                v = np.array(rec[key])
                row[f"{key}_mean"] = v.mean()
                row[f"{key}_MAE"] = np.abs(v - ex).mean()
                row[f"{key}_gap_of_means"] = abs(v.mean() - ex.mean())
            row["ours_time_s"] = np.mean(rec["time"])
            row["bins"] = int(np.median(rec["bins"]))
            row["l"] = int(np.median(rec["l"]))
            row["agreement"] = np.mean(rec["agreement"])
            rows.append(row)
            print(pd.DataFrame([row]).round(4).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    table["target_met"] = (table["ours_MAE"] <= 0.02) & (table["ours_gap_of_means"] <= 0.005)
    return table


# ----------------------------------------------------------------------------- data
def linear_pipeline(X, clf):
    num = X.select_dtypes("number").columns.tolist()
    cat = [c for c in X.columns if c not in num]
    return make_pipeline(
        make_column_transformer(
            (StandardScaler(), num), (OneHotEncoder(handle_unknown="ignore"), cat)
        ),
        clf,
    )


def adult(n_rows=None, seed=0):
    b = load_adult(as_frame=True)
    X = b.data.drop(columns=["split", "fnlwgt"])
    y = b.target.to_numpy()
    keep = X.notna().all(axis=1).to_numpy()
    X, y = X[keep].reset_index(drop=True), y[keep]
    if n_rows is not None and n_rows < len(X):
        idx = np.random.default_rng(seed).choice(len(X), n_rows, replace=False)
        X, y = X.iloc[idx].reset_index(drop=True), y[idx]
    return X, y, ["sex", "race"]


def compas():
    b = load_compas(as_frame=True)
    return b.data.reset_index(drop=True), b.target.to_numpy(), ["race", "sex"]


def german():
    b = load_german(as_frame=True)
    return b.data.drop(columns=["age"]).reset_index(drop=True), b.target.to_numpy(), [
        "sex", "age_group"]


def ricci():
    df = pd.read_csv(DATA / "ricci" / "ricci.csv")
    y = (df["Combine"] >= 70).astype(int).to_numpy()
    return df[["Position", "Oral", "Written", "Race"]], y, ["Race"]


def titanic():
    df = pd.read_csv(DATA / "titanic" / "titanic.csv")
    X = df[["Pclass", "Sex", "SibSp", "Parch", "Fare", "Embarked"]].copy()
    X["Embarked"] = X["Embarked"].fillna("S")
    X["Pclass"] = X["Pclass"].astype(str)
    return X, df["Survived"].to_numpy(), ["Sex"]


# ----------------------------------------------------------------------------- part 2
def part2(quick):
    rows = []
    sets = [("Adult", adult), ("COMPAS", compas), ("German", german)]
    for name, loader in sets:
        X, y, sens = loader()
        for s in sens:
            model = linear_pipeline(X, LogisticRegression(max_iter=2000)).fit(X, y)
            t0 = time.perf_counter()
            ver = FairnessVerifier(FrozenEstimator(model), s, random_state=0).fit(X, y)
            elapsed = time.perf_counter() - t0
            pred = model.predict(X)
            rows.append({
                "dataset": name, "sensitive": s, "groups": len(ver.groups_),
                "DI_verifier": ver.metrics_["disparate_impact"],
                "DI_empirical": demographic_parity_ratio(y, pred, sensitive_features=X[s]),
                "SP_verifier": ver.metrics_["statistical_parity"],
                "SP_empirical": demographic_parity_difference(y, pred, sensitive_features=X[s]),
                "EO_verifier": ver.metrics_["equalized_odds"],
                "EO_empirical": equalized_odds_difference(y, pred, sensitive_features=X[s]),
                "agreement": ver.agreement_, "bins": ver.n_bins_, "l": ver.multiplier_,
                "fit_s": elapsed,
            })
            print(pd.DataFrame([rows[-1]]).round(3).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- part 4
def part4():
    X, y, _ = german()
    X = X.drop(columns=["age_group", "personal_status"], errors="ignore")
    X["age"] = load_german(as_frame=True).data["age"].to_numpy()
    model = linear_pipeline(X.drop(columns=["sex"]), LogisticRegression(max_iter=2000))
    model = FrozenEstimator(model.fit(X.drop(columns=["sex"]), y))
    rows = []
    for mediators in (["credit_amount"], ["credit_amount", "duration"]):
        row = {"mediators": " + ".join(mediators)}
        for definition in ("fvgm", "edge_specific"):
            ver = FairnessVerifier(model, "sex", mediators=mediators, random_state=0,
                                   pcf_definition=definition).fit(X, y)
            row[f"PCF_{definition}"] = ver.metrics_["path_specific_causal"]
        row["SP (no mediator fixed)"] = ver.metrics_["statistical_parity"]
        row["agreement"] = ver.agreement_
        rows.append(row)
    print(pd.DataFrame(rows).round(4).to_string(index=False))
    fif = {ref: ver.fairness_influence(["credit_amount", "duration", "age"],
                                       reference=ref).table
           for ref in ("support", "states")}
    table = pd.concat(fif, axis=1, names=["reference", "sex"])
    print("\nFIF_a(feature) = Pr[Yhat = 1 | sex = a] - the same with the feature uniform "
          "(reference='support': within its observed range; 'states': over its states):")
    return table


# ----------------------------------------------------------------------------- part 5
def _timed_fit(model, X, y, sample_weight=None):
    t0 = time.perf_counter()
    ver = FairnessVerifier(model, "sex", n_bins=20, multiplier=100, random_state=0)
    ver.fit(X, y, sample_weight=sample_weight)
    return ver, time.perf_counter() - t0


def part5(seed=0):
    X, y, _ = german()
    model = FrozenEstimator(linear_pipeline(X, LogisticRegression(max_iter=2000)).fit(X, y))
    w = np.random.default_rng(seed).integers(1, 4, len(X))
    rows = np.repeat(np.arange(len(X)), w)
    Xr, yr = X.iloc[rows].reset_index(drop=True), np.asarray(y)[rows]
    pairs = {
        "integer weights vs repeated rows": (_timed_fit(model, X, y, w),
                                             _timed_fit(model, Xr, yr)),
        "unit weights vs no weights": (_timed_fit(model, X, y, np.ones(len(X))),
                                       _timed_fit(model, X, y)),
    }
    out = []
    for name, ((ours, t_ours), (base, t_base)) in pairs.items():
        diff = max(abs(ours.metrics_[k] - base.metrics_[k]) for k in base.metrics_)
        out.append({"comparison": name,
                    **{f"{k}_weighted": v for k, v in ours.metrics_.items()},
                    **{f"{k}_baseline": v for k, v in base.metrics_.items()},
                    "max_abs_diff": diff, "fit_s_weighted": t_ours,
                    "fit_s_baseline": t_base, "time_ratio": t_ours / t_base})
    return pd.DataFrame(out).set_index("comparison").T


# ----------------------------------------------------------------------------- part 3
def part3(quick, seed=0):
    n_folds = 2 if quick else 5
    sets = [
        ("Adult", lambda: adult(n_rows=10000 if quick else None)),
        ("COMPAS", compas), ("German", german), ("Ricci", ricci), ("Titanic", titanic),
    ]
    rows = []
    for name, loader in sets:
        X, y, sens = loader()
        others = [c for c in X.columns if c not in sens]
        rng = np.random.default_rng(seed)
        order = list(rng.permutation(others))
        folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y)
        for fold, (tr, te) in enumerate(folds):
            for frac in (0.25, 0.5, 0.75, 1.0):
                cols = order[: max(1, int(round(frac * len(order))))] + sens
                for clf_name, clf in (("LR", LogisticRegression(max_iter=2000)),
                                      ("SVM", LinearSVC())):
                    Xs = X[cols]
                    model = linear_pipeline(Xs, clf).fit(Xs.iloc[tr], y[tr])
                    t0 = time.perf_counter()
                    status = "ok"
                    try:
                        ver = FairnessVerifier(FrozenEstimator(model), sens, random_state=0)
                        ver.fit(Xs.iloc[te], y[te])
                        sp = ver.metrics_["statistical_parity"]
                    except (ValueError, MemoryError) as exc:
                        status, sp = type(exc).__name__, np.nan
                    rows.append({"dataset": name, "fold": fold, "features": frac,
                                 "clf": clf_name, "time_s": time.perf_counter() - t0,
                                 "status": status, "SP": sp})
        done = pd.DataFrame([r for r in rows if r["dataset"] == name])
        print(name, f"{(done['status'] == 'ok').sum()}/{len(done)} verified,",
              f"median {done['time_s'].median():.2f} s, max {done['time_s'].max():.2f} s",
              flush=True)
    table = pd.DataFrame(rows)
    summary = table.groupby(["dataset", "features"]).agg(
        instances=("time_s", "size"), verified=("status", lambda s: int((s == "ok").sum())),
        median_s=("time_s", "median"), max_s=("time_s", "max"),
    ).reset_index()
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--part", type=int, choices=[1, 2, 3, 4, 5], action="append")
    args = parser.parse_args()
    parts = args.part or [1, 2, 3, 4, 5]
    # The benchmark verifies the models as they are, converged or not; every other
    # warning (e.g. the verifier's LowAgreementWarning) is shown.
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    pd.set_option("display.width", 250)
    if 1 in parts:
        print("\n== Part 1: FVGM Section 4.2 accuracy (DI) ==", flush=True)
        print(part1(args.quick).round(4).to_string(index=False))
    if 2 in parts:
        print("\n== Part 2: real data, verifier vs empirical (fairlearn) ==", flush=True)
        print(part2(args.quick).round(3).to_string(index=False))
    if 3 in parts:
        print("\n== Part 3: scalability (every instance verified) ==", flush=True)
        print(part3(args.quick).round(3).to_string(index=False))
    if 4 in parts:
        print("\n== Part 4: definitions, PCF (fvgm vs edge_specific), FIF (support vs "
              "states) ==", flush=True)
        print(part4().round(4).to_string())
    if 5 in parts:
        print("\n== Part 5: sample weights (integer = repeated rows; unit = none) ==",
              flush=True)
        print(part5().to_string(float_format="{:.6g}".format))


if __name__ == "__main__":
    main()
