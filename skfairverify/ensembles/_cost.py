"""The cost of the branching of :func:`~skfairverify.ensembles.ensemble_bounds`, estimated.

Before a search is run, from the ensemble restated on its variables' states only (no
network, no timing): the number of trees and leaves and the states of the variables the
trees read. The estimate is the number of joint states of those variables (``log2``):
the work of a search node grows with the trees' leaves as the work of a sampled row
grows with its trees, so the ratio of the two paths follows the number of nodes the
branching splits, which the joint states bound (the branching is their enumeration at
worst). ``method="auto"`` of :class:`~skfairverify.FairnessVerifier` takes the
tree-ensemble path only when the estimate is within a limit chosen by measurement
(``docs/benchmarks.md``, "method='auto' on tree ensembles").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["BranchingCost", "branching_cost"]


class BranchingCost(NamedTuple):
    """What the estimate of a search's cost is made of.

    Attributes
    ----------
    n_trees : int
        Trees of the ensemble.
    n_leaves : int
        Leaves over all trees.
    states : tuple of int
        Per variable the trees read, its number of states.
    """

    n_trees: int
    n_leaves: int
    states: tuple

    @property
    def cost(self) -> float:
        """The estimate: ``log2`` of the joint states of the variables the trees read."""
        return float(np.sum(np.log2(np.maximum(self.states, 1))))


def branching_cost(ensemble, states) -> BranchingCost:
    """The cost estimate of bounding ``ensemble`` over ``states``.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model, restated on its variables' states
        (``skfairverify.ensembles._states.index_ensemble``) or not.
    states : list of FeatureStates
        Per variable, its states (``feature`` None for a variable the trees do not read).

    Returns
    -------
    BranchingCost

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble, refine_states
    >>> from skfairverify.ensembles._cost import branching_cost
    >>> X = np.repeat(np.arange(4.0), 5)[:, None]
    >>> ensemble = read_ensemble(GradientBoostingClassifier(n_estimators=3, max_depth=1)
    ...                          .fit(X, X[:, 0] > 1))
    >>> cost = branching_cost(ensemble, [refine_states(ensemble, 0)])
    >>> cost.n_trees, cost.n_leaves, cost.states
    (3, 6, (2,))
    """
    read = tuple(int(st.n_states) for st in states if st.feature is not None)
    return BranchingCost(int(ensemble.n_trees), int(ensemble.n_leaves), read)
