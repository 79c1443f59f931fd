"""Counterfactual fairness under unawareness: CFlips, nDCCF, generators, audit.

The method of Cornacchia et al., *Counterfactual Fair Opportunity* (CFlips and
nDCCF): for rows a model refuses, generate ranked counterfactuals that it accepts,
predict their sensitive group, and compare how often (CFlips) and how high in the
ranking (nDCCF) the group flips, per group.

Generators share one interface (:class:`BaseGenerator`), ``fit(X, estimator)`` and
``generate(X_query, k) -> CounterfactualSet``; counterfactuals are ranked by the
L1 distance on min-max scaled numeric columns plus 1 per changed categorical
column (optionally re-ranked by the prediction gap, Section 6.4 of the paper).
One module per generator (``_kdtree``, ``_linear``, ``_dice``) on a shared base
(``_base``); ``_registry`` maps the names to the classes.
"""

from ._base import BaseGenerator, CounterfactualSet
from ._column_subset import ColumnSubsetClassifier
from ._crossfit import CrossFittedSensitiveClassifier
from ._dice import DiceCounterfactuals
from ._fairness import CounterfactualFairness, default_sensitive_classifier
from ._groups import MIN_GROUP_SIZE, PRIVILEGED_RULE, PrivilegedGroup, privileged_group
from ._kdtree import KDTreeCounterfactuals
from ._linear import LinearCounterfactuals
from ._metrics import counterfactual_flips, ndccf
from ._registry import GENERATORS, make_generator
from ._results import CounterfactualResult
from ._shared import fit_sensitive_classifier

__all__ = [
    "GENERATORS",
    "MIN_GROUP_SIZE",
    "PRIVILEGED_RULE",
    "BaseGenerator",
    "ColumnSubsetClassifier",
    "CounterfactualFairness",
    "CounterfactualResult",
    "CounterfactualSet",
    "CrossFittedSensitiveClassifier",
    "DiceCounterfactuals",
    "KDTreeCounterfactuals",
    "LinearCounterfactuals",
    "PrivilegedGroup",
    "counterfactual_flips",
    "default_sensitive_classifier",
    "fit_sensitive_classifier",
    "make_generator",
    "ndccf",
    "privileged_group",
]
