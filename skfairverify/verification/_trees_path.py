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

from ..rules import is_tree_model, positive_leaves
from ..s3p import BayesNet
from ._linear_path import Evaluation
from ._trees_exact import tree_group_rates
from ._trees_states import (
    MAX_STATES,
    state_indicators,
    tree_encoding,
    tree_encoding_from_network,
)

__all__ = ["TREE_BINS", "is_tree_model"]

#: Quantile bins merged with a numeric column's thresholds with ``n_bins="auto"`` (at
#: most ``max_bins``): the thresholds carry the decision, the quantiles only shape the
#: distribution of the column.
TREE_BINS = 10


class _TreePathMixin:
    """Fit, verify and influence of :class:`FairnessVerifier` on the exact tree path."""

    def _read_tree(self) -> None:
        """Read ``estimator_`` as positive leaves (TypeError naming an unreadable step)."""
        self._leaves = positive_leaves(self.estimator_)
        self.rule_ = None
        self.decision_scale_ = None
        self.classes_ = np.asarray(self._leaves.classes)

    def _tree_bins(self) -> int:
        return min(TREE_BINS, self.max_bins) if self.n_bins == "auto" else int(self.n_bins)

    def _tree_encoding(self, frame, sensitive, weight):
        if isinstance(self.network, BayesNet):
            self.n_bins_ = None
            self.n_bins_reason_ = "a user network: its own states, no bins"
            return tree_encoding_from_network(self.network, self._leaves, sensitive)
        self.n_bins_ = self._tree_bins()
        self.n_bins_reason_ = (f"{self.n_bins_} quantile bins: tree path ("
                               + ("fixed n_bins" if self.n_bins != "auto" else
                                  f"{TREE_BINS}, at most max_bins") +
                               "), merged with the tree's split thresholds")
        return tree_encoding(frame, self._leaves, sensitive, n_bins=self.n_bins_,
                             max_states=max(MAX_STATES, self.max_bins), sample_weight=weight)

    def _fit_tree(self, frame, sensitive, y_pos, weight, observed=None) -> None:
        """Variables, networks and exact group rates of the tree on ``frame``."""
        encoding = self._tree_encoding(frame, sensitive, weight)
        self._set_variables(encoding, sensitive)
        eo_labels = None if isinstance(self.network, BayesNet) else y_pos
        ev = self._evaluate_tree(frame, eo_labels, encoding, weight, observed)
        self._tree_indicators = state_indicators(encoding, self._leaves)
        self.multiplier_ = None
        self.agreement_ = 1.0
        self._set_evaluation(ev, encoding)

    def _evaluate_tree(self, frame, y_pos, encoding, weight, observed=None) -> Evaluation:
        """Networks, exact group rates and metrics of the tree on ``frame``."""
        data = self._groups_and_networks(frame, y_pos, encoding, weight)
        indicators = state_indicators(encoding, self._leaves)
        group_codes = data[1]

        def rates_of(net):
            return tree_group_rates(net, indicators, None, self._sens_idx, group_codes,
                                    self.max_table_size)

        return self._exact_evaluation(rates_of, lambda net, mask: rates_of, encoding, data,
                                      y_pos, weight, observed)

    def _tree_draw_rates_of(self, network):
        """Rates function for posterior draws of ``network``'s structure: the tree's."""
        def rates_of(net):
            return tree_group_rates(net, self._tree_indicators, None, self._sens_idx,
                                    self._group_codes, self.max_table_size)

        return rates_of

    def _tree_rates_without(self, subset, reference) -> np.ndarray:
        """Exact group rates of the tree with the features ``subset`` replaced by references."""
        return tree_group_rates(self._reference_network(subset, reference),
                                self._tree_indicators, None, self._sens_idx,
                                self._group_codes, self.max_table_size)


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
