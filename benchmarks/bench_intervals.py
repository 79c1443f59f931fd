"""Cost and coverage of the verifier's credible intervals (``n_draws``, ``prior``).

The semi-synthetic population of ``bench_population.py`` (issue 16: two binary
sensitive attributes, four intersections down to ~20 rows at n = 500, five Gaussian
features, a fixed logistic regression; the group rates in closed form). Per
repetition one sample; ``FairnessVerifier(FrozenEstimator(lr), ["a1", "a2"])`` fitted
with ``n_draws=0`` (a plain fit) and with the draws, both priors. Printed per setting:
the CPU time of a fit (``time.process_time``), its ratio to the plain fit, the group-
rate MAE and SP error against the truth, the coverage of the 95% intervals of the
group rates and of SP, and the number of bins chosen.

``--adult``: the cost on real data instead, Adult (sex x race, 10 groups; with ``y``,
so three networks and their draws) and a logistic-regression pipeline on every column:
one fit per setting, CPU seconds and the ratio to the plain fit.

``--coverage``: coverage of the 95% intervals on a small known network (a -> x, (a, x)
-> z, a linear rule on x and z that the integer rule reproduces exactly; the truth by
enumeration), 300 rows per repetition, network learned, ``--reps`` repetitions.

``--cost``: the cost of the default 50 draws, old code against new in one run (issue
16's target: intervals at most 5x a plain fit). Two workloads: Adult (sex x race, LR
pipeline, with y) and ``bench_scale.synthetic(100)`` (100 numeric features, 20k rows,
``FrozenEstimator(LogisticRegression)``, sensitive "a", with y). Each fit runs in a child
process, the old code from an export of ``--old-commit`` (default 9bb8f89, before the
batched draws) on ``PYTHONPATH``; CPU seconds (``time.process_time``) of a plain fit
(``n_draws=0``) and of a fit with ``n_draws=50``, their ratio, and the speed-up of the
draws' part (fit with draws minus plain fit). The new code runs twice: with
``prior="bdeu"`` (the old commit's default) and with its defaults (the hierarchical
prior, which differs from BDeu only with two or more sensitive features: Adult here).
``--cost-child WORKLOAD --exact-rule`` times the draws solved on the verified integer
rule itself (``_draw_rule.DRAW_RULE_TOLERANCE = 0``).

``--draw-rule``: the accuracy of the coarser draw rule (``_draw_rule``) on the same
workloads: the same 50 posterior draws solved on the verified rule and on the coarser
rule, the fit times and how far every interval's endpoints move, relative to its width
(workloads ``compas`` and ``german``: the bundled datasets as the population protocol
models them, with labels).

Run: ``python benchmarks/bench_intervals.py`` (``--reps``, ``--sizes``, ``--draws``);
``python benchmarks/bench_intervals.py --adult``;
``python benchmarks/bench_intervals.py --coverage --reps 300``;
``python benchmarks/bench_intervals.py --cost`` (``--workloads adult synthetic100``);
``python benchmarks/bench_intervals.py --draw-rule``;
``python benchmarks/bench_intervals.py --convolution`` (the batched engine's choice between
direct and FFT convolution of two score axes, ``s3p._batched._DIRECT_MAX``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator

sys.path.insert(0, os.path.dirname(__file__))
from bench_population import GROUPS, fixed_classifier, population, sample, true_rates  # noqa: E402

from skfairverify.verification import FairnessVerifier, LowAgreementWarning  # noqa: E402


def one_fit(X, S, lr, seed, prior, n_draws):
    data = pd.concat([X, S], axis=1)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=LowAgreementWarning)
        ver = FairnessVerifier(FrozenEstimator(lr), ["a1", "a2"], prior=prior,
                               n_draws=n_draws, random_state=seed).fit(data)
    seconds = time.process_time() - t0
    g = ver.groups_.set_index(["a1", "a2"])
    keys = [k for k in GROUPS if k in g.index]
    return g.loc[keys], ver.metric_intervals_["statistical_parity"], seconds, ver.n_bins_


def adult(draws):
    model, X, y, _ = _cost_data("adult")
    rows = {}
    for d in [0] + draws:
        t0 = time.process_time()
        ver = FairnessVerifier(model, ["sex", "race"], n_draws=d, random_state=0).fit(X, y)
        seconds = time.process_time() - t0
        g = ver.groups_
        rows[f"draws={d}"] = {"fit s": seconds, "bins": ver.n_bins_,
                              "mean ci width": float((g["ci_high"] - g["ci_low"]).mean()),
                              "SP": ver.metrics_["statistical_parity"],
                              "SP low": ver.metric_intervals_["statistical_parity"][0],
                              "SP high": ver.metric_intervals_["statistical_parity"][1]}
    table = pd.DataFrame(rows).T
    table["fit / plain fit"] = table["fit s"] / table.loc["draws=0", "fit s"]
    print(f"Adult, {len(X):,} rows, sex x race, LR pipeline, with y")
    print(table.round(4).to_string())


P_A = np.array([0.7, 0.3])
P_X = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
P_Z = np.array([[[0.6, 0.4], [0.4, 0.6], [0.3, 0.7]],
                [[0.5, 0.5], [0.3, 0.7], [0.1, 0.9]]])


def _known_sample(n, rng):
    a = (rng.random(n) < P_A[1]).astype(int)
    x = (rng.random(n)[:, None] > P_X[a].cumsum(1)).sum(1)
    z = (rng.random(n) < P_Z[a, x, 1]).astype(int)
    return pd.DataFrame({"a": a, "x": x, "z": z})


def coverage(reps, draws):
    from sklearn.linear_model import LogisticRegression

    def decide(x, z):
        return (np.asarray(x) + 1.5 * np.asarray(z) >= 2).astype(int)

    truth = np.array([sum(P_X[a, x] * P_Z[a, x, z] * decide(x, z)
                          for x in range(3) for z in range(2)) for a in range(2)])
    big = _known_sample(5000, np.random.default_rng(0))
    lr = FrozenEstimator(LogisticRegression(C=100).fit(big[["x", "z"]], decide(big.x, big.z)))
    rows = {}
    for d in draws:
        rng = np.random.default_rng(1)
        hits, sp, t0 = np.zeros(2), 0, time.process_time()
        for r in range(reps):
            ver = FairnessVerifier(lr, "a", n_bins=10, multiplier=100, n_draws=d,
                                   random_state=r).fit(_known_sample(300, rng))
            g = ver.groups_
            hits += (g["ci_low"] <= truth) & (truth <= g["ci_high"])
            low, high = ver.metric_intervals_["statistical_parity"]
            sp += low <= truth[1] - truth[0] <= high
        rows[f"draws={d}"] = {"cover a=0": hits[0] / reps, "cover a=1": hits[1] / reps,
                              "cover SP": sp / reps,
                              "fit s": (time.process_time() - t0) / reps}
    print(f"known network, truth {truth.round(4).tolist()}, 300 rows, {reps} repetitions,"
          f" binomial s.e. of a 95% coverage {np.sqrt(0.95 * 0.05 / reps):.4f}")
    print(pd.DataFrame(rows).T.round(4).to_string())


def _cost_data(workload):
    """(model, X, y, sensitive) of a cost workload."""
    from sklearn.linear_model import LogisticRegression

    if workload == "adult":
        from sklearn.compose import make_column_selector, make_column_transformer
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder, StandardScaler

        from skfairverify.datasets import load_adult

        data = load_adult(dropna=True)
        X = data.data.drop(columns=["split"], errors="ignore")
        y = data.target.to_numpy()
        pipe = make_pipeline(make_column_transformer(
            (StandardScaler(), make_column_selector(dtype_include="number")),
            (OneHotEncoder(handle_unknown="ignore"),
             make_column_selector(dtype_exclude="number"))),
            LogisticRegression(max_iter=500))
        return FrozenEstimator(pipe.fit(X, y)), X, y, ["sex", "race"]
    if workload in ("compas", "german"):  # the protocol's populations (population_designs)
        import population_designs as designs

        pop = designs.real(workload, "")
        return FrozenEstimator(pop.model), pop.X, pop.y, pop.sensitive
    from bench_scale import synthetic

    X, y = synthetic(int(workload.removeprefix("synthetic")))
    return FrozenEstimator(LogisticRegression(max_iter=2000).fit(X, y)), X, y, "a"


def cost_child(workload, exact_rule=False, prior=None):
    """Print (JSON) the CPU seconds of a plain fit and of a fit with 50 draws."""
    import skfairverify

    if exact_rule:  # the new code with the draws solved on the verified rule itself
        from skfairverify.verification import _draw_rule

        _draw_rule.DRAW_RULE_TOLERANCE = 0.0
    model, X, y, sensitive = _cost_data(workload)
    out = {"package": os.path.dirname(skfairverify.__file__)}
    params = {} if prior is None else {"prior": prior}
    for draws in (0, 50):
        # each fit cold: the hierarchical prior remembers its strength search by table
        getattr(getattr(skfairverify.verification, "_parameters", None), "_SEARCHED",
                {}).clear()
        t0 = time.process_time()
        ver = FairnessVerifier(model, sensitive, n_draws=draws, random_state=0,
                               **params).fit(X, y)
        out[f"draws={draws}"] = time.process_time() - t0
        out[f"SP interval draws={draws}"] = list(ver.metric_intervals_["statistical_parity"])
    print(json.dumps(out))


def _export(commit):
    """The package at ``commit``, exported (git archive) to a temporary directory."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    target = tempfile.mkdtemp(prefix=f"skfairverify-{commit}-")
    archive = subprocess.run(["git", "-C", root, "archive", commit, "skfairverify"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    return target


def cost(workloads, old_commit):
    old_tree = _export(old_commit)
    rows = []
    for workload in workloads:
        for label, path, extra in ((f"old ({old_commit})", old_tree, []),
                                   ("new, prior='bdeu'", None, ["--prior", "bdeu"]),
                                   ("new (defaults)", None, [])):
            env = dict(os.environ)
            if path is not None:
                env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--cost-child",
                                   workload, *extra], env=env, check=True,
                                  capture_output=True, text=True)
            out = json.loads(done.stdout.strip().splitlines()[-1])
            if (path is None) == out["package"].startswith(old_tree):
                raise RuntimeError(f"{label} ran the package at {out['package']}")
            plain, draws = out["draws=0"], out["draws=50"]
            rows.append({"workload": workload, "code": label, "plain fit s": plain,
                         "fit n_draws=50 s": draws, "ratio (target <= 5)": draws / plain,
                         "draws part s": draws - plain,
                         "SP 95% interval": "[{:.4f}, {:.4f}]".format(
                             *out["SP interval draws=50"])})
    table = pd.DataFrame(rows).set_index(["workload", "code"])
    old = table.xs(f"old ({old_commit})", level="code")["draws part s"]
    table["draws part: old / new"] = [
        old[w] / table.loc[(w, c), "draws part s"] for w, c in table.index]
    print("CPU seconds (time.process_time) of one fit each; FairnessVerifier defaults")
    print(table.round(2).to_string())


