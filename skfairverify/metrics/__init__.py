"""Scorers for ``GridSearchCV(scoring=...)``: every fairness scorer is greater-is-better.

All scorers share one convention (see :class:`~skfairverify.metrics.FairnessScorer`):
the sensitive features come either from columns of ``X`` named at scorer creation,
or as metadata (``scorer.set_score_request(sensitive_features=True)`` under
``sklearn.set_config(enable_metadata_routing=True)``).
"""

from ._base import FairnessScorer
from ._counterfactual_scorer import make_cflips_scorer, make_ndccf_scorer
from ._esl_scorer import ESLScorer, make_esl_scorer
from ._verifier_scorer import make_verifier_scorer

__all__ = [
    "ESLScorer",
    "FairnessScorer",
    "make_cflips_scorer",
    "make_esl_scorer",
    "make_ndccf_scorer",
    "make_verifier_scorer",
]
