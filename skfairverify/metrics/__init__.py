"""Scorers for ``GridSearchCV(scoring=...)``: every fairness scorer is greater-is-better.

Every ``make_*_scorer`` factory returns a scorer of one private base class, so all share
one convention: the sensitive features come either from columns of ``X`` named at
creation (``sensitive_features="sex"``), or as metadata
(``scorer.set_score_request(sensitive_features=True)`` under
``sklearn.set_config(enable_metadata_routing=True)``); ``sample_weight`` reaches them as
metadata (``set_score_request(sample_weight=True)``) or, without routing, from
``GridSearchCV.fit(X, y, sample_weight=w)``.
"""

from ._counterfactual_scorer import make_cflips_scorer, make_ndccf_scorer
from ._esl_scorer import make_esl_scorer
from ._verifier_scorer import make_verifier_scorer

__all__ = [
    "make_cflips_scorer",
    "make_esl_scorer",
    "make_ndccf_scorer",
    "make_verifier_scorer",
]
