"""Every private scikit-learn name skfairverify uses, imported in one place.

scikit-learn does not promise these names; when one moves, this module is the only one
to change.
"""

from numbers import Integral

import numpy as np
from sklearn.base import _fit_context  # noqa: F401
from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    Hidden,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils.metadata_routing import _routing_enabled  # noqa: F401
from sklearn.utils.validation import (  # noqa: F401
    _check_feature_names_in,
    _check_sample_weight,
)

__all__ = [
    "HasMethods",
    "Hidden",
    "N_JOBS",
    "Interval",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_check_feature_names_in",
    "_check_sample_weight",
    "_fit_context",
    "_routing_enabled",
    "validate_params",
]


class Interval(_Interval):
    """scikit-learn's ``Interval`` constraint, refusing booleans.

    ``True`` is an ``int`` to Python (``isinstance(True, Integral)``), so scikit-learn's
    interval accepts ``k=True`` as 1 and ``confidence=True`` as 1.0. A boolean is
    never a count nor a level here: every interval constraint of the package refuses it
    with scikit-learn's ``InvalidParameterError`` (a ``ValueError``) naming the range.

    Examples
    --------
    >>> from numbers import Integral
    >>> from skfairverify.utils._compat import Interval
    >>> positive = Interval(Integral, 1, None, closed="left")
    >>> positive.is_satisfied_by(3), positive.is_satisfied_by(True)
    (True, False)
    >>> str(positive)
    'an int in the range [1, inf) (not a bool)'
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)

    def __str__(self):
        return f"{super().__str__()} (not a bool)"


#: The constraint of an ``n_jobs`` parameter: any integer (joblib's convention) or None,
#: never a boolean.
N_JOBS = [Interval(Integral, None, None, closed="neither"), None]
