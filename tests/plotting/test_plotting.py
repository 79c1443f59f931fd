"""Figures: sorted and folded influence, legends outside the data, no overlapping labels,
page-sized figures, intervals and Pareto fronts equal to an independent computation.

The layout properties are measured on the rendered figure (window extents after a
draw), on Adult's intersectional groups (race x sex: ten groups with long labels).
"""

from __future__ import annotations

import copy
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from scipy import stats  # noqa: E402
from sklearn.compose import make_column_selector, make_column_transformer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

from skfairverify import (  # noqa: E402
    FairnessVerifier,
    esl_decomposition,
    fairness_constrained_refit,
    group_esl,
)
from skfairverify.datasets import load_adult  # noqa: E402
from skfairverify.plotting import (  # noqa: E402
    pareto_front,
    plot_cflips_at_k,
    plot_constrained_search,
    plot_esl_contributions,
    plot_esl_intervals,
    plot_fairness_influence,
    plot_group_rates,
    plot_group_shares,
    plot_proxy_correlations,
)

PAGE = (7.5, 9.0)  # the largest figure size, inches


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _model():
    columns = make_column_transformer(
        (StandardScaler(), make_column_selector(dtype_include="number")),
        (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")))
    return make_pipeline(columns, LogisticRegression(max_iter=500))


@pytest.fixture(scope="module")
def adult():
    data = load_adult(dropna=True)
    cols = ["age", "education-num", "hours-per-week", "marital-status", "occupation",
            "relationship", "race", "sex"]
    rows = np.random.default_rng(0).choice(len(data.data), 3000, replace=False)
    X = data.data[cols].iloc[rows].reset_index(drop=True)
    y = np.asarray(data.target)[rows]
    model = _model().fit(X, y)
    verifier = FairnessVerifier(model, ["race", "sex"], random_state=0).fit(X, y)
    return X, y, model, verifier


@pytest.fixture(scope="module")
def adult_fif(adult):
    return adult[3].fairness_influence()


@pytest.fixture(scope="module")
def adult_esl(adult):
    X, y, model, _ = adult
    return group_esl(y, model.predict(X), sensitive_features=X[["race", "sex"]],
                     metric="selection_rate")


@pytest.fixture(scope="module")
def decomposition():
    rng = np.random.default_rng(0)
    n = 900
    group = rng.choice(["Amer-Indian-Eskimo", "Asian-Pac-Islander", "White"], n)
    X = pd.DataFrame({"years-of-education": rng.normal(size=n),
                      "hours-per-week": rng.normal(size=n),
                      "marital-status-married": rng.integers(0, 2, n), "group": group})
    y = ((X["years-of-education"] + (group == "White") + rng.normal(size=n)) > 0.5)
    return esl_decomposition(_model(), X, y.astype(int), sensitive_features="group",
                             values=("shapley", "equal_surplus"), random_state=0)


# ---------------------------------------------------------------- layout measurements

def _figure(ax):
    ax = np.ravel(ax)[0]
    fig = ax.figure
    fig.canvas.draw()
    return fig


def _overlapping(texts) -> list[tuple[str, str]]:
    boxes = [(t.get_text(), t.get_window_extent()) for t in texts
             if t.get_visible() and t.get_text()]
    return [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2)
            if ba.overlaps(bb)]


def _drawn_ticklabels(axis):
    """The x and y tick labels within the view limits (the others are not drawn)."""
    def within(texts, limits, coord):
        low, high = sorted(limits)
        return [t for t in texts if low - 1e-9 <= t.get_position()[coord] <= high + 1e-9]

    return (within(axis.get_xticklabels(), axis.get_xlim(), 0),
            within(axis.get_yticklabels(), axis.get_ylim(), 1))


def assert_readable(ax):
    """Page-sized figure; nothing cut at its edges; tick labels disjoint; legends outside
    the data area."""
    fig = _figure(ax)
    width, height = fig.get_size_inches()
    assert width <= PAGE[0] + 1e-9 and height <= PAGE[1] + 1e-9, (width, height)
    # no title, label or legend cut at the figure's edges (tight box within the size)
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    assert min(box.x0, box.y0) >= -0.02 and box.x1 <= width + 0.02, box
    assert box.y1 <= height + 0.02, box
    frame = fig.bbox
    for axis in fig.axes:
        for texts in _drawn_ticklabels(axis):
            assert not _overlapping(texts), _overlapping(texts)
            for t in texts:
                box = t.get_window_extent()
                if t.get_text():
                    assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, t.get_text()
                    assert frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 + 1, t.get_text()
        legend = axis.get_legend()
        if legend is not None:
            box = legend.get_window_extent()
            assert not box.overlaps(axis.get_window_extent()), "legend on the data area"
            assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, "legend off the page"
            assert frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 + 1, "legend off the page"


def _ticks(ax, axis="y") -> list[str]:
    return [t.get_text() for t in getattr(ax, f"get_{axis}ticklabels")()]


# ----------------------------------------------------------------- verifier figures

def test_group_rates_on_adult_intersections_are_readable(adult):
    verifier = adult[3]
    ax = plot_group_rates(verifier, rate="network")
    assert_readable(ax)
    groups = verifier.groups_
    assert len(ax.patches) == len(groups) == 10
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, groups["positive_rate"])
    # one line per sensitive feature in each label
    assert _ticks(ax)[0] == f"race={groups['race'].iloc[0]}\nsex={groups['sex'].iloc[0]}"
    # bars below 0.8 x the largest rate are red, the others blue
    threshold = 0.8 * groups["positive_rate"].max()
    red = [p.get_facecolor()[:3] == matplotlib.colors.to_rgb("tab:red") for p in ax.patches]
    assert red == list(groups["positive_rate"] < threshold)
    # by default the population estimates, the network's rates marked beside them
    ax = plot_group_rates(verifier)
    assert_readable(ax)
    np.testing.assert_allclose([p.get_width() for p in ax.patches], groups["population_rate"])
    marks = [line for line in ax.get_lines() if line.get_marker() == "D"]
    np.testing.assert_allclose(marks[0].get_xdata(), groups["positive_rate"])
    assert ax.get_title().startswith("Population estimates (disparate impact")
    assert "population" in ax.get_xlabel()


