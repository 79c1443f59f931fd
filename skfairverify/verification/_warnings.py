"""Warnings of the verifier."""

from __future__ import annotations

__all__ = ["EstimateOutsideIntervalWarning", "LowAgreementWarning", "MIN_AGREEMENT",
           "SamplingToleranceWarning"]

#: ``FairnessVerifier.fit`` warns when ``agreement_`` (share of the rows of ``X`` on
#: which the integer rule decides as the estimator) is below this value.
MIN_AGREEMENT = 0.95


class LowAgreementWarning(UserWarning):
    """The integer rule that is verified disagrees with the estimator on many rows.

    Raised by :meth:`FairnessVerifier.fit` when ``agreement_`` is below
    ``MIN_AGREEMENT`` (0.95): the verified metrics then describe the quantized rule
    rather than the model. The message names the agreement, the likely cause (too few
    bins, or too small an integer multiplier) and the parameter to change.

    Examples
    --------
    >>> import warnings
    >>> from skfairverify.verification import LowAgreementWarning
    >>> issubclass(LowAgreementWarning, UserWarning)
    True
    """


class SamplingToleranceWarning(UserWarning):
    """The sampling path stopped at ``max_samples`` before reaching ``tolerance``.

    Raised by :class:`FairnessVerifier` on the sampling path (``method_ == "sampling"``)
    when a group's confidence interval is still wider than ``tolerance`` after
    ``max_samples`` rows: the intervals keep their guarantee but are wider than asked.
    The message names the widest interval, the rows drawn and the parameters to change.

    Examples
    --------
    >>> from skfairverify.verification import SamplingToleranceWarning
    >>> issubclass(SamplingToleranceWarning, UserWarning)
    True
    """


class EstimateOutsideIntervalWarning(UserWarning):
    """A verified value lies outside the credible interval of its posterior draws.

    Raised by :class:`FairnessVerifier` (exact paths, ``n_draws > 0``) when the value
    of a group rate or a metric, computed on the point-estimate network, is outside
    the equal-tailed credible interval of the same quantity over the posterior draws.
    It happens with a max-of-gaps metric (statistical parity, equalized odds) over
    groups with few rows: every draw adds its noise to each group, and the largest gap
    of noisy rates is larger than the gap of the smoothed estimates. The reported
    interval (``ci_low`` / ``ci_high``, ``metric_intervals_``) is then widened to hold
    the value, and the message names the quantity, both numbers and the smallest
    group: read that quantity as poorly determined by the data.

    Examples
    --------
    >>> from skfairverify.verification import EstimateOutsideIntervalWarning
    >>> issubclass(EstimateOutsideIntervalWarning, UserWarning)
    True
    """


class ModelCheckWarning(UserWarning):
    """The learned network does not fit a group: its rate differs from the group's rows.

    Raised by :class:`FairnessVerifier` when the model check of a group rejects (Holm's
    step-down over every group and rate at 5%, so that a network that fits warns with
    probability at most 5%): the network's rate of the group and the share of the
    group's rows that the model decides positively differ beyond their sampling noise
    (the p-value is in ``groups_["model_check_pvalue"]`` and ``population_``). The
    verified rate is then exact *under the network* but not the population's; the
    population estimate (``groups_["population_rate"]``) falls back to the rows' own
    rate for that group.

    Examples
    --------
    >>> from skfairverify.verification import ModelCheckWarning
    >>> issubclass(ModelCheckWarning, UserWarning)
    True
    """
