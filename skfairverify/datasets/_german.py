"""UCI Statlog German Credit loader."""

from __future__ import annotations

import pandas as pd
from sklearn.utils import Bunch

from ..utils._compat import validate_params
from ._base import load_descr, make_bunch, open_data_file, to_category

GERMAN_COLUMNS = [
    "checking_status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings_status",
    "employment",
    "installment_commitment",
    "personal_status",
    "other_parties",
    "residence_since",
    "property_magnitude",
    "age",
    "other_payment_plans",
    "housing",
    "existing_credits",
    "job",
    "num_dependents",
    "own_telephone",
    "foreign_worker",
    "class",
]

# Readable labels for the codes of german.doc (short forms as on OpenML "credit-g").
# Dict order is the order of german.doc and becomes the category order.
GERMAN_CODES: dict[str, dict[str, str]] = {
    "checking_status": {
        "A11": "<0",
        "A12": "0<=X<200",
        "A13": ">=200",
        "A14": "no checking",
    },
    "credit_history": {
        "A30": "no credits/all paid",
        "A31": "all paid",
        "A32": "existing paid",
        "A33": "delayed previously",
        "A34": "critical/other existing credit",
    },
    "purpose": {
        "A40": "new car",
        "A41": "used car",
        "A42": "furniture/equipment",
        "A43": "radio/tv",
        "A44": "domestic appliance",
        "A45": "repairs",
        "A46": "education",
        "A47": "vacation",
        "A48": "retraining",
        "A49": "business",
        "A410": "other",
    },
    "savings_status": {
        "A61": "<100",
        "A62": "100<=X<500",
        "A63": "500<=X<1000",
        "A64": ">=1000",
        "A65": "no known savings",
    },
    "employment": {
        "A71": "unemployed",
        "A72": "<1",
        "A73": "1<=X<4",
        "A74": "4<=X<7",
        "A75": ">=7",
    },
    "personal_status": {
        "A91": "male div/sep",
        "A92": "female div/dep/mar",
        "A93": "male single",
        "A94": "male mar/wid",
        "A95": "female single",
    },
    "other_parties": {"A101": "none", "A102": "co applicant", "A103": "guarantor"},
    "property_magnitude": {
        "A121": "real estate",
        "A122": "life insurance",
        "A123": "car",
        "A124": "no known property",
    },
    "other_payment_plans": {"A141": "bank", "A142": "stores", "A143": "none"},
    "housing": {"A151": "rent", "A152": "own", "A153": "for free"},
    "job": {
        "A171": "unemp/unskilled non res",
        "A172": "unskilled resident",
        "A173": "skilled",
        "A174": "high qualif/self emp/mgmt",
    },
    "own_telephone": {"A191": "none", "A192": "yes"},
    "foreign_worker": {"A201": "yes", "A202": "no"},
}

# Sex coded inside personal_status (german.doc, attribute 9).
GERMAN_SEX = {"A91": "Male", "A92": "Female", "A93": "Male", "A94": "Male", "A95": "Female"}
GERMAN_AGE_THRESHOLD = 25
GERMAN_TARGET = "good_credit"

# personal_status is left out of ``data`` (kept in ``frame``): sex is a function of it.
GERMAN_FEATURES = [c for c in GERMAN_COLUMNS if c not in ("personal_status", "class")] + [
    "sex",
    "age_group",
]


@validate_params(
    {"as_frame": ["boolean"], "return_X_y": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_german(*, as_frame: bool = True, return_X_y: bool = False) -> Bunch | tuple:
    """Load the UCI Statlog German Credit dataset (1,000 applicants).

    The coded columns of ``german.data`` (``A11``, ``A12``, ...) are decoded to
    the readable categories of ``german.doc`` (``checking_status`` ``A11`` becomes
    ``"<0"``, ...), column names are those of AIF360 / OpenML, and two
    sensitive columns are derived:

    * ``sex`` from ``personal_status``: ``A91``, ``A93``, ``A94`` are ``"Male"``,
      ``A92``, ``A95`` are ``"Female"`` (690 male, 310 female);
    * ``age_group``: ``"old"`` if ``age > 25`` (the privileged group, 810 rows),
      else ``"young"`` (190 rows).

    ``personal_status`` itself is kept in ``frame`` but not in ``data``, since it
    encodes sex. ``age`` stays in ``data``: for a model unaware of age, drop
    both ``age`` and ``age_group``.

    Read more in the ``DESCR`` of the returned Bunch.

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame (decoded columns with the
        ``category`` dtype, numeric columns as ``int64``), ``target`` a pandas
        Series and ``frame`` a DataFrame with everything. If False, ``data`` is
        ``data.to_numpy()`` (an ``object`` array), ``target`` an integer array
        and ``frame`` is None.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    bunch : :class:`~sklearn.utils.Bunch`
        With the attributes:

        data : DataFrame of shape (1000, 21) or ndarray
            The 19 original features other than ``personal_status``, plus
            ``sex`` and ``age_group``.
        target : Series of shape (1000,) or ndarray
            ``good_credit``: 1 for good credit risk (class 1, favorable), 0 for
            bad (class 2).
        sensitive_features : list of str
            ``["sex", "age_group"]`` (privileged groups ``Male`` and ``old``).
        frame : DataFrame of shape (1000, 24) or None
            ``data`` plus ``personal_status``, the original ``class`` (1/2) and
            the target.
        DESCR : str
            Description: source, licence, citation, codes, derivations.
        feature_names : list of str
            The columns of ``data``.
        target_names : ndarray of str
            ``["bad", "good"]``, the meaning of target 0 and 1.

    (data, target) : tuple if ``return_X_y`` is True

    Examples
    --------
    >>> from skfairverify.datasets import load_german
    >>> german = load_german()
    >>> german.data.shape
    (1000, 21)
    >>> int(german.target.sum())
    700
    >>> german.data["sex"].value_counts().to_dict()
    {'Male': 690, 'Female': 310}
    >>> german.data["checking_status"].cat.categories.tolist()
    ['<0', '0<=X<200', '>=200', 'no checking']
    """
    with open_data_file("german.data") as stream:
        frame = pd.read_csv(stream, sep=" ", header=None, names=GERMAN_COLUMNS)

    codes = frame["personal_status"]
    for col, mapping in GERMAN_CODES.items():
        frame[col] = to_category(frame[col].map(mapping), list(mapping.values()))
    frame["sex"] = to_category(codes.map(GERMAN_SEX), ["Male", "Female"])
    age_group = frame["age"].gt(GERMAN_AGE_THRESHOLD).map({True: "old", False: "young"})
    frame["age_group"] = to_category(age_group, ["old", "young"])
    frame[GERMAN_TARGET] = (frame["class"] == 1).astype("int64")
    frame = frame[GERMAN_FEATURES + ["personal_status", "class", GERMAN_TARGET]]

    return make_bunch(
        frame,
        feature_names=GERMAN_FEATURES,
        target_column=GERMAN_TARGET,
        target_names=["bad", "good"],
        sensitive_features=["sex", "age_group"],
        descr=load_descr("german"),
        as_frame=as_frame,
        return_X_y=return_X_y,
    )
