"""Warnings that point at the user's line, however deep in the package they are raised."""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn_user"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _inside(filename: str) -> bool:
    """A frame of this package, or of scikit-learn's wrappers (``_fit_context``)."""
    return filename.startswith(_PACKAGE) or f"{os.sep}sklearn{os.sep}" in filename


def _user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` in :func:`warn_user` for the user's frame."""
    frame, level = sys._getframe(2), 2  # the caller of warn_user, then its callers
    while frame is not None and _inside(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame outside skfairverify.

    Examples
    --------
    >>> import warnings
    >>> from skfairverify.utils._warnings import warn_user
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_user("a message", UserWarning)
    >>> caught[0].filename.endswith("_warnings.py")  # the doctest's frame, not this module
    False
    """
    warnings.warn(message, category, stacklevel=_user_stacklevel())
