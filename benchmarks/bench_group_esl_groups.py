"""group_esl with thousands of groups: the one-attribute path against the general problem.

Issue 28: ``group_esl(..., value="equal_surplus")`` on 3,000 groups x 100,000 rows grew
with rows x groups (a dense cells x rows indicator, 2.4 GB) and ran past 20 s. The
first stage of one sensitive attribute is now computed from five sums per group and a
sparse coalition membership (``skfairverify/esl/_one_attribute.py``); the general
estimation problem (``_Problem``, still the path of several attributes and of
``esl_decomposition``) is the baseline. Both run on the same rows, side by side, and the
table prints the time, the peak traced memory (tracemalloc) and the ratio, with the
largest difference of the values and covariances (round-off).

Target: 3,000 groups x 100,000 rows in under 10 s and 1 GB.

Usage: python benchmarks/bench_group_esl_groups.py [--quick]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

from skfairverify.esl._group import _first_stage_map
from skfairverify.esl._one_attribute import one_attribute_estimates
from skfairverify.esl._values import _resolve_coefficients
from skfairverify.esl._variance import _Problem


def _general(metric, y, yhat, cells, n_cells, value, baseline):
    """The baseline: the general problem's values and covariances (what group_esl did)."""
    unions, matrix = _first_stage_map([list(range(n_cells))], value)
    problem = _Problem(yhat[:, None], y, cells, n_cells, unions, metric, baseline)
    one = np.ones((1, 1))
    return {"esl_values": problem.outputs(one, matrix)[0],
            "esl_covariance": problem.covariance(one, matrix)}


def _measure(fn, *args):
    tracemalloc.start()
    start = time.perf_counter()
    out = fn(*args)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, seconds, peak / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    args = parser.parse_args()
    sizes = [(20_000, 500), (20_000, 3_000)] + ([] if args.quick else [(100_000, 3_000)])
    print(f"{'rows':>8} {'groups':>6} | {'ours s':>7} {'MiB':>6} | {'general s':>9} "
          f"{'MiB':>6} | {'time ratio':>10} {'max |diff|':>10}")
    for n, groups in sizes:
        rng = np.random.default_rng(0)
        y, yhat = rng.integers(0, 2, n), rng.integers(0, 2, n)
        # the groups present (group_esl's groups are those of the rows)
        _, cells = np.unique(rng.integers(0, groups, n), return_inverse=True)
        groups = int(cells.max()) + 1
        b = _resolve_coefficients("equal_surplus", groups)
        with threadpool_limits(1):
            ours, t_ours, m_ours = _measure(one_attribute_estimates, "selection_rate", y,
                                            yhat, cells, groups, b, 0.5)
            base, t_base, m_base = _measure(_general, "selection_rate", y, yhat, cells,
                                            groups, "equal_surplus", 0.5)
        diff = max(np.abs(ours[k] - base[k]).max() for k in base)
        print(f"{n:>8,} {groups:>6,} | {t_ours:>7.2f} {m_ours:>6.0f} | {t_base:>9.2f} "
              f"{m_base:>6.0f} | {t_base / t_ours:>9.1f}x {diff:>10.1e}")


if __name__ == "__main__":
    main()
