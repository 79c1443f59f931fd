"""Quantization of a linear rule: the bins, the integer multiplier and their agreement."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from ..preprocessing import decision_scale
from ..preprocessing._quantize import integer_weights
from ._parameters import distribution_max_bins, smallest_group_size
from ._variables import Encoding
from ._warnings import MIN_AGREEMENT, LowAgreementWarning

__all__ = [
    "BIN_GRID", "HELD_OUT", "MULTIPLIER_GRID", "Quantized", "Quantizer", "candidates",
    "choice_is_final",
    "distribution_cap",
    "effective_size", "finest_within_noise", "weighted_scale"
]

#: Candidate numbers of bins for ``n_bins="auto"`` (those <= max_bins, and max_bins).
BIN_GRID = (5, 10, 20, 30, 40, 60, 80, 100, 150, 200)
#: Candidate multipliers for ``multiplier="auto"`` (those <= max_multiplier, and it).
MULTIPLIER_GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
#: Share of X held out to choose the bins and the multiplier.
HELD_OUT = 0.25


def candidates(grid, largest) -> list[int]:
    """Grid values <= largest plus largest, in decreasing order (finer first on ties)."""
    return sorted({g for g in grid if g <= largest} | {int(largest)}, reverse=True)


def weighted_scale(decision, weight) -> float:
    """Root mean square of ``decision``, weighted by ``weight`` when given."""
    decision = np.asarray(decision, dtype=float)
    if weight is None:
        return decision_scale(decision)
    # The root mean square of d * sqrt(w / mean(w)) is sqrt(sum(w d^2) / sum(w)).
    return decision_scale(decision * np.sqrt(weight / weight.mean()))


def effective_size(weight, n_rows: int) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` (``n_rows`` without weights)."""
    if weight is None:
        return float(n_rows)
    return float(weight.sum() ** 2 / np.sum(weight**2))


def finest_within_noise(scores, n_effective: float) -> tuple[int, int]:
    """Finest ``(k, l)`` whose agreement is within one standard error of the best.

    ``scores`` lists ``(agreement, k, l)`` finest resolution first; differences within
    one standard error of the best agreement are noise of the held-out sample.
    """
    best = max(s[0] for s in scores)
    tol = np.sqrt(best * (1.0 - best) / n_effective) + 1.0 / n_effective
    _, k, l = next(s for s in scores if s[0] >= best - tol)
    return k, l


def choice_is_final(scores, n_effective: float) -> bool:
    """Whether :func:`finest_within_noise` of ``scores`` holds whatever follows them.

    No agreement exceeds 1: once one of ``scores`` is 1, the best of every longer list
    is 1 too and its tolerance the same, and the first score within that tolerance of
    the best (one of ``scores``: the perfect one at the latest) stays the first. The
    search over coarser bins can then stop with the same choice and the same best
    agreement.

    Examples
    --------
    >>> from skfairverify.verification._quantization import choice_is_final
    >>> choice_is_final([(0.99, 60, 100), (1.0, 60, 50)], 100.0)
    True
    >>> choice_is_final([(0.995, 60, 100), (0.999, 60, 50)], 100.0)
    False
    """
    best = max(s[0] for s in scores)
    # the first score within finest_within_noise's tolerance of best = 1, 1 / n, is
    # among scores: the perfect one is
    return bool(best >= 1.0 and n_effective > 0)


def distribution_cap(frame, sensitive, weight) -> tuple[int, float]:
    """Bins the smallest sensitive group supports, and that group's (Kish) size.

    :func:`~skfairverify.verification._parameters.distribution_max_bins` of the
    intersections of the columns ``sensitive`` of ``frame`` (one bin per row of the
    smallest intersection, at least 20).

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.verification._quantization import distribution_cap
    >>> frame = pd.DataFrame({"sex": ["F"] * 30 + ["M"] * 470})
    >>> distribution_cap(frame, ["sex"], None)
    (30, 30.0)
    """
    codes = np.column_stack([pd.factorize(frame[s])[0] for s in sensitive])
    return distribution_max_bins(codes, weight), smallest_group_size(codes, weight)


@dataclass
class Quantized:
    """The variables of a linear rule and the multipliers to try (:meth:`Quantizer.encode`)."""

    encoding: Encoding
    multipliers: list  # the chosen one, then the smaller ones to fall back on
    n_bins: int | None  # the bins formed (None: the user network's states)
    reason: str  # why these bins (``n_bins_reason_``)


