"""Certified sampling for any classifier: rows drawn from the network, decided by the model.

Three pieces, each vectorised over the samples (no Python loop over rows):

* :class:`NetworkSampler`: ancestral sampling of a :class:`~skfairverify.s3p.BayesNet`
  in topological order, one uniform per variable and per sample, inverted through the
  cumulative distribution of the row of the variable's table selected by its parents
  (one ``searchsorted`` over all rows of the table at once). The sensitive variables
  are roots of the verifier's networks, so a group is sampled by *setting* them
  (conditioning a root on a value is setting it); a fixed variable with parents is
  refused.
* :class:`RowBuilder`: states back to values. A state of a binned numeric column is
  replaced by a value of the column drawn from the rows of the data that fall in that
  bin (weighted by ``sample_weight``), a state of a discrete numeric column by its value,
  a category by itself; the rows are a DataFrame with the columns and dtypes of ``X``
  (or an array when the model was fitted on one).
* :func:`adaptive_rate`: the positive rate of one group, sampled in batches until its
  Clopper-Pearson interval (:mod:`._intervals`) is narrower than the tolerance or the
  budget is spent; the sample sizes at which it looks form a fixed grid (doubling from
  :data:`INITIAL_SAMPLES` to ``max_samples``), so that a union bound over the grid keeps
  the interval valid whatever size it stops at.
* :func:`posterior_draw_rates`: the same rate under each of ``n_draws`` networks drawn
  from the posterior of the learned network's parameters, ``m`` rows sampled under
  every draw, ``m`` chosen so that the Monte Carlo error adds little to the spread of
  the draws (:func:`rows_per_draw`). The draws' estimates are independent samples of
  the posterior predictive distribution of the Monte Carlo estimator, whose
  equal-tailed quantiles are the verifier's interval on the sampling path: they
  contain both the uncertainty of the network and the Monte Carlo error
  (``docs/any-classifier.md``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..s3p import TableTooLargeError
from ..utils._progress import progress
from ..utils._threads import cpu_seconds, limited_threads
from ._intervals import clopper_pearson

__all__ = [
    "DRAW_INITIAL_SAMPLES",
    "INITIAL_SAMPLES",
    "MC_VARIANCE_FRACTION",
    "MIN_BATCH_ROWS",
    "DrawRates",
    "ModelDecision",
    "NetworkSampler",
    "RateEstimate",
    "RowBuilder",
    "SamplingCost",
    "adaptive_rate",
    "batch_rows",
    "draw_grid",
    "draw_rows_needed",
    "look_grid",
    "posterior_draw_rates",
    "rows_per_draw",
]

#: First sample size at which the adaptive sampler looks at an interval.
INITIAL_SAMPLES = 1000
#: Largest number of rows sampled and predicted at once.
MAX_BATCH_ROWS = 100_000
#: Smallest batch the memory budget must allow.
MIN_BATCH_ROWS = 1000
#: Rows sampled under every posterior draw at the first look (sampling path, n_draws > 0).
DRAW_INITIAL_SAMPLES = 500
#: Largest Monte Carlo variance of a draw's rate, as a share of the posterior variance
#: of the rate, that the draws aim at (the interval is then at most ~5% wider than the
#: exact credible interval, ``sqrt(1.1) = 1.049``) unless ``tolerance`` allows more.
MC_VARIANCE_FRACTION = 0.1


class NetworkSampler:
    """Vectorised ancestral sampler of a Bayesian network.

    Parameters
    ----------
    network : BayesNet
        The distribution to sample.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._sampling import NetworkSampler
    >>> net = BayesNet([2, 2], [(), (0,)], [np.array([0.5, 0.5]),
    ...                                     np.array([[1.0, 0.0], [0.2, 0.8]])])
    >>> codes = NetworkSampler(net).sample(100_000, np.random.default_rng(0), {0: 1})
    >>> bool(np.all(codes[:, 0] == 1)), round(float(codes[:, 1].mean()), 2)
    (True, 0.8)
    """

    def __init__(self, network):
        self.network = network
        self.order = network.topological_order()
        self._tables = [self._table(i) for i in range(network.n_variables)]

    def _table(self, i: int):
        """Shifted cumulative table of variable ``i``: row ``r`` spans ``(r, r + 1]``."""
        net = self.network
        card = net.cardinalities[i]
        cdf = np.cumsum(net.cpts[i].reshape(-1, card), axis=1)
        cdf[:, -1] = 1.0  # no sample may fall past the last state by round-off
        flat = (cdf + np.arange(len(cdf))[:, None]).ravel()
        strides = np.ones(len(net.parents[i]), dtype=np.int64)
        cards = [net.cardinalities[p] for p in net.parents[i]]
        for k in range(len(cards) - 2, -1, -1):
            strides[k] = strides[k + 1] * cards[k + 1]
        return flat, strides, card

    def sample(self, n: int, rng, fixed=None) -> np.ndarray:
        """Draw ``n`` joint states (``(n, n_variables)`` codes), the variables of ``fixed`` set.

        Parameters
        ----------
        n : int
            Number of samples.
        rng : numpy.random.Generator
            Source of the uniforms (one per variable and sample).
        fixed : dict, default=None
            Variable index -> state of variables to set: roots, or variables whose
            parents are all set (conditioning on them: given its parents a variable
            is independent of its non-descendants).

        Returns
        -------
        ndarray of shape (n, n_variables)
            State codes.
        """
        fixed = fixed or {}
        for i in fixed:
            if set(self.network.parents[i]) - set(fixed):
                raise ValueError(
                    f"Variable {self.network.names[i]!r} has parents that are not set; the "
                    "sampler sets only variables whose parents are all set (roots: the "
                    "sensitive variables of the verifier's networks)."
                )
        codes = np.empty((n, self.network.n_variables), dtype=np.int64)
        for i in self.order:
            if i in fixed:
                codes[:, i] = fixed[i]
                continue
            flat, strides, card = self._tables[i]
            row = np.zeros(n, np.int64)
            for p, stride in zip(self.network.parents[i], strides):
                row += codes[:, p] * stride
            pos = np.searchsorted(flat, row + rng.random(n), side="right")
            codes[:, i] = np.clip(pos - row * card, 0, card - 1)
        return codes


@dataclass
class _BinValues:
    """Data values of one binned column grouped by bin, with cumulative weights."""

    values: np.ndarray  # sorted by bin
    cum: np.ndarray  # cumulative weight, same order
    start: np.ndarray  # cumulative weight before each bin
    stop: np.ndarray  # cumulative weight at the end of each bin
    first: np.ndarray  # first index of each bin in ``values``
    last: np.ndarray  # last index of each bin (first - 1 when empty)
    fallback: np.ndarray  # value of an empty bin (its mean, or its middle)
    unit: bool  # every weight is 1: the k-th row of a bin is found without a search

    @classmethod
    def from_data(cls, x, bins, weight, variable) -> _BinValues:
        card = variable.cardinality
        order = np.lexsort((x, bins))
        w = np.ones(len(x)) if weight is None else np.asarray(weight, dtype=float)[order]
        cum = np.cumsum(w)
        counts = np.bincount(bins, minlength=card)
        ends = np.cumsum(counts)
        first = ends - counts
        mass = np.concatenate([[0.0], cum])
        fallback = np.asarray(variable.values, dtype=float).copy()
        edges = variable.edges
        bad = ~np.isfinite(fallback)
        if variable.missing:
            bad[-1] = False  # the missing state: NaN, given to the model as it is
        if edges is not None and bad.any():
            lo, hi = float(np.nanmin(x)), float(np.nanmax(x))
            mid = (np.clip(edges[:-1], lo, hi) + np.clip(edges[1:], lo, hi)) / 2
            fallback[:len(mid)][bad[:len(mid)]] = mid[bad[:len(mid)]]
        return cls(x[order], cum, mass[first], mass[ends], first, ends - 1, fallback,
                   weight is None)

    def draw(self, states: np.ndarray, u: np.ndarray) -> np.ndarray:
        """One value per state: a data value of the bin, with probability its weight."""
        if self.unit:  # cum[i] = i + 1: the search below lands on first + floor(u * count)
            count = self.last[states] - self.first[states] + 1
            idx = self.first[states] + (u * count).astype(np.int64)
        else:
            target = self.start[states] + u * (self.stop[states] - self.start[states])
            idx = np.searchsorted(self.cum, target, side="right")
        idx = np.clip(idx, self.first[states], np.maximum(self.last[states],
                                                          self.first[states]))
        out = self.values[np.clip(idx, 0, len(self.values) - 1)]
        empty = self.last[states] < self.first[states]
        if empty.any():
            out = np.where(empty, self.fallback[states], out)
        return out


class RowBuilder:
    """States of the network back to rows of the model's input.

    Parameters
    ----------
    encoding : Encoding
        The variables (their kinds, states and bins).
    frame : pandas.DataFrame
        The rows the network was learned on (values of the binned columns are drawn
        from them), with every column of the model's input.
    weight : ndarray or None
        Row weights of ``frame``.
    columns : list of str
        The model's input columns, in order (a subset of the variables).
    labels : list or None
        Column labels to give the model (those of its ``X``); None for an array.
    """

    def __init__(self, encoding, frame: pd.DataFrame, weight, columns, labels):
        self.encoding = encoding
        self.columns = list(columns)
        self.labels = labels
        self.dtypes = {c: frame[c].dtype for c in frame.columns}
        self._bins = {}
        if encoding.binned:
            idx = encoding.codes(frame, only=[encoding.index(n) for n in encoding.binned])
            for j, name in enumerate(encoding.binned):
                var = encoding.variables[encoding.index(name)]
                x = frame[name].to_numpy(dtype=float, na_value=np.nan)
                self._bins[name] = _BinValues.from_data(x, idx[:, j].astype(np.int64),
                                                        weight, var)
        self._states = {
            v.name: _typed(pd.Series(v.states, dtype=object), self.dtypes.get(v.name))
            for v in encoding.variables if v.kind != "binned"
        }

    def values(self, name: str, states: np.ndarray, rng):
        """Values of the column ``name`` for the state codes ``states``."""
        if name in self._bins:
            out = self._bins[name].draw(states, rng.random(len(states)))
            dtype = self.dtypes.get(name)
            return out.astype(dtype) if dtype is not None and dtype.kind in "iuf" else out
        return self._states[name].take(states)

    def frame(self, codes: np.ndarray, names, rng, only=None) -> pd.DataFrame:
        """Columns ``only`` (default: the model's) of the rows with state ``codes``."""
        only = self.columns if only is None else only
        data = {c: self.values(c, codes[:, names.index(c)], rng) for c in only}
        return pd.DataFrame(data, columns=only, copy=False)

    def model_input(self, frame: pd.DataFrame):
        """``frame`` as the model's ``X``: its column labels, or an array."""
        if self.labels is None:
            return frame.to_numpy()
        frame.columns = self.labels
        return frame


def _typed(states: pd.Series, dtype):
    """The state values as an array of ``dtype`` (that of the column), ready to take."""
    if dtype is None:
        return states.to_numpy()
    try:
        return states.astype(dtype).array
    except (TypeError, ValueError):
        return states.to_numpy()


class ModelDecision:
    """The model's positive decisions on sampled rows.

    The model predicts with its native thread pools (OpenMP, BLAS) limited to one
    thread (:func:`~skfairverify.utils._threads.limited_threads`): called in a loop on
    batches, threads gain little, and on a machine whose cores are busy an OpenMP model
    runs 10-25x slower with them.

    Passes the sampled sensitive values as ``sensitive_features`` when the model's
    ``predict`` takes them (fairlearn's ``ThresholdOptimizer``), and a seed drawn from
    the verifier's generator as ``random_state`` when it takes one (randomized
    classifiers such as ``ExponentiatedGradient``), so that a seeded verification is
    reproducible.
    """

    def __init__(self, estimator, positive_class):
        self.estimator = estimator
        self.positive_class = positive_class
        try:
            params = inspect.signature(estimator.predict).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins
            params = {}
        self.takes_sensitive = "sensitive_features" in params
        self.takes_seed = "random_state" in params

    def positives(self, X, sensitive: pd.DataFrame, rng) -> int:
        """Number of rows of ``X`` predicted as the positive class."""
        return int(np.sum(self.decisions(X, sensitive, rng)))

    def decisions(self, X, sensitive: pd.DataFrame, rng) -> np.ndarray:
        """Whether each row of ``X`` is predicted as the positive class."""
        kwargs = {}
        if self.takes_sensitive:
            kwargs["sensitive_features"] = (sensitive.iloc[:, 0] if sensitive.shape[1] == 1
                                            else sensitive)
        if self.takes_seed:
            kwargs["random_state"] = int(rng.integers(2**31 - 1))
        with limited_threads():  # one thread: the same cost on an idle or a busy machine
            pred = np.asarray(self.estimator.predict(X, **kwargs))
        return pred == self.positive_class


def look_grid(max_samples: int) -> list[int]:
    """Sample sizes at which the adaptive sampler may look: doubling up to the budget.

    Examples
    --------
    >>> from skfairverify.verification._sampling import look_grid
    >>> look_grid(10_000)
    [1000, 2000, 4000, 8000, 10000]
    """
    grid, n = [], INITIAL_SAMPLES
    while n < max_samples:
        grid.append(n)
        n *= 2
    return grid + [int(max_samples)]


def batch_rows(n_variables: int, n_columns: int, max_table_size: int) -> int:
    """Rows per batch within ``8 * max_table_size`` bytes, or TableTooLargeError.

    A sampled row costs about 32 bytes per variable (codes, uniforms, table rows) and
    64 bytes per input column (the values, the DataFrame and the model's own copy).
    """
    per_row = 32 * n_variables + 64 * n_columns + 64
    budget = 8 * int(max_table_size)
    rows = min(MAX_BATCH_ROWS, budget // per_row)
    if rows < MIN_BATCH_ROWS:
        need = MIN_BATCH_ROWS * per_row
        raise TableTooLargeError(
            f"A sampling batch of {MIN_BATCH_ROWS:,} rows of {n_columns} input column(s) "
            f"and {n_variables} variable(s) needs about {need / 2**20:,.1f} MiB "
            f"({per_row:,} bytes per row), beyond the budget of 8 * max_table_size = "
            f"{budget / 2**20:,.1f} MiB. Raise max_table_size (now {max_table_size:,}) to "
            f"at least {-(-need // 8):,}, or verify a model on fewer columns."
        )
    return int(rows)


@dataclass
class RateEstimate:
    """Monte Carlo estimate of one positive rate with its interval."""

    positives: int
    samples: int
    low: float
    high: float
    converged: bool

    @property
    def rate(self) -> float:
        return self.positives / self.samples


def adaptive_rate(draw, *, tolerance, alpha, grid, batch) -> RateEstimate:
    """Sample ``draw(n) -> positives`` in batches until the interval is narrow enough.

    At each size of ``grid`` the Clopper-Pearson interval at level ``alpha`` is
    computed; sampling stops when it is narrower than ``tolerance`` or at the last
    size. Between looks it jumps to the first size of the grid that the normal
    approximation deems enough (never backwards), so the model predicts in large
    batches.

    Parameters
    ----------
    draw : callable
        ``draw(n)`` samples ``n`` rows and returns how many the model decides positive.
    tolerance : float
        Largest width ``high - low`` wanted.
    alpha : float
        Error level of the interval at one look.
    grid : list of int
        Increasing sample sizes at which to look (:func:`look_grid`).
    batch : int
        Largest number of rows per call of ``draw``.

    Returns
    -------
    RateEstimate
    """
    z = norm.ppf(1 - alpha / 2)
    k = n = look = 0
    while True:
        while n < grid[look]:
            size = min(batch, grid[look] - n)
            k += draw(size)
            n += size
        low, high = clopper_pearson(k, n, alpha)
        low, high = float(low), float(high)
        if high - low < tolerance or look == len(grid) - 1:
            return RateEstimate(k, n, low, high, high - low < tolerance)
        p = (k + 0.5) / (n + 1.0)
        need = (2 * z) ** 2 * p * (1 - p) / tolerance**2
        look = max(look + 1, int(np.searchsorted(grid, need)))
        look = min(look, len(grid) - 1)


def samples_needed(p: float, tolerance: float, alpha: float, grid) -> int:
    """Rows one interval needs to be narrower than ``tolerance`` (on the look grid).

    The Clopper-Pearson interval at level ``alpha`` is about ``2 z sqrt(p (1 - p) / n)``
    wide (``z`` the ``1 - alpha / 2`` normal quantile), so ``n = (2 z)^2 p (1 - p) /
    tolerance^2``, rounded up to the next look of ``grid`` (at most its last size).

    Examples
    --------
    >>> from skfairverify.verification._sampling import samples_needed
    >>> samples_needed(0.5, 0.02, 0.05, [1000, 2000, 4000, 8000, 16000])
    16000
    """
    z = norm.ppf(1 - alpha / 2)
    need = (2 * z) ** 2 * p * (1 - p) / tolerance**2
    return int(grid[min(int(np.searchsorted(grid, need)), len(grid) - 1)])


def rows_per_draw(variance, posterior_variance, tolerance, level) -> float:
    """Rows to sample under each posterior draw so that Monte Carlo adds little width.

    The rate of a draw estimated from ``m`` rows is the draw's rate plus a Monte Carlo
    error of variance ``variance / m`` (``variance = p (1 - p)``), so the draws'
    estimates spread with variance ``posterior_variance + variance / m``; in the normal
    approximation their equal-tailed interval at ``level`` is ``2 z sqrt(V_post +
    variance / m)`` wide (``z`` the ``(1 + level) / 2`` normal quantile) instead of
    ``2 z sqrt(V_post)``. ``m`` is the fewest rows for which either the Monte Carlo
    variance is at most :data:`MC_VARIANCE_FRACTION` of the posterior variance (the
    interval at most ~5% wider) or the interval is at most ``tolerance`` wider, i.e.
    ``variance / m <= max(0.1 V_post, 2 t sqrt(V_post) + t^2)`` with ``t = tolerance /
    (2 z)``.

    Parameters
    ----------
    variance : float
        Per-row Bernoulli variance ``p (1 - p)`` of the rate.
    posterior_variance : float
        Variance of the rate over the posterior of the network (>= 0).
    tolerance : float
        Largest widening of the interval allowed by the Monte Carlo error.
    level : float
        Credible level of the interval.

    Returns
    -------
    float
        Rows per draw (not rounded).

    Examples
    --------
    >>> from skfairverify.verification._sampling import rows_per_draw
    >>> round(rows_per_draw(0.25, 1e-3, 0.005, 0.95))  # 0.25 / (0.1 * 1e-3)
    2500
    >>> round(rows_per_draw(0.25, 0.0, 0.01, 0.95))  # no posterior spread: (2 z / tol)^2 / 4
    38415
    """
    t = tolerance / (2.0 * norm.ppf((1.0 + level) / 2.0))
    vp = max(float(posterior_variance), 0.0)
    allowed = max(MC_VARIANCE_FRACTION * vp, 2.0 * t * np.sqrt(vp) + t * t)
    return float(variance) / allowed


def draw_grid(n_draws: int, max_samples: int) -> list[int]:
    """Rows per draw at which the draws' sampler may look, doubling.

    ``n_draws`` times the last size is at most ``max_samples`` (at least 100 rows per
    draw).

    Examples
    --------
    >>> from skfairverify.verification._sampling import draw_grid
    >>> draw_grid(50, 2_000_000)
    [500, 1000, 2000, 4000, 8000, 16000, 32000, 40000]
    >>> draw_grid(50, 2000)
    [100]
    """
    cap = max(int(max_samples) // int(n_draws), 100)
    grid, m = [], min(DRAW_INITIAL_SAMPLES, cap)
    while m < cap:
        grid.append(m)
        m *= 2
    return grid + [cap]


def _draw_variances(k: np.ndarray, m: int) -> tuple[float, float]:
    """Per-row variance and posterior variance (method of moments) of the draws' rates.

    The estimates ``k / m`` of the draws spread with variance ``V_post + E[p (1 - p)] /
    m``; the Monte Carlo part is estimated by the mean of ``r (1 - r) / (m - 1)``
    (unbiased) and subtracted. The per-row variance is that of the pooled rate (an
    upper bound of the mean of the draws' ``p (1 - p)``), smoothed away from 0.
    """
    r = k / m
    pooled = (k.sum() + 0.5) / (k.size * m + 1.0)
    mc = float(np.mean(r * (1.0 - r))) / max(m - 1, 1)
    spread = float(np.var(r, ddof=1)) if k.size > 1 else 0.0
    return pooled * (1.0 - pooled), max(spread - mc, 0.0)


def draw_rows_needed(p: float, support: float, n_draws: int, tolerance: float,
                     level: float, grid) -> int:
    """Rows all draws of one rate need, estimated before sampling them.

    The posterior variance of a rate is taken as that of a proportion of the
    ``support`` rows of its group, ``p (1 - p) / (support + 1)`` (:func:`rows_per_draw`
    for the rows of one draw, rounded up to ``grid``).

    Examples
    --------
    >>> from skfairverify.verification._sampling import draw_grid, draw_rows_needed
    >>> draw_rows_needed(0.5, 99, 50, 0.005, 0.95, draw_grid(50, 2_000_000))
    50000
    """
    variance = p * (1.0 - p)
    m = rows_per_draw(variance, variance / (support + 1.0), tolerance, level)
    return int(n_draws) * int(grid[min(int(np.searchsorted(grid, m)), len(grid) - 1)])


@dataclass
class DrawRates:
    """Monte Carlo estimates of one rate under every posterior draw."""

    positives: np.ndarray  # (n_draws,)
    samples: int  # rows per draw
    converged: bool  # the rows reached what rows_per_draw asked

    @property
    def rates(self) -> np.ndarray:
        return self.positives / self.samples


def _draw_calls(n_draws: int, rows: int, batch: int):
    """``(draw indices, rows)`` of the calls that add ``rows`` to every draw in batches."""
    per_call = max(1, batch // max(rows, 1))
    for start in range(0, n_draws, per_call):
        ids = np.arange(start, min(start + per_call, n_draws))
        done = 0
        while done < rows:
            size = min(batch, rows - done)
            yield ids, size
            done += size


def posterior_draw_rates(draw, n_draws: int, *, tolerance, level, grid,
                         batch) -> DrawRates:
    """One rate under each of ``n_draws`` posterior networks, ``m`` rows each.

    ``m`` grows along ``grid`` until it reaches :func:`rows_per_draw` at the posterior
    variance estimated from the draws so far (between-draw variance minus the Monte
    Carlo variance), or the last size. The rows of several draws are sampled and
    predicted in one call (at most ``batch`` rows). Whatever ``m``, the draws'
    estimates are independent samples of the posterior predictive distribution of
    the Monte Carlo estimator (the draw's rate plus its Monte Carlo error), so their
    quantiles hold both sources; ``m`` only sets how much the Monte Carlo error widens
    them.

    Parameters
    ----------
    draw : callable
        ``draw(ids, n)`` samples ``n`` rows under each posterior draw of the indices
        ``ids`` and returns the positives of each (an array of ``len(ids)``).
    n_draws : int
        Number of posterior draws.
    tolerance, level : float
        See :func:`rows_per_draw`.
    grid : list of int
        Rows per draw at which to look (:func:`draw_grid`).
    batch : int
        Largest number of rows per call of ``draw``.

    Returns
    -------
    DrawRates

    Examples
    --------
    Draws whose rates are known (a Beta posterior), each estimated from binomial rows:

    >>> import numpy as np
    >>> from skfairverify.verification._sampling import draw_grid, posterior_draw_rates
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.beta(10, 40, 200)  # posterior sd 0.056
    >>> def draw(ids, n):
    ...     return rng.binomial(n, truth[ids])
    >>> out = posterior_draw_rates(draw, 200, tolerance=0.005, level=0.95,
    ...                            grid=draw_grid(200, 10**7), batch=100_000)
    >>> out.samples, out.converged  # 0.16 / (0.1 * 0.056^2) ~ 520: the look of 1,000
    (1000, True)
    >>> bool(np.std(out.rates) < 1.1 * np.std(truth))
    True
    """
    k = np.zeros(int(n_draws), dtype=np.int64)
    m = look = 0
    while True:
        for ids, size in _draw_calls(len(k), grid[look] - m, batch):
            k[ids] += np.asarray(draw(ids, size), dtype=np.int64)
        m = grid[look]
        need = rows_per_draw(*_draw_variances(k, m), tolerance, level)
        if m >= need or look == len(grid) - 1:
            return DrawRates(k, m, bool(m >= need))
        look = min(max(look + 1, int(np.searchsorted(grid, need))), len(grid) - 1)


class SamplingCost:
    """The sampler's cost, estimated after its first batches and refused beyond a budget.

    The refusal is decided on counts: the rows the whole fit needs against the rows
    ``max_time`` allows at the cost of one row, measured in CPU time with the thread
    pools limited to one thread (:mod:`skfairverify.utils._threads`), which a machine
    whose cores are busy does not multiply (a wall-clock time would grow with the load
    and refuse the same fit on a busy machine only).

    :meth:`wrap` meters every call of a ``draw(n) -> positives`` function (or of a
    ``draw(ids, n)`` of the posterior draws, ``len(ids) * n`` rows). After the first
    call the rows the whole fit needs are estimated, ``n_intervals`` times
    :func:`samples_needed` at the first batch's rate (its ``p (1 - p)``, at least that
    of a rate of 0.05 so that a first batch without positives does not promise a quick
    fit), plus ``draw_rows(p)``, the rows of the posterior draws
    (:func:`draw_rows_needed` summed over the rates). The rows ``max_time`` allows are
    ``max_time`` divided by the CPU seconds per row of the batch (the model's
    ``predict`` and the sampler). A small first batch also carries ``predict``'s
    per-call overhead, so its cost per row is high: it refuses (TableTooLargeError
    naming the rows, the cost and the parameters that set them) only beyond ten times
    the rows allowed; the cost is then measured once on the second, larger batch, which
    refuses beyond the rows allowed. ``per_row`` keeps the cost measured. A progress
    bar counts the rows against the estimate (at once with ``verbose``, else once the
    sampling has run for 5 seconds).
    """

    #: The first (small) batch refuses only beyond this multiple of the budget.
    FIRST_BATCH_SLACK = 10.0

    def __init__(self, *, n_intervals, tolerance, alpha, grid, max_time, verbose,
                 draw_rows=None, clock=cpu_seconds):
        self.n_intervals = n_intervals
        self.tolerance, self.alpha, self.grid = tolerance, alpha, grid
        self.max_time = max_time
        self.verbose = verbose
        self.draw_rows = draw_rows
        self.clock = clock
        self.rows, self.seconds, self.calls = 0, 0.0, 0
        self.estimate = None  # (rows needed, rows allowed)
        self.per_row = None  # CPU seconds per row, measured
        self._draw_estimate = 0
        self._bar = None

    def wrap(self, draw):
        """``draw``, metered (its last argument is the rows per draw)."""
        def metered(*args):
            n = args[-1] * (len(args[0]) if len(args) > 1 else 1)
            t0 = self.clock()
            k = draw(*args)
            seconds = self.clock() - t0
            self.rows += n
            self.seconds += seconds
            self.calls += 1
            if self.calls == 1:
                p = min(max((float(np.sum(k)) + 0.5) / (n + 1.0), 0.05), 0.95)
                rows = self.n_intervals * samples_needed(p, self.tolerance, self.alpha,
                                                         self.grid)
                self._draw_estimate = 0 if self.draw_rows is None else self.draw_rows(p)
                self._check(rows + self._draw_estimate, seconds / n, n,
                            self.FIRST_BATCH_SLACK)
            elif self.calls == 2:
                self._check(self.estimate[0], seconds / n, n, 1.0)
            if self._bar is not None:
                self._update_bar(n)
            return k
        return metered

    def _check(self, rows, per_row, measured_rows, slack) -> None:
        """Refuse ``rows`` beyond ``slack`` times the rows ``max_time`` allows."""
        per_row = max(per_row, 1e-9)  # a clock tick below the resolution: 1 ns per row
        allowed = int(self.max_time / per_row)
        self.per_row = per_row
        self.estimate = (rows, allowed)
        if rows > slack * allowed:
            draws = ""
            if self._draw_estimate:
                draws = (f", of which {self._draw_estimate:,} under the posterior draws of "
                         "the network (n_draws; n_draws=0 for Monte Carlo intervals only)")
            raise TableTooLargeError(
                f"Sampling refused: reaching tolerance={self.tolerance} needs about "
                f"{rows:,} sampled rows ({self.n_intervals} intervals; at most "
                f"max_samples={self.grid[-1]:,} each{draws}), but max_time="
                f"{self.max_time:,} s allows {int(slack * allowed):,} rows at the "
                f"measured {per_row * 1e6:,.1f} us of CPU time per row (the model's "
                f"predict and the sampler, one thread, on {measured_rows:,} rows; about "
                f"{rows * per_row:,.0f} CPU s in all). Raise tolerance (the rows needed "
                "fall with its square), lower max_samples, or raise max_time."
            )
        if self._bar is None:  # at once with verbose, else once it runs past 5 s
            self._bar = progress(total=rows, unit="rows", verbose=self.verbose)
        self._bar.set_description(  # no refresh: a bar waiting for its delay stays hidden
            f"sampling (~{rows * per_row:,.0f} CPU s, {per_row * 1e6:,.1f} us/row)",
            refresh=bool(self.verbose))

    def _update_bar(self, n: int) -> None:
        """Count ``n`` rows; past the estimate, the bar says so (it counts on, no bar)."""
        bar = self._bar
        if bar.total is not None and bar.n + n > bar.total:
            bar.set_description(f"sampling (past the estimate of {bar.total:,} rows made on "
                                "the first batch)", refresh=False)
            bar.total = None
        bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
