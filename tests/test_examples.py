"""Run every script of ``examples/`` in quick mode, check the lines it prints and the
figures it draws.

Each example prints machine-checkable ``CHECK key=value ...`` lines; the checks below
hold them to what the example claims (an alarm under the DI threshold, a constrained
choice within its bound, equal numbers with and without dask, ...).
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
TIMEOUT = 180  # seconds per script; quick mode takes 5-25 s on an idle 2-core machine


def _checks(output: str) -> list[dict[str, str]]:
    """The ``CHECK`` lines of an output, each as ``{key: value}``.

    A leading token without ``=`` (``CHECK aware verified_DI=...``) is kept as
    ``"_name"``.
    """
    found = []
    for line in output.splitlines():
        if not line.startswith("CHECK "):
            continue
        tokens = line.split()[1:]
        row = dict(tok.split("=", 1) for tok in tokens if "=" in tok)
        if tokens and "=" not in tokens[0]:
            row["_name"] = tokens[0]
        found.append(row)
    return found


def _by_name(checks) -> dict[str, dict[str, str]]:
    return {c["_name"]: c for c in checks if "_name" in c}


def _single(checks, key) -> dict[str, str]:
    rows = [c for c in checks if key in c]
    assert len(rows) == 1, f"expected one CHECK line with {key!r}, got {rows}"
    return rows[0]


def check_verify_pipeline(out, checks):
    assert _single(checks, "unaware_unread")["unaware_unread"] == "['sex']"
    named = _by_name(checks)
    aware, unaware = named["aware"], named["unaware"]
    for row in (aware, unaware):
        di, emp = float(row["verified_DI"]), float(row["empirical_DI"])
        assert 0 < di <= 1 and 0 < emp <= 1
        # the verified DI (over the learned distribution) and fairlearn's (on the
        # rows) estimate the same population quantity
        assert abs(di - emp) < 0.05
    # dropping the sensitive column reduces (but does not remove) the gap here
    assert float(unaware["verified_DI"]) > float(aware["verified_DI"])


def check_reweighing(out, checks):
    di = _single(checks, "DI_before")
    assert float(di["DI_after"]) > float(di["DI_before"])
    sp = _single(checks, "SP_before")
    assert float(sp["SP_after"]) < float(sp["SP_before"])
    # Kamiran-Calders weights make the label independent of the group (printed check)
    line = next(line for line in out.splitlines() if line.startswith("weighted P(Y=1 | sex)"))
    values = [float(v.split(":")[1]) for v in line.split("{")[1].rstrip("}").split(",")]
    assert max(values) - min(values) < 1e-3


def check_poisoning(out, checks):
    rows = [c for c in checks if "n_poisoned" in c]
    assert len(rows) >= 3
    sizes = [int(c["n_poisoned"]) for c in rows]
    assert sizes == sorted(sizes) and sizes[0] == 0
    for c in rows:
        assert c["status"] == ("ALARM" if float(c["DI"]) < 0.9 else "ok")
    assert rows[0]["status"] == "ok"
    assert rows[-1]["status"] == "ALARM"
    assert "ALARM: verified DI under 0.9" in out
    assert float(rows[-1]["DI"]) < float(rows[0]["DI"])


def check_threshold_optimizer(out, checks):
    named = _by_name(checks)
    base, dp = named["logistic_(unaware)"], named["TO_demographic_parity"]
    # demographic-parity thresholds shrink the selection-rate (statistical parity) gap
    assert abs(float(dp["esl_sel_diff"])) < abs(float(base["esl_sel_diff"])) / 2
    assert float(dp["p_sel"]) > 0.01
    assert float(base["p_sel"]) < 0.01
    assert "TO_equal_opportunity" in named
    for c in checks:
        assert -1 <= float(c["cflips_delta"]) <= 1


def check_constrained_search(out, checks):
    c = _single(checks, "bound")
    bound = float(c["bound"])
    assert c["feasible"] == "1"
    assert float(c["chosen_sp_gap"]) <= bound
    assert float(c["chosen_acc"]) <= float(c["unconstrained_acc"])
    assert float(c["unconstrained_sp_gap"]) > bound  # the bound binds in this example


def check_cflips_model_families(out, checks):
    models = [c["model"] for c in checks if "model" in c]
    assert models == ["LR", "SVM", "DT", "RF", "MLP"]
    for c in checks:
        for key in ("cflips_delta", "ndccf_delta"):
            value = float(c[key])
            assert math.isfinite(value) and -1 <= value <= 1


def check_esl_decomposition(out, checks):
    c = _single(checks, "efficiency_error")
    assert float(c["efficiency_error"]) < 1e-9
    assert float(c["first_stage_p"]) < 0.05
    # the paper's finding: marital status drives the gender TPR gap
    assert "marital-status" in c["flagged"].split(",")


def check_dask_parallel(out, checks):
    assert int(_single(checks, "dask_tasks")["dask_tasks"]) > 0  # the cluster did run them
    named = _by_name(checks)
    assert set(named) == {"verifier", "influence", "esl", "search"}
    for c in named.values():
        assert c["equal"] == "True"
        assert float(c["max_diff"]) == 0.0


def check_any_classifier(out, checks):
    # provisional (the example is another part's work): every verified gap lies in its
    # interval, and the intervals have a width
    rows = [c for c in checks if "SP" in c]
    assert rows, "no CHECK line with a verified SP"
    for c in rows:
        assert float(c["SP_low"]) <= float(c["SP"]) <= float(c["SP_high"]), c
        assert float(c.get("widest", 0)) >= 0


def check_bring_your_own_data(out, checks):
    named = _by_name(checks)
    linear, sampled, cli = named["linear"], named["sampled"], named["cli"]
    assert linear["method"] == "exact" and float(linear["agreement"]) >= 0.95
    assert linear["missing_state"] == "True"  # Age's missing values: a state of their own
    assert linear["rows"] == "623" and linear["groups"] == "3"  # 70% of 891, no row dropped
    assert sampled["method"] == "sampling"
    assert float(sampled["SP_low"]) <= float(sampled["SP"]) <= float(sampled["SP_high"])
    assert cli["rows_used"] == "891" and cli["guessed"] == "True"
    assert all(float(v) >= 0 for k, v in named["costs"].items() if k.startswith("step"))


CHECKERS = {
    "plot_verify_pipeline.py": check_verify_pipeline,
    "plot_reweighing.py": check_reweighing,
    "plot_threshold_optimizer_audit.py": check_threshold_optimizer,
    "plot_poisoning.py": check_poisoning,
    "plot_constrained_search.py": check_constrained_search,
    "plot_cflips_model_families.py": check_cflips_model_families,
    "plot_esl_decomposition.py": check_esl_decomposition,
    "plot_dask_parallel.py": check_dask_parallel,
    "plot_any_classifier.py": check_any_classifier,
    "plot_bring_your_own_data.py": check_bring_your_own_data,
}
NEEDS = {"plot_dask_parallel.py": "distributed"}


# figures each example draws (it ends with plt.show(), as in a gallery)
FIGURES = {
    "plot_verify_pipeline.py": 2,  # group rates of both models, fairness influence
    "plot_reweighing.py": 1,
    "plot_threshold_optimizer_audit.py": 1,
    "plot_poisoning.py": 1,
    "plot_constrained_search.py": 1,  # the Pareto view
    "plot_cflips_model_families.py": 2,
    "plot_esl_decomposition.py": 2,  # contributions, intervals of the differences
    "plot_dask_parallel.py": 1,
    "plot_any_classifier.py": 1,  # the group rates with their confidence intervals
    "plot_bring_your_own_data.py": 1,  # the verified rates of the three classes
}

# Runs an example as __main__ under the Agg backend, then saves every open figure to
# the directory given as second argument and prints one line per figure: its size in
# inches, its number of drawn artists (lines, patches, collections, images) and how far
# its drawn texts reach beyond its edges.
_RUNNER = """
import runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.show = lambda *args, **kwargs: None
runpy.run_path(sys.argv[1], run_name="__main__")
for number in plt.get_fignums():
    fig = plt.figure(number)
    fig.canvas.draw()
    artists = sum(len(ax.lines) + len(ax.patches) + len(ax.collections) + len(ax.images)
                  for ax in fig.axes)
    width, height = fig.get_size_inches()
    # how far the drawn texts reach beyond the figure (inches): a cut title or label
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    overflow = max(-box.x0, -box.y0, box.x1 - width, box.y1 - height, 0.0)
    fig.savefig(f"{sys.argv[2]}/figure{number}.png", dpi=60)
    print(f"FIGURE number={number} width={width:.2f} height={height:.2f} artists={artists} "
          f"overflow={overflow:.3f}")
