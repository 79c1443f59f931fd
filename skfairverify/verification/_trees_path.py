"""The exact path for decision trees: group rates of the tree's positive leaves.

The fitted :class:`~sklearn.tree.DecisionTreeClassifier` (alone or behind per-column
steps) is read as positive regions on the raw columns (:func:`skfairverify.rules.positive_leaves`);
the variables are the sensitive columns and the columns the tree reads, with states
refined so that every threshold is a state boundary (:func:`._trees_states.tree_encoding`);
the network is learned from them as on the linear path; the rate of every group is the
exact probability of the positive regions (:func:`._trees_exact.tree_group_rates`). The
decision on every state equals the model's, so ``agreement_`` is 1.
"""

from __future__ import annotations

import numpy as np

from ..rules import is_tree_model
from ._evaluation import Evaluation, Evaluator
from ._learning import NetworkLearner
from ._quantization import Quantized
from ._trees_exact import tree_group_rates, tree_rates_seconds
from ._trees_states import (
    MAX_STATES,
    state_indicators,
    tree_encoding,
    tree_encoding_from_network,
)

__all__ = ["TREE_BINS", "TreePath", "is_tree_model", "tree_decisions"]

#: Quantile bins merged with a numeric column's thresholds with ``n_bins="auto"`` (at
#: most ``max_bins``): the thresholds carry the decision, the quantiles only shape the
#: distribution of the column.
TREE_BINS = 10


class TreePath:
    """The exact path of a decision tree (one of the paths of :func:`._paths.select_path`).

    Parameters
    ----------
    settings : Settings
        The verifier's parameters.
    leaves : TreeLeaves
        The tree's positive leaves on the raw columns.
    """

    name = "exact"
    kind = "tree"
    rule = None
    decision_scale = None

    def __init__(self, settings, leaves):
        self.settings = settings
        self.leaves = leaves
        self.classes = np.asarray(leaves.classes)
        self.fitted = None  # fit's evaluation (remember)
        self.variables = None
        self.indicators = None

    def decisions(self, frame) -> np.ndarray:
        """The tree's positive decision on every row."""
        return np.asarray(self.leaves.predict_positive(frame), dtype=bool)

    def _bins(self) -> int:
        s = self.settings
        return min(TREE_BINS, s.max_bins) if s.n_bins == "auto" else int(s.n_bins)

    def encode(self, frame, sensitive, weight) -> Quantized:
        """The variables: the tree's columns, refined at its thresholds."""
        s = self.settings
        if s.user_network:
            encoding = tree_encoding_from_network(s.network, self.leaves, sensitive)
            return Quantized(encoding, [None], None, "a user network: its own states, no bins")
        n_bins = self._bins()
        reason = (f"{n_bins} quantile bins: tree path ("
                  + ("fixed n_bins" if s.n_bins != "auto" else f"{TREE_BINS}, at most max_bins")
                  + "), merged with the tree's split thresholds")
        encoding = tree_encoding(frame, self.leaves, sensitive, n_bins=n_bins,
                                 max_states=max(MAX_STATES, s.max_bins), sample_weight=weight)
        return Quantized(encoding, [None], n_bins, reason)

    def evaluate(self, variables, frame, y_pos, encoding, multipliers, weight,
                 observed=None) -> Evaluation:
        """Networks, exact group rates and metrics of the tree on ``frame``."""
        learner = NetworkLearner(self.settings, variables)
        data = learner.groups_and_networks(frame, y_pos, encoding, weight)
        indicators = state_indicators(encoding, self.leaves)
        group_codes, sens_idx = data.group_codes, variables.sens_idx

        def rates_of(net):
            return tree_group_rates(net, indicators, None, sens_idx, group_codes,
                                    self.settings.max_table_size)

        evaluator = Evaluator(self.settings, variables, learner)
        return evaluator.exact(rates_of, lambda net, mask: rates_of, encoding, data, y_pos,
                               weight, observed)

    def agreement(self, encoding, frame, multiplier, weight) -> float:
        """1: the decision on every state equals the tree's."""
        return 1.0

    def check_agreement(self, encoding, frame, weight, agreement, multiplier,
                        reference=None) -> None:
        """Nothing to check: the agreement is 1."""

    def remember(self, variables, ev: Evaluation, frame=None, weight=None) -> None:
        """Keep fit's evaluation and the tree's state indicators of fit's variables."""
        self.variables, self.fitted = variables, ev
        self.indicators = state_indicators(variables.encoding, self.leaves)

    def point_rates(self, network) -> np.ndarray:
        """The tree's exact group rates under ``network`` (after ``fit``)."""
        return tree_group_rates(network, self.indicators, None, self.variables.sens_idx,
                                self.fitted.group_codes, self.settings.max_table_size)

    def draw_rates_of(self, network, exact=None):
        """Rates function for posterior draws of ``network``'s structure: the tree's."""
        return self.point_rates

    def draws_seconds(self, network, n_draws: int, rates_of) -> float:
        """Estimated time of ``n_draws`` draws of ``network`` (seconds), from sizes.

        Every draw is one elimination of the tree's regions, planned on ``network``
        (:func:`._trees_exact.tree_rates_seconds`; no timing). ``rates_of``
        (:meth:`draw_rates_of`'s) is not needed.
        """
        return n_draws * tree_rates_seconds(network, self.indicators,
                                            self.variables.sens_idx)


def tree_decisions(indicators, codes) -> np.ndarray:
    """The tree's positive decision on every row of state ``codes`` (any positive region).

    A region holds a row when every variable it constrains is in an allowed state
    (:func:`._trees_states.state_indicators`); the states are refined at the tree's
    thresholds, so this is the tree's own decision.
    """
    codes = np.asarray(codes)
    positive = np.zeros(len(codes), dtype=bool)
    for r in range(indicators.n_regions):
        inside = np.ones(len(codes), dtype=bool)
        for v, allowed in indicators.by_variable.items():
            inside &= allowed[r, codes[:, v]] > 0
        positive |= inside
    return positive
