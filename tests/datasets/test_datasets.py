"""Tests of skfairverify.datasets.

Expected figures come from the dataset README (/work/shared/datasets/README.md),
from SHA256SUMS and from plain-Python parsing of the raw bundled files, never from
the loaders themselves.
"""

import doctest
import gzip
import hashlib
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

from skfairverify.datasets import (
    _adult,
    _base,
    _compas,
    _german,
    load_adult,
    load_compas,
    load_german,
    load_titanic,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"

# Copied from /work/shared/datasets/SHA256SUMS (independent of the bundled files).
EXPECTED_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    "compas-two-years.csv": "734fbd093b4d661dce9ca789bfa359307bbcbdae315f7259ed59db59e32dc079",
    "titanic.csv": "4a437fde05fe5264e1701a7387ac6fb75393772ba38bb2c9c566405af5af4bd7",
}
SOURCE_PATHS = {
    "adult.data": "adult/adult.data",
    "adult.test": "adult/adult.test",
    "german.data": "german/german.data",
    "compas-two-years.csv": "compas/compas-two-years.csv",
    "titanic.csv": "titanic/titanic.csv",
}


def _raw_bytes(name):
    path = resources.files("skfairverify.datasets").joinpath("data", f"{name}.gz")
    return gzip.decompress(path.read_bytes())


def _raw_lines(name):
    return [line for line in _raw_bytes(name).decode("utf-8").split("\n") if line.strip()]


@pytest.fixture(scope="module")
def adult():
    return load_adult()


@pytest.fixture(scope="module")
def german():
    return load_german()


@pytest.fixture(scope="module")
def compas():
    return load_compas()


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("name", sorted(EXPECTED_SHA256))
def test_bundled_file_checksum_hard_coded(name):
    assert hashlib.sha256(_raw_bytes(name)).hexdigest() == EXPECTED_SHA256[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_SHA256))
def test_bundled_file_checksum_matches_sha256sums(name):
    sums = SHARED / "SHA256SUMS"
    if not sums.exists():
        pytest.skip("shared dataset folder not present")
    table = {}
    for line in sums.read_text().splitlines():
        digest, path = line.split()
        table[path.removeprefix("./")] = digest
    assert hashlib.sha256(_raw_bytes(name)).hexdigest() == table[SOURCE_PATHS[name]]


def test_private_checksum_table_and_helper():
    assert _base.CHECKSUMS == EXPECTED_SHA256
    assert _base.data_file_sha256("german.data") == EXPECTED_SHA256["german.data"]


def test_package_data_globs_cover_bundled_files():
    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"][
        "skfairverify.datasets"
    ]
    package = resources.files("skfairverify.datasets")
    for sub, pattern in [("data", "*.gz"), ("descr", "*.rst")]:
        assert f"{sub}/{pattern}" in globs
        assert list(Path(str(package.joinpath(sub))).glob(pattern))


def test_descr_lists_the_checksums(adult, german, compas):
    for bunch, names in [
        (adult, ["adult.data", "adult.test"]),
        (german, ["german.data"]),
        (compas, ["compas-two-years.csv"]),
    ]:
        for name in names:
            assert EXPECTED_SHA256[name] in bunch.DESCR
        for word in ("Source", "Licence", "Citation"):
            assert word in bunch.DESCR


@pytest.mark.parametrize("module", [_adult, _german, _compas])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


# --------------------------------------------------------------------------- Adult


def test_adult_bunch(adult):
    assert isinstance(adult, Bunch)
    assert adult.data.shape == (48842, 15)
    assert adult.feature_names == list(adult.data.columns)
    assert adult.sensitive_features == ["sex", "race"]
    assert set(adult.sensitive_features) <= set(adult.data.columns)
    assert list(adult.target_names) == ["<=50K", ">50K"]
    assert adult.target.name == "income_gt_50k"
    assert adult.target.index.equals(adult.data.index)
    assert adult.frame[adult.feature_names].equals(adult.data)
    assert adult.frame["income_gt_50k"].equals(adult.target)


