"""The exact path for linear rules: group rates of the integer rule by the S3P engine.

The model is read as a :class:`~skfairverify.rules.LinearRule` on its raw columns
(:func:`skfairverify.rules.linear_rule`), divided by the scale of its decision function;
:class:`~._quantization.Quantizer` chooses the bins and the integer multiplier; the rate
of every group is the exact probability that the integer score reaches the threshold
(:func:`._influence.group_rates`), and the posterior draws are solved on the coarsest
rule of the same model within tolerance (:mod:`._draw_rule`).
"""

from __future__ import annotations

import numpy as np

from ..s3p import TableTooLargeError
from ._draw_rule import DrawRule
from ._evaluation import Evaluation, Evaluator, rows_group
from ._influence import group_rates, planned_seconds
from ._learning import NetworkLearner
from ._posterior import shared_plan_rates
from ._quantization import Quantized, Quantizer, weighted_scale
from ._warnings import MIN_AGREEMENT

__all__ = ["LinearPath", "PlannedDraws"]


class PlannedDraws:
    """The draws' rates function of a network, with the planned time of one draw.

    Parameters
    ----------
    rates_of : callable
        ``rates_of(draw) -> ndarray of shape (n_groups,)``.
    seconds_per_draw : float
        Estimated time of one draw's engine run (:func:`._influence.planned_seconds`
        of the draws' rule on the network), from the plan's size.
    """

    def __init__(self, rates_of, seconds_per_draw: float):
        self.rates_of = rates_of
        self.seconds_per_draw = float(seconds_per_draw)

    def __call__(self, network) -> np.ndarray:
        return self.rates_of(network)


def planned_once(plan_of):
    """``plan_of(net, mask)`` computed once per network and rows, then looked up.

    The posterior draws and the bootstrap replicates of a network ask for the same
    rates function (the draws' rule, chosen by exact solves of the network at coarser
    rules, and its plan): the second asks for the first's. Networks are matched by
    identity, rows by their mask's values.
    """
    known = []  # (network, mask, rates function)

    def cached(net, mask):
        for other, rows, found in known:
            if other is net and np.array_equal(rows, mask):
                return found
        found = plan_of(net, mask)
        known.append((net, mask, found))
        return found

    return cached


