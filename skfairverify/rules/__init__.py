"""Models read as rules on their raw input columns: the bottom layer of the verifier.

* :func:`linear_rule` reads a fitted binary linear classifier (behind affine steps)
  as a :class:`LinearRule`; :func:`sensitive_columns` lists the inputs it never reads.
* :func:`positive_leaves` reads a fitted decision tree (behind per-column steps) as the
  :class:`TreeLeaves` it predicts positive: products of :class:`Intervals` and
  :class:`CategorySet` on raw columns.

Both readers take the pipeline steps of one table, :data:`PIPELINE_STEPS` (``_steps``),
which names every step either understands and how each reads it. This package imports
only ``utils`` of skfairverify; ``preprocessing`` and ``verification`` build on it. The
public names (``LinearRule``, ``linear_rule``, ``sensitive_columns``) are re-exported by
:mod:`skfairverify`; the others serve the package's own modules.
"""

from ._linear_reader import linear_rule, sensitive_columns
from ._reading import Reading, read_model
from ._regions import CategorySet, Intervals
from ._rule import LinearRule, Term, bin_of, term_names
from ._steps import PIPELINE_STEPS, StepReading
from ._tree_reader import LeafRegion, TreeLeaves, is_tree_model, positive_leaves

__all__ = [
    "PIPELINE_STEPS",
    "Reading",
    "CategorySet",
    "Intervals",
    "LeafRegion",
    "LinearRule",
    "StepReading",
    "Term",
    "TreeLeaves",
    "bin_of",
    "is_tree_model",
    "linear_rule",
    "positive_leaves",
    "read_model",
    "sensitive_columns",
    "term_names",
]