def test_adult_counts_match_readme(adult):
    frame = adult.frame
    train, test = frame[frame["split"] == "train"], frame[frame["split"] == "test"]
    assert len(train) == 32561 and len(test) == 16281
    assert int(train["income_gt_50k"].sum()) == 7841
    assert int((train["income_gt_50k"] == 0).sum()) == 24720
    assert int(test["income_gt_50k"].sum()) == 3846
    assert int((test["income_gt_50k"] == 0).sum()) == 12435
    assert train["sex"].value_counts().to_dict() == {"Male": 21790, "Female": 10771}
    assert train["race"].value_counts().to_dict() == {
        "White": 27816,
        "Black": 3124,
        "Asian-Pac-Islander": 1039,
        "Amer-Indian-Eskimo": 311,
        "Other": 271,
    }
    missing = adult.data.isna().any(axis=1)
    assert int(missing[frame["split"] == "train"].sum()) == 2399
    assert int(missing[frame["split"] == "test"].sum()) == 1221
    # Missing values only where the README says.
    assert set(adult.data.columns[adult.data.isna().any()]) == {
        "workclass",
        "occupation",
        "native-country",
    }


def test_adult_labels_match_raw_lines(adult):
    # Independent plain-Python parse: the last field of each line is the label.
    train_lines = _raw_lines("adult.data")
    test_lines = _raw_lines("adult.test")
    assert test_lines[0].startswith("|1x3")
    test_lines = test_lines[1:]
    expected = [int(line.rsplit(",", 1)[1].strip().rstrip(".") == ">50K") for line in train_lines]
    expected += [int(line.rsplit(",", 1)[1].strip().rstrip(".") == ">50K") for line in test_lines]
    np.testing.assert_array_equal(adult.target.to_numpy(), expected)
    # First test row is the second line of adult.test (first line skipped).
    first_test = test_lines[0].split(", ")
    row = adult.data.iloc[32561]
    assert row["age"] == int(first_test[0]) and row["workclass"] == first_test[1]
    assert set(adult.frame["income"].unique()) == {"<=50K", ">50K"}


def test_adult_dtypes(adult):
    categorical = [
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native-country",
        "split",
    ]
    for col in adult.data.columns:
        if col in categorical:
            assert isinstance(adult.data[col].dtype, pd.CategoricalDtype), col
        else:
            assert adult.data[col].dtype == np.int64, col
    assert "?" not in adult.data["workclass"].cat.categories
    assert not any(str(c).startswith(" ") for c in adult.data["workclass"].cat.categories)
    assert list(adult.data["split"].cat.categories) == ["train", "test"]
    assert adult.target.dtype == np.int64


@pytest.mark.parametrize(
    "split, n_rows, n_positive", [("train", 32561, 7841), ("test", 16281, 3846)]
)
def test_adult_split_option(adult, split, n_rows, n_positive):
    bunch = load_adult(split=split)
    assert bunch.data.shape == (n_rows, 15)
    assert int(bunch.target.sum()) == n_positive
    assert (bunch.data["split"] == split).all()
    # Same categories whatever the split.
    for col in ("native-country", "workclass"):
        assert list(bunch.data[col].cat.categories) == list(adult.data[col].cat.categories)


def test_adult_dropna():
    bunch = load_adult(dropna=True)
    assert bunch.data.shape == (45222, 15)
    assert not bunch.data.isna().any().any()
    assert bunch.data["split"].value_counts().to_dict() == {"train": 30162, "test": 15060}
    assert load_adult(split="train", dropna=True).data.shape == (30162, 15)


def test_adult_as_frame_false(adult):
    bunch = load_adult(as_frame=False)
    assert isinstance(bunch.data, np.ndarray) and bunch.data.shape == (48842, 15)
    assert isinstance(bunch.target, np.ndarray) and bunch.target.shape == (48842,)
    assert bunch.frame is None
    np.testing.assert_array_equal(bunch.target, adult.target.to_numpy())
    assert bunch.feature_names == adult.feature_names
    X, y = load_adult(as_frame=False, return_X_y=True)
    assert X.shape == (48842, 15) and y.shape == (48842,)