class Quantizer:
    """The bins and the integer multiplier of a linear rule, chosen by agreement.

    Parameters
    ----------
    settings : Settings
        The verifier's parameters (``n_bins``, ``max_bins``, ``multiplier``,
        ``max_multiplier``, ``network``, ``sample_rows``, ``random_state``).
    unit_rule : LinearRule
        The rule read from the model divided by the scale of its decision function.
    """

    def __init__(self, settings, unit_rule):
        self.settings = settings
        self.unit_rule = unit_rule

    def multipliers(self) -> list[int]:
        """Return the multipliers to try, largest first (one with a fixed ``multiplier``)."""
        s = self.settings
        if s.multiplier == "auto":
            return candidates(MULTIPLIER_GRID, s.max_multiplier)
        return [int(s.multiplier)]

    def smaller(self, multiplier: int) -> list[int]:
        """The multipliers below ``multiplier`` to fall back on (``multiplier="auto"``).

        With ``multiplier="auto"`` a smaller multiplier (a shorter score range) is used
        when the exact computation would not fit in ``max_table_size``.
        """
        if self.settings.multiplier != "auto":
            return []
        return [m for m in self.multipliers() if m < multiplier]

    def integer_rule(self, encoding: Encoding, multiplier: int):
        """Integer weights of every state and the threshold of the rule times ``l``."""
        contributions = [v.contribution for v in encoding.variables]
        flat = integer_weights(np.concatenate(contributions), multiplier)  # elementwise
        weights = np.split(flat, np.cumsum([len(c) for c in contributions])[:-1])
        return weights, self.integer_threshold(multiplier)

    def integer_threshold(self, multiplier: int) -> int:
        # 1 - b: the threshold of integer_threshold, without its argument checks
        return 1 - int(integer_weights(self.unit_rule.intercept, multiplier))

    def agreements(self, encoding, frame, reference, multipliers, weight) -> np.ndarray:
        """Share of the rows (weighted) where the integer rule decides as ``reference``.

        One agreement per multiplier; the rule is the verified one: the sum of the
        integer weights of the rows' states (:meth:`integer_rule`) reaches the integer
        threshold. The rows' codes are computed once; for every multiplier the states'
        integer weights are summed over them (:meth:`Encoding.scores`).
        """
        codes = encoding.codes(frame)
        out = np.empty(len(multipliers))
        for i, l in enumerate(multipliers):
            # the verified integer weights of the states, summed over the rows' states
            # exactly in int64, chunk by chunk (no (rows, variables) matrix)
            weights, threshold = self.integer_rule(encoding, l)
            score = encoding.scores(codes, weights)
            out[i] = np.average((score >= threshold) == reference, weights=weight)
        return out

    def agreement(self, encoding, frame, multiplier: int, weight, reference=None) -> float:
        """The agreement of the integer rule ``multiplier`` with the model on ``frame``.

        ``reference``: the model's positive decisions on ``frame`` when known (those of
        its decision function when None).
        """
        if reference is None:
            reference = self.unit_rule.decision_function(frame) > 0
        return float(self.agreements(encoding, frame, reference, [multiplier], weight)[0])

    def _held_out_split(self, n_rows: int):
        idx = np.arange(n_rows)
        if n_rows < 40:
            return idx, idx
        return train_test_split(idx, test_size=HELD_OUT,
                                random_state=self.settings.random_state)

    def _bin_candidates(self, frame, sensitive, weight) -> tuple[list[int], str]:
        """Numbers of bins to try, finest first, and what limits them.

        ``n_bins="auto"`` tries the grid up to ``min(max_bins, cap)``, ``cap`` being
        the bins the smallest sensitive group supports (:func:`distribution_cap`): the
        rows of a small group estimate its distribution over the bins.
        """
        s = self.settings
        if s.n_bins != "auto":
            return [int(s.n_bins)], f"n_bins={int(s.n_bins)} (fixed)"
        cap, n_min = distribution_cap(frame, sensitive, weight)
        if cap < s.max_bins:
            limit = (f"at most {cap} bins: the smallest sensitive group has "
                     f"{n_min:.0f} rows (one bin per row, at least 20)")
        else:
            limit = (f"at most max_bins={s.max_bins} (the smallest sensitive "
                     f"group, {n_min:.0f} rows, supports {cap})")
        return candidates(BIN_GRID, min(s.max_bins, cap)), limit

    def _search_sample(self, frame, weight):
        """The rows of the search: all of them, or ``sample_rows`` drawn uniformly."""
        s = self.settings
        if len(frame) <= s.sample_rows:
            return frame, weight
        rng = check_random_state(s.random_state)
        rows = np.sort(rng.choice(len(frame), s.sample_rows, replace=False))
        return frame.iloc[rows], None if weight is None else weight[rows]

    def choose(self, frame, sensitive, weight) -> tuple[int, int, str]:
        """Choose the number of bins and the multiplier by agreement on held-out rows.

        Returns the bins, the multiplier and why (``n_bins_reason_``'s words). The
        split is by rows; with ``sample_weight`` the bins are weighted on the fitting
        rows and the agreement on the held-out rows, whose standard error uses their
        effective (Kish) size. The candidate bins are capped for the smallest sensitive
        group's distribution (:meth:`_bin_candidates`).
        """
        rule = self.unit_rule
        multipliers = self.multipliers()
        bins, limit = self._bin_candidates(frame, sensitive, weight)
        if len(bins) == 1 and len(multipliers) == 1:
            return bins[0], multipliers[0], f"the only candidate; {limit}"
        # the search's time no longer grows with the rows; the chosen bins are then
        # fitted on all rows (encode)
        frame, weight = self._search_sample(frame, weight)
        fit_idx, hold_idx = self._held_out_split(len(frame))
        hold = frame.iloc[hold_idx]
        hold_weight = None if weight is None else weight[hold_idx]
        reference = rule.decision_function(hold) > 0
        n_effective = effective_size(hold_weight, len(hold))
        scores = []  # (agreement, k, l), finest resolution first
        for k in tqdm(bins, desc="bins", disable=not self.settings.verbose):
            enc = Encoding.from_data(frame, rule, sensitive, k, self.settings.random_state,
                                     bin_rows=fit_idx, sample_weight=weight)
            agreements = self.agreements(enc, hold, reference, multipliers, hold_weight)
            scores += [(a, k, l) for a, l in zip(agreements, multipliers)]
            if choice_is_final(scores, n_effective):
                break  # the coarser bins cannot change the choice
        choice = (f"the finest within noise of the best held-out agreement "
                  f"({max(s[0] for s in scores):.4f}) among {bins}")
        k, l = finest_within_noise(scores, n_effective)
        return k, l, f"{choice}; {limit}"

    def encode(self, frame, sensitive, weight) -> Quantized:
        """Build the variables and the multipliers to try (chosen, then smaller)."""
        s = self.settings
        if s.user_network:
            encoding = Encoding.from_network(s.network, self.unit_rule, sensitive)
            multipliers = self.multipliers()
            reference = self.unit_rule.decision_function(frame) > 0
            agreements = self.agreements(encoding, frame, reference, multipliers, weight)
            l = multipliers[int(np.argmax(agreements))]  # ties: the first candidate
            return Quantized(encoding, [l] + self.smaller(l), None,
                             "a user network: its own states, no bins")
        k, l, why = self.choose(frame, sensitive, weight)
        encoding = Encoding.from_data(frame, self.unit_rule, sensitive, k,
                                      s.random_state, sample_weight=weight)
        return Quantized(encoding, [l] + self.smaller(l), k, f"{k} bins: {why}")

    def warn_low_agreement(self, encoding, frame, reference, weight, agreement: float,
                           multiplier: int) -> None:
        """LowAgreementWarning naming the agreement, its likely cause and the fix."""
        s = self.settings
        real = encoding.scores(encoding.codes(frame)) + self.unit_rule.intercept
        unrounded = float(np.average((real > 0) == reference, weights=weight))
        if unrounded < MIN_AGREEMENT:
            cause = (f"the discretization: with the states' real values the rule already "
                     f"agrees on only {unrounded:.3f} of the rows; {self._finer_states_fix()}")
        else:
            fix = (f"raise max_multiplier (now {s.max_multiplier})"
                   if s.multiplier == "auto"
                   else f"raise multiplier (now {s.multiplier}) or use multiplier='auto'")
            cause = (f"the rounding of the weights to integers (multiplier_={multiplier}; "
                     f"before rounding the agreement is {unrounded:.3f}); {fix}")
        warnings.warn(
            f"The integer rule that is verified decides as {s.estimator_name} "
            f"on only {agreement:.3f} of the rows of X (agreement_ < {MIN_AGREEMENT}), "
            "so the verified metrics describe a different classifier. Likely cause: "
            f"{cause}.",
            LowAgreementWarning,
            stacklevel=4,
        )

    def _finer_states_fix(self) -> str:
        s = self.settings
        if s.user_network:
            return "give the network more states (finer values) for the numeric columns"
        if s.n_bins == "auto":
            return f"raise max_bins (now {s.max_bins})"
        return f"raise n_bins (now {s.n_bins}) or use n_bins='auto'"
