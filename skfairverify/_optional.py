"""Lazy imports of optional dependencies with an actionable error message."""

from __future__ import annotations

import importlib
from types import ModuleType

_EXTRAS = {
    "dice_ml": "dice",
    "matplotlib": "plot",
    "matplotlib.pyplot": "plot",
    "dask": "dask",
    "dask.dataframe": "dask",
    "distributed": "dask",
}


def import_optional(name: str, purpose: str = "") -> ModuleType:
    """Import an optional dependency or raise an ImportError saying how to get it.

    Parameters
    ----------
    name : str
        Module name, e.g. ``"matplotlib.pyplot"`` or ``"dice_ml"``.
    purpose : str, default=""
        What the module is needed for, used in the error message.

    Returns
    -------
    module : ModuleType
        The imported module.

    Examples
    --------
    >>> from skfairverify._optional import import_optional
    >>> np = import_optional("numpy")
    >>> np.__name__
    'numpy'
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        extra = _EXTRAS.get(name, "all")
        what = f" for {purpose}" if purpose else ""
        raise ImportError(
            f"{name!r} is required{what} but is not installed. "
            f"Install it with: pip install 'skfairverify[{extra}]'"
        ) from exc