def test_return_X_y(adult):
    X, y = load_adult(return_X_y=True)
    assert X.equals(adult.data) and list(X.dtypes) == list(adult.data.dtypes)
    assert y.equals(adult.target)


# --------------------------------------------------------------------------- German


def test_german_counts_match_readme(german):
    assert german.data.shape == (1000, 21)
    assert german.frame.shape == (1000, 24)
    assert int(german.target.sum()) == 700
    assert int((german.target == 0).sum()) == 300
    assert german.target.name == "good_credit"
    assert list(german.target_names) == ["bad", "good"]
    assert german.sensitive_features == ["sex", "age_group"]
    assert german.data["sex"].value_counts().to_dict() == {"Male": 690, "Female": 310}
    assert german.data["age_group"].value_counts().to_dict() == {"old": 810, "young": 190}
    assert int((german.data["age"] > 25).sum()) == 810
    assert not german.data.isna().any().any()


def test_german_decoding_and_derivations_match_raw(german):
    rows = [line.split(" ") for line in _raw_lines("german.data")]
    assert len(rows) == 1000 and all(len(r) == 21 for r in rows)
    personal = [r[8] for r in rows]
    # german.doc attribute 9: A92 and A95 are female, the others male.
    expected_sex = ["Female" if code in ("A92", "A95") else "Male" for code in personal]
    assert german.data["sex"].tolist() == expected_sex
    assert german.data["age_group"].tolist() == [
        "old" if int(r[12]) > 25 else "young" for r in rows
    ]
    assert german.target.tolist() == [int(r[20] == "1") for r in rows]
    assert german.frame["class"].tolist() == [int(r[20]) for r in rows]
    # Spot checks of decoded labels against german.doc.
    checking = {"A11": "<0", "A12": "0<=X<200", "A13": ">=200", "A14": "no checking"}
    assert german.data["checking_status"].tolist() == [checking[r[0]] for r in rows]
    telephone = {"A191": "none", "A192": "yes"}
    assert german.data["own_telephone"].tolist() == [telephone[r[18]] for r in rows]
    assert german.data["credit_amount"].tolist() == [int(r[4]) for r in rows]


def test_german_columns_and_dtypes(german):
    assert "personal_status" not in german.data.columns
    assert "personal_status" in german.frame.columns
    numeric = {
        "duration",
        "credit_amount",
        "installment_commitment",
        "residence_since",
        "age",
        "existing_credits",
        "num_dependents",
    }
    for col in german.data.columns:
        if col in numeric:
            assert german.data[col].dtype == np.int64, col
        else:
            assert isinstance(german.data[col].dtype, pd.CategoricalDtype), col
            # No code left undecoded, no empty category.
            assert not any(str(c).startswith("A") for c in german.data[col].cat.categories)
            assert german.data[col].value_counts().min() > 0, col


def test_german_as_frame_false(german):
    bunch = load_german(as_frame=False)
    assert bunch.data.shape == (1000, 21) and bunch.target.shape == (1000,)
    assert bunch.frame is None
    assert int(bunch.target.sum()) == 700


# --------------------------------------------------------------------------- COMPAS


def test_compas_counts_match_readme(compas):
    assert compas.data.shape == (7214, 9)
    assert compas.frame.shape == (7214, 20)
    assert int(compas.target.sum()) == 3963
    assert int((compas.target == 0).sum()) == 3251
    assert compas.target.name == "no_recid"
    assert list(compas.target_names) == ["recid", "no_recid"]
    assert compas.sensitive_features == ["race", "sex"]
    assert compas.data["race"].value_counts().to_dict() == {
        "African-American": 3696,
        "Caucasian": 2454,
        "Hispanic": 637,
        "Other": 377,
        "Asian": 32,
        "Native American": 18,
    }
    assert compas.data["sex"].value_counts().to_dict() == {"Male": 5819, "Female": 1395}
    assert (compas.target == (compas.frame["two_year_recid"] == 0)).all()