"""


def test_every_example_has_a_checker():
    scripts = sorted(p.name for p in EXAMPLES_DIR.glob("*.py"))
    assert scripts == sorted(CHECKERS) == sorted(FIGURES)


def _check_figures(script, output, directory):
    figures = [dict(tok.split("=") for tok in line.split()[1:])
               for line in output.splitlines() if line.startswith("FIGURE ")]
    assert len(figures) == FIGURES[script], f"{script} drew {len(figures)} figures"
    for fig in figures:
        assert int(fig["artists"]) > 0, f"{script}: figure {fig['number']} is empty"
        # fits a page (7.5 x 9 inches), no title or label cut at its edges
        assert float(fig["width"]) <= 7.5 and float(fig["height"]) <= 9.0, fig
        assert float(fig["overflow"]) <= 0.02, f"{script}: text cut at the figure's edge {fig}"
        png = directory / f"figure{fig['number']}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


@pytest.mark.parametrize("script", sorted(CHECKERS))
def test_example_runs(script, tmp_path):
    module = NEEDS.get(script)
    if module is not None and importlib.util.find_spec(module) is None:
        pytest.skip(f"{script} needs {module} (pip install 'skfairverify[dask]')")
    pytest.importorskip("matplotlib")
    # the checkout's package first, whatever an installed copy points to
    path = os.pathsep.join(filter(None, [str(EXAMPLES_DIR.parent), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, SKFAIRVERIFY_EXAMPLE_QUICK="1", MPLBACKEND="Agg", PYTHONPATH=path)
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(EXAMPLES_DIR / script), str(tmp_path)],
        capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=str(EXAMPLES_DIR),
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout}\n{proc.stderr}"
    checks = _checks(proc.stdout)
    assert checks, f"{script} printed no CHECK line:\n{proc.stdout}"
    CHECKERS[script](proc.stdout, checks)
    _check_figures(script, proc.stdout, tmp_path)
