"""Titanic passengers (Kaggle training split): a raw CSV with missing values."""

from __future__ import annotations

import pandas as pd
from sklearn.utils import Bunch

from ..utils._compat import validate_params
from ._base import load_descr, make_bunch, open_data_file

TITANIC_TARGET = "Survived"


@validate_params({"as_frame": ["boolean"], "return_X_y": ["boolean"]},
                 prefer_skip_nested_validation=True)
def load_titanic(*, as_frame: bool = True, return_X_y: bool = False) -> Bunch | tuple:
    """Load the Titanic passengers (891 rows), as the CSV file has them.

    The Kaggle training split, read with :func:`pandas.read_csv` and nothing else: the
    missing values stay (``Age`` in 177 rows, ``Cabin`` in 687, ``Embarked`` in 2), the
    identifiers stay (``PassengerId``, ``Name``, ``Ticket``), the text columns are
    ``object``. It is the data a user brings: see ``docs/bring-your-own-data.md``. The
    target is favorable when the passenger survived (``Survived == 1``).

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame, ``target`` a Series and ``frame`` the
        whole file (the target included). If False, ``data`` is an ``object`` array,
        ``target`` an integer array and ``frame`` is None.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    bunch : :class:`~sklearn.utils.Bunch`
        With the attributes:

        data : DataFrame of shape (891, 11) or ndarray
            Every column of the file but ``Survived``.
        target : Series of shape (891,) or ndarray
            ``Survived``: 1 (favorable, 342 rows) or 0 (549).
        sensitive_features : list of str
            ``["Sex", "Pclass"]`` (``Pclass`` has three levels).
        frame : DataFrame of shape (891, 12) or None
            The file as it is.
        DESCR : str
            Description: source, licence, counts, missing values.
        feature_names : list of str
            The columns of ``data``.
        target_names : ndarray of str
            ``["died", "survived"]``, the meaning of target 0 and 1.

    (data, target) : tuple if ``return_X_y`` is True

    Examples
    --------
    >>> from skfairverify.datasets import load_titanic
    >>> titanic = load_titanic()
    >>> titanic.data.shape, int(titanic.target.sum())
    ((891, 11), 342)
    >>> titanic.data[["Age", "Cabin", "Embarked"]].isna().sum().tolist()
    [177, 687, 2]
    """
    with open_data_file("titanic.csv") as stream:
        frame = pd.read_csv(stream)
    features = [c for c in frame.columns if c != TITANIC_TARGET]
    return make_bunch(
        frame,
        feature_names=features,
        target_column=TITANIC_TARGET,
        target_names=["died", "survived"],
        sensitive_features=["Sex", "Pclass"],
        descr=load_descr("titanic"),
        as_frame=as_frame,
        return_X_y=return_X_y,
    )
