"""The hierarchical prior's leave-one-out search: new refits against the former ones.

Issue 16, closing pass. ``FairnessVerifier`` on Adult (sex x race, the LR pipeline of
``bench_intervals.py --cost``, with y: three networks) is fitted once to collect every
table the hierarchical prior shrinks (the counts, the sensitive axes, the equivalent
sample size). For each table, the strength ``u`` and the target (shared or not) are
chosen twice:

* new: this package's ``_parameters._additive_prior`` (the refit of the unit's state of
  the other parents only, each refit until its cell converges);
* old: the same function at ``--old-commit`` (default 022cdb1: every refit on the whole
  table, 25 IPF cycles), its module loaded from ``git show`` into a temporary file, with
  its budget ``_LOO_MAX_ENTRIES`` lifted so that it refits every table (it used the
  target fitted on all rows beyond 5e7 entries).

Printed: one line per table (shape, the two choices), how many agree, and the CPU seconds
(``time.process_time``) of each search over all the tables.

    OMP_NUM_THREADS=1 python benchmarks/bench_hierarchical.py
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

from skfairverify.verification import FairnessVerifier, _parameters

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_intervals import _cost_data  # noqa: E402


def old_module(commit: str):
    """``verification/_parameters.py`` at ``commit``, imported from a temporary file."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.run(
        ["git", "-C", root, "show", f"{commit}:skfairverify/verification/_parameters.py"],
        check=True, capture_output=True, text=True).stdout
    path = os.path.join(tempfile.mkdtemp(prefix="old-parameters-"), "_parameters.py")
    with open(path, "w") as f:
        f.write(source)
    # a submodule name so that its relative import (..s3p) resolves in this package
    spec = importlib.util.spec_from_file_location("skfairverify.verification._old_p", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def adult_tables() -> list:
    """Every table the hierarchical prior shrinks in a fit on Adult."""
    tables = []
    original = _parameters._additive_prior

    def record(counts, n_sens, ess, grid):
        tables.append((counts.copy(), n_sens, ess))
        return original(counts, n_sens, ess, grid)

    _parameters._additive_prior = record
    try:
        model, X, y, sensitive = _cost_data("adult")
        FairnessVerifier(model, sensitive, n_draws=0, random_state=0).fit(X, y)
    finally:
        _parameters._additive_prior = original
    return tables


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-commit", default="022cdb1")
    args = parser.parse_args()
    old = old_module(args.old_commit)
    old._LOO_MAX_ENTRIES = 10**15
    tables = adult_tables()
    same, seconds = 0, {"new": 0.0, "old": 0.0}
    for counts, n_sens, ess in tables:
        chosen = {}
        for label, module in (("new", _parameters), ("old", old)):
            t0 = time.process_time()
            # the search itself (this package remembers the choices of a fit)
            search = getattr(module, "_search_additive", module._additive_prior)
            _, strengths, shared = search(counts, n_sens, ess, module.STRENGTH_GRID)
            seconds[label] += time.process_time() - t0
            chosen[label] = (strengths[1], shared)
        agree = chosen["new"] == chosen["old"]
        same += agree
        new, was = chosen["new"], chosen["old"]
        print(f"{str(counts.shape):18s} new u={new[0]:8.3g} shared={new[1]!s:5s}"
              f" | old u={was[0]:8.3g} shared={was[1]!s:5s}"
              f" {'same' if agree else 'DIFFERENT'}", flush=True)
    print(f"\n{same} of {len(tables)} tables: same strength and target; CPU s over all "
          f"tables: new {seconds['new']:.1f}, old ({args.old_commit}) {seconds['old']:.1f} "
          f"(ratio {seconds['old'] / seconds['new']:.0f}x)")


if __name__ == "__main__":
    main()
