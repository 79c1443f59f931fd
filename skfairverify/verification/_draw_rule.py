"""The integer rule the posterior draws are solved on: the verified rule, made coarser.

The exact engine's work grows with the length of the score axis, i.e. with the multiplier
``l`` of the integer rule ``sum_i rint(l * w_i[x_i]) >= t``: at ``l = 1000`` on Adult a
solve takes about five times as long as at ``l = 125``. The verified rates need the fine
rule, whose decisions agree with the model's; the spread of the rates over the posterior
draws does not. A draw's rates are therefore solved exactly for a coarser rule of the same
model (multiplier ``l / 2**k``) and shifted by the difference of the two rules at the
point estimate (a control variate)::

    r_l(theta_d)  ~=  r_c(theta_d) + (r_l(theta_hat) - r_c(theta_hat))

The error of a draw is the change, from ``theta_hat`` to ``theta_d``, of the signed
probability ``D`` of the states on which the two rules decide differently. Over the
posterior, that probability varies at most like a proportion of about ``n U`` of a group's
``n`` rows, ``U`` being the probability of disagreement: its standard deviation is at most
about ``sqrt(U / n)``, against ``sqrt(r (1 - r) / n)`` for the rate ``r`` itself. Requiring
``U <= tolerance * r (1 - r)`` in every group keeps the ratio below ``sqrt(tolerance)``
(0.32 for the default 0.1): an error unrelated to the draw adds at most ``tolerance / 2``
(5%) to the spread of the draws. This bound is loose: the network ties the band of
disagreeing states to the rest of the distribution, and the measured error is five times
smaller (``benchmarks/bench_intervals.py --draw-rule``). ``U`` is checked twice: as the
share of each group's rows on which the decisions differ, and as ``|r_l - r_c|`` at the
point estimate; the coarsest rule passing both is used, the verified rule itself when
none does. The share of a group's ``n`` rows resolves ``U`` only to one row, ``1 / n``:
a group of 200 rows with ``r = 0.05`` allows ``0.1 r (1 - r) n = 0.95`` rows, so a single
row decided differently, which any coarser rule may move across its threshold, would
refuse every coarser rule (and the verified rule's table, up to 16 times as long, would
be solved for every draw and bootstrap replicate). The row check therefore allows one
row more than ``tolerance * r (1 - r)`` of each group (``1 / n`` of its rows): it still
refuses a band of disagreement of many rows, which is what it guards against (the
probability check alone misses a band whose two sides cancel). The bound above becomes
``sqrt(tolerance + 1 / (n r (1 - r)))`` of the rate's spread (0.45 in that group; where
``n r (1 - r)`` is larger than ``1 / tolerance``, within ``sqrt(2 tolerance)``). The
probability check, which stands for ``U`` at the network, allows the same one row of the
group's rows (``1 / n``) more, but never more than its tolerance (``min(1 / n,
tolerance * r (1 - r))`` of slack), so that at the network the bound is
``sqrt(2 tolerance)`` (0.45) in every group: a group of 7 rows with ``r = 0.86`` allows
``0.1 r (1 - r) = 0.012``, about a tenth of a row, while
the standard error of its rate is 0.13; a disagreement of 0.02 (1.7 times that) there
held COMPAS's network of ``Y = 1`` on a rule four times as fine, for the 30 bootstrap
replicates and 50 posterior draws of every fit. The full row of slack (the row check's)
let rules 64 times as coarse through in groups of 15-20 rows with rates near 0.9, at 3-21
times the tolerance (``docs/benchmarks.md``). Tolerance 0 is the verified rule itself (no
slack).

A group's ``n`` is its effective number of rows, Kish's ``(sum w)**2 / sum w**2``
(:func:`effective_rows`): its number of rows without weights; with weights,
``1 / n = sum (w_i / sum w)**2`` is the share of one row drawn in proportion to its weight,
unchanged when every weight is multiplied by the same factor (the weights read as sampling
weights, as the population estimate reads them: integer weights count fewer rows than the
repeated rows they stand for). The dask path evaluates the
distinct rows, each with the sum of its rows' weights (its count without weights) and of
their squared weights: the same sums give the same ``n`` as the rows they stand for, so
both paths choose the same rule (the number of distinct rows would make the slack of a
group of many duplicated rows several rows wide on the dask path alone).
``tests/verification/test_draw_rule.py`` checks the draws against the verified rule's,
solved draw by draw, on known networks.
"""

from __future__ import annotations

import numpy as np

from ._population import kish_rows

__all__ = ["DRAW_RULE_TOLERANCE", "DrawRule", "coarser_multipliers", "effective_rows",
           "one_row_share", "within_tolerance"]

#: Largest disagreement of the draws' rule, as a share of ``r (1 - r)`` of every group.
DRAW_RULE_TOLERANCE = 0.1
#: The coarsest multiplier tried is ``l / 2**COARSEST_HALVINGS``.
COARSEST_HALVINGS = 6


