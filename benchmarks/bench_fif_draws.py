"""The estimate of the fairness influence's posterior draws against their measured time.

``FairnessVerifier.fairness_influence()`` refuses a subset's posterior draws when their
time, estimated from sizes before any draw is solved (the path's ``draws_seconds``: the
engine's plan of the draws' rule on the linear path, the tree's planned elimination on
the tree path, the point search's nodes x trees x ``SEARCH_NS_PER_NODE_TREE`` on the
tree-ensemble path, its deadline when it stopped there), is beyond the work bound of
``max_table_size``. This script prints, for every case and feature subset, that
estimate and the measured CPU seconds (``time.process_time``) of solving the same draws
(the draws' rates function on every draw's reference network, as ``fairness_influence``
solves them), side by side in one run, and their ratio.

Cases: Adult (sex x race) with the logistic-regression pipeline of
``bench_intervals.py`` (linear path) and decision trees of depth 8 and 12 on one-hot
columns (tree path), every draw (``n_draws=50``); Titanic (``/work/shared/datasets``,
Sex) with an ``OrdinalEncoder`` + ``RandomForestClassifier(100, max_depth=6)`` pipeline
(the audit's case, ``method="bounds"``), a smaller forest and HistGradientBoosting (30 trees of
depth 3), the calibration of ``SEARCH_NS_PER_NODE_TREE``; ``--ensemble-draws`` draws
each (a draw is a search of its own: about 10 s on the first case).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_fif_draws.py`` (``--cases``,
``--ensemble-draws``, ``--titanic PATH``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from skfairverify import FairnessVerifier  # noqa: E402
from skfairverify.verification._fif import Influence  # noqa: E402
from skfairverify.verification._settings import Settings  # noqa: E402

TITANIC = "/work/shared/datasets/titanic/titanic.csv"


def adult_linear():
    from bench_intervals import _cost_data

    model, X, y, sensitive = _cost_data("adult")
    return model, X, y, sensitive, {}


def adult_tree(depth=8):
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.frozen import FrozenEstimator
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    from skfairverify.datasets import load_adult

    data = load_adult(dropna=True)
    X = data.data.drop(columns=["split"], errors="ignore")
    y = data.target.to_numpy()
    pipe = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")),
        remainder="passthrough"), DecisionTreeClassifier(max_depth=depth, random_state=0))
    return FrozenEstimator(pipe.fit(X, y)), X, y, ["sex", "race"], {}


def titanic(estimator):
    def case():
        from sklearn.compose import make_column_transformer
        from sklearn.frozen import FrozenEstimator
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OrdinalEncoder

        df = pd.read_csv(TITANIC)
        X = df[["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]].copy()
        X["Embarked"] = X["Embarked"].fillna("S")
        y = df["Survived"].to_numpy()
        encode = make_column_transformer(
            (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
             ["Sex", "Embarked"]), remainder="passthrough")
        model = make_pipeline(encode, estimator).fit(X, y)
        return FrozenEstimator(model), X, y, "Sex", {"method": "bounds"}

    return case


def _titanic_cases():
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    return {
        "titanic RF(100, depth 6)": titanic(RandomForestClassifier(100, max_depth=6,
                                                                   random_state=0)),
        "titanic RF(30, depth 4)": titanic(RandomForestClassifier(30, max_depth=4,
                                                                  random_state=0)),
        "titanic HGB(30, depth 3)": titanic(HistGradientBoostingClassifier(
            max_iter=30, max_depth=3, random_state=0)),
    }


CASES = {"adult linear": adult_linear, "adult tree(depth 8)": adult_tree,
         "adult tree(depth 12)": lambda: adult_tree(12)}


def measure(name, case, subsets, ensemble_draws):
    """Rows (subset, draws, estimate, measured, ratio) of one case."""
    model, X, y, sensitive, params = case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ver = FairnessVerifier(model, sensitive, n_draws=50, random_state=0,
                               **params).fit(X, y)
    influence = Influence(ver._path, ver._variables, ver.network_, ver.groups_,
                          Settings.of(ver))
    draws, _ = influence.draws()
    if ver.method_ == "bounds":
        draws = draws[:ensemble_draws]
    rows = []
    names = [n for n in ver.variables_ if n not in ver.sensitive_features_]
    for subset in ([n] for n in names[:subsets]):
        net = influence.reference_network(subset, "support")
        point = ver._path.point_rates(net)
        rates_of = ver._path.draw_rates_of(net, exact=point)
        estimate = ver._path.draws_seconds(net, len(draws), rates_of)
        nets = [influence.reference_network(subset, "support", d) for d in draws]
        start = time.process_time()
        for d in nets:
            rates_of(d)
        measured = time.process_time() - start
        rows.append({"case": name, "method": ver.method_, "subset": subset[0],
                     "draws": len(draws), "estimate s": estimate, "measured CPU s": measured,
                     "estimate / measured": estimate / measured})
        print(rows[-1], flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=None,
                        help="case names (default: all)")
    parser.add_argument("--subsets", type=int, default=3,
                        help="feature subsets per case (the first variables)")
    parser.add_argument("--ensemble-draws", type=int, default=3,
                        help="draws measured on the tree-ensemble path (each a search)")
    parser.add_argument("--titanic", default=TITANIC)
    args = parser.parse_args(argv)
    globals()["TITANIC"] = args.titanic
    cases = {**CASES, **_titanic_cases()}
    chosen = args.cases or list(cases)
    rows = []
    for name in chosen:
        rows += measure(name, cases[name], args.subsets, args.ensemble_draws)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    ratio = table["estimate / measured"]
    print(f"estimate / measured: min {ratio.min():.3g}, median {np.median(ratio):.3g}, "
          f"max {ratio.max():.3g}")


if __name__ == "__main__":
    main()
