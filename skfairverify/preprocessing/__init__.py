"""Preprocessing for exact verification: binning with bin means, integer weights.

FVGM (Ghosh et al., 2022, Section 3) turns a linear classifier on real features into
an integer rule on discrete variables: each numeric feature is binned (the bin's
weight is the coefficient times the bin's training mean), and the weights are
multiplied by an integer ``l`` and rounded, ``l`` being chosen by agreement with the
original classifier.
"""

from ._discretizer import BinningDiscretizer
from ._integer_weights import IntegerWeightScaler
from ._quantize import decision_scale, integer_threshold, quantize, select_multiplier

__all__ = [
    "BinningDiscretizer",
    "IntegerWeightScaler",
    "decision_scale",
    "integer_threshold",
    "quantize",
    "select_multiplier",
]
