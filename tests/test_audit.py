"""The ``audit`` command: its numbers must be the ones the public API gives directly."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split

from skfairverify import FairnessVerifier, group_esl
from skfairverify.__main__ import main
from skfairverify._audit import run_audit


def _csv_data(tmp_path, n=600, seed=0):
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
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_csv_json_report_matches_direct_computation(tmp_path, capsys):
    frame, path = _csv_data(tmp_path)
    code = main(["audit", "--csv", str(path), "--target", "approved", "--positive", "yes",
                 "--sensitive", "sex", "--steps", "verify", "esl", "--json",
                 "--esl-features", "2"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dataset"]["rows"] == len(frame)
    assert report["dataset"]["favourable_rate"] == pytest.approx((frame.approved == "yes").mean())

    # Redo the audit's steps with the public API, independently of the report code.
    X = frame.drop(columns="approved").astype({"colour": "category", "sex": "category"})
    y = (frame.approved == "yes").astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline

    from skfairverify._audit import default_model

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
    first = group_esl(y_te, model.predict(X_te), X_te["sex"], metric="tpr")
    values = {row["sex"]: row["value"] for row in report["esl_first_stage"]["table"]}
    assert values == pytest.approx(first.values.to_dict())
    assert report["esl_first_stage"]["test"]["difference"] == pytest.approx(first.difference)
    assert report["esl_first_stage"]["test"]["p_value"] == pytest.approx(first.p_value)
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
    assert "Counterfactual fairness (sex, k=3)" in text
    assert "ESL values, first stage (sex, metric tpr)" in text
    page = out.read_text()
    assert page.count("data:image/png;base64,") == 3  # CFlips@k, ESL shares, contributions
    assert "Counterfactual fairness" in page


def test_saved_model_is_used(tmp_path, capsys):
    import joblib
    from sklearn.linear_model import LogisticRegression

    frame, path = _csv_data(tmp_path)
    X = frame[["proxy", "other"]]
    model = LogisticRegression().fit(X, frame.approved == "yes")
    model_path = tmp_path / "model.joblib"
    joblib.dump(model, model_path)
    code = main(["audit", "--csv", str(path), "--target", "approved", "--positive", "yes",
                 "--sensitive", "sex", "--steps", "esl", "--esl-features", "2",
                 "--model", str(model_path), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"]["description"].startswith("user model LogisticRegression")


@pytest.mark.parametrize(
    "argv, match",
    [
        (["audit", "--csv", "x.csv"], "--csv needs --target and --sensitive"),
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
    with pytest.raises(ValueError, match="'race'"):
        main(["audit", "--csv", str(path), "--target", "approved", "--sensitive", "race"])
    frame.assign(approved=np.arange(len(frame)) % 3).to_csv(path, index=False)
    with pytest.raises(ValueError, match="--positive"):
        main(["audit", "--csv", str(path), "--target", "approved", "--sensitive", "sex"])
    X = frame.drop(columns="approved")
    with pytest.raises(ValueError, match="Unknown audit step"):
        run_audit(X, frame.approved, ["sex"], steps=["verify", "plot"])
    with pytest.raises(TypeError, match="DataFrame"):
        run_audit(X.to_numpy(), frame.approved, ["sex"])