def _best_of_3(func, *args):
    """(milliseconds of the fastest of three calls, its result)."""
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        out = func(*args)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3, out


def convolution():
    """Direct (shifted products) against FFT convolution of two score axes.

    The batched engine's choice (``s3p._batched._DIRECT_MAX``): tables of the draws'
    shapes (rows x score length), the shorter axis from 4 to 48; milliseconds per
    product (best of 3) and their ratio, with the largest difference of the two results.
    """
    from skfairverify.s3p._batched import _direct
    from skfairverify.s3p._convolve import fft_product

    rng = np.random.default_rng(0)
    rows = []
    for n_rows, long in ((600, 500), (600, 3000), (60, 20000), (3000, 200)):
        for short in (4, 8, 16, 32, 48):
            a, b = rng.random((n_rows, short)), rng.random((n_rows, long))
            times = {"direct": _best_of_3(_direct, a, b),
                     "fft": _best_of_3(fft_product, [a, b], short + long - 1)}
            rows.append({"rows": n_rows, "long axis": long, "short axis": short,
                         "direct ms": times["direct"][0], "fft ms": times["fft"][0],
                         "direct / fft": times["direct"][0] / times["fft"][0],
                         "max |difference|": "{:.1e}".format(np.abs(
                             times["direct"][1] - times["fft"][1]).max())})
    print(pd.DataFrame(rows).round(3).to_string(index=False))


