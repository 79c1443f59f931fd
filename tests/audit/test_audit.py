"""The ``audit`` command: its numbers must be the ones the public API gives directly."""

import json

import numpy as np
import pandas as pd
import pytest
from _report_html_parsing import parse_tables
from fairlearn.metrics import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
)
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split

from skfairverify import FairnessVerifier, group_esl
from skfairverify.__main__ import main
from skfairverify.audit import empirical_group_metrics, run_audit


def _frame_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    proxy = (sex == "M") + rng.normal(0, 0.7, n)
    other = rng.normal(size=n)
    colour = rng.choice(["red", "blue", "green"], n)
    score = 0.8 * proxy + other + (colour == "red") + rng.normal(0, 0.8, n)
    frame = pd.DataFrame(
        {"proxy": proxy.round(3), "other": other.round(3), "colour": colour, "sex": sex,
         "approved": np.where(score > 0.6, "yes", "no")}
    )
    return frame


def _csv_data(tmp_path, n=600, seed=0):
    frame = _frame_data(n, seed)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return frame, path


def _check_empirical(report, y_true, y_pred, sensitive):
    """The report's empirical section against fairlearn's functions and numpy."""
    emp = report["empirical"]
    assert emp["label"] == "empirical: test rows, fairlearn MetricFrame"
    assert emp["rows"] == len(y_true)
    assert emp["metrics"]["statistical_parity"] == pytest.approx(
        demographic_parity_difference(y_true, y_pred, sensitive_features=sensitive))
    assert emp["metrics"]["disparate_impact"] == pytest.approx(
        demographic_parity_ratio(y_true, y_pred, sensitive_features=sensitive))
    assert emp["metrics"]["equalized_odds"] == pytest.approx(
        equalized_odds_difference(y_true, y_pred, sensitive_features=sensitive))
    y_true, y_pred, sensitive = map(np.asarray, (y_true, y_pred, sensitive))
    for row in emp["groups"]:
        g = sensitive == row["sex"]
        assert row["rows"] == g.sum()
        assert row["selection_rate"] == pytest.approx(y_pred[g].mean())
        assert row["true_positive_rate"] == pytest.approx(y_pred[g & (y_true == 1)].mean())
        assert row["false_positive_rate"] == pytest.approx(y_pred[g & (y_true == 0)].mean())
    assert {row["sex"] for row in emp["groups"]} == set(sensitive)


