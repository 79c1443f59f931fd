"""ESL (Efficient-Symmetric-Linear) values of cooperative games.

A value of the ESL family is given by constants ``b_1, ..., b_n`` with ``b_n = 1``
(Radzik and Driessen, 2013)::

    phi_i = sum_{S containing i} (s-1)!(n-s)!/n! * (b_s v(S) - b_{s-1} v(S minus i)),  b_0 = 0.

Collecting the terms of each coalition ``S`` (of size ``s``) gives the linear map used
everywhere in this box::

    phi_i = sum_S v(S) * [ w(s) b_s       if i in S
                           -w(s + 1) b_s  if i not in S (s < n) ]
    w(s) = (s-1)!(n-s)!/n! = 1 / (n * C(n-1, s-1)).

Only coalitions whose size ``s`` has ``b_s != 0`` enter, which is why the Equal Surplus
value (``b_s = 0`` for ``1 < s < n``) needs the singletons and the grand coalition only.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping
from itertools import combinations
from math import comb, lgamma, log

import numpy as np

from ..utils._compat import Interval, StrOptions, validate_params
from ._limits import MAX_COALITIONS, check_limit, check_n_coalitions

VALUE_NAMES = ("shapley", "solidarity", "equal_surplus", "consensus", "lsp")


@validate_params(
    {
        "value": [StrOptions(set(VALUE_NAMES))],
        "n": [Interval(numbers.Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def esl_coefficients(value: str, n: int) -> np.ndarray:
    """Constants ``b_1, ..., b_n`` of a named member of the ESL family.

    Parameters
    ----------
    value : {"shapley", "solidarity", "equal_surplus", "consensus", "lsp"}
        The ESL member: Shapley (``b_s = 1``), Solidarity (``b_s = 1/(s+1)`` for ``s < n``),
        Equal Surplus (``b_1 = n-1``, ``b_s = 0`` for ``1 < s < n``), Consensus
        (``b_1 = n/2``, ``b_s = 1/2`` for ``1 < s < n``; the mean of Shapley and Equal
        Surplus) and the Least Square Prenucleolus
        (``b_s = C(n-1, s) s / 2^(n-2)`` for ``s < n``).
    n : int
        Number of players, at least 1.

    Returns
    -------
    b : ndarray of shape (n,)
        ``b[s - 1]`` is ``b_s``; ``b[n - 1] == 1`` (efficiency). With one player every
        member is ``[1.0]``.

    Raises
    ------
    ValueError
        If ``value`` is not one of the names above or ``n`` is not a positive integer.

    Examples
    --------
    >>> from skfairverify import esl_coefficients
    >>> esl_coefficients("equal_surplus", 4)
    array([3., 0., 0., 1.])
    >>> esl_coefficients("solidarity", 3)
    array([0.5       , 0.33333333, 1.        ])
    """
    return _esl_coefficients(value, n)


def _esl_coefficients(value: str, n: int) -> np.ndarray:
    """:func:`esl_coefficients` without the parameter validation layer."""
    n = _check_n_players(n)
    if not isinstance(value, str) or value not in VALUE_NAMES:
        raise ValueError(
            f"Unknown ESL value {value!r}; valid names are {', '.join(map(repr, VALUE_NAMES))}."
        )
    s = np.arange(1, n, dtype=float)  # 1 .. n-1
    if value == "shapley":
        head = np.ones(n - 1)
    elif value == "solidarity":
        head = 1.0 / (s + 1.0)
    elif value == "equal_surplus":
        head = np.zeros(n - 1)
        if n > 1:
            head[0] = n - 1.0
    elif value == "consensus":
        head = np.full(n - 1, 0.5)
        if n > 1:
            head[0] = n / 2.0
    else:  # lsp
        head = _lsp_head(n)
    return np.concatenate([head, [1.0]])


def _lsp_head(n: int) -> np.ndarray:
    """LSP constants ``C(n-1, s) s / 2^(n-2)`` for ``s = 1..n-1``, never overflowing.

    Exact integer arithmetic (a correctly rounded ratio) up to 1024 players; above, in
    log space with ``lgamma`` (the constants are at most ``2 s``; the tails underflow to 0).
    """
    if n <= 1024:
        return np.array([comb(n - 1, k) * k / 2 ** (n - 2) for k in range(1, n)], dtype=float)
    k = np.arange(1, n)
    log_b = (lgamma(n) - np.array([lgamma(j + 1) + lgamma(n - j) for j in k])
             + np.log(k) - (n - 2) * log(2.0))
    return np.exp(log_b)


def _check_n_players(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n_players must be a positive integer, got {n!r}.")
    return int(n)


def _resolve_coefficients(value, n: int) -> np.ndarray:
    """``value`` as a name or an array ``b_1..b_n``, validated."""
    if isinstance(value, str):
        return _esl_coefficients(value, n)
    try:
        b = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"value must be one of {', '.join(map(repr, VALUE_NAMES))} or an array of the "
            f"constants b_1..b_n, got {value!r}."
        ) from exc
    if b.ndim != 1 or b.shape[0] != n:
        raise ValueError(
            f"value given as constants must have shape ({n},) (b_1..b_n), got shape {b.shape}."
        )
    if not np.all(np.isfinite(b)):
        raise ValueError("value given as constants contains NaN or infinite entries.")
    if not np.isclose(b[-1], 1.0):
        raise ValueError(f"The last constant b_n must be 1 for an efficient value, got {b[-1]}.")
    return b


def _weight(n: int, s: int) -> float:
    """``w(s) = (s-1)!(n-s)!/n! = 1 / (n C(n-1, s-1))`` for ``1 <= s <= n``, else 0.

    A correctly rounded ratio of Python integers for every ``n`` (true division of
    integers never overflows; tiny weights underflow to 0). ``exp`` of ``lgamma`` was
    used above 1,024 players: its relative error (about ``1e-16 lgamma(n + 1)``, 2e-12
    at 3,000 players) broke efficiency by 1e-9 on Equal Surplus over 3,000 groups, whose
    ``c_in + (n - 1) c_out`` must cancel exactly. Only the sizes a member needs are
    computed (two for Equal Surplus).
    """
    if s < 1 or s > n:
        return 0.0
    return 1 / (n * comb(n - 1, s - 1))


def _coalitions_by_size(b: np.ndarray) -> Iterator[tuple[int, float, float, np.ndarray]]:
    """Yield ``(s, coef_in, coef_out, members)`` for each size ``s`` with ``b_s != 0``.

    ``members`` is an int array of shape (C(n, s), s) listing the coalitions of size s in
    lexicographic order; a coalition S contributes ``coef_in * v(S)`` to the value of each of
    its members and ``coef_out * v(S)`` to every other player.
    """
    n = b.shape[0]
    for s in (np.flatnonzero(b) + 1).tolist():
        members = np.array(list(combinations(range(n), s)), dtype=np.intp).reshape(-1, s)
        coef_out = -_weight(n, s + 1) * b[s - 1] if s < n else 0.0
        yield s, _weight(n, s) * b[s - 1], coef_out, members


def _coefficient_matrix(b: np.ndarray) -> tuple[list[frozenset], np.ndarray]:
    """Linear map from the worths of the needed coalitions to the values.

    Returns
    -------
    coalitions : list of frozenset
        The non-empty coalitions with ``b_{|S|} != 0``, by size then lexicographically.
    matrix : ndarray of shape (len(coalitions), n)
        ``phi = matrix.T @ worths``.
    """
    n = b.shape[0]
    coalitions: list[frozenset] = []
    blocks = []
    for _, c_in, c_out, members in _coalitions_by_size(b):
        mask = np.zeros((members.shape[0], n), dtype=bool)
        np.put_along_axis(mask, members, True, axis=1)
        blocks.append(np.where(mask, c_in, c_out))
        coalitions.extend(frozenset(row.tolist()) for row in members)
    return coalitions, np.vstack(blocks)


def _needed_sizes(values, n: int) -> np.ndarray:
    """Indicator (as constants, 1 or 0) of the sizes several members need."""
    needed = np.zeros(n)
    for value in values:
        needed[_resolve_coefficients(value, n) != 0] = 1.0
    return needed


def _needed_coalitions(values, n: int) -> list[frozenset]:
    """Union (in a stable order) of the coalitions several members need."""
    sizes = (np.flatnonzero(_needed_sizes(values, n)) + 1).tolist()
    out = []
    for s in sorted(sizes):
        out.extend(frozenset(c) for c in combinations(range(n), s))
    return out


@validate_params(
    {
        "game": [Mapping, callable],
        "n_players": [Interval(numbers.Integral, 1, None, closed="left")],
        "value": [StrOptions(set(VALUE_NAMES)), "array-like"],
        "max_coalitions": [Interval(numbers.Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def esl_value(
    game: Mapping[frozenset, float] | Callable[[frozenset], float],
    n_players: int,
    value: str | np.ndarray = "shapley",
    *,
    max_coalitions: int = MAX_COALITIONS,
) -> np.ndarray:
    """Exact ESL value of a cooperative game.

    Parameters
    ----------
    game : mapping or callable
        The characteristic function: a mapping from ``frozenset`` of player indices
        ``0..n_players-1`` to worth, or a callable taking such a frozenset. The empty
        coalition has worth 0 (a mapping may omit it; a callable is never called on it).
        Only the coalitions the member needs are looked up or evaluated.
    n_players : int
        Number of players ``n``.
    value : str or array-like of shape (n_players,), default="shapley"
        The ESL member: a name accepted by :func:`esl_coefficients` or the constants
        ``b_1..b_n`` themselves (``b_n`` must be 1).
    max_coalitions : int, default=2**20
        Largest number of coalitions evaluated. A member that needs more (every member
        but Equal Surplus beyond 20 players) raises
        :class:`~skfairverify.s3p.TableTooLargeError` before any evaluation, naming the
        count and the memory; raise it only if the game is cheap and memory allows.

    Returns
    -------
    phi : ndarray of shape (n_players,)
        The value of every player; ``phi.sum() == game(all players)`` (efficiency).

    Raises
    ------
    TableTooLargeError
        If the member needs more than ``max_coalitions`` coalitions.

    Notes
    -----
    Coalitions are evaluated size by size and combined with vectorised sums. Members with
    ``b_s != 0`` for every size (Shapley, Solidarity, Consensus, LSP) evaluate all
    ``2^n - 1`` non-empty coalitions (there is no closed form in ``O(n)`` coalitions for
    a general game); the Equal Surplus value evaluates only the ``n`` singletons and the
    grand coalition (``n + 2`` coalitions with the empty one, linear time), so it is the
    member to use with many players.

    Examples
    --------
    >>> from skfairverify import esl_value
    >>> game = {frozenset({0}): 1.0, frozenset({1}): 2.0, frozenset({0, 1}): 5.0}
    >>> esl_value(game, 2)
    array([2., 3.])
    >>> esl_value(lambda S: len(S) ** 2, 3, value="equal_surplus")
    array([3., 3., 3.])
    """
    n = _check_n_players(n_players)
    b = _resolve_coefficients(value, n)
    named = f" with value={value!r}" if isinstance(value, str) else ""
    check_n_coalitions(b, check_limit(max_coalitions, "max_coalitions"),
                       what=f"esl_value{named} on {n} players", bytes_per_coalition=8 * n + 8)
    if isinstance(game, Mapping):
        empty = game.get(frozenset(), 0.0)
        if empty != 0:
            raise ValueError(f"The empty coalition must have worth 0, got {empty!r}.")

        def evaluate(coalition):
            try:
                return game[coalition]
            except KeyError:
                raise ValueError(
                    f"game has no worth for coalition {set(coalition)} which the "
                    f"value needs."
                ) from None
    elif callable(game):
        evaluate = game
    else:
        raise TypeError(
            "game must be a mapping from frozenset to worth or a callable on frozensets, "
            f"got {type(game).__name__}."
        )

    phi = np.zeros(n)
    for _, c_in, c_out, members in _coalitions_by_size(b):
        worths = np.array([evaluate(frozenset(row.tolist())) for row in members], dtype=float)
        if not np.all(np.isfinite(worths)):
            raise ValueError("game returned a NaN or infinite worth.")
        in_sum = np.bincount(members.ravel(), weights=np.repeat(worths, members.shape[1]),
                             minlength=n)
        phi += c_in * in_sum
        if c_out:
            phi += c_out * (worths.sum() - in_sum)
    return phi