def test_group_rates_draw_the_credible_intervals_when_present(adult):
    verifier = adult[3]
    groups = verifier.groups_.copy()
    rates = groups["positive_rate"].to_numpy()
    low, high = np.clip(rates - 0.01 * np.arange(len(rates)), 0, 1), rates + 0.02
    groups["ci_low"], groups["ci_high"] = low, high

    with_intervals = copy.copy(verifier)  # the verifier with the new columns
    with_intervals.groups_ = groups

    ax = plot_group_rates(with_intervals, rate="network")  # the network's own intervals
    assert_readable(ax)
    segments = [c for c in ax.collections if len(c.get_segments()) == len(groups)]
    assert len(segments) == 1
    ends = np.array([[s[0][0], s[1][0]] for s in segments[0].get_segments()])
    np.testing.assert_allclose(np.sort(ends, axis=1), np.c_[low, high])
    # the legend names what the intervals are (the adult verifier: 50 posterior draws)
    assert verifier.n_draws == 50 and verifier.credible_level == 0.95
    assert "95% credible\ninterval" in [t.get_text() for t in ax.get_legend().get_texts()]
    di, (lo, hi) = verifier.metrics_["disparate_impact"], verifier.metric_intervals_[
        "disparate_impact"]
    assert ax.get_title().endswith(f"disparate impact {di:.3f} [{lo:.3f}, {hi:.3f}])")
    # without the columns, or with intervals of zero width (exact path): no error bars
    for ci in ([], [rates, rates]):
        plain = groups.drop(columns=["ci_low", "ci_high"])
        if ci:
            plain["ci_low"], plain["ci_high"] = ci
        with_intervals.groups_ = plain
        ax = plot_group_rates(with_intervals, rate="network")
        assert not ax.collections
        assert len(ax.get_legend().get_texts()) == 3


def _spread(table):
    return {f: float(row.max() - row.min()) for f, row in table.iterrows()}


def test_fairness_influence_sorted_folded_and_readable(adult, adult_fif):
    table = adult_fif.table
    assert len(table) == 6  # features besides race and sex
    ax = plot_fairness_influence(adult[3], fif=adult_fif, top=4)
    assert_readable(ax)
    labels = _ticks(ax)
    spread = _spread(table)
    expected = sorted(spread, key=lambda f: -spread[f])[:4]
    assert [lab.replace("\n", " ") for lab in labels[:4]] == expected
    assert labels[4].replace("\n", " ") == "sum of the 2 other features"
    # ten groups: one marker per group and row; the folded row holds the sums
    points = np.vstack([c.get_offsets() for c in ax.collections if c.get_offsets().size
                        and len(c.get_offsets()) == 5])
    rest = [f for f in table.index if f not in expected]
    folded = np.sort(points[np.isclose(points[:, 1], 4), 0])
    np.testing.assert_allclose(folded, np.sort(table.loc[rest].sum().to_numpy()))


