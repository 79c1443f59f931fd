"""Benchmark of FairnessVerifier's sampling path (any classifier) on Adult.

Three tables:

1. Adult (all rows without missing values, groups sex x race), a
   HistGradientBoostingClassifier verified by sampling to ``tolerance`` (default 0.005)
   at 99% confidence (``n_draws=0``: the Monte Carlo intervals of issue 12; table 3
   adds the posterior draws): the fit time split into network learning and sampling,
   the rows
   sampled, the time of the model's own ``predict`` on the same number of rows and the
   ratio of the verification to it, and the sampler's overhead: the share of the
   sampling phase not spent in ``predict`` (target <= 25%).
2. Sampler alone on the network the verifier learned: our vectorised ancestral
   sampler (states and values, as the verifier draws them) next to pgmpy's
   ``BayesianModelSampling.forward_sample`` on the same network, per sample
   (target: ours >= 20x faster).
3. The cost of the combined intervals (issue 16 on the sampling path): the same fit
   with ``n_draws=0`` (Monte Carlo intervals of the point estimates only) and with the
   default ``n_draws=50`` (posterior draws of the network, each sampled: intervals of
   the population rates), side by side: rows sampled (point estimates, draws), CPU
   and wall seconds, the ratio, and the intervals' widths.

Times are wall-clock and CPU (``time.process_time``, all threads of the process);
run with ``OMP_NUM_THREADS=1`` on a shared machine so that both are stable.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_any_classifier.py   # tolerance 0.005
    python benchmarks/bench_any_classifier.py --quick    # tolerance 0.02
    python benchmarks/bench_any_classifier.py --quick --part 3   # table 3 only
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator

from skfairverify import FairnessVerifier
from skfairverify.datasets import load_adult
from skfairverify.verification._sampling import NetworkSampler

SENSITIVE = ["sex", "race"]


class TimedModel(ClassifierMixin, BaseEstimator):
    """A fitted model whose ``predict`` adds its time and rows to counters."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y=None):
        return self

    def __sklearn_is_fitted__(self):
        return True

    @property
    def classes_(self):
        return self.model.classes_

    def predict(self, X):
        start, cpu = time.perf_counter(), time.process_time()
        out = self.model.predict(X)
        self.seconds_ = getattr(self, "seconds_", 0.0) + time.perf_counter() - start
        self.cpu_ = getattr(self, "cpu_", 0.0) + time.process_time() - cpu
        self.rows_ = getattr(self, "rows_", 0) + len(X)
        return out


def markdown(frame: pd.DataFrame, index: bool = True) -> str:
    """A pipe table of ``frame`` (no optional dependency)."""
    frame = frame.reset_index() if index else frame
    cells = [[str(c) for c in frame.columns]]
    cells += [[f"{v:.4f}" if isinstance(v, float) else str(v) for v in row]
              for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(r) + " |" for r in cells]
    lines.insert(1, "|" + "---|" * len(frame.columns))
    return "\n".join(lines)


def adult():
    data = load_adult(dropna=True)
    X = data.data.drop(columns=["split"], errors="ignore")
    return X, data.target.to_numpy()


def adult_model():
    X, y = adult()
    hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
    return X, hgb.fit(X, y)


def part1(tolerance: float, n_draws: int = 0):
    X, hgb = adult_model()
    timed = TimedModel(hgb)
    start, cpu = time.perf_counter(), time.process_time()
    ver = FairnessVerifier(FrozenEstimator(timed), SENSITIVE, tolerance=tolerance,
                           confidence=0.99, n_draws=n_draws, random_state=0).fit(X)
    total, total_cpu = time.perf_counter() - start, time.process_time() - cpu
    n = ver.n_samples_
    # The model's own predict on n rows (the data repeated), in batches as the verifier.
    rows = X.sample(min(n, 100_000), replace=True, random_state=0)
    start, cpu = time.perf_counter(), time.process_time()
    done = 0
    while done < n:
        hgb.predict(rows.iloc[: min(len(rows), n - done)])
        done += len(rows)
    own, own_cpu = time.perf_counter() - start, time.process_time() - cpu
    sampling = total - LEARN_SECONDS[0][0]
    sampling_cpu = total_cpu - LEARN_SECONDS[0][1]
    overhead = (sampling - timed.seconds_) / sampling
    overhead_cpu = (sampling_cpu - timed.cpu_) / sampling_cpu
    widths = ver.groups_["ci_high"] - ver.groups_["ci_low"]
    table = pd.DataFrame([{
        "rows of X": len(X), "groups": len(ver.groups_), "tolerance": tolerance,
        "samples": n, "widest interval": round(float(widths.max()), 5),
        "fit (s, wall | cpu)": f"{total:.1f} | {total_cpu:.1f}",
        "network learning (s)": f"{LEARN_SECONDS[0][0]:.1f} | {LEARN_SECONDS[0][1]:.1f}",
        "sampling phase (s)": f"{sampling:.1f} | {sampling_cpu:.1f}",
        "predict inside sampling (s)": f"{timed.seconds_:.1f} | {timed.cpu_:.1f}",
        "model's own predict, same rows (s)": f"{own:.1f} | {own_cpu:.1f}",
        "fit / own predict": f"{total / own:.2f} | {total_cpu / own_cpu:.2f}",
        "sampler overhead share": f"{overhead:.1%} | {overhead_cpu:.1%}",
    }]).T
    table.columns = ["value"]
    print("Part 1: HistGradientBoostingClassifier on Adult (sex x race), method_ =",
          ver.method_)
    print(markdown(table))
    print()
    print(markdown(ver.groups_[SENSITIVE + ["positive_rate", "ci_low", "ci_high"]],
                   index=False))
    print("metric intervals:", {k: tuple(round(b, 4) for b in v)
                                for k, v in ver.metric_intervals_.items()})
    return ver


