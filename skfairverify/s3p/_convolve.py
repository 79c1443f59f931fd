"""Sum of independent variables: divide-and-conquer convolution of their distributions.

The variables without parents, children, evidence or a place among the kept
variables are independent of everything else: the distribution of their summed
(normalised) weights is the convolution of their distributions. It is computed
once, in three stages:

1. *chunks*: variables are added by shift-and-add (``k`` slice additions each)
   until a chunk's score axis reaches ``_CHUNK`` entries;
2. *tree*: the two shortest distributions are convolved until one is left
   (Huffman order, so every level of the tree has about the same total length),
   by FFT (:func:`scipy.fft.rfft`) or directly (:func:`numpy.convolve`) for short
   ones; FFT round-off can leave tiny negatives, which are clipped to 0 (the true
   values are non-negative, so clipping only reduces the error);
3. *tails*: after each convolution the negligible mass at both ends of the axis
   (at most ``tol`` of the total on each side) is folded into the first / last
   kept entry, which keeps the axis as short as the mass actually is (about
   ``+-8`` standard deviations instead of the full weight range).

The frontier engine then needs ``Pr[block >= t - x]`` for every partial score
``x`` of the other variables: a dot product with the block's survival function
(no last convolution; see :func:`survival`).

Error bound. With a backward-stable FFT of length ``N`` (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., Thm. 24.2: relative 2-norm error
``log2(N) * eta``, ``eta`` about ``6.7 eps`` for accurate twiddle factors), the
computed ``c = a * b`` satisfies, to first order,
``||c_fft - c||_2 <= 3 log2(N) eta max(||a||_1 ||b||_2, ||a||_2 ||b||_1)``, hence
in total-variation (l1) distance
``||c_fft - c||_1 <= sqrt(len(c)) * 20 eps log2(N) max(...)`` (:func:`fft_error_bound`).
For distributions (``||a||_1 = ||b||_1 = 1``) spread over thousands of scores the
2-norms are small (``~1e-2``) and the bound is ``~1e-12`` per convolution even for
``N = 2**21``; it reaches ``~1e-10`` only for a point-like distribution on a long
axis. Summed over the tree of 1,000 ten-state variables with weights in
``[-1000, 1000]`` it is ``2e-11`` (the error observed against the frontier engine:
``1e-14``). A
direct convolution has error at most ``min(len(a), len(b)) eps ||a||_1 ||b||_1``.
Errors add through the tree (convolving with a distribution does not enlarge an
l1 error), so the block's error is bounded by the sum of the per-convolution
bounds plus the folded tail mass; :func:`block_distribution` returns that sum
and the tests check it against exact rational arithmetic.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import scipy.fft

# Variables are added by shift-and-add until a chunk's axis is this long.
_CHUNK = 1 << 14
# Convolve directly when the shorter axis is at most this long.
_DIRECT = 64
# Folded tail mass over a whole run, relative to the mass of the table: far below the
# 1e-9 agreement the engine promises, above the FFT noise floor (eps * max * length).
TAIL_BUDGET = 1e-11
_EPS = float(np.finfo(np.float64).eps)


def block_variables(problem) -> list[int]:
    """Variables summed as an independent block: isolated, neither evidence nor kept.

    Their order (decreasing span, then index) fixes the chunks, so the plan and
    the run build the same tree.
    """
    return sorted(
        (v for v in problem.isolated() if v not in problem.need),
        key=lambda v: (-problem.spans[v], v),
    )


def tail_tolerance(problem) -> float:
    """Mass that may be folded at each end of an axis, relative to the table's mass."""
    return TAIL_BUDGET / (2 * max(problem.network.n_variables, 1))


def _chunks(spans, block) -> list[list[int]]:
    """Consecutive runs of ``block`` whose score axis stays within ``_CHUNK`` entries."""
    chunks, current, length = [], [], 1
    for v in block:
        if current and length + spans[v] > _CHUNK:
            chunks.append(current)
            current, length = [], 1
        current.append(v)
        length += spans[v]
    if current:
        chunks.append(current)
    return chunks