def test_compas_columns(compas):
    excluded = {
        "two_year_recid",
        "is_recid",
        "is_violent_recid",
        "decile_score",
        "score_text",
        "v_decile_score",
        "v_score_text",
    }
    assert not excluded & set(compas.data.columns)
    header = _raw_lines("compas-two-years.csv")[0].split(",")
    assert len(header) == 19
    assert set(header) <= set(compas.frame.columns)
    assert not compas.data.isna().any().any()
    for col in ("sex", "race", "age_cat", "c_charge_degree"):
        assert isinstance(compas.data[col].dtype, pd.CategoricalDtype), col
    for col in ("age", "priors_count", "juv_fel_count"):
        assert compas.data[col].dtype == np.int64, col


def test_compas_propublica_filter(compas):
    bunch = load_compas(propublica_filter=True)
    assert bunch.data.shape == (6172, 9)
    frame = bunch.frame
    assert frame["days_b_screening_arrest"].between(-30, 30).all()
    assert (frame["is_recid"] != -1).all()
    assert (frame["c_charge_degree"] != "O").all()
    assert (frame["score_text"] != "N/A").all()
    # Independent count from a plain-Python parse of the CSV.
    lines = _raw_lines("compas-two-years.csv")
    header = lines[0].split(",")
    idx = {name: header.index(name) for name in header}
    kept = 0
    for line in lines[1:]:
        f = line.split(",")
        days = f[idx["days_b_screening_arrest"]]
        if (
            days != ""
            and -30 <= float(days) <= 30
            and f[idx["is_recid"]] != "-1"
            and f[idx["c_charge_degree"]] != "O"
            and f[idx["score_text"]] != "N/A"
        ):
            kept += 1
    assert kept == 6172
    assert bunch.data.index.equals(pd.RangeIndex(6172))


def test_compas_as_frame_false():
    X, y = load_compas(as_frame=False, return_X_y=True)
    assert isinstance(X, np.ndarray) and X.shape == (7214, 9)
    assert isinstance(y, np.ndarray) and y.shape == (7214,) and int(y.sum()) == 3963


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "loader, kwargs, param",
    [
        (load_adult, {"split": "validation"}, "split"),
        (load_adult, {"split": None}, "split"),
        (load_adult, {"dropna": "yes"}, "dropna"),
        (load_adult, {"as_frame": "yes"}, "as_frame"),
        (load_german, {"as_frame": None}, "as_frame"),
        (load_german, {"return_X_y": "no"}, "return_X_y"),
        (load_compas, {"propublica_filter": "yes"}, "propublica_filter"),
        (load_compas, {"as_frame": 2}, "as_frame"),
    ],
)
def test_bad_option_raises(loader, kwargs, param):
    with pytest.raises(ValueError, match=param):
        loader(**kwargs)


@pytest.mark.parametrize("loader", [load_adult, load_german, load_compas])
def test_positional_arguments_rejected(loader):
    with pytest.raises(TypeError):
        loader(True)


def test_titanic_is_the_raw_file():
    """The file as it is (README: 891 rows, 342 survived; Age missing in 177 rows, Cabin
    in 687, Embarked in 2; Sex 314 / 577; Pclass 216 / 184 / 491)."""
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(_raw_bytes("titanic.csv").decode("utf-8"))))
    bunch = load_titanic()
    assert bunch.frame.shape == (891, 12) and bunch.data.shape == (891, 11)
    assert int(bunch.target.sum()) == 342 == sum(r["Survived"] == "1" for r in rows)
    missing = {c: sum(r[c] == "" for r in rows) for c in ("Age", "Cabin", "Embarked")}
    assert missing == {"Age": 177, "Cabin": 687, "Embarked": 2}
    assert bunch.data[list(missing)].isna().sum().to_dict() == missing
    assert bunch.data["Sex"].value_counts().to_dict() == {"male": 577, "female": 314}
    assert bunch.data["Pclass"].value_counts().sort_index().tolist() == [216, 184, 491]
    assert bunch.sensitive_features == ["Sex", "Pclass"]
    assert list(bunch.target_names) == ["died", "survived"]
    X, y = load_titanic(as_frame=False, return_X_y=True)
    assert X.shape == (891, 11) and y.dtype.kind == "i"
    assert "4a437fde05fe5264e1701a7387ac6fb75393772ba38bb2c9c566405af5af4bd7" in bunch.DESCR
