"""Guards on the number of coalitions and fits of the ESL box, checked before any work.

Every member but Equal Surplus has ``b_s != 0`` for every size ``s`` and evaluates all
``2^n - 1`` non-empty coalitions; there is no closed form in ``O(n)`` coalitions for a
general game (Solidarity averages the marginal contributions inside every coalition,
Consensus is half Shapley). The Equal Surplus value needs only the ``n`` singletons and the
grand coalition. The guards count the coalitions exactly (stopping once the limit is
passed) and raise :class:`~skfairverify.s3p.TableTooLargeError` naming the count, the
memory or the fits it would need, the parameter to raise and the alternative.
"""

from __future__ import annotations

from math import comb, log10

import numpy as np

from ..s3p import TableTooLargeError
from ..s3p._errors import DEFAULT_MAX_TABLE_SIZE

#: Default ``max_coalitions`` of :func:`esl_value`, :func:`group_esl`,
#: :func:`esl_decomposition` and :func:`make_esl_scorer` (about a million coalitions).
MAX_COALITIONS = 2**20
#: Default ``max_fits`` of :func:`esl_decomposition`: every member on 12 features.
MAX_FITS = 2**12
#: Default ``max_table_size`` of :func:`group_esl`, :func:`esl_decomposition` and
#: :func:`make_esl_scorer`: entries of one array of the groups (the engine's default).
MAX_TABLE_SIZE = DEFAULT_MAX_TABLE_SIZE

_ALTERNATIVE = (
    "Shapley, Solidarity, Consensus and LSP evaluate every one of the 2^n - 1 coalitions "
    "(none has a closed form in O(n) coalitions for a general game); the Equal Surplus "
    "value needs only the n singletons and the grand coalition (value='equal_surplus')."
)


def count_coalitions(b: np.ndarray, stop: int) -> int:
    """Number of non-empty coalitions of sizes ``s`` with ``b_s != 0``.

    The count is exact up to ``stop`` and stops growing once it passes it, so that a
    huge game costs a few big-integer operations.
    """
    n = b.shape[0]
    total = 0
    for s in np.flatnonzero(b) + 1:
        total += comb(n, int(s))
        if total > stop:
            break
    return total


def _format_count(count: int, stop: int, n: int, everything: bool) -> str:
    if everything:
        exact = f"2^{n} - 1"
        return (f"{exact} = {2**n - 1:,}" if n <= 60
                else f"{exact} (about 10^{n * log10(2):.0f})")
    return f"{count:,}" if count <= stop else f"more than {stop:,}"


def format_bytes(n_bytes: int) -> str:
    """Return ``n_bytes`` as a readable size (KiB ... TiB, or a power of ten)."""
    if n_bytes >= 2**60:
        return f"about 10^{log10(n_bytes):.0f} bytes"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size:
            return f"{n_bytes / size:,.1f} {unit}"
    return f"{int(n_bytes)} B"


def check_n_coalitions(b: np.ndarray, max_coalitions: int, *, what: str,
                       bytes_per_coalition: int, extra: str = "") -> int:
    """Refuse a game whose member needs more than ``max_coalitions`` coalitions.

    Parameters
    ----------
    b : ndarray of shape (n,)
        The member's constants.
    max_coalitions : int
        The limit.
    what : str
        The computation and its players, e.g. ``"group_esl on 63 groups"``.
    bytes_per_coalition : int
        Memory per coalition of the arrays built for it (for the estimate in the message).
    extra : str
        A sentence on what else to change (e.g. "bin a numeric sensitive column").

    Returns
    -------
    count : int
        The number of coalitions (at most ``max_coalitions``).
    """
    count = count_coalitions(b, max_coalitions)
    if count <= max_coalitions:
        return count
    n = b.shape[0]
    everything = bool(np.all(b != 0))
    total = 2**n - 1 if everything else max_coalitions + 1
    raise TableTooLargeError(
        f"{what} needs {_format_count(count, max_coalitions, n, everything)} coalitions "
        f"(max_coalitions={max_coalitions:,}); their arrays alone would need "
        f"{'' if everything else 'more than '}{format_bytes(total * bytes_per_coalition)}, "
        f"and every coalition is evaluated once. {_ALTERNATIVE} {extra}"
        f"Raise max_coalitions only if the work fits in memory and time."
    )


def check_n_fits(needed: np.ndarray, max_fits: int, *, n_test: int, values) -> int:
    """Refuse an ESL decomposition that would fit more than ``max_fits`` models.

    ``needed`` flags (nonzero) the coalition sizes the members need; returns the count.
    """
    count = count_coalitions(needed, max_fits)
    if count <= max_fits:
        return count
    n = needed.shape[0]
    everything = bool(np.all(needed != 0))
    described = _format_count(count, max_fits, n, everything)
    n_fits = 2**n - 1 if everything else max_fits + 1
    raise TableTooLargeError(
        f"esl_decomposition with values={tuple(values)} on {n} features would fit "
        f"{described} coalition models (max_fits={max_fits:,}); their test predictions "
        f"alone would need {'' if everything else 'more than '}"
        f"{format_bytes(n_fits * max(n_test, 1))}. {_ALTERNATIVE} With "
        f"values=('equal_surplus',) it needs {n + 1} fits. Otherwise group columns into "
        "fewer players (features={player: [columns]}), select fewer features, or raise "
        "max_fits (verbose=1 shows a progress bar with the count)."
    )


def check_limit(value, name: str) -> int:
    """``max_coalitions`` / ``max_fits`` as a positive int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)