def _chunk_distribution(problem, chunk) -> np.ndarray:
    """Distribution of the summed weights of ``chunk``, by shift-and-add."""
    table = np.ones(1)
    for v in chunk:
        w, p = problem.weights[v], problem.cpts[v]
        new = np.zeros(len(table) + problem.spans[v])
        for k, off in enumerate(w):
            new[off : off + len(table)] += p[k] * table
        table = new
    return table


def fft_error_bound(a: np.ndarray, b: np.ndarray, n_fft: int) -> float:
    """First-order bound on the l1 error of ``a * b`` computed by FFT of length ``n_fft``.

    ``sqrt(len(c)) * 20 eps log2(n_fft) max(||a||_1 ||b||_2, ||a||_2 ||b||_1)`` for
    non-negative ``a`` and ``b`` (see the module docstring for its derivation).
    """
    length = len(a) + len(b) - 1
    # sums of squares, not np.linalg.norm: BLAS dot is erratic on a loaded machine
    norm_a = math.sqrt(float((a * a).sum()))
    norm_b = math.sqrt(float((b * b).sum()))
    norm = max(float(a.sum()) * norm_b, norm_a * float(b.sum()))
    return math.sqrt(length) * 20.0 * _EPS * math.log2(n_fft) * float(norm)


def convolve(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """``a * b`` for non-negative ``a``, ``b``, and a bound on its l1 error."""
    short = min(len(a), len(b))
    if short <= _DIRECT:
        return np.convolve(a, b), short * _EPS * float(a.sum() * b.sum())
    length = len(a) + len(b) - 1
    n_fft = scipy.fft.next_fast_len(length, real=True)
    spectrum = scipy.fft.rfft(a, n_fft)
    spectrum *= scipy.fft.rfft(b, n_fft)
    out = scipy.fft.irfft(spectrum, n_fft)[:length]
    np.maximum(out, 0.0, out=out)
    return out, fft_error_bound(a, b, n_fft)


def fold_tails(table: np.ndarray, tol: float) -> tuple[np.ndarray, int, float]:
    """Fold the ends of ``table`` holding at most ``tol`` of its mass into its end entries.

    Returns ``(folded, start, moved)``: ``folded`` is ``table[start:stop]`` with the
    mass before ``start`` added to its first entry and the mass from ``stop`` to
    its last; ``moved`` is the mass moved (at most ``2 * tol * table.sum()``).
    """
    left = np.cumsum(table)
    budget = tol * left[-1]
    start = min(int(np.searchsorted(left, budget, side="right")), len(table) - 1)
    right = np.cumsum(table[::-1])
    n_right = min(int(np.searchsorted(right, budget, side="right")), len(table) - 1 - start)
    if start == 0 and n_right == 0:
        return table, 0, 0.0
    folded = table[start : len(table) - n_right].copy()
    moved_left = float(left[start - 1]) if start else 0.0
    moved_right = float(right[n_right - 1]) if n_right else 0.0
    folded[0] += moved_left
    folded[-1] += moved_right
    return folded, start, moved_left + moved_right


def block_distribution(problem, block) -> tuple[np.ndarray, int, float]:
    """Distribution of the summed normalised weights of the independent ``block``.

    Returns ``(table, lo, error)``: ``table[i]`` is ``Pr[block score = lo + i]`` and
    ``error`` bounds its total-variation distance to the exact distribution
    (rounding of the convolutions plus the folded tails).
    """
    tol = tail_tolerance(problem)
    heap, error, tie = [], 0.0, 0
    for chunk in _chunks(problem.spans, block):
        table, start, moved = fold_tails(_chunk_distribution(problem, chunk), tol)
        error += moved
        heap.append((len(table), tie, table, start))
        tie += 1
    if not heap:
        return np.ones(1), 0, 0.0
    heapq.heapify(heap)
    while len(heap) > 1:
        _, _, a, lo_a = heapq.heappop(heap)
        _, _, b, lo_b = heapq.heappop(heap)
        table, bound = convolve(a, b)
        table, start, moved = fold_tails(table, tol)
        error += bound + moved
        heapq.heappush(heap, (len(table), tie, table, lo_a + lo_b + start))
        tie += 1
    _, _, table, lo = heap[0]
    return table, lo, error


def survival(table: np.ndarray, lo: int, threshold: int, start: int, length: int):
    """``Pr[block >= threshold - x]`` for the partial scores ``x = start .. start+length-1``."""
    tail = np.concatenate([np.cumsum(table[::-1])[::-1], [0.0]])
    index = threshold - (start + np.arange(length)) - lo
    return tail[np.clip(index, 0, len(table))]


def block_cost(problem, block) -> tuple[int, float]:
    """``(peak entries, work units)`` of :func:`block_distribution`, on sizes only.

    Lengths are those without tail folding (an upper bound). Work is in the
    frontier engine's units (one entry written by shift-and-add); an FFT
    convolution of length ``N`` counts ``6 N log2(N)`` units (measured: its three
    transforms cost about as much as that many shift-and-add entries).
    """
    spans, sizes = problem.spans, problem.sizes
    peak, work, lengths = 1, 0.0, []
    for chunk in _chunks(spans, block):
        length = 1
        for v in chunk:
            work += sizes[v] * length + spans[v]
            length += spans[v]
        peak = max(peak, length)
        lengths.append(length)
    heapq.heapify(lengths)
    while len(lengths) > 1:
        a, b = heapq.heappop(lengths), heapq.heappop(lengths)
        length = a + b - 1
        if min(a, b) <= _DIRECT:
            work += a * b
            peak = max(peak, length)
        else:
            n_fft = scipy.fft.next_fast_len(length, real=True)
            work += 6.0 * n_fft * math.log2(n_fft)
            peak = max(peak, n_fft + 2)
        heapq.heappush(lengths, length)
    return peak, work


def negligible_columns(mass, budget, first_window: int) -> int:
    """Number of leading columns of ``mass`` whose cumulated sum stays within ``budget``.

    Every row (kept assignment) must stay within its budget. The cumulated sums are
    computed on a window growing fourfold from ``first_window`` columns, not the whole
    axis (the ends to fold are short where the mass is spread over the whole axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p._convolve import negligible_columns
    >>> mass = np.array([[1e-13, 1e-13, 0.5, 0.5], [0.0, 1e-12, 0.9, 0.1]])
    >>> negligible_columns(mass, np.array([[1e-12], [1e-12]]), 2)
    2
    """
    length = mass.shape[1]
    window = min(length, first_window)
    while True:
        cum = np.cumsum(mass[:, :window], axis=1)
        n = int(np.min(np.sum(cum <= budget, axis=1)))
        if n < window or window == length:
            return n
        window = min(length, 4 * window)


def fft_product(tables, length: int) -> np.ndarray:
    """Convolution of ``tables`` along their last axis (total length ``length``) by FFT.

    One real FFT of every table at a fast length, the product of the spectra, one
    inverse transform; the round-off's tiny negatives are set to 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p._convolve import fft_product
    >>> fft_product([np.array([0.5, 0.5]), np.array([0.25, 0.75])], 3).round(12).tolist()
    [0.125, 0.5, 0.375]
    """
    n = scipy.fft.next_fast_len(length, real=True)
    spectrum = scipy.fft.rfft(tables[0], n, axis=-1)
    for a in tables[1:]:
        spectrum = spectrum * scipy.fft.rfft(a, n, axis=-1)
    out = scipy.fft.irfft(spectrum, n, axis=-1)[..., :length]
    np.maximum(out, 0.0, out=out)  # FFT round-off can leave tiny negatives
    return out
