"""Errors of the exact engine and the int64 limits they protect."""

from __future__ import annotations

import numpy as np

INT64_MAX = int(np.iinfo(np.int64).max)
# Partial scores (after shifting each variable's weights to start at 0 and dividing
# by their common divisor) must stay below this bound so that every sum and
# difference of scores in the engines is exact in int64.
MAX_SCORE_RANGE = 2**62
#: Default ``max_table_size`` (float64 entries of a working table) of the engine and of
#: :meth:`~skfairverify.s3p.BayesNet.sample`.
DEFAULT_MAX_TABLE_SIZE = 50_000_000


class TableTooLargeError(MemoryError):
    """A computation would exceed a memory or work limit; refused before it starts.

    The package's one guard error: the exact engine's table beyond
    ``max_table_size`` (the message names the frontier, the range of partial scores and
    the memory), the verifier's network learning and engine work, the ESL coalitions
    and coalition fits (``max_coalitions``, ``max_fits``). Every message names the
    size, its cause and the parameter to change; it is raised before any large
    allocation. See ``docs/limits.md``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, TableTooLargeError, positive_probability
    >>> net = BayesNet.independent([[0.5, 0.5]] * 3)
    >>> w = [np.array([0, 100]), np.array([0, 37]), np.array([0, 51])]
    >>> try:
    ...     positive_probability(w, 90, net, max_table_size=10)
    ... except TableTooLargeError as exc:
    ...     print(type(exc).__name__)
    TableTooLargeError
    """


def overflow_error(cause: str) -> OverflowError:
    """Return the error for integer weights too large for exact int64 arithmetic."""
    return OverflowError(
        f"{cause}: the partial sums of the integer weights would overflow the exact "
        f"int64 arithmetic of the engine (score range limit 2**62 = {MAX_SCORE_RANGE:,}). "
        "Use smaller integer weights: a smaller multiplier (IntegerWeightScaler, "
        "FairnessVerifier max_multiplier) or weights rescaled and rounded again."
    )


def evidence_error(evidence, network) -> ValueError:
    """Return the error for evidence of probability 0, naming the evidence."""
    desc = ", ".join(
        f"{network.names[v]}={network.state_names[v][s]!r}" for v, s in evidence.items()
    )
    return ValueError(f"The evidence ({desc}) has probability 0 under the network.")
