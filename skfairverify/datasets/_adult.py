"""UCI Adult (Census Income) loader."""

from __future__ import annotations

import pandas as pd
from sklearn.utils import Bunch

from ..utils._compat import StrOptions, validate_params
from ._base import load_descr, make_bunch, open_data_file, to_category

ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
ADULT_TARGET = "income_gt_50k"


def _read_adult_file(name: str, skiprows: int) -> pd.DataFrame:
    with open_data_file(name) as stream:
        df = pd.read_csv(
            stream,
            header=None,
            names=ADULT_COLUMNS,
            skipinitialspace=True,
            na_values="?",
            keep_default_na=False,
            skiprows=skiprows,
            skip_blank_lines=True,
        )
    df["income"] = df["income"].str.rstrip(".")
    return df


@validate_params(
    {
        "as_frame": ["boolean"],
        "split": [StrOptions({"all", "train", "test"})],
        "dropna": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_adult(
    *,
    as_frame: bool = True,
    split: str = "all",
    dropna: bool = False,
    return_X_y: bool = False,
) -> Bunch | tuple:
    """Load the UCI Adult (Census Income) dataset, train and test files joined.

    The bundled copies of ``adult.data`` (32,561 rows) and ``adult.test``
    (16,281 rows) are read as published: ``", "`` separators, ``?`` for a
    missing value, the first line of the test file (``|1x3 Cross validator``)
    skipped and the test labels' trailing full stop removed (``>50K.`` becomes
    ``>50K``). The two files are stacked, train first, and a ``split`` column
    (``"train"`` / ``"test"``) records where each row comes from.

    Read more in the ``DESCR`` of the returned Bunch.

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame (categorical columns with the
        ``category`` dtype, numeric columns as ``int64``), ``target`` a pandas
        Series and ``frame`` a DataFrame with both. If False, ``data`` is
        ``data.to_numpy()`` (an ``object`` array), ``target`` an integer array
        and ``frame`` is None.
    split : {"all", "train", "test"}, default="all"
        Which rows to return: both files, ``adult.data`` only or
        ``adult.test`` only. The ``split`` column stays in ``data`` in every
        case; drop it before fitting a model.
    dropna : bool, default=False
        If True, drop every row with a missing value (``workclass``,
        ``occupation`` or ``native-country`` written ``?``): 45,222 rows remain
        of 48,842. By default missing values are kept as NaN.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    bunch : :class:`~sklearn.utils.Bunch`
        With the attributes:

        data : DataFrame of shape (n_rows, 15) or ndarray
            The 14 original features plus ``split``.
        target : Series of shape (n_rows,) or ndarray
            ``income_gt_50k``: 1 if income is ``>50K`` (favorable), else 0.
        sensitive_features : list of str
            ``["sex", "race"]`` (privileged groups ``Male`` and ``White``).
        frame : DataFrame of shape (n_rows, 17) or None
            ``data`` plus the normalised ``income`` label and the target.
        DESCR : str
            Description: source, licence, citation, counts.
        feature_names : list of str
            The columns of ``data``.
        target_names : ndarray of str
            ``["<=50K", ">50K"]``, the meaning of target 0 and 1.

    (data, target) : tuple if ``return_X_y`` is True

    Examples
    --------
    >>> from skfairverify.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape
    (48842, 15)
    >>> adult.frame["split"].value_counts().to_dict()
    {'train': 32561, 'test': 16281}
    >>> int(adult.target.sum())
    11687
    >>> adult.sensitive_features
    ['sex', 'race']
    >>> X, y = load_adult(split="train", dropna=True, return_X_y=True)
    >>> X.shape
    (30162, 15)
    """
    # Both files are always read so that the categories are the same for every split.
    frame = pd.concat(
        [
            _read_adult_file("adult.data", skiprows=0).assign(split="train"),
            _read_adult_file("adult.test", skiprows=1).assign(split="test"),
        ],
        ignore_index=True,
    )
    for col in ADULT_NUMERIC:
        frame[col] = frame[col].astype("int64")
    for col in ADULT_CATEGORICAL:
        frame[col] = to_category(frame[col])
    frame["split"] = to_category(frame["split"], ["train", "test"])
    frame["income"] = to_category(frame["income"], ["<=50K", ">50K"])
    frame[ADULT_TARGET] = (frame["income"] == ">50K").astype("int64")

    feature_names = ADULT_COLUMNS[:-1] + ["split"]
    frame = frame[feature_names + ["income", ADULT_TARGET]]
    if split != "all":
        frame = frame[frame["split"] == split]
    if dropna:
        frame = frame.dropna(subset=feature_names)

    return make_bunch(
        frame,
        feature_names=feature_names,
        target_column=ADULT_TARGET,
        target_names=["<=50K", ">50K"],
        sensitive_features=["sex", "race"],
        descr=load_descr("adult"),
        as_frame=as_frame,
        return_X_y=return_X_y,
    )