def test_csv_json_report_matches_direct_computation(tmp_path, capsys):
    frame, path = _csv_data(tmp_path)
    code = main(["audit", "--csv", str(path), "--target", "approved", "--positive", "yes",
                 "--sensitive-features", "sex", "--steps", "verify", "esl", "--json",
                 "--esl-features", "2"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dataset"]["rows"] == len(frame)
    assert report["dataset"]["favorable_rate"] == pytest.approx((frame.approved == "yes").mean())

    # Redo the audit's steps with the public API, independently of the report code.
    X = frame.drop(columns="approved").astype({"colour": "category", "sex": "category"})
    y = (frame.approved == "yes").astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline

    from skfairverify.audit import default_model

    select = make_column_transformer(("passthrough", ["proxy", "other", "colour"]),
                                     verbose_feature_names_out=False)
    model = make_pipeline(select.set_output(transform="pandas"), default_model()).fit(X_tr, y_tr)
    assert report["model"]["test_accuracy"] == pytest.approx(model.score(X_te, y_te))
    verifier = FairnessVerifier(FrozenEstimator(model), ["sex"], random_state=0).fit(X_tr, y_tr)
    for name, value in verifier.metrics_.items():
        assert report["verification"]["metrics"][name] == pytest.approx(value)
    rates = {g["sex"]: g["positive_rate"] for g in report["verification"]["groups"]}
    expected = verifier.groups_.set_index("sex")["positive_rate"]
    assert rates == pytest.approx(expected.to_dict())
    # the verifier's re-estimate on the test rows, under its own unambiguous key
    relearned = verifier.verify(X_te, y_te)
    assert report["verification"]["metrics_network_relearned_on_test_rows"] == pytest.approx(
        relearned.metrics)
    assert "metrics_on_test_distribution" not in report["verification"]
    # empirical metrics: fairlearn's functions called directly on the test rows
    _check_empirical(report, y_te, model.predict(X_te), X_te["sex"])
    first = group_esl(y_te, model.predict(X_te), sensitive_features=X_te["sex"], metric="tpr")
    values = {row["sex"]: row["esl_value"] for row in report["esl_first_stage"]["table"]}
    assert values == pytest.approx(first.esl_values.to_dict())
    test = report["esl_first_stage"]["test"]
    assert test["compared"] == ["F", "M"]
    # raw TPR gap by numpy; ESL units = gap / baseline 0.5 (two groups, Shapley: b_1 = 1)
    pred = model.predict(X_te)
    tpr = {g: pred[(X_te["sex"] == g).to_numpy() & (y_te == 1).to_numpy()].mean()
           for g in ("F", "M")}
    assert test["metric_difference"] == pytest.approx(tpr["F"] - tpr["M"])
    assert test["esl_difference"] == pytest.approx((tpr["F"] - tpr["M"]) / 0.5)
    assert test["esl_std_error"] == pytest.approx(2 * test["metric_std_error"])
    assert test["p_value"] == pytest.approx(first.p_value)
    assert not {"difference", "std_error", "ci"} & set(test)
    # the model is unaware: the sensitive column has weight zero, so no FIF row for it
    assert "sex" not in {row["feature"] for row in report["verification"]["fairness_influence"]}
    assert len(report["esl_second_stage"]["features"]) == 2


def test_bundled_dataset_text_report_and_html(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    code = main(["audit", "--dataset", "german", "--steps", "esl", "counterfactual",
                 "--k", "3", "--esl-features", "2", "--html", str(out), "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "german (1000 rows" in text
    assert "Counterfactual fairness (sex, age_group, k=3)" in text  # compound groups
    assert "ESL values, first stage (sex / age_group, metric tpr)" in text  # compound groups
    page = out.read_text()
    # CFlips@k, ESL shares, ESL intervals, contributions
    assert page.count("data:image/png;base64,") == 4
    assert "Counterfactual fairness" in page
    # without the verify step the empirical rates are still shown, labelled
    assert "empirical: test rows, fairlearn MetricFrame" in " ".join(text.split())
    assert "<h2>Group fairness: verified vs empirical</h2>" in page
    assert "verified, test-row network" not in page
    # CFlips depend on the sensitive classifier: its held-out quality is printed beside them
    assert ("sensitive classifier (judges every counterfactual), scored out-of-fold"
            in " ".join(text.split()))


def test_saved_model_is_used(tmp_path, capsys):
    import joblib
    from sklearn.linear_model import LogisticRegression

    frame, path = _csv_data(tmp_path)
    X = frame[["proxy", "other"]]
    model = LogisticRegression().fit(X, frame.approved == "yes")
    model_path = tmp_path / "model.joblib"
    joblib.dump(model, model_path)
    code = main(["audit", "--csv", str(path), "--target", "approved", "--positive", "yes",
                 "--sensitive-features", "sex", "--steps", "esl", "--esl-features", "2",
                 "--model", str(model_path), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"]["description"].startswith("user model LogisticRegression")


@pytest.mark.parametrize(
    "argv, match",
    [
        (["audit", "--csv", "x.csv"], "--csv needs --target and --sensitive-features"),
        (["audit", "--dataset", "nope"], "invalid choice"),
        (["audit", "--steps", "bogus"], "invalid choice"),
    ],
)
def test_command_line_errors(argv, match, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert match in capsys.readouterr().err


def test_bad_inputs_are_named(tmp_path):
    frame, path = _csv_data(tmp_path)
    # the command line's answers to user mistakes: tests/audit/test_audit_cli.py
    X = frame.drop(columns="approved")
    with pytest.raises(ValueError, match="Unknown audit step"):
        run_audit(X, frame.approved, ["sex"], steps=["verify", "plot"])
    with pytest.raises(TypeError, match="DataFrame"):
        run_audit(X.to_numpy(), frame.approved, ["sex"])
    with pytest.raises(ValueError, match="The 'k' parameter of run_audit"):
        run_audit(X, frame.approved, ["sex"], k=0)
    with pytest.raises(ValueError, match="The 'test_size' parameter of run_audit"):
        run_audit(X, frame.approved, ["sex"], test_size=1.5)
    with pytest.raises(ValueError, match="'race' is not a column of X"):
        run_audit(X, frame.approved, "race")
    with pytest.raises(ValueError, match=r"named \['sex'\], columns of X already"):
        run_audit(X, frame.approved, X["sex"])


def test_sensitive_features_as_name_list_or_values_give_one_report(tmp_path):
    """A column name, a list of names and the values themselves are the same audit."""
    frame, _ = _csv_data(tmp_path, n=300)
    X = frame.drop(columns="approved").astype({"colour": "category", "sex": "category"})
    y = frame.approved == "yes"
    reports = [run_audit(X, y, s, steps=[], verbose=0).to_dict()
               for s in ("sex", ["sex"])]
    reports.append(run_audit(X.drop(columns="sex"), y, X["sex"], steps=[],
                             verbose=0).to_dict())
    for report in reports:
        report.pop("timings_seconds")
        assert report["dataset"]["sensitive_features"] == ["sex"]
    # the values join X as its last column: same rows, same model, same numbers
    assert reports[0]["empirical"] == reports[1]["empirical"] == reports[2]["empirical"]
    assert reports[0]["model"] == reports[2]["model"]



# ------------------------------------------------ which number is which (issue 10, part 6)


def _independent_split_and_model(frame):
    """The audit's split and default model, rebuilt from the public pieces."""
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline

    from skfairverify.audit import default_model

    X = frame.drop(columns="approved").astype({"colour": "category", "sex": "category"})
    y = (frame.approved == "yes").astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    select = make_column_transformer(("passthrough", ["proxy", "other", "colour"]),
                                     verbose_feature_names_out=False)
    model = make_pipeline(select.set_output(transform="pandas"), default_model()).fit(X_tr, y_tr)
    return X, y, X_te, y_te.to_numpy(), model.predict(X_te)


@pytest.fixture(scope="module")
def csv_report(tmp_path_factory):
    """One audit of the CSV data (verify + ESL) and the independent pieces to check it."""
    frame, _ = _csv_data(tmp_path_factory.mktemp("audit"))
    X, y, X_te, y_te, pred = _independent_split_and_model(frame)
    report = run_audit(X, y, ["sex"], steps=["verify", "esl"], n_esl_features=2, verbose=0)
    return report, X_te["sex"].to_numpy(), y_te, pred


def _line(text, start):
    """The single line of ``text`` that starts with ``start`` (after spaces)."""
    lines = [ln for ln in text.splitlines() if ln.lstrip().startswith(start)]
    assert len(lines) == 1, (start, lines)
    return lines[0]


_LABELS = {"disparate_impact": "DI (min / max selection rate)",
           "statistical_parity": "SP (max - min selection rate)",
           "equalized_odds": "EO (max of TPR gap, FPR gap)"}


def _expected_metrics(report, s, y_te, pred):
    """label -> (verified, verified on the test-row network, empirical by fairlearn)."""
    v = report.sections["verification"]
    empirical = {
        "disparate_impact": demographic_parity_ratio(y_te, pred, sensitive_features=s),
        "statistical_parity": demographic_parity_difference(y_te, pred, sensitive_features=s),
        "equalized_odds": equalized_odds_difference(y_te, pred, sensitive_features=s),
    }
    return {_LABELS[k]: (v["metrics"][k], v["metrics_network_relearned_on_test_rows"][k], e)
            for k, e in empirical.items()}


def test_text_report_shows_verified_beside_empirical(csv_report):
    report, s, y_te, pred = csv_report
    text = report.to_text()
    flat = " ".join(text.split())  # prose lines are wrapped
    # each kind of number is labelled for what it is
    assert "verified: population under the learned Bayesian network (FVGM)" in flat
    assert "empirical: test rows, fairlearn MetricFrame" in flat
    assert "re-learned on the test rows (still model-based, not an observed rate)" in flat
    assert "on the test rows' distribution" not in flat
    # metric table: verified, verified on a test-row network, empirical (fairlearn directly)
    # the verified columns as value [low, high] (3 decimals), the verifier's intervals
    v = report.sections["verification"]
    assert "the 95% credible interval (posterior of the network, 50 draws)" in flat
    assert "population: population estimate: the network's exact rate combined" in flat
    for label, numbers in _expected_metrics(report, s, y_te, pred).items():
        key = next(k for k, lab in _LABELS.items() if lab == label)
        ci = (v["metric_intervals"][key],
              v["metric_intervals_network_relearned_on_test_rows"][key])
        expected = [f"{x:.3f} [{lo:.3f}, {hi:.3f}]" for x, (lo, hi) in zip(numbers, ci)]
        pop, (lo, hi) = v["population_metrics"][key], v["population_metric_intervals"][key]
        assert _line(text, label)[len(label):].split() == (
            f"{pop:.3f} [{lo:.3f}, {hi:.3f}]".split() + " ".join(expected).split()
            + [f"{numbers[2]:.4f}"])
    # per group: (population, verified, empirical) for the selection rate, TPR, FPR,
    # then the model checks (train rows, test rows) and the train / test rows
    verified = pd.DataFrame(v["groups"]).set_index("sex")
    held_out = {r["sex"]: r["pvalue"] for r in v["model_check_held_out"]}
    for g in ("F", "M"):
        rows = s == g
        cells = _line(text.split("== ESL")[0], f"{g} ").split()[1:]
        row = verified.loc[g]
        assert cells[:3] == (f"{row['population_rate']:.3f} [{row['population_ci_low']:.3f}, "
                             f"{row['population_ci_high']:.3f}]").split()
        assert cells[3:6] == (f"{row['positive_rate']:.3f} [{row['ci_low']:.3f}, "
                              f"{row['ci_high']:.3f}]").split()
        rest = cells[6:]  # empirical selection rate, TPR and FPR triples, checks, rows
        assert rest[0:7:3] == [f"{pred[rows & m].mean():.4f}" for m in
                               (True, y_te == 1, y_te == 0)]
        assert rest[1:3] == [f"{row[c]:.4f}" for c in ("population_true_positive_rate",
                                                        "true_positive_rate")]
        assert rest[4:6] == [f"{row[c]:.4f}" for c in ("population_false_positive_rate",
                                                        "false_positive_rate")]
        assert rest[7:9] == [f"{row['model_check_pvalue']:.4f}", f"{held_out[g]:.4f}"]
        assert rest[9:] == [str(int(row["support"])), str(rows.sum())]


def test_json_comparison_is_unambiguous(csv_report):
    report, s, y_te, pred = csv_report
    data = json.loads(json.dumps(report.to_dict(), default=str))
    _check_empirical(data, y_te, pred, s)
    assert data["verification"]["label"].startswith("verified: population under the learned")
    expected = _expected_metrics(report, s, y_te, pred)
    rows = {r["metric"]: r for r in data["comparison"]}
    for (key, row), numbers in zip(rows.items(), expected.values()):
        got = (row["verified"], row["verified_network_relearned_on_test_rows"],
               row["empirical_test_rows"])
        assert got == pytest.approx(numbers), key
        assert row["verified_interval"] == pytest.approx(
            list(data["verification"]["metric_intervals"][key]))
        assert row["verified_interval_kind"].startswith("95% credible interval")
    assert rows["equalized_odds"]["empirical_fairlearn_function"] == "equalized_odds_difference"


def test_text_report_states_esl_units(csv_report):
    report, s, y_te, pred = csv_report
    text = report.to_text()
    tpr = {g: pred[(s == g) & (y_te == 1)].mean() for g in ("F", "M")}
    gap = tpr["F"] - tpr["M"]
    assert (f"TPR difference F - M: {gap:+.4f} (raw TPR gap; ESL units: {gap / 0.5:+.4f} = "
            "metric / baseline 0.5)") in " ".join(text.split())
    assert "esl_*: ESL units = tpr / baseline (0.5)" in text
    second = " ".join(text.split("second stage")[1].split())
    assert "ESL units = tpr / baseline (0.5)" in second
    assert "difference of the contributions, F - M, in the same ESL units" in second


def test_html_report_has_the_comparison_tables(csv_report):
    report, s, y_te, pred = csv_report
    page = report.to_html()
    assert "<h2>Group fairness: verified vs empirical</h2>" in page
    captions = [t.caption for t in parse_tables(page)]
    assert sum(c.startswith(("Rates per group", "Metrics over the groups"))
               for c in captions) == 2
    v = report.sections["verification"]
    for key, numbers in zip(_LABELS, _expected_metrics(report, s, y_te, pred).values()):
        lo, hi = v["metric_intervals"][key]
        assert f"{numbers[0]:.3f} [{lo:.3f}, {hi:.3f}]" in page  # verified, its interval
        lo, hi = v["metric_intervals_network_relearned_on_test_rows"][key]
        assert f"{numbers[1]:.3f} [{lo:.3f}, {hi:.3f}]" in page
        assert f"{numbers[2]:.4f}" in page  # empirical: no interval
    assert "test rows, fairlearn MetricFrame" in page


def test_empirical_groups_without_a_label_are_nan_not_zero():
    """fairlearn's TPR of a group without positives is 0; the audit says n/a and skips it."""
    rng = np.random.default_rng(1)
    n = 400
    sex = rng.choice(["F", "M"], n)
    age = rng.choice(["old", "young"], n)
    y = rng.integers(0, 2, n)
    y[(sex == "F") & (age == "old")] = 0  # this intersection has no positive row
    pred = rng.integers(0, 2, n)
    out = empirical_group_metrics(y, pred, pd.DataFrame({"sex": sex, "age": age}))
    groups = pd.DataFrame(out["groups"]).set_index(["sex", "age"])
    assert np.isnan(groups.loc[("F", "old"), "true_positive_rate"].astype(float))
    tpr, fpr, sel = {}, {}, {}
    for a in ("F", "M"):
        for b in ("old", "young"):
            g = (sex == a) & (age == b)
            sel[a, b] = pred[g].mean()
            fpr[a, b] = pred[g & (y == 0)].mean()
            if (g & (y == 1)).any():
                tpr[a, b] = pred[g & (y == 1)].mean()
    for key, frame_key in ((sel, "selection_rate"), (fpr, "false_positive_rate")):
        assert groups[frame_key].to_dict() == pytest.approx(key)
    assert out["metrics"]["equalized_odds"] == pytest.approx(
        max(np.ptp(list(tpr.values())), np.ptp(list(fpr.values()))))
    assert out["metrics"]["statistical_parity"] == pytest.approx(np.ptp(list(sel.values())))
    assert out["metrics"]["disparate_impact"] == pytest.approx(
        min(sel.values()) / max(sel.values()))


def test_empirical_needs_binary_decisions():
    with pytest.raises(ValueError, match="0/1 decisions"):
        empirical_group_metrics([1, 0], ["yes", "no"], pd.DataFrame({"s": ["a", "b"]}))


def test_relearned_network_failure_is_reported_not_fatal(tmp_path, monkeypatch):
    """When the verifier cannot re-learn its network on the test rows, the audit says why."""
    frame, _ = _csv_data(tmp_path, n=300)
    X = frame.drop(columns="approved").astype({"colour": "category", "sex": "category"})

    def refuse(self, X, y=None, *, sample_weight=None):
        raise ValueError("Variable 'proxy': the value(s) [9.0] are not states")

    monkeypatch.setattr(FairnessVerifier, "verify", refuse)
    report = run_audit(X, frame.approved == "yes", ["sex"], steps=["verify"], verbose=0)
    v = report.sections["verification"]
    assert v["metrics_network_relearned_on_test_rows"] is None
    assert "not states" in v["network_relearned_on_test_rows_error"]
    assert all(r["verified_network_relearned_on_test_rows"] is None
               for r in report.sections["comparison"])
    flat = " ".join(report.to_text().split())
    assert "(not available here: Variable 'proxy': the value(s) [9.0] are not states)" in flat
    assert _line(report.to_text(), "SP (max - min selection rate)").split()[-2] == "n/a"


def test_group_absent_from_the_test_rows_has_no_empirical_rate():
    """A verified group without test rows: empirical n/a and 0 test rows, never a rate."""
    from skfairverify.audit import AuditReport, group_comparison

    report = AuditReport(
        dataset={"sensitive_features": ["s"]}, model={},
        sections={
            "empirical": {"groups": [{"s": "a", "selection_rate": 0.5,
                                      "true_positive_rate": 0.75,
                                      "false_positive_rate": 0.25, "rows": 3}]},
            "verification": {"groups": [
                {"s": "a", "positive_rate": 0.4, "true_positive_rate": 0.6,
                 "false_positive_rate": 0.2, "support": 7},
                {"s": "b", "positive_rate": 0.3, "true_positive_rate": 0.5,
                 "false_positive_rate": 0.1, "support": 2}]},
        },
    )
    frame = group_comparison(report)
    assert frame.loc["b", ("rows", "test")] == 0
    assert frame.loc["b", ("rows", "train")] == 2
    assert np.isnan(frame.loc["b", ("selection rate P(Yhat=1)", "empirical")])
    assert frame.loc["a", ("TPR P(Yhat=1 | Y=1)", "empirical")] == 0.75
    assert frame.loc["b", ("FPR P(Yhat=1 | Y=0)", "verified")] == 0.1


def test_console_script_and_python_m_reach_the_audit(capsys):
    """``skfairverify`` (pyproject [project.scripts]) and ``python -m skfairverify``."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="skfairverify")
    with pytest.raises(SystemExit) as exc:
        script.load()(["audit", "--help"])
    assert exc.value.code == 0
    assert "--sensitive-features COL" in capsys.readouterr().out
    proc = subprocess.run([sys.executable, "-m", "skfairverify", "audit", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "--sensitive-features COL" in proc.stdout


def test_a_tree_ensemble_is_audited_by_its_sound_bounds(tmp_path, capsys):
    """--method bounds (run_audit's method): the verifier's bounds path, said so in the
    report's settings, its verified groups (rate_lower, rate_upper, settled) and text; a
    model it cannot read, or the default logistic regression, refused before the run."""
    import joblib
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.neighbors import KNeighborsClassifier

    frame, path = _csv_data(tmp_path)
    X = frame[["proxy", "other"]]
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(
        X, frame.approved == "yes")
    model_path = tmp_path / "gb.joblib"
    joblib.dump(model, model_path)
    argv = ["audit", "--csv", str(path), "--target", "approved", "--positive", "yes",
            "--sensitive-features", "sex", "--features", "proxy", "other", "--steps",
            "verify", "--quiet", "--model", str(model_path)]
    assert main([*argv, "--method", "bounds", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    v = report["verification"]
    assert report["settings"]["method"] == "bounds" and v["method"] == "bounds"
    assert v["intervals"]["label"].startswith("95% credible interval and sound bounds")
    for group in v["groups"]:
        assert group["rate_lower"] <= group["positive_rate"] <= group["rate_upper"]
        assert 0.0 <= group["settled"] <= 1.0
    assert main([*argv, "--method", "bounds"]) == 0
    text = capsys.readouterr().out
    assert "sound bounds of the tree ensemble's rates" in " ".join(text.split())
    # the default model, and a model that is not an ensemble: one line, status 2
    data = frame.drop(columns="approved")
    with pytest.raises(ValueError, match="method='bounds' verifies a tree ensemble"):
        run_audit(data, frame.approved == "yes", "sex", steps=["verify"], method="bounds",
                  verbose=0)
    knn = KNeighborsClassifier(5).fit(X, frame.approved == "yes")
    with pytest.raises(ValueError, match="method='exact' needs a linear model"):
        run_audit(data, frame.approved == "yes", "sex", model=knn, steps=["verify"],
                  method="exact", verbose=0)
    with pytest.raises(ValueError, match="The 'method' parameter of run_audit"):
        run_audit(data, frame.approved == "yes", "sex", method="fast")
    with pytest.raises(SystemExit) as exc:
        main([*argv[:-2], "--method", "bounds"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "method='bounds' verifies a tree ensemble" in err


def test_the_group_tables_show_the_sound_bounds_on_the_bounds_path():
    """Text and HTML group tables: rate_lower, rate_upper and settled of every group,
    the JSON's values, on the bounds path only (the sampling path's tables without)."""
    from sklearn.ensemble import GradientBoostingClassifier

    from skfairverify.audit import group_comparison

    frame = _frame_data(600)
    X, y = frame[["proxy", "other"]], frame.approved == "yes"
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    reports = {m: run_audit(frame[["proxy", "other", "sex"]], y, "sex", model=model,
                            steps=["verify"], method=m, verbose=0)
               for m in ("bounds", "sampling")}
    bounds = reports["bounds"]
    records = bounds.sections["verification"]["groups"]
    table = group_comparison(bounds)
    name = "selection rate P(Yhat=1)"
    for r in records:
        row = table.loc[r["sex"]]
        assert r["rate_lower"] <= r["positive_rate"] <= r["rate_upper"]
        for key in ("rate_lower", "rate_upper", "settled"):
            assert row[(name, key)] == pytest.approx(r[key])
    text, page = bounds.to_text(), bounds.to_html()
    for key in ("rate_lower", "rate_upper", "settled"):
        assert key in text and f">{key}<" in page
    lines = [line for line in text.splitlines() if line.startswith(tuple(
        str(r["sex"]) + " " for r in records))]
    assert any(f"{records[0]['rate_lower']:.4f}" in line for line in lines)
    assert f"{records[0]['rate_upper']:.4f}" in page
    sampled = reports["sampling"]
    assert sampled.sections["verification"]["method"] == "sampling"
    assert sampled.sections["verification"]["method_reason"] == "method='sampling'"
    assert "why sampled: method='sampling'" in " ".join(sampled.to_text().split())
    assert bounds.sections["verification"]["method_reason"].startswith("method='bounds'")
    assert not any(c[1] in ("rate_lower", "rate_upper", "settled")
                   for c in group_comparison(sampled).columns)
    assert "rate_lower" not in sampled.to_text() and ">rate_lower<" not in sampled.to_html()


def test_a_model_whose_favorable_label_is_its_class_zero_is_bounded(tmp_path, capsys):
    """--positive of the model's classes_[0] wraps it (FavorableDecisions); --method bounds
    reads through the wrapper (was refused): the favorable decision's sound bounds, the
    rate inside them and 1 minus the rate of the other label's decision under the same
    network (tests/verification/test_ensemble_path.py checks the bounds' identity)."""
    import joblib
    from sklearn.ensemble import GradientBoostingClassifier

    frame, path = _csv_data(tmp_path)
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(
        frame[["proxy", "other"]], frame.approved)
    assert list(model.classes_) == ["no", "yes"]
    model_path = tmp_path / "gb.joblib"
    joblib.dump(model, model_path)
    argv = ["audit", "--csv", str(path), "--target", "approved", "--sensitive-features",
            "sex", "--features", "proxy", "other", "--steps", "verify", "--quiet",
            "--model", str(model_path), "--method", "bounds", "--json", "--positive", "no"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    v = report["verification"]
    assert v["method"] == "bounds"
    assert "through a wrapper" in report["model"]["description"]
    for g in v["groups"]:
        assert g["rate_lower"] <= g["positive_rate"] <= g["rate_upper"]
        assert 0.0 < g["settled"] <= 1.0


def test_refused_influence_draws_give_point_influences_and_say_why(monkeypatch):
    # With no time allowed for the influences' posterior draws (the refusal estimated
    # before they run), the audit keeps its verified report: the point influences,
    # which equal the verifier's own without intervals, and the refusal in the report.
    from skfairverify.verification import _fif, _influence

    refuse = _influence.check_draws_work
    monkeypatch.setattr(_fif, "check_draws_work",
                        lambda seconds, n_draws, what, max_table_size:
                        refuse(seconds, n_draws, what, 1))
    frame = _frame_data()
    X, y = frame.drop(columns="approved"), (frame.approved == "yes").astype(int)
    report = run_audit(X, y, ["sex"], steps=["verify"], verbose=0)
    v = report.sections["verification"]
    assert "without intervals" in v["fairness_influence_features"]
    assert "posterior draws of the fairness influence" in v["fairness_influence_features"]
    assert v["fairness_influence_ci_low"] is None and v["fairness_influence"]
    assert "without intervals" in report.to_text()