def _interval_columns(ver):
    """Every interval of a fitted verifier: {(quantity, group): (low, high)}."""
    out = {(k, "-"): v for k, v in ver.metric_intervals_.items()}
    g = ver.groups_
    out.update({("positive_rate", i): (lo, hi)
                for i, (lo, hi) in enumerate(zip(g["ci_low"], g["ci_high"]))})
    return out


def draw_rule(workloads):
    """The draws on the coarser rule (default) against the verified rule's, same draws."""
    from skfairverify.verification import _draw_rule

    rows = []
    for workload in workloads:
        model, X, y, sensitive = _cost_data(workload)
        fits = {}
        for label, tolerance in (("verified rule", 0.0),
                                 ("coarser rule", _draw_rule.DRAW_RULE_TOLERANCE)):
            default, _draw_rule.DRAW_RULE_TOLERANCE = _draw_rule.DRAW_RULE_TOLERANCE, tolerance
            t0 = time.process_time()
            ver = FairnessVerifier(model, sensitive, random_state=0).fit(X, y)
            fits[label] = (ver, time.process_time() - t0)
            _draw_rule.DRAW_RULE_TOLERANCE = default
        exact, coarse = (_interval_columns(fits[k][0]) for k in ("verified rule", "coarser rule"))
        moved = [max(abs(coarse[k][0] - lo), abs(coarse[k][1] - hi)) / (hi - lo)
                 for k, (lo, hi) in exact.items() if hi > lo]
        rows.append({"workload": workload, "intervals": len(moved),
                     "fit s, verified rule": fits["verified rule"][1],
                     "fit s, coarser rule": fits["coarser rule"][1],
                     "speed-up": fits["verified rule"][1] / fits["coarser rule"][1],
                     "largest endpoint move / width": max(moved),
                     "median endpoint move / width": float(np.median(moved))})
    print("Same 50 posterior draws (random_state=0), solved on the verified integer rule and "
          "on the coarser rule (shifted); CPU seconds of the whole fit")
    print(pd.DataFrame(rows).round(4).to_string(index=False))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--draws", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--adult", action="store_true")
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--workloads", nargs="+", default=["adult", "synthetic100"])
    parser.add_argument("--old-commit", default="9bb8f89")
    parser.add_argument("--cost-child")
    parser.add_argument("--exact-rule", action="store_true")
    parser.add_argument("--prior", choices=["hierarchical", "bdeu"])
    parser.add_argument("--draw-rule", action="store_true")
    parser.add_argument("--convolution", action="store_true")
    args = parser.parse_args()
    if args.cost_child:
        cost_child(args.cost_child, args.exact_rule, args.prior)
        return
    if args.draw_rule:
        draw_rule(args.workloads)
        return
    if args.convolution:
        convolution()
        return
    if args.cost:
        cost(args.workloads, args.old_commit)
        return
    if args.coverage:
        coverage(args.reps, args.draws)
        return
    if args.adult:
        adult(args.draws)
        return
    pop = population("base")
    lr = fixed_classifier(pop)
    truth = pd.Series(true_rates(pop, lr), index=pd.MultiIndex.from_tuples(GROUPS))
    sp_true = truth.max() - truth.min()
    print(f"reps={args.reps}; truth={truth.round(4).tolist()}, SP={sp_true:.4f}")
    settings = [(p, d) for p in ("bdeu", "hierarchical") for d in [0] + args.draws]
    for n in args.sizes:
        rows = {s: [] for s in settings}
        for r in range(args.reps):
            X, S = sample(pop, n, np.random.default_rng(1000 * n + r))
            for prior, draws in settings:
                g, (lo, hi), sec, bins = one_fit(X, S, lr, r, prior, draws)
                t = truth.loc[g.index].to_numpy()
                rate = g["positive_rate"].to_numpy()
                cover = ((g["ci_low"] <= t) & (t <= g["ci_high"])).mean()
                sp = rate.max() - rate.min()
                rows[(prior, draws)].append((sec, np.abs(rate - t).mean(), abs(sp - sp_true),
                                             cover, lo <= sp_true <= hi, bins))
        table = pd.DataFrame(
            {f"{p} draws={d}": np.mean(v, axis=0) for (p, d), v in rows.items()},
            index=["fit s", "rate MAE", "SP abs err", "cover rates", "cover SP", "bins"]).T
        for prior in ("bdeu", "hierarchical"):
            plain = table.loc[f"{prior} draws=0", "fit s"]
            for d in [0] + args.draws:
                table.loc[f"{prior} draws={d}", "fit / plain fit"] = (
                    table.loc[f"{prior} draws={d}", "fit s"] / plain)
        print(f"\nn = {n}")
        print(table.round(4).to_string())


if __name__ == "__main__":
    main()
