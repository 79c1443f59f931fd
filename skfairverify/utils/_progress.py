"""Progress bars of the long loops: shown when asked, or once a loop runs past a few seconds.

``fairness_influence`` on a hundred features, a sampling of millions of rows: a call
that runs for minutes must say so without being asked. :func:`progress` is a tqdm bar
shown at once with ``verbose > 0``, and otherwise only when the loop is still running
after :data:`PROGRESS_DELAY` seconds, so that the short calls stay silent.
"""

from __future__ import annotations

from tqdm.auto import tqdm

__all__ = ["PROGRESS_DELAY", "progress"]

#: Seconds after which a loop shows its progress bar even with ``verbose=0``.
PROGRESS_DELAY = 5.0


def progress(iterable=None, *, verbose=0, **kwargs):
    """A tqdm progress bar: at once with ``verbose``, else after :data:`PROGRESS_DELAY` s.

    Parameters
    ----------
    iterable : iterable, default=None
        What the loop runs over (None: a bar updated by hand).
    verbose : int, default=0
        The caller's verbosity.
    **kwargs
        Passed on to tqdm (``total``, ``desc``, ``unit``, ...).

    Returns
    -------
    tqdm
        The bar (an iterable wrapping ``iterable``).

    Examples
    --------
    >>> from skfairverify.utils._progress import progress
    >>> sum(progress(range(4), desc="quick"))  # done before the delay: nothing shown
    6
    """
    return tqdm(iterable, delay=0 if verbose else PROGRESS_DELAY, **kwargs)