def test_fairness_influence_bars_for_two_groups_and_magnitude_order():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 800)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0), "z": rng.normal(0, 1, 800),
                      "w": rng.normal(0, 1, 800)})
    y = (X["x"] + 2 * X["z"] + 0.2 * X["w"] > 0.5).astype(int)
    verifier = FairnessVerifier(LogisticRegression(), "a", network="independent",
                                n_bins=6).fit(X, y)
    fif = verifier.fairness_influence()
    ax = plot_fairness_influence(verifier, fif=fif, sort_by="magnitude", top=None)
    assert_readable(ax)
    magnitude = fif.table.abs().max(axis=1).sort_values(ascending=False)
    assert _ticks(ax) == list(magnitude.index)
    assert len(ax.patches) == 2 * len(fif.table)  # grouped bars
    with pytest.raises(ValueError, match="top must be a positive integer"):
        plot_fairness_influence(verifier, fif=fif, top=0)
    with pytest.raises(ValueError, match="sort_by"):
        plot_fairness_influence(verifier, fif=fif, sort_by="size")


# ---------------------------------------------------------------------- ESL figures

def test_group_shares_on_adult_intersections(adult_esl):
    ax = plot_group_shares(adult_esl)
    assert_readable(ax)
    np.testing.assert_allclose([p.get_width() for p in ax.patches], adult_esl.esl_values)
    ax = plot_group_shares(adult_esl, kind="share")
    assert_readable(ax)
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               100 * adult_esl.esl_values / adult_esl.esl_values.sum())


def _forest_intervals(ax) -> np.ndarray:
    (lines,) = [c for c in ax.collections if hasattr(c, "get_segments")
                and len(c.get_segments())]
    return np.array([[s[0][0], s[1][0]] for s in lines.get_segments()])


def test_esl_intervals_equal_the_tables_of_the_result(adult_esl):
    axes = plot_esl_intervals(adult_esl, top=6)
    assert_readable(axes)
    table = adult_esl.to_frame()
    np.testing.assert_allclose(_forest_intervals(axes[0]),
                               table[["esl_ci_low", "esl_ci_high"]].to_numpy())
    pairs = adult_esl.pairwise().sort_values("p_value", kind="stable").iloc[:6]
    np.testing.assert_allclose(_forest_intervals(axes[1]),
                               pairs[["esl_ci_low", "esl_ci_high"]].to_numpy())
    assert "6 of 45" in axes[1].get_title()
    # metric units: the group rates and their raw gaps
    axes = plot_esl_intervals(adult_esl, units="metric", top=None)
    q = stats.norm.ppf(0.5 + adult_esl.confidence / 2)
    rates, se = adult_esl.metric_by_group, adult_esl.metric_std_errors
    np.testing.assert_allclose(_forest_intervals(axes[0]),
                               np.c_[rates - q * se, rates + q * se])
    assert len(axes[1].get_yticklabels()) == 45


def test_esl_interval_of_a_difference_is_the_closed_form_wald_interval():
    """Two groups, selection rate: p_a - p_b +/- z sqrt(p_a q_a / n_a + p_b q_b / n_b)."""
    rng = np.random.default_rng(3)
    g = rng.integers(0, 2, 400)
    y_pred = (rng.random(400) < np.array([0.3, 0.5])[g]).astype(int)
    res = group_esl(np.ones(400), y_pred, sensitive_features=g, metric="selection_rate",
                    confidence=0.9)
    axes = plot_esl_intervals(res, units="metric")
    p = np.array([y_pred[g == k].mean() for k in (0, 1)])
    n = np.array([(g == k).sum() for k in (0, 1)])
    half = stats.norm.ppf(0.95) * np.sqrt(np.sum(p * (1 - p) / n))
    np.testing.assert_allclose(_forest_intervals(axes[1]),
                               [[p[0] - p[1] - half, p[0] - p[1] + half]])
    assert _ticks(axes[1]) == ["0 - 1"]
    assert "90% intervals" in axes[0].get_title()


