"""Benchmark of the exact path for decision trees (issue 12) on Adult, sex x race.

A ``DecisionTreeClassifier`` (one-hot encoded categorical columns, raw numeric ones)
fitted on all rows of Adult (45,222 rows without missing values), read as positive
leaves on the raw columns; the variables are the sensitive columns and the columns the
tree reads, with states refined at every threshold (``tree_encoding``, n_bins=10); the
network is learned as the verifier does (K2 hill climbing, max_indegree=2). Then:

1. Timing per depth (a depth whose variables are refused by a guard is listed as
   refused, with the message): reading the tree, building the variables, learning the network,
   the exact rates (``tree_group_rates``), next to the baseline: a Monte Carlo estimate
   of the same rates by ancestral sampling from the same network (300,000 samples),
   each state mapped to a value of its cell, and the model's ``predict``. Their ratio;
   the largest |exact - Monte Carlo| in standard errors (the check that the exact
   value is right where enumeration is impossible), and the largest |exact - empirical|
   (the tree's positive rate on the data: close, not equal, since the network is a
   model of the data).
2. Per group at depth 8: exact rate, Monte Carlo rate with its 99% normal interval,
   empirical rate and the group's rows.

Usage::

    python benchmarks/bench_trees.py            # depths 4, 8, 10, 12
    python benchmarks/bench_trees.py --quick    # depth 8 only
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

from skfairverify.datasets import load_adult
from skfairverify.rules import positive_leaves
from skfairverify.s3p import TableTooLargeError
from skfairverify.verification._network import learn_network
from skfairverify.verification._trees_exact import tree_group_rates
from skfairverify.verification._trees_states import tree_encoding

SENSITIVE = ["sex", "race"]
N_SAMPLES = 300_000
Z99 = 2.5758


def _model(X, y, depth):
    cat = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    num = [c for c in X.columns if c not in cat]
    ct = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), cat),
                                 ("passthrough", num))
    return make_pipeline(ct, DecisionTreeClassifier(max_depth=depth, random_state=0)).fit(X, y)


def _monte_carlo(network, enc, model, X, sens_idx, groups, seed=0):
    """Rates by sampling the network and predicting: (rates, samples per group)."""
    samples = network.sample(N_SAMPLES, random_state=seed)
    cols = {}
    for j, v in enumerate(enc.variables):
        rep = np.asarray(v.values if v.kind != "categories" else v.states, dtype=object)
        cols[v.name] = rep[samples[:, j]]
    frame = pd.DataFrame(cols)
    for c in X.columns:  # columns the tree does not read: any value
        frame[c] = X[c].iloc[0] if c not in frame else frame[c]
        if pd.api.types.is_numeric_dtype(X[c]):
            frame[c] = frame[c].astype(float)
    positive = model.predict(frame[X.columns]) == model.classes_[1]
    rates, counts = [], []
    for g in groups:
        m = (samples[:, sens_idx] == g).all(axis=1)
        rates.append(positive[m].mean())
        counts.append(int(m.sum()))
    return np.array(rates), np.array(counts)


def run(depth, X, y):
    out = {"depth": depth}
    model = _model(X, y, depth)
    t = time.perf_counter()
    leaves = positive_leaves(model)
    out["read_s"] = time.perf_counter() - t
    out["leaves"] = f"{len(leaves.regions)}/{leaves.n_leaves}"
    t = time.perf_counter()
    enc = tree_encoding(X, leaves, SENSITIVE, n_bins=10)
    codes = enc.codes(X)
    out["encode_s"] = time.perf_counter() - t
    out["max_states"] = max(enc.cardinalities)
    t = time.perf_counter()
    net = learn_network(codes, enc.names, enc.cardinalities, SENSITIVE,
                        coarsenable=[v.kind == "binned" for v in enc.variables],
                        max_indegree=2)
    out["network_s"] = time.perf_counter() - t
    sens_idx = [enc.index(s) for s in SENSITIVE]
    groups = np.unique(codes[:, sens_idx], axis=0)
    t = time.perf_counter()
    exact = tree_group_rates(net, enc, leaves, sens_idx, groups, max_table_size=50_000_000)
    out["exact_s"] = time.perf_counter() - t
    t = time.perf_counter()
    mc, counts = _monte_carlo(net, enc, model, X, sens_idx, groups)
    out["mc_s"] = time.perf_counter() - t
    out["mc/exact"] = out["mc_s"] / out["exact_s"]
    se = np.sqrt(np.maximum(exact * (1 - exact), 1e-12) / counts)
    out["max_|z|_vs_mc"] = float(np.max(np.abs(mc - exact) / se))
    pred = model.predict(X) == model.classes_[1]
    empirical = np.array([pred[(codes[:, sens_idx] == g).all(axis=1)].mean() for g in groups])
    out["max_|exact-emp|"] = float(np.max(np.abs(exact - empirical)))
    table = pd.DataFrame({
        s: [enc.variables[i].states[g[k]] for g in groups]
        for k, (s, i) in enumerate(zip(SENSITIVE, sens_idx))})
    table["exact"] = exact
    half = Z99 * np.sqrt(mc * (1 - mc) / counts)
    table["monte_carlo"] = [f"{m:.4f} [{m - h:.4f}, {m + h:.4f}]" for m, h in zip(mc, half)]
    table["empirical"] = empirical
    table["rows"] = [int((codes[:, sens_idx] == g).all(axis=1).sum()) for g in groups]
    return out, table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="depth 8 only")
    args = parser.parse_args()
    data = load_adult(dropna=True)
    X, y = data.data.drop(columns="split"), data.target.to_numpy()
    depths = [8] if args.quick else [4, 8, 10, 12]
    rows, tables, refused = [], {}, []
    for depth in depths:
        try:
            row, tables[depth] = run(depth, X, y)
        except TableTooLargeError as exc:  # the network's learning guard, say
            refused.append(f"depth {depth}: {str(exc)[:160]} ...")
            continue
        rows.append(row)
    pd.set_option("display.width", 200)
    print(f"Adult ({len(X):,} rows), sex x race, exact tree rates vs Monte Carlo "
          f"({N_SAMPLES:,} samples of the same network + predict)")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for line in refused:
        print("refused:", line)
    print("\nPer group, depth 8 (Monte Carlo with its 99% interval):")
    print(tables[8].to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
