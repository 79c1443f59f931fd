"""Exact verification engine: stochastic subset sum over a Bayesian network.

``Pr[sum_i w_i[X_i] >= t | evidence]`` for integer weights and discrete,
multi-state variables distributed by a Bayesian network (FVGM's S3P, rebuilt
as a frontier-table dynamic programme with pruning, a divide-and-conquer FFT
convolution of the variables independent of all others, plus a score-convolving
variable elimination for networks whose frontier is wide; the cheaper plan is
chosen automatically and can be inspected with :func:`plan`). numpy and
scipy.fft only; pgmpy is only imported by :meth:`BayesNet.from_pgmpy` and
:meth:`BayesNet.to_pgmpy`.
"""

from ._api import best_assignment, plan, positive_probability, positive_probability_table
from ._errors import TableTooLargeError
from ._network import BayesNet
from ._plan import Plan

__all__ = [
    "BayesNet",
    "Plan",
    "TableTooLargeError",
    "best_assignment",
    "plan",
    "positive_probability",
    "positive_probability_table",
]
