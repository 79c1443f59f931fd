"""Warnings of the verifier."""

from __future__ import annotations

__all__ = ["LowAgreementWarning", "MIN_AGREEMENT", "SamplingToleranceWarning"]

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
