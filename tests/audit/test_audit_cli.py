"""The ``audit`` command treats its user as a person: one line and exit status 2 for every
user mistake, strict JSON, a privileged group it names, and the ESL work it announces."""

import json
import subprocess
import sys

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from skfairverify.__main__ import main
from skfairverify.audit import AuditReport
from skfairverify.audit import _cli as cli
from skfairverify.s3p import TableTooLargeError


class _RunStarted(Exception):
    """Raised by a stand-in for run_audit: the checks before the run all passed."""


def _run(argv, capsys):
    """Exit status, stdout and stderr of ``skfairverify audit <argv>``."""
    try:
        code = main(["audit", *argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _frame(n=300, seed=0, race=False):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    proxy = (sex == "M") + rng.normal(0, 0.7, n)
    other = rng.normal(size=n)
    score = 0.8 * proxy + other + rng.normal(0, 0.8, n)
    frame = pd.DataFrame({"proxy": proxy.round(3), "other": other.round(3), "sex": sex,
                          "approved": np.where(score > 0.6, "yes", "no")})
    if race:
        frame.insert(2, "race", rng.choice(["a", "b", "c", "d"], n))
        frame["proxy"] += (frame.race == "c") * 1.5  # group c is favored by the model
    return frame


@pytest.fixture
def files(tmp_path):
    """A good CSV and the bad files a user may point to."""
    good = tmp_path / "data.csv"
    _frame().to_csv(good, index=False)
    _frame().assign(region=["n", "s", "e"] * 100)[["sex", "region", "approved"]].to_csv(
        tmp_path / "groups.csv", index=False)
    (tmp_path / "header.csv").write_text("proxy,other,sex,approved\n")
    (tmp_path / "nan.csv").write_text("proxy,other,sex,approved\n1,,F,\n,2,M,\n")
    (tmp_path / "bad.csv").write_text('a,b\n1,2,3,4\n"x\n')
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe\x00\x81\x93garbage\x00")
    (tmp_path / "empty.csv").write_text("")
    _frame().to_csv(tmp_path / "headless.csv", index=False, header=False)
    (tmp_path / "text.joblib").write_text("not a pickle")
    (tmp_path / "folder").mkdir()
    rf = RandomForestClassifier(n_estimators=2, random_state=0)
    joblib.dump(rf.fit(np.arange(10.0).reshape(-1, 1), np.arange(10) % 2),
                tmp_path / "forest.joblib")
    from sklearn.linear_model import LogisticRegression

    other = pd.DataFrame({"height": np.arange(10.0)})
    joblib.dump(LogisticRegression().fit(other, np.arange(10) % 2),
                tmp_path / "other_columns.joblib")
    return tmp_path


CSV = ["--target", "approved", "--sensitive-features", "sex"]

MISTAKES = [
    (["--csv", "{d}/missing.csv", *CSV], "No such file or directory: {d}/missing.csv"),
    (["--csv", "{d}/folder", *CSV], "is a directory, not a CSV file"),
    (["--csv", "{d}/bad.csv", *CSV], "is not a readable CSV file"),
    (["--csv", "{d}/binary.csv", *CSV], "is not a readable CSV file"),
    (["--csv", "{d}/empty.csv", *CSV], "is empty: no header row"),
    (["--csv", "{d}/header.csv", *CSV], "has a header row but no data rows"),
    (["--csv", "{d}/nan.csv", *CSV], "Every one of the rows of {d}/nan.csv misses the label "
                                     "or a sensitive value (2 rows: the label 'approved' is "
                                     "missing"),
    (["--csv", "{d}/data.csv", *CSV], "Target 'approved' has the values ['no', 'yes']; pass "
                                      "--positive VALUE"),
    (["--csv", "{d}/data.csv", *CSV, "--positive", "yes", "--features", "height"],
     "Column(s) ['height'] not found"),
    (["--csv", "{d}/data.csv", "--target", "label", "--sensitive-features", "sex"],
     "Column(s) ['label'] not found"),
    (["--csv", "{d}/headless.csv", *CSV],
     "The first row looks like data, not column names (2 of 4 names are numbers"),
    (["--csv", "{d}/data.csv", "--target", "approved", "--sensitive-features", "race"],
     "Column(s) ['race'] not found"),
    (["--csv", "{d}/data.csv", *CSV, "--positive", "maybe"],
     "--positive 'maybe' is not a value of the target 'approved': ['no', 'yes']"),
    (["--csv", "{d}/data.csv", "--target", "approved", "--sensitive-features", "approved"],
     "The sensitive column 'approved' is the target"),
    (["--csv", "{d}/data.csv", "--target", "proxy", *CSV[2:]],
     "pass --positive VALUE"),
    (["--csv", "{d}/data.csv", *CSV, "--positive", "yes", "--model", "{d}/text.joblib"],
     "is not a model saved with joblib or pickle"),
    (["--csv", "{d}/data.csv", *CSV, "--positive", "yes", "--model", "{d}/nothing.joblib"],
     "No such file or directory"),
    (["--dataset", "german", "--model", "{d}/other_columns.joblib"],
     "was fitted on column(s) ['height'] that the data lacks"),
    (["--dataset", "german", "--target", "credit"], "--target and --positive apply to --csv"),
    (["--csv", "{d}/data.csv", *CSV, "--positive", "yes", "--sensitive-features", "sex",
      "proxy", "other"], "The sensitive column 'proxy' is numeric with 286 distinct values"),
    (["--csv", "{d}/groups.csv", *CSV, "--positive", "yes", "--sensitive-features", "sex",
      "region"], "Every feature of groups.csv is a sensitive column"),
    (["--dataset", "german", "--sensitive-features", "colour"],
     "Column(s) ['colour'] not found in the german data"),
    (["--dataset", "german", "--privileged", "Martian"],
     "--privileged 'Martian' is not a group of 'sex' x 'age_group': ['Female / old', "),
    (["--dataset", "german", "--html", "{d}/nowhere/report.html"],
     "--html {d}/nowhere/report.html: the folder '{d}/nowhere' does not exist"),
    (["--dataset", "german", "--json", "{d}/nowhere/report.json"],
     "--json {d}/nowhere/report.json: the folder '{d}/nowhere' does not exist"),
    (["--dataset", "german", "--html", "{d}/folder"], "is a directory; give a file name"),
]


@pytest.mark.parametrize("argv, problem", MISTAKES)
def test_user_mistakes_get_one_line_and_status_2_before_the_run(argv, problem, files,
                                                                capsys, monkeypatch):
    def started(*args, **kwargs):
        raise _RunStarted

    monkeypatch.setattr(cli, "run_audit", started)  # every check happens before the run
    argv = [a.format(d=files) for a in argv] + ["--quiet"]
    code, out, err = _run(argv, capsys)
    assert code == 2
    assert "Traceback" not in err and out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("skfairverify audit: error: ")
    assert problem.format(d=files) in err


def test_unreadable_file_is_named(files, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_audit", lambda *a, **k: (_ for _ in ()).throw(_RunStarted))
    path = files / "data.csv"
    path.chmod(0)
    try:
        with path.open("rb"):
            enforced = False  # running as root: permissions are not enforced
    except PermissionError:
        enforced = True
    if not enforced:  # the error pandas would raise, simulated
        def denied(filepath, *args, **kwargs):
            raise PermissionError(13, "Permission denied", str(filepath))

        monkeypatch.setattr(pd, "read_csv", denied)
    code, _, err = _run(["--csv", str(path), *CSV, "--quiet"], capsys)
    path.chmod(0o644)
    assert code == 2 and err == f"skfairverify audit: error: Permission denied: {path}\n"


def test_errors_during_the_run_user_value_error_vs_bug(files, capsys, monkeypatch):
    """A ValueError of the run (the package refusing an input) is one line; a bug is not."""
    argv = ["--csv", str(files / "data.csv"), *CSV, "--positive", "yes", "--quiet"]

    def refuses(*args, **kwargs):
        raise ValueError("Group 'F' has no positive\nlabel in the test rows.")

    monkeypatch.setattr(cli, "run_audit", refuses)
    code, _, err = _run(argv, capsys)
    assert (code, err) == (2, "skfairverify audit: error: Group 'F' has no positive label "
                              "in the test rows.\n")

    def too_large(*args, **kwargs):
        raise TableTooLargeError("The exact computation needs a table of 3.2e9 entries "
                                 "(25.6 GB); raise max_table_size or lower n_bins.")

    monkeypatch.setattr(cli, "run_audit", too_large)
    code, _, err = _run(argv, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "25.6 GB" in err

    def bug(*args, **kwargs):
        return {}["oops"]

    monkeypatch.setattr(cli, "run_audit", bug)
    with pytest.raises(KeyError):  # a bug keeps its traceback
        main(["audit", *argv])


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--esl-features", "-1", "--esl-features must be >= 1, not -1"),
        ("--esl-features", "0", "--esl-features must be >= 1, not 0"),
        ("--esl-features", "2.5", "'2.5' is not an integer"),
        ("--k", "0", "--k must be >= 1, not 0"),
        ("--k", "ten", "'ten' is not an integer"),
        ("--test-size", "0", "--test-size must be in (0, 1), not 0"),
        ("--test-size", "1", "--test-size must be in (0, 1), not 1"),
        ("--test-size", "1.5", "--test-size must be in (0, 1), not 1.5"),
        ("--test-size", "half", "'half' is not a number"),
        ("--random-state", "-1", "--random-state must be in [0, 4294967295], not -1"),
        ("--random-state", "1.5", "'1.5' is not an integer"),
        ("--max-fits", "0", "--max-fits must be >= 1, not 0"),
    ],
)
def test_out_of_range_options_are_refused_by_the_parser(option, value, message, capsys):
    code, _, err = _run(["--dataset", "german", option, value], capsys)
    assert code == 2
    assert err.splitlines()[-1] == f"skfairverify audit: error: argument {option}: {message}"


def test_command_line_in_a_subprocess_has_no_traceback(tmp_path):
    for argv, problem in [
        (["--csv", str(tmp_path / "nope.csv"), *CSV], "No such file or directory"),
        (["--esl-features", "-1"], "--esl-features must be >= 1"),
    ]:
        proc = subprocess.run([sys.executable, "-m", "skfairverify", "audit", *argv],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr and problem in proc.stderr


# ------------------------------------------------------------------- ESL work, --max-fits


def test_esl_fits_are_announced_and_capped(tmp_path, capsys, monkeypatch):
    def started(*args, **kwargs):
        raise _RunStarted

    monkeypatch.setattr(cli, "run_audit", started)
    code, _, err = _run(["--dataset", "german", "--steps", "esl", "--esl-features", "9"],
                        capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert ("--esl-features 9 needs 2**9 - 1 = 511 coalition model fits" in err
            and "above --max-fits 256; lower --esl-features or raise --max-fits" in err)
    with pytest.raises(_RunStarted):  # raised: the run starts
        main(["audit", "--dataset", "german", "--steps", "esl", "--esl-features", "9",
              "--max-fits", "511"])
    assert "2**9 - 1 = 511 coalition model fits (limit --max-fits 511)" in capsys.readouterr().err
    with pytest.raises(_RunStarted):
        main(["audit", "--dataset", "german", "--steps", "esl", "--esl-features", "3"])
    assert "3 features, 2**3 - 1 = 7 coalition model fits" in capsys.readouterr().err
    # the count follows the features there are: 2 non-sensitive columns, not 30
    frame = _frame(n=40)
    frame.to_csv(tmp_path / "small.csv", index=False)
    with pytest.raises(_RunStarted):
        main(["audit", "--csv", str(tmp_path / "small.csv"), *CSV, "--positive", "yes",
              "--steps", "esl", "--esl-features", "30"])
    assert "2 features, 2**2 - 1 = 3 coalition model fits" in capsys.readouterr().err
    # no ESL step, no ESL check
    with pytest.raises(_RunStarted):
        main(["audit", "--dataset", "german", "--steps", "verify", "--esl-features", "30"])


# ------------------------------------------------------------------------- strict JSON


def _refuse_constant(name):
    raise ValueError(f"non-strict JSON constant {name}")


def test_to_json_writes_null_for_undefined_numbers():
    report = AuditReport(dataset={"name": "toy", "rate": np.float64("nan")},
                         model={"ratio": float("inf"), "rows": [1.0, -np.inf, 0.5]})
    data = json.loads(report.to_json(), parse_constant=_refuse_constant)
    assert data["dataset"]["rate"] is None and data["model"]["ratio"] is None
    assert data["model"]["rows"] == [1.0, None, 0.5]
    with pytest.raises(ValueError, match="non-strict"):
        json.loads('{"a": NaN}', parse_constant=_refuse_constant)  # the check can fail


def test_json_output_is_strict_with_an_undefined_rate(tmp_path, capsys):
    """A group without favorable labels has no TPR: null in the JSON, not NaN."""
    frame = _frame(n=300)
    extra = pd.DataFrame({"proxy": 0.1, "other": 0.2, "sex": "X", "approved": "no"},
                         index=range(20))
    path = tmp_path / "data.csv"
    pd.concat([frame, extra], ignore_index=True).to_csv(path, index=False)
    out_file = tmp_path / "report.json"
    argv = ["--csv", str(path), *CSV, "--positive", "yes", "--steps", "counterfactual",
            "--k", "1", "--privileged", "M", "--json", str(out_file), "--quiet"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert f"JSON report written to {out_file}" in out  # and the text report on stdout
    text = out_file.read_text()
    assert "NaN" not in text
    data = json.loads(text, parse_constant=_refuse_constant)
    tpr = {g["sex"]: g["true_positive_rate"] for g in data["empirical"]["groups"]}
    assert tpr["X"] is None and 0 <= tpr["F"] <= 1
    assert data["counterfactual"]["privileged"] == "M"


# ---------------------------------------------------------------------- privileged group


def test_privileged_group_of_a_many_valued_column_is_chosen_and_named(tmp_path, capsys,
                                                                      monkeypatch):
    """A 4-group column: the command line chooses the privileged group as the API does
    (CounterfactualFairness's own rule on the same model and rows) and names it."""
    frame = _frame(n=300, race=True)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    argv = ["--csv", str(path), "--target", "approved", "--positive", "yes",
            "--sensitive-features", "race", "--steps", "counterfactual", "--k", "1", "--json"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    section = json.loads(out, parse_constant=_refuse_constant)["counterfactual"]  # on stdout
    from sklearn.compose import make_column_transformer
    from sklearn.frozen import FrozenEstimator
    from sklearn.pipeline import make_pipeline

    from skfairverify import CounterfactualFairness
    from skfairverify.audit import default_model

    X = frame.drop(columns="approved").astype({"sex": "category", "race": "category"})
    y = (frame.approved == "yes").astype(int)
    X_tr, _, y_tr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    select = make_column_transformer(("passthrough", ["proxy", "other", "sex"]),
                                     verbose_feature_names_out=False)
    model = make_pipeline(select.set_output(transform="pandas"), default_model()).fit(X_tr,
                                                                                       y_tr)
    api = CounterfactualFairness(FrozenEstimator(model), ["race"], k=1,
                                 random_state=0).fit(X_tr, y_tr)
    assert section["privileged"] == str(api.privileged_)
    assert section["privileged_rule"] == api.privileged_rule_
    assert sorted(section["unprivileged"]) == sorted(
        str(g) for g in api.groups_ if g != api.privileged_)
    # given: passed on as given (the value of the column, matched by its text), and said so
    seen = {}

    def started(*args, **kwargs):
        seen.update(kwargs)
        raise _RunStarted

    monkeypatch.setattr(cli, "run_audit", started)
    with pytest.raises(_RunStarted):
        main(["audit", *argv, "--privileged", "a"])
    assert seen["privileged"] == "a"
    assert ("[audit] privileged group of 'race': 'a', given with --privileged"
            in capsys.readouterr().err)
    # a compound group of two columns, written 'v1 / v2'
    with pytest.raises(_RunStarted):
        main(["audit", "--csv", str(path), "--target", "approved", "--positive", "yes",
              "--sensitive-features", "race", "sex", "--steps", "counterfactual",
              "--privileged", "c / M"])
    assert seen["privileged"] == ("c", "M")


@pytest.mark.slow
def test_compas_works_out_of_the_box(capsys):
    """race has 6 values: the documented privileged value (Caucasian) is taken and named."""
    code, out, err = _run(["--dataset", "compas", "--sensitive-features", "race", "--steps",
                           "counterfactual", "--k", "1", "--json"], capsys)
    assert code == 0, err
    assert ("privileged group of 'race': 'Caucasian', the documented privileged value of "
            "the compas data (change it with --privileged)") in err
    section = json.loads(out, parse_constant=_refuse_constant)["counterfactual"]
    assert section["privileged"] == "Caucasian"
    assert section["privileged_rule"].startswith("the documented privileged value")
    assert "African-American" in section["unprivileged"] and len(section["unprivileged"]) == 5


def test_run_audit_passes_max_fits_to_the_esl_guard():
    from skfairverify.audit import run_audit
    from skfairverify.datasets import load_german
    from skfairverify.s3p import TableTooLargeError

    data = load_german()
    with pytest.raises(TableTooLargeError, match="max_fits"):
        run_audit(data.data, data.target, "sex", steps=["esl"], n_esl_features=3,
                  max_fits=6, verbose=0)  # 2**3 - 1 = 7 fits needed


def test_any_binary_classifier_is_accepted_before_the_run(files, capsys, monkeypatch):
    """A fitted forest on the data's columns reaches the run (no linear-only refusal);
    a multiclass model is refused in one line."""
    from sklearn.ensemble import RandomForestClassifier

    from skfairverify.datasets import load_german

    X = load_german(as_frame=True).data
    num = X.select_dtypes("number")
    y = (num.iloc[:, 0] > num.iloc[:, 0].median()).astype(int)
    joblib.dump(RandomForestClassifier(n_estimators=3, random_state=0).fit(num, y),
                files / "german_forest.joblib")
    joblib.dump(RandomForestClassifier(n_estimators=3, random_state=0).fit(
        num, np.arange(len(num)) % 3), files / "three.joblib")

    def started(*args, **kwargs):
        raise _RunStarted

    monkeypatch.setattr(cli, "run_audit", started)
    with pytest.raises(_RunStarted):
        main(["audit", "--dataset", "german", "--model", str(files / "german_forest.joblib"),
              "--quiet"])
    code, out, err = _run(["--dataset", "german", "--model", str(files / "three.joblib"),
                           "--quiet"], capsys)
    assert code == 2 and "needs a binary classifier" in err and len(err.splitlines()) == 1


def test_top_features_of_a_non_linear_model_rank_by_permutation():
    """The column the forest's decisions depend on comes first; a linear model keeps its
    closed-form ranking; without y a non-linear model is refused."""
    from sklearn.ensemble import RandomForestClassifier

    from skfairverify.audit._data import top_features

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"noise": rng.normal(size=400), "signal": rng.normal(size=400),
                      "weak": rng.normal(size=400)})
    y = ((X.signal + 0.2 * X.weak) > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    assert top_features(forest, X, list(X.columns), 2, y=y) == ["signal", "weak"]
    with pytest.raises(ValueError, match="needs the labels y"):
        top_features(forest, X, list(X.columns), 2)


# ------------------------------------------------------------- a raw CSV, as users bring it


def _raw(n=400, seed=0):
    """A CSV as users bring it: an id, names, a ticket code, numbers and a category with
    missing values, a 3-group column and 0/1 labels."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.4, 0.1])
    age = rng.normal(40, 10, n).round(1)
    age[rng.random(n) < 0.2] = np.nan
    port = rng.choice(["S", "C", "Q"], n).astype(object)
    port[:3] = np.nan
    score = np.nan_to_num(age, nan=40) / 10 + (group == "a") + rng.normal(0, 1, n)
    return pd.DataFrame({
        "id": np.arange(1, n + 1), "name": [f"person {i}" for i in range(n)],
        "ticket": [f"T{rng.integers(10**6)}" for _ in range(n)], "age": age, "port": port,
        "group": group, "label": (score > 5).astype(int)})


@pytest.mark.filterwarnings(  # group c has about 40 rows: its draws are noisy
    "ignore::skfairverify.verification.EstimateOutsideIntervalWarning")
def test_raw_csv_no_silent_drop_identifiers_left_out_label_stated(tmp_path, capsys):
    frame = _raw()
    frame.loc[[5, 6], "label"] = np.nan  # two rows without a label
    path = tmp_path / "raw.csv"
    frame.to_csv(path, index=False)
    argv = ["--csv", str(path), "--target", "label", "--sensitive-features", "group",
            "--steps", "verify", "--json", str(tmp_path / "r.json")]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    lines = out.replace("\n    ", " ").splitlines()  # the wrapped lines joined
    assert lines[1].startswith("favorable outcome: label = 1 (guessed: the labels are 0/1")
    assert lines[2].startswith("rows: 400 read, 398 used; 2 dropped: the label 'label' is "
                               "missing")
    assert lines[3].startswith("columns left out: id, name, ticket (they identify rows")
    assert lines[4].startswith("missing values: age") and "port 3 (kept as data" in lines[4]
    assert "small sample: c (" in out  # group c: about 12 test rows
    data = json.loads((tmp_path / "r.json").read_text())
    d = data["dataset"]
    assert d["rows"] == 398 and d["features"] == 3  # age, port, group
    assert d["missing_values"] == {"age": int(frame.age[frame.label.notna()].isna().sum()),
                                   "port": 3}
    assert d["favorable_label"]["value"] == "1"
    assert data["empirical"]["small_samples"]
    # --features: exactly those; --drop: the default without them
    code, out, err = _run(argv[:-2] + ["--features", "age"], capsys)
    assert code == 0 and "columns left out: id, name, ticket, port (not named by" in out
    code, out, err = _run(argv[:-2] + ["--drop", "port"], capsys)
    assert code == 0 and "columns left out: port (--drop)" in out


def test_html_without_matplotlib_is_refused_before_the_run(files, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.split(".")[0] == "matplotlib":
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)

    def started(*args, **kwargs):
        raise _RunStarted

    monkeypatch.setattr(cli, "run_audit", started)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    code, out, err = _run(["--dataset", "german", "--html", str(files / "r.html")], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert "--html draws its figures with matplotlib, which is not installed" in err


@pytest.mark.parametrize("favorable", ["yes", "no"])
def test_model_fitted_on_the_csv_labels(tmp_path, capsys, favorable):
    """A model fitted on the CSV's own 'yes' / 'no' labels is read through them: 1 where
    it predicts the favorable label (exact verification when that is its classes_[1])."""
    from sklearn.linear_model import LogisticRegression

    frame = _frame(n=300)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    X = frame[["proxy", "other"]]
    model = LogisticRegression().fit(X, frame["approved"])
    joblib.dump(model, tmp_path / "model.joblib")
    out_file = tmp_path / "r.json"
    code, out, err = _run(["--csv", str(path), *CSV, "--positive", favorable, "--model",
                           str(tmp_path / "model.joblib"), "--steps", "verify", "--json",
                           str(out_file), "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out_file.read_text())
    assert f"{favorable!r} (the favorable label) is read as the favorable decision" in \
        data["model"]["description"]
    assert data["verification"]["method"] == ("exact" if favorable == "yes" else "sampling")
    X_tr, X_te, y_tr, y_te = train_test_split(
        frame.drop(columns="approved"), (frame.approved == favorable).astype(int),
        test_size=0.3, stratify=(frame.approved == favorable).astype(int), random_state=0)
    decided = model.predict(X_te[["proxy", "other"]]) == favorable
    rates = {g["sex"]: g["selection_rate"] for g in data["empirical"]["groups"]}
    for sex in ("F", "M"):
        assert rates[sex] == pytest.approx(decided[X_te.sex.to_numpy() == sex].mean())
