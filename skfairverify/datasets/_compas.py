"""ProPublica COMPAS two-year recidivism loader."""

from __future__ import annotations

import pandas as pd
from sklearn.utils import Bunch

from ..utils._compat import validate_params
from ._base import load_descr, make_bunch, open_data_file, to_category

# Defendant's record at screening time: the columns that go to ``data``.
COMPAS_FEATURES = [
    "sex",
    "age",
    "age_cat",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "c_charge_degree",
]
# Kept in ``frame`` only: screening timing (used by the ProPublica filter), jail stay
# (missing for 307 rows), COMPAS's own scores (another model's output) and the
# outcome columns (label and its leakage).
COMPAS_EXTRA = [
    "days_b_screening_arrest",
    "c_days_from_compas",
    "c_jail_days",
    "decile_score",
    "score_text",
    "v_decile_score",
    "v_score_text",
    "is_recid",
    "is_violent_recid",
    "two_year_recid",
]
COMPAS_CATEGORIES = {
    "sex": ["Male", "Female"],
    "age_cat": ["Less than 25", "25 - 45", "Greater than 45"],
    "race": ["African-American", "Caucasian", "Hispanic", "Other", "Asian", "Native American"],
    "c_charge_degree": ["F", "M", "O"],
    "score_text": ["Low", "Medium", "High", "N/A"],
    "v_score_text": ["Low", "Medium", "High", "N/A"],
}
COMPAS_TARGET = "no_recid"
PROPUBLICA_WINDOW = 30


@validate_params(
    {"as_frame": ["boolean"], "propublica_filter": ["boolean"], "return_X_y": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_compas(
    *, as_frame: bool = True, propublica_filter: bool = False, return_X_y: bool = False
) -> Bunch | tuple:
    """Load ProPublica's COMPAS two-year recidivism data (7,214 defendants).

    A de-identified extract of ProPublica's ``compas-scores-two-years.csv``
    (Broward County, Florida, 2013-2014). The target is favorable when the
    person did **not** reoffend within two years (``two_year_recid == 0``).

    ``data`` holds the defendant's record at screening time: ``sex``, ``age``,
    ``age_cat``, ``race``, the three juvenile counts, ``priors_count`` and
    ``c_charge_degree``. Every other column is kept in ``frame`` only:

    * ``decile_score``, ``score_text``, ``v_decile_score``, ``v_score_text`` are
      the COMPAS tool's own predictions (another model's output), useful to audit
      COMPAS itself but not inputs of a new model;
    * ``is_recid``, ``is_violent_recid`` and ``two_year_recid`` are outcomes
      (the label and columns that leak it);
    * ``days_b_screening_arrest``, ``c_days_from_compas`` (screening timing,
      used by the ProPublica filter) and ``c_jail_days`` (missing for 307 rows).

    Read more in the ``DESCR`` of the returned Bunch.

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame (text columns with the
        ``category`` dtype, counts as ``int64``), ``target`` a pandas Series
        and ``frame`` a DataFrame with all 19 original columns and the target.
        If False, ``data`` is ``data.to_numpy()`` (an ``object`` array),
        ``target`` an integer array and ``frame`` is None.
    propublica_filter : bool, default=False
        If True, keep only the rows ProPublica's analysis keeps:
        ``-30 <= days_b_screening_arrest <= 30``, ``is_recid != -1``,
        ``c_charge_degree != "O"`` and ``score_text != "N/A"`` (6,172 rows).
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    bunch : :class:`~sklearn.utils.Bunch`
        With the attributes:

        data : DataFrame of shape (n_rows, 9) or ndarray
            The defendant's record (see above).
        target : Series of shape (n_rows,) or ndarray
            ``no_recid``: 1 if ``two_year_recid == 0`` (favorable), else 0.
        sensitive_features : list of str
            ``["race", "sex"]``.
        frame : DataFrame of shape (n_rows, 20) or None
            The 19 original columns plus the target.
        DESCR : str
            Description: source, licence, citation, counts, column choice.
        feature_names : list of str
            The columns of ``data``.
        target_names : ndarray of str
            ``["recid", "no_recid"]``, the meaning of target 0 and 1.

    (data, target) : tuple if ``return_X_y`` is True

    Examples
    --------
    >>> from skfairverify.datasets import load_compas
    >>> compas = load_compas()
    >>> compas.data.shape
    (7214, 9)
    >>> int(compas.target.sum())
    3963
    >>> compas.sensitive_features
    ['race', 'sex']
    >>> load_compas(propublica_filter=True).data.shape
    (6172, 9)
    """
    with open_data_file("compas-two-years.csv") as stream:
        # Only empty fields are missing; "N/A" is a category of score_text.
        frame = pd.read_csv(stream, keep_default_na=False, na_values=[""])

    if propublica_filter:
        days = frame["days_b_screening_arrest"]
        keep = (
            days.between(-PROPUBLICA_WINDOW, PROPUBLICA_WINDOW)
            & (frame["is_recid"] != -1)
            & (frame["c_charge_degree"] != "O")
            & (frame["score_text"] != "N/A")
        )
        frame = frame[keep]

    for col, categories in COMPAS_CATEGORIES.items():
        frame[col] = to_category(frame[col], categories)
    frame[COMPAS_TARGET] = (frame["two_year_recid"] == 0).astype("int64")
    frame = frame[COMPAS_FEATURES + COMPAS_EXTRA + [COMPAS_TARGET]]

    return make_bunch(
        frame,
        feature_names=COMPAS_FEATURES,
        target_column=COMPAS_TARGET,
        target_names=["recid", "no_recid"],
        sensitive_features=["race", "sex"],
        descr=load_descr("compas"),
        as_frame=as_frame,
        return_X_y=return_X_y,
    )
