"""Matplotlib figures (optional extra: ``pip install skfairverify[plot]``).

matplotlib is imported lazily, inside each function, so importing this module
never requires it.
"""

from ._counterfactual import plot_cflips_at_k, plot_proxy_correlations
from ._esl import plot_esl_contributions, plot_esl_intervals, plot_group_shares
from ._search import pareto_front, plot_constrained_search
from ._verifier import plot_fairness_influence, plot_group_rates

__all__ = [
    "pareto_front",
    "plot_cflips_at_k",
    "plot_constrained_search",
    "plot_esl_contributions",
    "plot_esl_intervals",
    "plot_fairness_influence",
    "plot_group_rates",
    "plot_group_shares",
    "plot_proxy_correlations",
]