def test_esl_contributions_and_their_differences(decomposition):
    axes = plot_esl_contributions(decomposition)
    assert_readable(axes)
    shapley = decomposition.contributions.loc["shapley"]
    groups = list(decomposition.group_std_error.columns)
    widths = np.array([p.get_width() for p in axes[0].patches]).reshape(len(groups), -1)
    np.testing.assert_allclose(widths.T, shapley[groups].to_numpy())
    axes = plot_esl_intervals(decomposition)
    assert_readable(axes)
    np.testing.assert_allclose(_forest_intervals(axes[1]),
                               decomposition.contributions.loc["equal_surplus"][
                                   ["esl_ci_low", "esl_ci_high"]].to_numpy())
    with pytest.raises(ValueError, match="ESL units only"):
        plot_esl_intervals(decomposition, units="metric")


# --------------------------------------------------------------- counterfactual figures

def test_counterfactual_figures_are_readable():
    from skfairverify.counterfactual import CounterfactualResult

    per_k = pd.DataFrame({"cflips_privileged": [.1, .1, .2], "cflips_unprivileged": [.6, .5, .4],
                          "ndccf_privileged": [1., .9, .9], "ndccf_unprivileged": [.4, .5, .6]},
                         index=pd.Index([1, 2, 3], name="k"))
    result = CounterfactualResult.from_per_k(
        per_k, n_refused={"privileged": 8, "unprivileged": 9}, privileged="M")
    assert_readable(plot_cflips_at_k(result))
    names = [f"occupation=Machine-op-inspct-{i} and a very long tail" for i in range(25)]
    corr = pd.DataFrame({"feature": names, "correlation": np.linspace(-1, 1, 25)})
    ax = plot_proxy_correlations(corr, top=12)
    assert_readable(ax)
    assert len(ax.patches) == 12


# -------------------------------------------------------------------- Pareto view

def _dominated_by_enumeration(score, fair, i) -> bool:
    return any(score[j] >= score[i] and fair[j] >= fair[i]
               and (score[j] > score[i] or fair[j] > fair[i]) for j in range(len(score))
               if not (np.isnan(score[j]) or np.isnan(fair[j])))


@pytest.mark.parametrize("seed", range(5))
def test_pareto_front_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    score = rng.integers(0, 6, 30) / 5  # ties on purpose
    fair = -rng.integers(0, 6, 30) / 10
    score[rng.integers(0, 30)] = np.nan
    front = pareto_front(score, fair)
    expected = {i for i in range(30) if not np.isnan(score[i])
                and not _dominated_by_enumeration(score, fair, i)}
    assert set(front.tolist()) == expected
    assert np.all(np.diff(fair[front]) >= 0)


def test_constrained_search_view_marks_the_constraint_and_the_choice():
    rng = np.random.default_rng(0)
    cv = {"mean_test_acc": rng.uniform(0.7, 0.9, 12), "std_test_acc": np.full(12, 0.01),
          "mean_test_sp": -rng.uniform(0, 0.3, 12), "std_test_sp": np.full(12, 0.02)}
    refit = fairness_constrained_refit("acc", "sp", -0.1)
    ax = plot_constrained_search(cv, refit)
    assert_readable(ax)
    chosen = refit(cv)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"chosen: candidate {chosen}" in texts
    assert "constraint\nsp >= -0.1" in texts
    bound_lines = [ln for ln in ax.get_lines() if np.allclose(ln.get_xdata(), -0.1)]
    assert bound_lines
    marked = ax.collections[-1].get_offsets()
    np.testing.assert_allclose(marked, [[cv["mean_test_sp"][chosen],
                                         cv["mean_test_acc"][chosen]]])
    # several constraints need the one to draw
    two = fairness_constrained_refit("acc", {"sp": -0.1, "di": 0.8})
    cv["mean_test_di"] = rng.uniform(0.6, 1, 12)
    with pytest.raises(ValueError, match="pass constraint="):
        plot_constrained_search(cv, two)
    ax = plot_constrained_search(cv, two, constraint="di")
    assert ax.get_xlabel().startswith("mean_test_di")
    with pytest.raises(TypeError, match="FairnessConstrainedRefit"):
        plot_constrained_search(cv, lambda r: 0)


def test_constrained_search_view_of_a_fitted_search():
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)

    def gap(estimator, X, y):
        pred = estimator.predict(X)
        return -abs(pred[X[:, 1] > 0].mean() - pred[X[:, 1] <= 0].mean())

    search = GridSearchCV(LogisticRegression(), {"C": [0.001, 0.1, 10]}, cv=3,
                          scoring={"acc": "accuracy", "sp": gap},
                          refit=fairness_constrained_refit("acc", "sp", -0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search.fit(X, y)
    ax = plot_constrained_search(search)
    assert f"chosen: candidate {search.best_index_}" in [
        t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(TypeError, match="fitted search"):
        plot_constrained_search(object())
