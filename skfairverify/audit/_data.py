"""The audit's data and model: bundled or CSV data, the default model, column handling."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from ..datasets import load_adult, load_compas, load_german
from ..rules import linear_rule
from ..verification import MAX_SENSITIVE_VALUES

DATASETS = ("adult", "german", "compas")

# The privileged value of each sensitive column of the bundled data, as their
# descriptions (``skfairverify/datasets/descr``) document it; compas: "Caucasian", the
# reference group of ProPublica's analysis (its sex column has no documented value).
PRIVILEGED = {
    "adult": {"sex": "Male", "race": "White"},
    "german": {"sex": "Male", "age_group": "old"},
    "compas": {"race": "Caucasian"},
}


#: A column whose distinct values cover at least this share of its rows identifies them:
#: an integer-valued number (``PassengerId``) at 99% (an amount in whole units, like
#: German credit's ``credit_amount``, distinct in 92% of its rows, is kept), a text
#: (``Name``, ``Ticket``) at 50% (a category seen less than twice on average cannot be
#: learned). A number with a fractional part is a measurement, never an identifier.
IDENTIFIER_SHARE = {"number": 0.99, "text": 0.5}
#: Columns with fewer non-missing rows are never called identifiers.
IDENTIFIER_MIN_ROWS = 20
#: A column with at most LEAK_MAX_VALUES values whose values alone give the label on this
#: share of the rows (the majority label of each value) may be the label under another
#: name (COMPAS's ``is_recid`` beside ``two_year_recid``): the audit names it.
LEAK_AGREEMENT = 0.95
LEAK_MAX_VALUES = 20


def default_model() -> object:
    """The audit's linear model: imputed and scaled numbers, one-hot categories, then LR.

    Columns are selected by dtype, so the same pipeline fits any subset of columns
    (the second ESL stage refits it on feature coalitions). A missing number is
    imputed with the column's median and flagged by an indicator (so the model may
    learn from missingness); a missing category is a category of its own (the one-hot
    encoder's NaN). On data without missing values both steps are the identity.

    Returns
    -------
    sklearn.pipeline.Pipeline
        An unfitted pipeline.

    Examples
    --------
    >>> from skfairverify.audit import default_model
    >>> type(default_model()[-1]).__name__
    'LogisticRegression'
    """
    from sklearn.impute import SimpleImputer

    return make_pipeline(
        make_column_transformer(
            (make_pipeline(SimpleImputer(strategy="median", add_indicator=True),
                           StandardScaler()),
             make_column_selector(dtype_include="number")),
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_exclude="number"),
            ),
        ),
        LogisticRegression(max_iter=2000),
    )


def load_bundled(name: str) -> tuple[pd.DataFrame, pd.Series, list[str], dict]:
    """Features, labels, usual sensitive columns and provenance of a bundled dataset.

    The provenance says which rows the loader leaves out and why (Adult: the rows with a
    missing value, as the literature does; COMPAS: ProPublica's filter) and what the
    favorable label is.
    """
    if name == "adult":
        bunch = load_adult(dropna=True)
        X = bunch.data.drop(columns=["split", "fnlwgt"])
        dropped = [{"rows": 48_842 - len(X), "reason": "a missing value (workclass, "
                    "occupation or native-country), as load_adult(dropna=True) and the "
                    "literature do"}]
        left = [{"columns": ["split", "fnlwgt"], "reason": "the file a row comes from; "
                 "the census sampling weight"}]
    elif name == "german":
        bunch = load_german()
        X, dropped, left = bunch.data, [], []
    elif name == "compas":
        bunch = load_compas(propublica_filter=True)
        X = bunch.data
        dropped = [{"rows": 7_214 - len(X), "reason": "ProPublica's filter (screening "
                    "within 30 days of the arrest, a known charge and score)"}]
        left = []
    else:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {list(DATASETS)}.")
    y = pd.Series(np.asarray(bunch.target), index=X.index, name="target")
    favorable = bunch.target_names[1]
    provenance = {
        "rows_read": int(len(X)) + sum(d["rows"] for d in dropped),
        "dropped_rows": dropped,
        "favorable_label": {"column": "target", "value": str(favorable),
                            "rule": f"the documented favorable outcome of the {name} data"},
        "columns_left_out": left,
        "missing_values": missing_counts(X),
    }
    return X, y, list(bunch.sensitive_features), provenance


def missing_counts(frame: pd.DataFrame) -> dict:
    """Column -> number of missing values, for the columns that have any."""
    return {str(c): int(n) for c, n in frame.isna().sum().items() if n}


_THRESHOLD = re.compile(r"^\s*(>=|<=|>|<)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$")
_COMPARE = {">=": np.greater_equal, "<=": np.less_equal, ">": np.greater, "<": np.less}


def _threshold_target(labels: pd.Series, target: str, positive: str):
    """0/1 labels of a numeric label compared with a threshold (``--positive '>=70'``)."""
    op, value = _THRESHOLD.match(positive).groups()
    numbers = pd.to_numeric(labels, errors="coerce")
    if numbers.isna().any():
        bad = sorted(map(str, pd.unique(labels[numbers.isna()])))[:5]
        raise ValueError(f"--positive {positive!r} compares the target {target!r} with a "
                         f"number, but it holds values that are not numbers: {bad}.")
    y = _COMPARE[op](numbers.to_numpy(dtype=float), float(value)).astype(int)
    if y.min() == y.max():
        raise ValueError(f"--positive {positive!r}: every row of {target!r} is on the same "
                         "side of the threshold; the audit needs both outcomes.")
    label = {"column": target, "value": f"{op} {value}", "labels": [],
             "rule": "given with --positive (a threshold of the numeric label)"}
    return pd.Series(y, index=labels.index, name="target"), label


def binary_target(labels: pd.Series, target: str, positive) -> tuple[pd.Series, dict]:
    """0/1 labels (1 where the label is the favorable ``positive``) and how it was chosen.

    Without ``positive``, only 0/1 (or False/True) labels have an obvious favorable
    value, 1 (True), taken and said so; any other two labels need ``--positive`` (the
    last sorted label is never taken in silence: "rejected" after "approved"). A numeric
    label may be compared with a threshold: ``positive=">=70"``.
    """
    if positive is not None and _THRESHOLD.match(str(positive)):
        return _threshold_target(labels.dropna(), target, str(positive))
    labels = labels.dropna()
    if pd.api.types.is_float_dtype(labels) and np.all(np.mod(labels, 1) == 0):
        labels = labels.astype("int64")  # 0.0 / 1.0 read with missing labels: 0 / 1
    values = sorted(pd.unique(labels), key=str)
    shown = [str(v) for v in values[:10]] + (["..."] if len(values) > 10 else [])
    if len(values) < 2:
        raise ValueError(f"Target {target!r} has the single value {shown}; the audit needs "
                         "favorable and unfavorable outcomes.")
    if positive is None:
        texts = {str(v) for v in values}
        if len(values) != 2 or texts not in ({"0", "1"}, {"False", "True"}):
            threshold = (" (or a threshold of this numeric label, e.g. --positive '>=VALUE')"
                         if pd.api.types.is_numeric_dtype(labels) and len(values) > 2 else "")
            raise ValueError(
                f"Target {target!r} has the values {shown}; pass --positive VALUE to say "
                f"which one is the favorable outcome{threshold} (only 0/1 labels have an "
                "obvious one)."
            )
        positive = next(v for v in values if str(v) in ("1", "True"))
        rule = (f"guessed: the labels are {shown[0]}/{shown[1]}, so {positive} is taken as "
                "favorable; pass --positive to choose the other")
    elif str(positive) not in {str(v) for v in values}:
        raise ValueError(f"--positive {positive!r} is not a value of the target {target!r}: "
                         f"{shown}.")
    else:
        rule = "given with --positive"
    y = (labels.astype(str) == str(positive)).astype(int).rename("target")
    label = {"column": target, "value": str(positive), "rule": rule,
             "labels": [str(v) for v in values]}
    return y, label


def read_csv(path: str, na_values=None) -> pd.DataFrame:
    """The CSV file's rows, or a ValueError / OSError naming what is wrong with the file.

    ``na_values``: texts that mean a missing value, besides pandas' own.
    """
    if Path(path).is_dir():
        raise ValueError(f"{path} is a directory, not a CSV file.")
    try:
        frame = pd.read_csv(path, na_values=na_values)
    except pd.errors.EmptyDataError as exc:
        raise ValueError(f"{path} is empty: no header row, no data.") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        detail = " ".join(str(exc).split())
        raise ValueError(f"{path} is not a readable CSV file ({detail}).") from exc
    if frame.empty:
        raise ValueError(f"{path} has a header row but no data rows.")
    return frame


def _data_as_header(names) -> str:
    """A hint when the header row reads as data: a third or more of its names are numbers.

    Examples
    --------
    >>> from skfairverify.audit._data import _data_as_header
    >>> _data_as_header(["39", " State-gov", " 77516", " Male"])[:42]
    ' The first row looks like data, not column'
    >>> _data_as_header(["age", "income", "sex", "2020"])
    ''
    """
    numbers = [str(c).strip() for c in names
               if pd.notna(pd.to_numeric(str(c).strip(), errors="coerce"))]
    if 3 * len(numbers) < len(names) or not numbers:
        return ""
    return (f" The first row looks like data, not column names ({len(numbers)} of "
            f"{len(names)} names are numbers: {numbers[:3]}): the file seems to have no "
            "header row; add one with the columns' names (the command reads the first row "
            "as the names).")


def check_columns(frame: pd.DataFrame, target, sensitive_features: Sequence[str],
                  source: str, others: Sequence[str] = ()) -> None:
    """Refuse sensitive, target or other named columns ``frame`` lacks; a sensitive target."""
    missing = [c for c in [target, *sensitive_features, *others] if c is not None
               and c not in frame.columns]
    if missing:
        raise ValueError(f"Column(s) {missing} not found in {source}; columns: {list(frame)}."
                         + _data_as_header(frame.columns))
    if target is not None and target in sensitive_features:
        raise ValueError(f"The sensitive column {target!r} is the target (--target): a "
                         "sensitive column must be a feature, not the label.")


def identifier_columns(frame: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns that identify rows: distinct for (nearly) every row.

    An integer-valued numeric column whose distinct values cover at least 99% of its
    non-missing rows, a text column at least 50% (:data:`IDENTIFIER_SHARE`); a number
    with a fractional part is a measurement and is kept.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.audit._data import identifier_columns
    >>> frame = pd.DataFrame({"id": range(100), "name": [f"p{i}" for i in range(100)],
    ...                       "x": [i / 7 for i in range(100)], "c": ["a", "b"] * 50})
    >>> identifier_columns(frame, ["id", "name", "x", "c"])
    ['id', 'name']
    """
    out = []
    for c in columns:
        col = frame[c].dropna()
        if len(col) < IDENTIFIER_MIN_ROWS or pd.api.types.is_bool_dtype(col):
            continue
        share = col.nunique() / len(col)
        if pd.api.types.is_numeric_dtype(col):
            if np.all(np.mod(col.to_numpy(dtype=float), 1) == 0) and \
                    share >= IDENTIFIER_SHARE["number"]:
                out.append(c)
        elif share >= IDENTIFIER_SHARE["text"]:
            out.append(c)
    return out


def check_groups(frame: pd.DataFrame, sensitive_features: Sequence[str]) -> None:
    """Refuse a numeric sensitive column with many values: a sensitive feature is groups."""
    for c in sensitive_features:
        col = frame[c]
        n = col.nunique()
        if pd.api.types.is_numeric_dtype(col) and n > MAX_SENSITIVE_VALUES:
            raise ValueError(
                f"The sensitive column {c!r} is numeric with {n:,} distinct values, but a "
                f"sensitive feature is a set of groups (at most {MAX_SENSITIVE_VALUES}); "
                f"add a column of groups to the CSV, e.g. pd.cut(data[{c!r}], bins=[...], "
                "labels=[...]), and name it with --sensitive-features."
            )


def label_leaks(frame: pd.DataFrame, y: pd.Series, columns: Sequence[str]) -> dict:
    """Columns whose few values alone give the label on most rows, with that share.

    For a column with at most :data:`LEAK_MAX_VALUES` values (a missing value is one)
    and at least 10 rows per value on average,
    the share of the rows whose label is the majority label of their value; named when
    at least :data:`LEAK_AGREEMENT` and clearly above the majority label's own share.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.audit._data import label_leaks
    >>> y = pd.Series([0, 1] * 50)
    >>> frame = pd.DataFrame({"copy": y.map({0: "no", 1: "yes"}), "noise": [1, 1, 2, 2] * 25})
    >>> label_leaks(frame, y, ["copy", "noise"])
    {'copy': 1.0}
    """
    base = max(float(y.mean()), 1.0 - float(y.mean()))
    out = {}
    for c in columns:
        values = frame[c].astype(object).where(frame[c].notna(), "<missing>")
        n_values = values.nunique()
        if n_values > LEAK_MAX_VALUES or 10 * n_values > len(values):
            continue  # many values, or few rows each: a majority per value means little
        majority = y.groupby(values.to_numpy()).transform(lambda v: v.mean() >= 0.5)
        share = float((majority.astype(int) == y).mean())
        if share >= LEAK_AGREEMENT and share >= base + 0.05:
            out[str(c)] = round(share, 4)
    return out


def _drop_missing(frame: pd.DataFrame, target: str, sensitive: Sequence[str], path: str):
    """``frame`` without the rows missing the label or a sensitive value, and why."""
    reasons = {target: f"the label {target!r} is missing (such a row cannot be learned "
                       "or scored)"}
    reasons.update({c: f"the sensitive value {c!r} is missing (such a row is in no group)"
                    for c in sensitive})
    dropped = []
    for c, reason in reasons.items():
        missing = frame[c].isna()
        if missing.any():
            dropped.append({"rows": int(missing.sum()), "reason": reason})
            frame = frame[~missing]
    if frame.empty:
        said = "; ".join(f"{d['rows']} rows: {d['reason']}" for d in dropped)
        raise ValueError(f"Every one of the rows of {path} misses the label or a sensitive "
                         f"value ({said}); nothing is left to audit.")
    return frame, dropped


def _named(columns, sensitive, features, drop) -> tuple[list, list]:
    """The features ``--features`` names, or ``columns`` without ``--drop``'s; the rest."""
    named = [c for c in [*(features or []), *(drop or [])] if c not in columns]
    if named:
        raise ValueError(f"--features / --drop name {named}, which are not feature columns "
                         "(the target, or not in the data); name feature columns only.")
    if features:
        kept = [c for c in features if c not in sensitive]
        left = [c for c in columns if c not in kept and c not in sensitive]
        return kept, ([{"columns": left, "reason": "not named by --features"}] if left else [])
    drop = list(drop or [])
    kept = [c for c in columns if c not in drop and c not in sensitive]
    return kept, ([{"columns": drop, "reason": "--drop"}] if drop else [])


def select_columns(X: pd.DataFrame, sensitive, features, drop, provenance: dict):
    """``X`` with the columns that ``--features`` names, or without those of ``--drop``.

    The sensitive columns are always kept; the columns left out are added, with their
    reason, to ``provenance["columns_left_out"]``.
    """
    if not features and not drop:
        return X
    kept, left = _named(list(X.columns), sensitive, features, drop)
    provenance["columns_left_out"] = [*provenance.get("columns_left_out", []), *left]
    return X[kept + [c for c in sensitive if c not in kept]]


def _choose_features(frame, target, sensitive, features, drop) -> tuple[list, list]:
    """The feature columns and the columns left out (each with its reason).

    ``--features``: exactly those. Otherwise every column but the label, the sensitive
    ones, ``--drop``'s and those that identify rows (:func:`identifier_columns`).
    """
    columns = [c for c in frame.columns if c != target]
    kept, left = _named(columns, sensitive, features, drop)
    if features:
        return kept, left
    ids = identifier_columns(frame, kept)
    if ids:
        left.insert(0, {"columns": ids, "reason": "they identify rows: distinct in at "
                        f"least {IDENTIFIER_SHARE['number']:.0%} of the rows (whole numbers) "
                        f"or {IDENTIFIER_SHARE['text']:.0%} (text); keep one with --features"})
    return [c for c in kept if c not in ids], left


def load_csv(path: str, target: str, sensitive_features: Sequence[str], positive=None, *,
             features: Sequence[str] | None = None, drop: Sequence[str] | None = None,
             na_values: Sequence[str] | None = None):
    """Features, 0/1 labels, sensitive columns and provenance of a CSV file.

    Missing values are data (the model imputes a number and flags it, a missing
    category is a category); only the rows without a label or a sensitive value are
    dropped, counted with their reason in the provenance, which also says which columns
    were left out (``drop``, identifiers, or those not in ``features``) and how the
    favorable label was chosen.
    """
    frame = read_csv(path, na_values)
    check_columns(frame, target, sensitive_features, path,
                  others=[*(features or []), *(drop or [])])
    rows_read = len(frame)
    check_groups(frame, sensitive_features)
    frame, dropped = _drop_missing(frame, target, list(sensitive_features), path)
    y, label = binary_target(frame[target], target, positive)
    kept, left = _choose_features(frame, target, list(sensitive_features), features, drop)
    frame = frame[kept + [c for c in sensitive_features if c not in kept]].copy()
    for col in frame.columns:  # text (object, or pandas' str) and sensitive: categories
        if (col in sensitive_features or frame[col].dtype == object
                or pd.api.types.is_string_dtype(frame[col])):
            frame[col] = frame[col].astype("category")
    provenance = {"rows_read": rows_read, "dropped_rows": dropped, "favorable_label": label,
                  "columns_left_out": left, "missing_values": missing_counts(frame),
                  "label_leaks": label_leaks(frame, y, kept)}
    return frame, y, list(sensitive_features), provenance


def resolve_privileged(X: pd.DataFrame, sensitive: Sequence[str], given,
                       dataset: str | None):
    """The privileged group of the counterfactual step and why it is that one, or Nones.

    The step compares the compound groups of every sensitive column. ``given``
    (``--privileged``, text) is matched to a value of the one sensitive column, or to a
    compound group written ``"v1 / v2"``; otherwise a bundled dataset's documented value
    is taken (``PRIVILEGED``), for several columns when each has one. ``None`` leaves the
    choice to the counterfactual step (``CounterfactualFairness``'s own rule).
    """
    sensitive = list(sensitive)
    combos = X[sensitive].dropna().drop_duplicates()
    groups = {" / ".join(map(str, row)): (row if len(row) > 1 else row[0])
              for row in combos.itertuples(index=False, name=None)}
    if given is not None:
        text = " / ".join(p.strip() for p in str(given).replace("|", "/").split("/"))
        if text not in groups:
            raise ValueError(f"--privileged {given!r} is not a group of "
                             f"{' x '.join(map(repr, sensitive))}: {sorted(groups)[:20]}.")
        return groups[text], "given with --privileged"
    documented = [PRIVILEGED.get(dataset or "", {}).get(c) for c in sensitive]
    text = " / ".join(map(str, documented))
    if None not in documented and text in groups:
        return groups[text], (f"the documented privileged value of the {dataset} data "
                              "(change it with --privileged)")
    return None, None


def top_features(model, X: pd.DataFrame, candidates: list[str], n: int, y=None,
                 random_state=0) -> list[str]:
    """The ``n`` raw columns that move the model's decisions most on ``X``.

    A linear model (anything :func:`~skfairverify.linear_rule` reads): the spread of each
    column's contribution to the decision function. Any other model: scikit-learn's
    permutation importance (accuracy on ``X, y``, 5 repeats), which needs ``y``.
    """
    try:
        rule = linear_rule(model)
    except TypeError:
        return _permutation_ranking(model, X, candidates, n, y, random_state)
    spread = {}
    for col in candidates:
        if col in rule.numeric_features:
            spread[col] = abs(rule.coef[col]) * float(X[col].astype(float).std())
        elif col in rule.categorical_features:
            coefs = rule.category_coef(col)
            contrib = X[col].astype(object).map(dict(zip(coefs.index, coefs.to_numpy())))
            spread[col] = float(pd.to_numeric(contrib, errors="coerce").fillna(0.0).std())
    ranked = sorted(spread, key=lambda c: -spread[c])
    return ranked[:n]


def _permutation_ranking(model, X, candidates, n, y, random_state) -> list[str]:
    """Candidates ranked by permutation importance (the decrease of accuracy)."""
    from sklearn.inspection import permutation_importance

    if y is None:
        raise ValueError("Ranking the features of a non-linear model needs the labels y.")
    result = permutation_importance(model, X, y, n_repeats=5, random_state=random_state)
    importance = dict(zip(X.columns, result.importances_mean))
    ranked = sorted(candidates, key=lambda c: -importance[c])
    return ranked[:n]


def taking_all_columns(model, X: pd.DataFrame):
    """Let a fitted model that reads a subset of the columns take the whole of ``X``."""
    names = getattr(model, "feature_names_in_", None)
    if names is None or list(names) == list(X.columns):
        return model
    missing = [c for c in names if c not in X.columns]
    if missing:
        raise ValueError(f"The model was fitted on column(s) {missing} that the data lacks.")
    select = make_column_transformer(
        ("passthrough", list(names)), remainder="drop", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(select.fit(X), FrozenEstimator(model))


class FavorableDecisions(ClassifierMixin, BaseEstimator):
    """A fitted classifier's decisions as the audit reads them: 1 = the favorable label.

    The audit's labels are 0/1 (1 = favorable); a model fitted on the data's own labels
    (``"no"`` / ``"yes"``, or 0/1 with 0 favorable) predicts those. This wrapper of
    the fitted ``estimator`` predicts 1 where it predicts ``favorable``, 0 elsewhere,
    and gives the probability of the favorable label as ``predict_proba[:, 1]``.

    Parameters
    ----------
    estimator : classifier
        A fitted binary classifier.
    favorable : object
        The class of ``estimator.classes_`` that is the favorable decision.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify.audit._data import FavorableDecisions
    >>> X = np.arange(6.0).reshape(-1, 1)
    >>> model = LogisticRegression().fit(X, ["yes"] * 3 + ["no"] * 3)
    >>> FavorableDecisions(model, "yes").predict(X).tolist()
    [1, 1, 1, 0, 0, 0]
    """

    def __init__(self, estimator, favorable):
        self.estimator = estimator
        self.favorable = favorable

    def fit(self, X, y=None):
        """Do nothing: the estimator is fitted already.

        Parameters
        ----------
        X : array-like
            Ignored.
        y : array-like, default=None
            Ignored.

        Returns
        -------
        self : FavorableDecisions
        """
        return self

    @property
    def classes_(self) -> np.ndarray:
        return np.array([0, 1])

    def __sklearn_is_fitted__(self) -> bool:
        return True  # a wrapper of a fitted model

    def _favorable_index(self) -> int:
        return [str(c) for c in self.estimator.classes_].index(str(self.favorable))

    def predict(self, X):
        """1 where the estimator predicts the favorable label, else 0.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to decide.

        Returns
        -------
        ndarray of int of shape (n_samples,)
        """
        favorable = self.estimator.classes_[self._favorable_index()]
        return (np.asarray(self.estimator.predict(X)) == favorable).astype(int)

    def predict_proba(self, X):
        """Probabilities of the unfavorable and of the favorable decision.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        p = np.asarray(self.estimator.predict_proba(X))[:, self._favorable_index()]
        return np.column_stack([1.0 - p, p])


def favorable_model(model, X: pd.DataFrame, label: dict | None):
    """``model`` deciding 0/1 with 1 = favorable, and how its labels were read (or None).

    A model whose classes are 0/1 is taken as it is (1 = favorable, the audit's labels)
    unless they are the target's own labels with 0 favorable; a model whose classes
    are the target's labels (``"no"`` / ``"yes"``) is read through them: when the
    favorable label is its ``classes_[1]`` its classes are renamed 0/1 in a copy (any
    exact path of the verifier is kept); otherwise :class:`FavorableDecisions` wraps it
    (the verifier samples it, or bounds a tree ensemble through it).
    """
    classes = getattr(model, "classes_", None)
    if classes is None:
        return model, None
    texts = [str(c) for c in classes]
    raw = [] if label is None else label.get("labels", [])
    if set(texts) != set(raw):
        if set(texts) <= {"0", "1", "0.0", "1.0", "False", "True"}:
            return model, None
        raise ValueError(
            f"The model predicts the classes {texts}, which are neither 0/1 nor the target's "
            f"labels {raw}; fit it on the data's labels (or on 0/1, 1 = favorable)."
        )
    if texts == ["0", "1"] and str(label["value"]) == "1":
        return model, None
    note = (f"the model predicts {texts}; {label['value']!r} (the favorable label) is read "
            "as the favorable decision")
    if texts.index(str(label["value"])) == 1:
        renamed = _renamed_classes(model, X)
        if renamed is not None:
            return renamed, note
    return FavorableDecisions(model, label["value"]), note + " (through a wrapper)"


def _renamed_classes(model, X: pd.DataFrame):
    """A copy of ``model`` whose final classifier's classes are renamed 0 and 1, or None.

    Checked on rows of ``X``: a model that does not predict through its ``classes_``
    (it keeps its own label encoder) gives None.
    """
    import copy

    from sklearn.pipeline import Pipeline

    renamed = copy.deepcopy(model)
    final = renamed
    while isinstance(final, (Pipeline, FrozenEstimator)):
        final = final.steps[-1][1] if isinstance(final, Pipeline) else final.estimator
    try:
        final.classes_ = np.array([0, 1])
    except AttributeError:
        return None
    rows = X.iloc[:200]
    expected = FavorableDecisions(model, model.classes_[1]).predict(rows)
    got = np.asarray(renamed.predict(rows))
    if got.dtype.kind not in "iub" or not np.array_equal(got, expected):
        return None
    return renamed


def unaware_model(X_train: pd.DataFrame, y_train, sensitive_features: list[str]):
    """The default model fitted on the non-sensitive columns (fairness under unawareness)."""
    features = [c for c in X_train.columns if c not in sensitive_features]
    select = make_column_transformer(
        ("passthrough", features), remainder="drop", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(select, default_model()).fit(X_train, y_train)