def coarser_multipliers(multiplier: int) -> list[int]:
    """Multipliers ``l / 64, l / 32, ..., l / 2`` (integers of at least 2), coarsest first.

    Examples
    --------
    >>> from skfairverify.verification._draw_rule import coarser_multipliers
    >>> coarser_multipliers(1000)
    [15, 31, 62, 125, 250, 500]
    >>> coarser_multipliers(5)
    [2]
    """
    found = {int(multiplier) >> k for k in range(COARSEST_HALVINGS, 0, -1)}
    return sorted(m for m in found if m >= 2)


def within_tolerance(disagreement, rates, tolerance, slack=0.0) -> bool:
    """Whether ``|disagreement| <= tolerance * r (1 - r) + slack`` for every group with a rate.

    Parameters
    ----------
    disagreement : array-like of shape (n_groups,)
        Probability (or share of rows) on which two rules decide differently.
    rates : array-like of shape (n_groups,)
        The groups' rates under the verified rule; NaN for a group without one
        (not checked).
    tolerance : float
        Largest disagreement, as a share of ``r (1 - r)``.
    slack : float or array-like of shape (n_groups,), default=0.0
        Added to every group's allowance (the row check's resolution: one row).

    Returns
    -------
    bool

    Examples
    --------
    >>> from skfairverify.verification._draw_rule import within_tolerance
    >>> within_tolerance([0.004, 0.0], [0.5, float("nan")], 0.1)
    True
    >>> within_tolerance([0.001, 0.0], [0.5, 0.0], 0.1)  # a rate of 0 allows none
    True
    >>> within_tolerance([0.03], [0.5], 0.1)
    False
    >>> within_tolerance([0.03], [0.5], 0.1, slack=0.01)  # one row of a hundred more
    True
    """
    disagreement = np.abs(np.asarray(disagreement, dtype=float))
    rates = np.asarray(rates, dtype=float)
    allowed = tolerance * rates * (1.0 - rates) + np.asarray(slack, dtype=float)
    return bool(np.all(np.isnan(rates) | (disagreement <= allowed)))


def _masked(values, mask):
    """``values[mask]`` (all of them when ``mask`` is None), or None when ``values`` is."""
    if values is None:
        return None
    values = np.asarray(values, dtype=float)
    return values if mask is None else values[mask]


def effective_rows(rows) -> np.ndarray:
    """The Kish effective number of rows of each group, ``(sum w)**2 / sum w**2``.

    ``rows`` is :meth:`DrawRule.rates_function`'s ``(mask, group_of_row, n_groups,
    weight, square)``: without weights, the number of rows of each group; with weights,
    it does not change when every weight is multiplied by the same factor. ``square``
    (the dask path, whose rows are distinct rows with the sums of their rows' weights as
    ``weight``) is the sum of the squared weights of each row's rows; None: each row is
    one row, of square ``weight**2``. So a distinct row that stands for ``k`` rows of
    weight 1 counts as ``k`` rows, as those rows do. A group without rows gets 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._draw_rule import effective_rows
    >>> g = np.array([0, 0, 0, 0, 2])
    >>> effective_rows((None, g, 3, None, None)).tolist()
    [4.0, 0.0, 1.0]
    >>> effective_rows((None, g, 3, [1, 1, 2, 2, 5], None)).tolist()  # 6**2 / 10
    [3.6, 0.0, 1.0]
    >>> effective_rows((None, g[1:], 3, [2, 1, 1, 5], [2, 1, 1, 25])).tolist()  # 2 rows in one
    [4.0, 0.0, 1.0]
    """
    mask, group_of_row, n_groups, weight, square = rows
    return kish_rows(group_of_row, n_groups, _masked(weight, mask),
                     _masked(square, mask))[1]


def one_row_share(rows) -> np.ndarray:
    """The rows' resolution: ``1 / n_g``, one row's share of each group's rows.

    ``n_g`` is the effective number of rows of the group (:func:`effective_rows`): its
    number of rows without weights, the same on the distinct rows of the dask path as on
    the rows they stand for. A group without rows gets 0 (its share is NaN and not
    checked).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._draw_rule import one_row_share
    >>> one_row_share((None, np.array([0, 0, 0, 0, 2]), 3, None, None)).tolist()
    [0.25, 0.0, 1.0]
    """
    counts = effective_rows(rows)
    with np.errstate(divide="ignore"):
        return np.where(counts > 0, 1.0 / counts, 0.0)


def _shifted(drawn, shift):
    def rates_of(net):
        return np.clip(drawn(net) + shift, 0.0, 1.0)

    return rates_of


