"""Matplotlib figures (optional extra: ``pip install skfairverify[plot]``).

matplotlib is imported lazily, inside each function, so importing this module
never requires it.
"""

# [verifier-plots]
# [counterfactual-plots]
from ._esl import plot_esl_contributions, plot_group_shares
# [esl-plots]

__all__ = [
    # [verifier-plots-all]
    # [counterfactual-plots-all]
    "plot_esl_contributions",
    "plot_group_shares",
    # [esl-plots-all]
]
