"""Fairness benchmark datasets bundled with skfairverify.

Four loaders return a :class:`sklearn.utils.Bunch` with ``data``, ``target``
(1 = favorable outcome), ``sensitive_features`` (names of the usual sensitive columns of
``data``), ``frame``, ``DESCR``, ``feature_names`` and ``target_names``. The data
files ship with the package (gzip copies, byte-identical to the published files
once decompressed), so no network access is needed. :func:`load_titanic` keeps its file
as it is, missing values included: the data of *Bring your own data* (``docs/``).
"""

from ._adult import load_adult
from ._compas import load_compas
from ._german import load_german
from ._titanic import load_titanic

__all__ = ["load_adult", "load_compas", "load_german", "load_titanic"]
