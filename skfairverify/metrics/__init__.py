"""Scorers for ``GridSearchCV(scoring=...)``: every fairness scorer is greater-is-better.

All scorers share one convention (see :class:`~skfairverify.metrics.FairnessScorer`):
the sensitive features come either from columns of ``X`` named at scorer creation,
or as metadata (``scorer.set_score_request(sensitive_features=True)`` under
``sklearn.set_config(enable_metadata_routing=True)``).
"""

from ._base import FairnessScorer

# [verifier-scorer]
# [cflips-scorer]
from ._esl_scorer import ESLScorer, make_esl_scorer
# [esl-scorer]

__all__ = [
    "FairnessScorer",
    # [verifier-scorer-all]
    # [cflips-scorer-all]
    "ESLScorer",
    "make_esl_scorer",
    # [esl-scorer-all]
]
