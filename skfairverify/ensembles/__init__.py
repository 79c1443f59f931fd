"""Tree ensembles: one structure for every library, and sound bounds of group rates.

* :func:`read_ensemble` reads a fitted binary ``HistGradientBoostingClassifier``,
  ``GradientBoostingClassifier``, ``RandomForestClassifier``, ``ExtraTreesClassifier``,
  ``xgboost.XGBClassifier`` or ``lightgbm.LGBMClassifier`` into a
  :class:`TreeEnsemble` (per tree the splits, children and leaf values; the base
  score; the decision threshold on the raw score).
* :func:`ensemble_bounds` bounds ``Pr[positive | A = a]`` for each group under a
  discrete Bayesian network (:class:`~skfairverify.s3p.BayesNet`) whose variables'
  states are intervals of the model's inputs (:class:`FeatureStates`), by branching
  over the variables in a topological order: sound at every step, exact when the
  branching finishes.
* ``skfairverify.ensembles._states.index_ensemble`` (not public yet) restates an
  ensemble on the state indices of its columns (one representative value per state),
  so that any states that carry every split threshold serve as :class:`FeatureStates`.
* ``skfairverify.ensembles._unsettled.sample_unsettled`` (not public yet) samples only
  the mass the bounds left unsettled, stratified by the unsettled nodes (draws in
  proportion to each node's mass, from the network conditioned on it), and returns the
  sound part plus a Clopper-Pearson interval of the unsettled share;
  ``skfairverify.ensembles._reweight.reweighted_bounds`` reweighs the nodes of one
  search under another network of the same structure (posterior draws, bootstrap
  replicates): sound bounds without a new search.

:class:`~skfairverify.FairnessVerifier` uses them with ``method="bounds"``
(``verification/_ensemble_path.py``). This package imports ``s3p``, ``rules`` and
``utils`` of skfairverify only.
"""

from ._bounds import EnsembleBounds, ensemble_bounds
from ._read import read_ensemble
from ._states import FeatureStates, encode_states, refine_states
from ._structure import Tree, TreeEnsemble

__all__ = [
    "EnsembleBounds",
    "FeatureStates",
    "Tree",
    "TreeEnsemble",
    "encode_states",
    "ensemble_bounds",
    "read_ensemble",
    "refine_states",
]