class DrawRule:
    """Rates of posterior draws on the coarsest rule within tolerance, shifted.

    For each network, the rates function of its draws: the coarsest rule within tolerance,
    shifted to the verified rule at the point estimate.

    Parameters
    ----------
    multiplier : int
        Multiplier of the verified rule.
    rule_at : callable
        ``rule_at(l) -> (weights, threshold)``, the integer rule with multiplier ``l``.
    solve : callable
        ``solve(network, rule) -> ndarray of shape (n_groups,)``: exact group rates.
    plan : callable
        ``plan(network, rule) -> callable``: the rates function of the draws of
        ``network`` (:func:`~skfairverify.verification._posterior.shared_plan_rates`).
    decisions_at : callable, default=None
        ``decisions_at(rule) -> ndarray of bool``: the rule's decision on every row the
        network was learned from; None checks the probabilities only.
    tolerance : float, default=None
        Largest disagreement, as a share of ``r (1 - r)`` of every group;
        ``DRAW_RULE_TOLERANCE`` (0.1) when None, 0 for the verified rule itself.
    coarsest : int, default=None
        No rule coarser than this multiplier (e.g. the one ``fit`` chose with the row
        check, for networks of the same rows without rows to check).

    Attributes
    ----------
    chosen : list of int
        The multiplier used for each network, in the order asked.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._draw_rule import DrawRule
    >>> from skfairverify.verification._influence import group_rates
    >>> from skfairverify.verification._posterior import shared_plan_rates
    >>> net = BayesNet([2, 50], [(), (0,)], [np.full(2, .5), np.full((2, 50), .02)])
    >>> def rule_at(l):  # decision: 0.1 * x + 0.04 * a >= 2.5
    ...     return [np.rint(l * np.array([0, .04])), np.rint(l * .1 * np.arange(50))], 2.5 * l
    >>> solve = lambda n, r: group_rates(n, *r, [0], [[0], [1]], 10**6)
    >>> plan = lambda n, r: shared_plan_rates(n, *r, [0], [[0], [1]])
    >>> rule = DrawRule(400, rule_at, solve, plan)
    >>> rates_of = rule.rates_function(net, solve(net, rule_at(400)))
    >>> rule.chosen, rates_of(net).round(2).tolist()
    ([6], [0.5, 0.5])
    """

    def __init__(self, multiplier, rule_at, solve, plan, decisions_at=None, tolerance=None,
                 coarsest=None):
        self.multiplier = int(multiplier)
        self.rule_at, self.solve, self.plan = rule_at, solve, plan
        self.decisions_at, self.coarsest = decisions_at, coarsest
        self.tolerance = DRAW_RULE_TOLERANCE if tolerance is None else float(tolerance)
        self.chosen = []
        self._rules, self._decisions = {}, {}

    def _rule(self, multiplier):
        if multiplier not in self._rules:
            self._rules[multiplier] = self.rule_at(multiplier)
        return self._rules[multiplier]

    def _row_share(self, multiplier, rows) -> np.ndarray:
        """Share of each group's rows on which the rule of ``multiplier`` differs."""
        for m in (multiplier, self.multiplier):
            if m not in self._decisions:  # one bit per row (packed): 1.25 MB per 10M rows
                self._decisions[m] = np.packbits(self.decisions_at(self._rule(m)))
        mask, group_of_row, n_groups, weight, _ = rows
        differ = np.unpackbits(self._decisions[multiplier] ^ self._decisions[self.multiplier],
                               count=len(mask)).astype(bool)[mask]
        w = np.ones(differ.size) if weight is None else _masked(weight, mask)
        total = np.bincount(group_of_row, weights=w, minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.bincount(group_of_row, weights=w * differ, minlength=n_groups) / total

    def rates_function(self, network, exact, rows=None):
        """Rates function for the draws of ``network``, whose verified rates are ``exact``.

        Parameters
        ----------
        network : BayesNet
            The point-estimate network (the draws share its structure).
        exact : ndarray of shape (n_groups,)
            Its group rates under the verified rule.
        rows : tuple, default=None
            ``(mask, group_of_row, n_groups, weight, square)``: the rows the network was
            learned from (a mask of the rows of ``decisions_at``), the group of each of
            them, the number of groups, the rows' weights (or None) and the sums of the
            squared weights of the rows each stands for (None: each is one row); None
            skips the row check and gives the probability check no row of slack.

        Returns
        -------
        callable
            ``rates_of(draw) -> ndarray of shape (n_groups,)``.
        """
        exact = np.asarray(exact, dtype=float)
        if self.tolerance <= 0:  # the verified rule itself, whatever the slack
            self.chosen.append(self.multiplier)
            return self.plan(network, self._rule(self.multiplier))
        slack = 0.0 if rows is None else one_row_share(rows)
        for multiplier in coarser_multipliers(self.multiplier):
            if self.coarsest is not None and multiplier < self.coarsest:
                continue
            if (rows is not None and self.decisions_at is not None and not
                    within_tolerance(self._row_share(multiplier, rows), exact,
                                     self.tolerance, slack)):
                continue
            rule = self._rule(multiplier)
            shift = exact - self.solve(network, rule)
            if within_tolerance(shift, exact, self.tolerance,
                                np.minimum(slack, self.tolerance * exact * (1 - exact))):
                self.chosen.append(multiplier)
                return _shifted(self.plan(network, rule), shift)
        self.chosen.append(self.multiplier)
        return self.plan(network, self._rule(self.multiplier))