class LinearPath:
    """The exact path of a linear rule (one of the paths of :func:`._paths.select_path`).

    Parameters
    ----------
    settings : Settings
        The verifier's parameters.
    rule : LinearRule
        The rule read from the fitted model.
    frame, weight : DataFrame, ndarray or None
        The rows of ``fit`` and their weights: the rule is divided by the (weighted)
        scale of its decision function on them, so that the integer rule does not
        depend on a positive rescaling of the model.
    """

    name = "exact"
    kind = "linear"

    def __init__(self, settings, rule, frame, weight):
        self.settings = settings
        self.rule = rule
        self.classes = np.asarray(rule.classes) if rule.classes is not None else np.array([0, 1])
        self.rescale(weighted_scale(rule.decision_function(frame), weight))
        self.fitted = None  # fit's evaluation (remember)
        self.variables = None
        self._observed = None  # (frame, the model's decisions on it) given to evaluate

    def rescale(self, decision_scale: float) -> None:
        """Divide the rule by ``decision_scale`` (the scale of its decision function)."""
        self.decision_scale = decision_scale
        self.unit_rule = self.rule.scaled(1.0 / decision_scale)
        self.quantizer = Quantizer(self.settings, self.unit_rule)

    def decisions(self, frame) -> np.ndarray:
        """The rule's positive decision on every row (defined on unseen categories)."""
        return np.asarray(self.unit_rule.decision_function(frame)) > 0

    def encode(self, frame, sensitive, weight) -> Quantized:
        """The variables, the bins and the multipliers to try (:meth:`Quantizer.encode`)."""
        return self.quantizer.encode(frame, sensitive, weight)

    def evaluate(self, variables, frame, y_pos, encoding, multipliers, weight,
                 observed=None) -> Evaluation:
        """Networks, group rates and metrics on ``frame`` (labels ``y_pos`` or None).

        ``multipliers`` lists the multipliers to try in order: when the engine's table
        for one is too large, the next (smaller) one is used. ``observed``: the model's
        decisions on the rows, for the population estimate (None: none).
        """
        learner = NetworkLearner(self.settings, variables)
        data = learner.groups_and_networks(frame, y_pos, encoding, weight)
        evaluator = Evaluator(self.settings, variables, learner)
        self._observed = (None if observed is None or observed.square is not None
                          or frame is None or len(observed.decisions) != len(frame)
                          else (frame, np.asarray(observed.decisions, dtype=bool)))
        for k, l in enumerate(multipliers):
            try:
                return self._evaluate_at(evaluator, l, encoding, data, y_pos, weight,
                                         observed)
            except TableTooLargeError:
                if k + 1 == len(multipliers):
                    raise
        raise RuntimeError("no multiplier to try")  # pragma: no cover

    def _evaluate_at(self, evaluator, multiplier, encoding, data, y_pos, weight,
                     observed=None) -> Evaluation:
        """Group rates and metrics of the integer rule with the multiplier ``l``.

        ``data`` is what :meth:`NetworkLearner.groups_and_networks` returns. The
        posterior draws are solved on the coarsest rule of the same model within
        tolerance (:mod:`._draw_rule`).
        """
        weights, threshold = self.quantizer.integer_rule(encoding, multiplier)
        sens_codes, group_codes, _, _, codes = data
        sens_idx = evaluator.variables.sens_idx
        budget = self.settings.max_table_size
        solved = []  # (network, rates): every network's verified rates, solved once

        def rates_of(net):
            for known, rates in solved:
                if known is net:
                    return rates
            rates = group_rates(net, weights, threshold, sens_idx, group_codes, budget)
            solved.append((net, rates))
            return rates

        draw_rule = self._draw_rule(encoding, multiplier, sens_idx, group_codes,
                                    decisions_at=lambda r: encoding.scores(codes, r[0]) >= r[1])
        group_of_row = rows_group(sens_codes, group_codes)
        square = None if observed is None else observed.square  # distinct rows (dask)

        @planned_once
        def plan_of(net, mask):  # the draws share the network's structure: plan once
            rows = (mask, group_of_row[mask], len(group_codes), weight, square)
            return draw_rule.rates_function(net, rates_of(net), rows)

        ev = evaluator.exact(rates_of, plan_of, encoding, data, y_pos, weight, observed)
        ev.multiplier, ev.weights, ev.threshold = multiplier, weights, threshold
        ev.draw_multipliers = draw_rule.chosen
        return ev

    def _draw_rule(self, encoding, multiplier, sens_idx, group_codes, decisions_at=None,
                   coarsest=None, planned=None) -> DrawRule:
        """The rule of the posterior draws (:class:`DrawRule`) of the integer rule ``l``.

        ``planned``: a list that receives the planned time of one draw of every network
        the rule plans the draws of (:func:`._influence.planned_seconds`).
        """
        budget = self.settings.max_table_size

        def plan(net, rule):
            if planned is not None:
                planned.append(planned_seconds(*rule, net, budget,
                                               evidence_vars=list(sens_idx)))
            return shared_plan_rates(net, *rule, sens_idx, group_codes,
                                     max_table_size=budget)

        return DrawRule(
            multiplier, lambda m: self.quantizer.integer_rule(encoding, m),
            solve=lambda net, rule: group_rates(net, *rule, sens_idx, group_codes, budget),
            plan=plan, decisions_at=decisions_at, coarsest=coarsest)

    def agreement(self, encoding, frame, multiplier, weight) -> float:
        """The agreement of the integer rule with the model on ``frame``.

        The model's decisions on ``frame`` are those :meth:`evaluate` was given for
        the population estimate when it was given them on this frame, else computed.
        """
        kept, self._observed = self._observed, None
        reference = kept[1] if kept is not None and kept[0] is frame else None
        return self.quantizer.agreement(encoding, frame, multiplier, weight, reference)

    def check_agreement(self, encoding, frame, weight, agreement, multiplier,
                        reference=None) -> None:
        """LowAgreementWarning when ``agreement`` is below :data:`MIN_AGREEMENT`.

        ``reference``: the model's decisions on the rows (those of ``frame`` when None).
        """
        if agreement < MIN_AGREEMENT:
            if reference is None:
                reference = self.decisions(frame)
            self.quantizer.warn_low_agreement(encoding, frame, reference, weight,
                                              agreement, multiplier)

    def remember(self, variables, ev: Evaluation, frame=None, weight=None) -> None:
        """Keep fit's evaluation: the rule, groups and draws the later methods use."""
        self.variables, self.fitted = variables, ev

    @property
    def draw_multiplier(self):
        chosen = self.fitted.draw_multipliers
        return chosen[0] if chosen else None

    def point_rates(self, network) -> np.ndarray:
        """The verified rule's exact group rates under ``network`` (after ``fit``)."""
        ev = self.fitted
        return group_rates(network, ev.weights, ev.threshold, self.variables.sens_idx,
                           ev.group_codes, self.settings.max_table_size)

    def draw_rates_of(self, network, exact=None) -> PlannedDraws:
        """Rates function for posterior draws of ``network``'s structure (after ``fit``).

        The verified rule's rates of a drawn network, solved on the coarsest rule within
        tolerance at ``network`` (:class:`~._draw_rule.DrawRule`: no coarser than the
        rule ``fit`` chose for the network of all rows with the row check, so the draws
        of ``network_`` get the rates of ``fit``). ``exact``: the verified rule's group
        rates at ``network`` when already solved (solved here when None). The function
        carries the planned time of one draw (:class:`PlannedDraws`).
        """
        planned = []
        rule = self._draw_rule(self.variables.encoding, self.fitted.multiplier,
                               self.variables.sens_idx, self.fitted.group_codes,
                               coarsest=self.draw_multiplier, planned=planned)
        if exact is None:
            exact = self.point_rates(network)
        return PlannedDraws(rule.rates_function(network, exact), planned[-1])

    def draws_seconds(self, network, n_draws: int, rates_of) -> float:
        """Estimated time of ``n_draws`` draws of ``network`` (seconds), from sizes.

        ``rates_of`` is :meth:`draw_rates_of`'s for ``network``: every draw is one
        engine run of the draws' rule, planned on ``network`` (no timing).
        """
        return n_draws * rates_of.seconds_per_draw
