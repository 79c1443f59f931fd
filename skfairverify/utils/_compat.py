"""Every private scikit-learn name skfairverify uses, imported in one place.

scikit-learn does not promise these names; when one moves, this module is the only one
to change.
"""

from sklearn.base import _fit_context  # noqa: F401
from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    Hidden,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils.metadata_routing import _routing_enabled  # noqa: F401
from sklearn.utils.validation import (  # noqa: F401
    _check_feature_names_in,
    _check_sample_weight,
)

__all__ = [
    "HasMethods",
    "Hidden",
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