LEARN_SECONDS: list[tuple[float, float]] = []


def _time_learning():
    """Record the network learning time of the verifier (wraps its private learner)."""
    from skfairverify.verification import _learning

    original = _learning.NetworkLearner.learn_networks

    def timed(self, *args, **kwargs):
        start, cpu = time.perf_counter(), time.process_time()
        out = original(self, *args, **kwargs)
        LEARN_SECONDS.append((time.perf_counter() - start, time.process_time() - cpu))
        return out

    _learning.NetworkLearner.learn_networks = timed


def to_pgmpy(net):
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    names = [str(n) for n in net.names]
    edges = [(names[p], names[i]) for i in range(net.n_variables) for p in net.parents[i]]
    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(names)
    for i in range(net.n_variables):
        card = net.cardinalities[i]
        parents = [names[p] for p in net.parents[i]]
        values = net.cpts[i].reshape(-1, card).T
        model.add_cpds(TabularCPD(names[i], card, values, evidence=parents or None,
                                  evidence_card=[net.cardinalities[p]
                                                 for p in net.parents[i]] or None))
    return model


def part2(ver, n_ours=1_000_000, n_pgmpy=20_000):
    from pgmpy.sampling import BayesianModelSampling

    net = ver.network_
    sampler = NetworkSampler(net)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(n_ours // 100_000):
        sampler.sample(100_000, rng)
    ours = (time.perf_counter() - start) / n_ours
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=UserWarning, module="pgmpy")
        model = to_pgmpy(net)
        start = time.perf_counter()
        BayesianModelSampling(model).forward_sample(size=n_pgmpy, seed=0,
                                                    show_progress=False)
        theirs = (time.perf_counter() - start) / n_pgmpy
    table = pd.DataFrame([{
        "variables": net.n_variables, "largest table": max(c.size for c in net.cpts),
        "ours (us/sample)": round(ours * 1e6, 3), "samples (ours)": n_ours,
        "pgmpy forward_sample (us/sample)": round(theirs * 1e6, 3),
        "samples (pgmpy)": n_pgmpy, "speed-up": round(theirs / ours, 1),
    }]).T
    table.columns = ["value"]
    print("\nPart 2: ancestral sampling of the learned network, per sample")
    print(markdown(table))


def part3(tolerance: float, n_draws: int = 50):
    """Monte Carlo intervals only vs the combined intervals, same fit otherwise."""
    X, hgb = adult_model()
    runs = {}
    for draws in (0, n_draws):
        start, cpu = time.perf_counter(), time.process_time()
        ver = FairnessVerifier(FrozenEstimator(hgb), SENSITIVE, tolerance=tolerance,
                               confidence=0.99, n_draws=draws, random_state=0).fit(X)
        runs[draws] = (ver, time.perf_counter() - start, time.process_time() - cpu)
    (mc, mc_wall, mc_cpu), (both, wall, cpu) = runs[0], runs[n_draws]
    point = mc.n_samples_  # the same Monte Carlo stream: the same point estimates
    rows = []
    for label, ver, w, c in (("n_draws=0 (Monte Carlo only)", mc, mc_wall, mc_cpu),
                             (f"n_draws={n_draws} (combined)", both, wall, cpu)):
        widths = (ver.groups_["ci_high"] - ver.groups_["ci_low"]).to_numpy()
        sp = ver.metric_intervals_["statistical_parity"]
        rows.append({
            "intervals": label, "rows, point estimates": point,
            "rows, posterior draws": ver.n_samples_ - point,
            "fit (s, wall / cpu)": f"{w:.1f} / {c:.1f}",
            "fit / Monte Carlo only (cpu)": f"{c / mc_cpu:.2f}",
            "group interval width, median / max": f"{np.median(widths):.4f} / "
                                                  f"{widths.max():.4f}",
            "SP interval": f"[{sp[0]:.4f}, {sp[1]:.4f}]",
        })
    print(f"\nPart 3: cost of the combined intervals, tolerance={tolerance}, "
          f"credible_level=0.95, {len(X):,} rows, {len(mc.groups_)} groups")
    print(markdown(pd.DataFrame(rows).set_index("intervals").T))
    table = both.groups_[SENSITIVE + ["support", "positive_rate", "ci_low", "ci_high"]]
    table = table.assign(mc_low=mc.groups_["ci_low"], mc_high=mc.groups_["ci_high"])
    print()
    print(markdown(table, index=False))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tolerance 0.02")
    parser.add_argument("--tolerance", type=float, default=None)
    parser.add_argument("--part", type=int, choices=(1, 2, 3), action="append",
                        help="run only these parts (2 needs 1)")
    args = parser.parse_args()
    tolerance = args.tolerance or (0.02 if args.quick else 0.005)
    parts = set(args.part or (1, 2, 3))
    if parts & {1, 2}:
        _time_learning()
        ver = part1(tolerance)
        if 2 in parts:
            part2(ver)
    if 3 in parts:
        part3(tolerance)


if __name__ == "__main__":
    main()
