"""FairnessVerifier on a dask DataFrame: exact counts over all rows, partition by partition.

What runs where (``docs/scale.md``):

* **one pass over the partitions** (workers, reduced by a dask tree of merges): the rows,
  the missing values of every column, the distinct values of the columns the model reads
  and of the sensitive columns (at most ``cap`` kept for a numeric column, with its
  minimum and maximum), the labels, the weights, the root mean square of the rule's
  decision function (the scale of the integer rule), and a uniform random sample of
  ``sample_rows`` rows (each row gets a random key, every merge keeps the smallest keys);
* **on the sample** (client, pandas): the quantile edges of the bins and the automatic
  choice of the bins and the multiplier, with the pandas code of the verifier; the
  states of every variable come from the sample plus one row per distinct value (and
  the minimum and maximum) of every column read, so a value outside the sample still has
  its state;
* **a second pass** (workers, reduced by a dask tree of merges): the state codes of
  every row, in the smallest unsigned integer type, the rule's decision and the label,
  reduced to the *distinct* (codes, decision, label) rows with their counts (the sums of
  their weights), and the sums that give the exact mean of every bin over all rows.
  Every count the verifier makes (the structure search, the networks' tables and their
  posterior draws, the group supports, the agreement) is a sum over rows of a function
  of these columns, hence the same sum over the distinct rows weighted by their counts:
  the client receives only the distinct rows (at most the product of the
  cardinalities, times 4), and learns the networks from them as the pandas path does
  with weighted rows. Every merge checks the size of its table
  (``TableTooLargeError`` beyond ``8 * max_table_size`` bytes).

With every row in the sample (``n_rows <= sample_rows``) the bins are those of pandas,
so the metrics are the same; beyond it the quantile edges come from the sample, the bin
means and every count from all rows.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from .._optional import import_optional
from ..s3p import TableTooLargeError
from ._checks import check_binary, positive_labels
from ._paths import select_path
from ._population import Observed
from ._quantization import Quantized
from ._trees_path import tree_decisions
from ._trees_states import state_indicators
from ._variables import MAX_SENSITIVE_VALUES, Encoding

__all__ = [
    "SAMPLE_ROWS", "DaskRows", "FixedCodes", "check_client_size", "gather_codes",
    "is_dask_collection", "key_bound", "partition_statistics", "smallest_keys",
    "summary_frame",
]

#: Default size of the random sample (``FairnessVerifier(sample_rows=...)``).
SAMPLE_ROWS = 200_000
#: Partitions merged per node of the reduction tree, and computed per batch.
FAN_IN = 8
# Columns of the sample besides those of X (labels, weights, order, random key).
_Y, _W, _PART, _POS, _KEY = ("__skfv_y__", "__skfv_w__", "__skfv_part__", "__skfv_pos__",
                             "__skfv_key__")


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a dask DataFrame or Series (without importing dask).

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.verification._dask import is_dask_collection
    >>> is_dask_collection(pd.DataFrame({"a": [1]}))
    False
    """
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "npartitions")


def _is_numeric(col: pd.Series) -> bool:
    return is_numeric_dtype(col) and not is_bool_dtype(col)


# ---------------------------------------------------------------- the inputs
@dataclass
class DaskRows:
    """X, y and sample_weight as one dask DataFrame (labels and weights as columns).

    Joined before the partitions are taken, so that the partitions of the three line up
    whatever dask's optimizer does with each collection.
    """

    frame: object
    columns: list  # the columns of X
    has_y: bool
    has_weight: bool

    @classmethod
    def check(cls, X, y, sample_weight) -> DaskRows:
        """Refuse what the dask path cannot read; y and the weights must align with X."""
        dd = import_optional("dask.dataframe", "dask input")
        if not isinstance(X, dd.DataFrame):
            raise TypeError(
                f"X must be a dask.dataframe.DataFrame on the dask path; got {type(X).__name__}."
            )
        if not all(isinstance(c, str) for c in X.columns):
            raise ValueError(
                "The columns of a dask X must be named by strings; got "
                f"{list(X.columns)[:10]}."
            )
        extra = {}
        for name, key, s in (("y", _Y, y), ("sample_weight", _W, sample_weight)):
            if s is None:
                continue
            if not isinstance(s, dd.Series):
                raise TypeError(
                    f"With a dask X, {name} must be a dask Series with the partitions of X "
                    f"(e.g. ddf[{'label'!r}]) or None; got {type(s).__name__}."
                )
            if s.npartitions != X.npartitions:
                raise ValueError(
                    f"{name} has {s.npartitions} partitions and X {X.npartitions}: take both "
                    "from the same dask DataFrame (X = ddf.drop(columns=...), y = ddf[...])."
                )
            extra[key] = s
        frame = X
        if extra:
            try:
                frame = X.assign(**extra)
            except (ValueError, NotImplementedError) as exc:
                raise ValueError(
                    "y and sample_weight must line up with the rows of X: take them from the "
                    "same dask DataFrame (X = ddf.drop(columns=...), y = ddf[...])."
                ) from exc
        return cls(frame, list(X.columns), y is not None, sample_weight is not None)

    def delayed(self) -> list:
        """The partitions (X's columns, then the labels and weights) as delayed objects."""
        return self.frame.to_delayed()


def _split(part: pd.DataFrame, columns):
    """X, y (or None) and the weights (or None) of one joined partition."""
    return (part[columns], part[_Y] if _Y in part else None,
            part[_W] if _W in part else None)


def _kept_rows(part, y, w):
    """The rows of positive weight (a weight of 0 is the same as no row)."""
    if w is None:
        return part, y, None
    weight = w.to_numpy(dtype=float)
    if not np.isfinite(weight).all() or (weight < 0).any():
        return part.iloc[:0], None if y is None else y.iloc[:0], weight[:0]
    keep = weight > 0
    return part[keep], None if y is None else y[keep], weight[keep]


# ---------------------------------------------------------------- first pass
@dataclass
class _Stats:
    """What the first pass reduces over the partitions."""

    n_rows: int
    bad_weights: int  # NaN, infinite or negative
    weight_sum: float
    nan: pd.Series  # column -> missing values
    values: dict  # column -> distinct values (at most cap + 1 of a numeric column)
    many: set  # numeric columns with more than cap distinct values
    lo: dict
    hi: dict
    labels: np.ndarray  # distinct non-missing labels (at most 11)
    label_nan: int
    top: float  # max |decision|
    scaled_sq: float  # sum of w * (decision / top) ** 2
    sample: pd.DataFrame


def _distinct(values: np.ndarray) -> np.ndarray:
    try:
        return np.unique(values)
    except TypeError:  # mixed types in an object column
        return pd.unique(values)


def _column_stats(stats: dict, col: pd.Series, name: str, cap: int) -> None:
    x = col.dropna()
    if _is_numeric(col):
        u = np.unique(x.to_numpy())
        if u.size:
            stats["lo"][name], stats["hi"][name] = u[0], u[-1]
        if u.size > cap:
            stats["many"].add(name)
            u = u[: cap + 1]
        stats["values"][name] = u
    else:
        stats["values"][name] = pd.unique(x.to_numpy(dtype=object))


def _partition_stats(joined, x_columns, index, columns, cap, rule, sample_rows, seed,
                     below=1.0) -> tuple[_Stats, pd.DataFrame]:
    """The statistics of one partition and its sampled rows (those of keys below ``below``).

    Module level: shipped to the workers. The statistics are merged by the reduction
    tree; the sampled rows go to the client (:func:`smallest_keys`).
    """
    part, y, w = _split(joined, x_columns)
    nan = part.isna().sum()
    bad = 0
    if w is not None:
        raw = w.to_numpy(dtype=float)
        bad = int(np.sum(~(np.isfinite(raw) & (raw >= 0))))
    part, y, weight = _kept_rows(part, y, w)
    stats = {"values": {}, "many": set(), "lo": {}, "hi": {}}
    for c in columns:
        _column_stats(stats, part[c], c, cap)
    labels, label_nan = np.array([], dtype=object), 0
    if y is not None:
        yy = y.to_numpy(dtype=object)
        missing = pd.isna(yy)
        label_nan = int(missing.sum())
        labels = pd.unique(yy[~missing])[:11]
    top, scaled_sq = 0.0, 0.0
    if rule is not None and len(part):
        d = np.asarray(rule.decision_function(part), dtype=float)
        top = float(np.max(np.abs(d))) if np.isfinite(d).all() else np.nan
        if top > 0:
            scaled_sq = float(np.sum((d / top) ** 2 * (1.0 if weight is None else weight)))
    rng = np.random.default_rng([seed, index])
    keys = rng.random(len(part))
    pick = np.flatnonzero(keys < below)
    if len(pick) > sample_rows:
        pick = np.sort(pick[np.argpartition(keys[pick], sample_rows - 1)[:sample_rows]])
    sample = part.iloc[pick].reset_index(drop=True)
    extra = {_Y: None if y is None else y.iloc[pick].to_numpy(),
             _W: None if weight is None else weight[pick],
             _PART: index, _POS: pick, _KEY: keys[pick]}
    sample = sample.assign(**{k: v for k, v in extra.items() if v is not None})
    return _Stats(len(part), bad, float(len(part) if weight is None else weight.sum()),
                  nan, stats["values"], stats["many"], stats["lo"],
                  stats["hi"], labels, label_nan, top, scaled_sq, None), sample


def _merge_values(a, b, numeric: bool, cap: int):
    if numeric:
        u = np.union1d(a, b)
        return u, u.size > cap
    return pd.unique(np.concatenate([np.asarray(a, dtype=object),
                                     np.asarray(b, dtype=object)])), False


def _merge_two(a: _Stats, b: _Stats, cap: int) -> _Stats:
    values, many = {}, a.many | b.many
    for c in a.values:
        numeric = c in a.lo or c in b.lo or (a.values[c].dtype.kind in "iuf")
        u, over = _merge_values(a.values[c], b.values[c], numeric, cap)
        if over:
            many.add(c)
            u = u[: cap + 1]
        values[c] = u
    lo = {c: min(v for v in (a.lo.get(c), b.lo.get(c)) if v is not None)
          for c in set(a.lo) | set(b.lo)}
    hi = {c: max(v for v in (a.hi.get(c), b.hi.get(c)) if v is not None)
          for c in set(a.hi) | set(b.hi)}
    top = max(a.top, b.top)
    scaled_sq = sum(s.scaled_sq * (s.top / top) ** 2 for s in (a, b) if s.top > 0)
    labels = pd.unique(np.concatenate([a.labels, b.labels]).astype(object))[:11]
    return _Stats(a.n_rows + b.n_rows, a.bad_weights + b.bad_weights,
                  a.weight_sum + b.weight_sum, a.nan + b.nan, values, many, lo, hi, labels,
                  a.label_nan + b.label_nan, top, scaled_sq, None)


def _merge_many(items, cap) -> _Stats:
    return functools.reduce(functools.partial(_merge_two, cap=cap), items)


def smallest_keys(samples, sample_rows: int) -> pd.DataFrame:
    """The rows of the ``sample_rows`` smallest keys of the partitions' samples, in order."""
    sample = pd.concat(list(samples), ignore_index=True)
    if len(sample) > sample_rows:
        sample = sample.iloc[np.argpartition(sample[_KEY].to_numpy(), sample_rows - 1)
                             [:sample_rows]]
    return sample.sort_values([_PART, _POS], kind="stable").reset_index(drop=True)


def key_bound(n_rows: int, sample_rows: int) -> float:
    """Random keys below this bound enter the partitions' samples.

    The ``sample_rows`` smallest of ``n_rows`` uniform keys lie below it unless fewer than
    ``sample_rows`` of the (binomially many, about ``sample_rows + 6 sqrt(sample_rows)``)
    keys below it exist, a six-standard-deviation event (or rows of weight 0 are
    dropped); the caller then doubles the bound and starts again. The partitions send
    about ``sample_rows`` rows to the client in all, never the data.
    """
    if n_rows <= sample_rows:
        return 1.0
    return min(1.0, (sample_rows + 6.0 * np.sqrt(sample_rows) + 10.0) / n_rows)


def partition_statistics(rows: DaskRows, columns, *, cap, rule, sample_rows, seed) -> _Stats:
    """The first pass: statistics of every partition, merged by a dask reduction tree.

    The sample is the rows of the ``sample_rows`` smallest random keys (a uniform sample
    without replacement); each partition sends the rows of its keys below
    :func:`key_bound` of the rows (``len`` of the frame: parquet metadata, or a pass)
    straight to the client, so no worker holds more than its partition.
    """
    dask = import_optional("dask", "dask input")
    below = key_bound(len(rows.frame), sample_rows)
    merge = functools.partial(_merge_many, cap=cap)
    while True:
        pairs = [dask.delayed(_partition_stats, nout=2)(p, rows.columns, i, list(columns),
                                                        cap, rule, sample_rows, seed, below)
                 for i, p in enumerate(rows.delayed())]
        nodes = [stats for stats, _ in pairs]
        while len(nodes) > 1:
            nodes = [dask.delayed(merge)(nodes[i:i + FAN_IN])
                     for i in range(0, len(nodes), FAN_IN)]
        stats, *samples = dask.compute(nodes[0], *[sample for _, sample in pairs])
        stats.sample = smallest_keys(samples, sample_rows)
        if below >= 1.0 or len(stats.sample) >= min(sample_rows, stats.n_rows):
            return stats
        below = min(1.0, 2.0 * below)  # too few keys below the bound: a larger one


def summary_frame(stats: _Stats, X_columns, columns) -> tuple[pd.DataFrame, int]:
    """The sample, then (when it lacks rows) one row per distinct value of every column.

    Returns the frame and the number of sample rows at its top. The added rows copy the
    first sampled row, with column ``c`` set to each of its distinct values (and its
    minimum and maximum): the states of every variable are then those of all rows, while
    the bins are fitted on the sample rows only.
    """
    sample = stats.sample[list(X_columns)]
    if len(sample) == stats.n_rows:
        return sample, len(sample)
    parts = [sample]
    base = sample.iloc[[0]]
    for c in columns:
        vals = stats.values[c]
        if c in stats.lo:
            vals = np.unique(np.concatenate([vals, [stats.lo[c], stats.hi[c]]]))
        if len(vals) == 0:
            continue
        rep = base.loc[base.index.repeat(len(vals))].reset_index(drop=True)
        rep[c] = pd.Series(vals, dtype=sample[c].dtype)
        parts.append(rep)
    return pd.concat(parts, ignore_index=True), len(sample)


def sample_labels_weights(stats: _Stats):
    """Labels and weights of the sampled rows (None where not given)."""
    s = stats.sample
    return (s[_Y].to_numpy() if _Y in s else None,
            s[_W].to_numpy(dtype=float) if _W in s else None)


def decision_scale_of(stats: _Stats) -> float:
    """Root mean square of the decision function over all (weighted) rows."""
    if not np.isfinite(stats.top):
        raise ValueError(
            "The decision function holds NaN or infinite values on rows of X; its scale "
            "is undefined."
        )
    if stats.top == 0.0:
        return 1.0
    return stats.top * float(np.sqrt(stats.scaled_sq / stats.weight_sum))


# ---------------------------------------------------------------- second pass
def code_dtype(cardinalities) -> np.dtype:
    """Smallest unsigned integer type holding every state code."""
    return np.min_scalar_type(max(max(cardinalities, default=1) - 1, 0))


def row_bytes(n_vars: int, dtype) -> int:
    """Bytes of one distinct row on the client: codes, decision, label and count.

    The decision and the label take one byte each beyond the codes, the count 8.
    """
    return n_vars * np.dtype(dtype).itemsize + 2 + 8


def check_client_size(n_distinct: int, n_vars: int, dtype, max_table_size: int) -> None:
    """TableTooLargeError when the distinct rows would exceed ``8 * max_table_size`` bytes.

    Checked at every merge of the reduction (on the workers), so the client never
    receives a larger table.
    """
    size = n_distinct * row_bytes(n_vars, dtype)
    budget = 8 * max_table_size
    if size > budget:
        raise TableTooLargeError(
            f"The dask path reduces the rows to their distinct (state codes, decision, "
            f"label) rows with their counts: already {n_distinct:,} distinct rows x "
            f"{n_vars} variables ({size / 2**20:,.0f} MiB with their counts), beyond "
            f"8 * max_table_size = {budget / 2**20:,.0f} MiB. Use fewer states (lower "
            "max_bins / n_bins: fewer distinct rows), raise max_table_size (the client "
            "must hold that memory), or verify fewer columns."
        )


def _bin_sums(codes, part, encoding, weight) -> dict:
    """Per binned variable: rows, sum of x, weight, sum of w * x in every state."""
    out = {}
    for k, v in enumerate(encoding.variables):
        if v.kind not in ("binned", "rule_bins"):
            continue
        x = part[v.name].to_numpy(dtype=float)
        c, r = codes[:, k].astype(np.intp), v.cardinality
        w = np.ones(len(x)) if weight is None else weight
        out[k] = np.stack([np.bincount(c, minlength=r).astype(float),
                           np.bincount(c, weights=x, minlength=r),
                           np.bincount(c, weights=w, minlength=r),
                           np.bincount(c, weights=w * x, minlength=r)])
    return out


def _distinct(table: np.ndarray, weight: np.ndarray, square: np.ndarray):
    """Distinct rows of ``table``, the sums of ``weight`` and of ``square`` over each's rows."""
    if not len(table):
        return table, weight, square
    rows, inverse = np.unique(table, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return (rows, np.bincount(inverse, weights=weight, minlength=len(rows)),
            np.bincount(inverse, weights=square, minlength=len(rows)))


def _partition_table(joined, x_columns, encoding, rule, positive, dtype):
    """The distinct rows of one partition and their counts (workers).

    A row of the table is the state codes of a row of data, then the rule's decision
    and the label (0/1 columns, when used); its count is the number of rows (the sum of
    their weights) that have it. Every count the verifier makes (the structure search,
    the networks' tables and their posterior, the group supports, the agreement) is a
    sum over rows of a function of these columns, so it is the same sum over the
    distinct rows weighted by their counts. The sums of the squared weights are kept
    too (the bootstrap of the population estimate draws a distinct row's weight from
    them, as pandas's rows one by one).
    """
    part, y, weight = _kept_rows(*_split(joined, x_columns))
    codes = np.asarray(encoding.codes(part))
    sums = _bin_sums(codes, part, encoding, weight)
    columns = [codes.astype(dtype, copy=False)]
    if rule is not None:
        columns.append((np.asarray(rule.decision_function(part), dtype=float) > 0)
                       .astype(dtype)[:, None])
    if y is not None:
        columns.append((y.to_numpy(dtype=object) == positive).astype(dtype)[:, None])
    w = np.ones(len(part)) if weight is None else np.asarray(weight, dtype=float)
    rows, counts, squares = _distinct(np.hstack(columns), w, w * w)
    return rows, counts, squares, sums, len(part)


def _merge_tables(budget_args, *parts):
    """Merge partitions' distinct rows (summing their counts) and bin sums (workers)."""
    rows, counts, squares = _distinct(np.concatenate([p[0] for p in parts]),
                                      np.concatenate([p[1] for p in parts]),
                                      np.concatenate([p[2] for p in parts]))
    check_client_size(len(rows), *budget_args)
    sums: dict = {}
    for p in parts:
        for k, v in p[3].items():
            sums[k] = sums[k] + v if k in sums else v
    return rows, counts, squares, sums, sum(p[4] for p in parts)


@dataclass
class Gathered:
    """The distinct rows gathered on the client, with their counts (``weight``).

    ``square``: the sums of the squared weights of every distinct row's rows (its count
    without sample weights).
    """

    codes: np.ndarray
    reference: np.ndarray | None
    y_pos: np.ndarray | None
    weight: np.ndarray
    sums: dict
    square: np.ndarray | None = None


def gather_codes(rows: DaskRows, n_rows: int, encoding, *, rule, positive, labels: bool,
                 max_table_size: int) -> Gathered:
    """The second pass: the distinct rows and their counts, reduced by the workers.

    Every partition reduces its rows to their distinct (codes, decision, label) rows with
    their counts (the sum of their weights); a dask tree of merges (``FAN_IN`` at a time)
    sums the counts of equal rows and the bin sums, checking the size of every merged
    table (:func:`check_client_size`). The client receives the distinct rows only.
    """
    dask = import_optional("dask", "dask input")
    n_vars = len(encoding.variables)
    dtype = code_dtype(encoding.cardinalities)
    budget = (n_vars, dtype, max_table_size)
    nodes = [dask.delayed(_partition_table)(p, rows.columns, encoding, rule, positive, dtype)
             for p in rows.delayed()]
    while len(nodes) > FAN_IN:
        nodes = [dask.delayed(_merge_tables)(budget, *nodes[i:i + FAN_IN])
                 for i in range(0, len(nodes), FAN_IN)]
    table, counts, squares, sums, read = dask.compute(
        dask.delayed(_merge_tables)(budget, *nodes))[0]
    if read != n_rows:  # pragma: no cover - the data changed between the passes
        raise RuntimeError(f"The second pass read {read} rows, the first {n_rows}.")
    at = n_vars
    reference = None
    if rule is not None:
        reference, at = table[:, at].astype(bool), at + 1
    y_pos = table[:, at].astype(bool) if labels else None
    return Gathered(np.ascontiguousarray(table[:, :n_vars]), reference, y_pos, counts, sums,
                    squares)


def exact_bin_means(encoding, sums: dict, rule, *, tree: bool):
    """The encoding with the mean of every bin over all rows (as pandas computes it).

    Binned columns of the linear path: the weighted mean of the rows in the bin (the
    midpoint of an empty bin, as before); the model's own bins (``rule_bins``) and the
    cells of the tree path: the unweighted mean (the tree's cells clipped inside the
    cell). The contributions follow the means.
    """
    variables = list(encoding.variables)
    disc = encoding.discretizer
    new_means = {}
    for k, (count, sx, mass, swx) in sums.items():
        v = variables[k]
        weighted = v.kind == "binned" and not tree
        total, s = (mass, swx) if weighted else (count, sx)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(total > 0, s / np.where(total > 0, total, 1.0), v.values)
        if tree:
            cells = disc.cells(encoding.binned.index(v.name))
            means = np.clip(means, np.nextafter(cells[:, 0], np.inf), cells[:, 1])
            variables[k] = replace(v, values=means)
            continue
        coef = float(rule.coef[v.name]) if v.name in rule.numeric_features else 0.0
        if v.kind == "binned":
            contrib = coef * means
            new_means[encoding.binned.index(v.name)] = means
        else:
            contrib = rule.bin_coef(v.name).to_numpy(dtype=float).copy()
            if coef:
                contrib = contrib + coef * means
        variables[k] = replace(v, values=means, contribution=contrib)
    if new_means:
        disc = _with_means(disc, new_means)
    return type(encoding)(variables, disc, encoding.binned)


def _with_means(disc, new_means: dict):
    disc = copy.deepcopy(disc)
    disc.bin_means_ = [new_means.get(j, m) for j, m in enumerate(disc.bin_means_)]
    return disc


class FixedCodes:
    """An encoding whose ``codes`` are those gathered from the partitions.

    The verifier's pandas code reads the codes of its rows through ``encoding.codes``;
    this proxy hands it the gathered ones (``frame`` is ignored) and delegates the rest.
    """

    def __init__(self, encoding, codes):
        self._encoding = encoding
        self._codes = codes

    def codes(self, X=None, only=None) -> np.ndarray:
        return self._codes if only is None else self._codes[:, list(only)]

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_encoding", "_codes"):  # pickling, copies
            raise AttributeError(name)
        return getattr(self._encoding, name)


def chunked_agreements(agreements, encoding, gathered: Gathered, multipliers,
                       chunk_rows: int = 1 << 18) -> np.ndarray:
    """``agreements`` (the verifier's ``_agreements``) over chunks of the gathered rows.

    The weighted share of agreeing rows of every chunk, averaged with the chunk's weight.
    """
    n = len(gathered.codes)
    total = np.zeros(len(multipliers))
    mass = 0.0
    for start in range(0, n, chunk_rows):
        sl = slice(start, min(start + chunk_rows, n))
        w = None if gathered.weight is None else gathered.weight[sl]
        m = float(sl.stop - sl.start) if w is None else float(w.sum())
        if m == 0:
            continue
        proxy = FixedCodes(encoding, gathered.codes[sl])
        total += m * np.asarray(agreements(proxy, None, gathered.reference[sl], multipliers, w))
        mass += m
    return total / mass


# ---------------------------------------------------------------- the verifier
#: Rows of the first partition read to choose the path (the rule or the tree is read
#: from the fitted model; these rows only feed the pandas code that reads it).
HEAD_ROWS = 256
#: Rows sampled by ``verify`` (which fits no bins: the sample only carries the dtypes).
VERIFY_SAMPLE_ROWS = 1_000


def fitted_estimator(estimator):
    """The fitted model as a FrozenEstimator; NotFittedError naming what to do otherwise."""
    from sklearn.exceptions import NotFittedError
    from sklearn.frozen import FrozenEstimator
    from sklearn.utils.validation import check_is_fitted

    inner = estimator.estimator if isinstance(estimator, FrozenEstimator) else estimator
    try:
        check_is_fitted(inner)
    except NotFittedError as exc:
        raise NotFittedError(
            f"With a dask X the estimator must already be fitted: fitting "
            f"{type(inner).__name__} on out-of-core data is not the verifier's job. Fit it on "
            "a sample (model.fit(X.sample(frac=...).compute(), ...)) or with dask-ml, and "
            "pass FrozenEstimator(model)."
        ) from exc
    return estimator if isinstance(estimator, FrozenEstimator) else FrozenEstimator(estimator)


def _head(X) -> pd.DataFrame:
    """A few complete rows of ``X`` (first partition, else all partitions)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Insufficient elements", category=UserWarning)
        head = X.head(HEAD_ROWS, npartitions=1).dropna()
        if len(head) == 0:
            head = X.dropna().head(HEAD_ROWS, npartitions=-1)
    if len(head) == 0:
        raise ValueError("X has no row without missing values; FairnessVerifier needs data.")
    return head


def _as_row_counts(ev, rows: DaskRows):
    """The supports as numbers of rows (integers, as pandas's) without sample weights.

    They are summed from the counts of the distinct rows (floats).
    """
    if not rows.has_weight:
        ev.groups["support"] = np.rint(ev.groups["support"]).astype(np.int64)
    return ev


def check_dask_call(settings, sensitive_features, method: str) -> None:
    """Refuse what a dask ``X`` cannot take: values apart, unnamed columns, a BayesNet."""
    if sensitive_features is not None:
        raise ValueError(
            f"With a dask X, name the sensitive columns of X in the constructor "
            f"(FairnessVerifier(estimator, sensitive_features=[...])); {method}(..., "
            "sensitive_features=values) takes pandas or numpy data only."
        )
    raw = settings.sensitive_features
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError(
            "With a dask X, sensitive_features must name columns of X (a string or a "
            f"list of strings); got {type(raw).__name__}."
        )
    if settings.user_network:
        raise ValueError(
            "A user BayesNet is not supported with a dask X; use network='learn' or "
            "'independent', or pass pandas data."
        )


class DaskSource:
    """The rows of a dask DataFrame as the verifier's steps read them.

    A first pass summarises the partitions (:func:`partition_statistics`: the frame
    of distinct and sampled values the bins are chosen on); a second gathers the
    distinct rows' state codes with their weights (:func:`gather_codes`); the path
    then evaluates them as it evaluates pandas rows.

    Parameters
    ----------
    settings : Settings
        The verifier's parameters.
    rows : DaskRows
        ``X``, ``y`` and ``sample_weight`` checked (:meth:`DaskRows.check`).
    """

    def __init__(self, settings, rows: DaskRows):
        self.settings = settings
        self.rows = rows

    def _cap(self) -> int:
        """Distinct values kept per numeric column: enough to tell ``nunique <= n_bins``."""
        s = self.settings
        fixed = int(s.n_bins) if s.n_bins != "auto" else 0
        return max(s.max_bins, fixed, MAX_SENSITIVE_VALUES) + 1

    def select_path(self, estimator, X):
        """The path of ``estimator`` (refused when it is the sampling path)."""
        path = select_path(self.settings, estimator, _head(X), None, None,
                           feature_names=[], input_labels=None)
        if path.name == "sampling":
            raise TypeError(
                f"{self.settings.estimator_name} has no exact path (a linear classifier or "
                "a decision tree), and the sampling path does not take a dask X: verify it "
                "on a pandas sample (X.sample(frac=...).compute()), which the sampling path "
                "needs only to learn the network."
            )
        return path

    def columns(self, path) -> list[str]:
        """The sensitive columns and the columns the path's model reads."""
        raw = self.settings.sensitive_features
        sens = [raw] if isinstance(raw, str) else list(raw)
        read = path.rule.feature_names_in if path.kind == "linear" else path.leaves.read
        return list(dict.fromkeys(sens + [c for c in read if c in self.rows.columns]))

    def statistics(self, columns, rule, sample_rows, *, fitting: bool, classes):
        """The first pass and its checks: the statistics, summary frame and sample size."""
        rows = self.rows
        missing = [c for c in columns if c not in rows.columns]
        if missing:
            raise ValueError(f"X lacks the column(s) {missing} used by the verifier; "
                             f"columns: {rows.columns[:20]}.")
        stats = partition_statistics(rows, columns, cap=self._cap(), rule=rule,
                                     sample_rows=sample_rows, seed=self.settings.seed())
        nan_cols = [c for c, k in stats.nan.items() if k > 0]
        if nan_cols:
            raise ValueError(
                f"X contains missing values (NaN) in the column(s) {nan_cols}: the dask "
                "path does not take missing values (a pandas X does: a state of their "
                "own); impute or drop them before verifying, or compute X to pandas."
            )
        if stats.bad_weights:
            raise ValueError(
                f"sample_weight has {stats.bad_weights} NaN, infinite or negative value(s); "
                "weights must be finite and non-negative."
            )
        if stats.n_rows < (2 if fitting else 1) or stats.weight_sum <= 0:
            raise ValueError(
                f"X has {stats.n_rows} row(s) of positive weight; FairnessVerifier needs at "
                "least 2 (two groups)."
            )
        self._check_labels(stats, classes)
        summary, n_sample = summary_frame(stats, rows.columns, columns)
        return stats, summary, n_sample

    def _check_labels(self, stats, classes) -> None:
        if not self.rows.has_y:
            return
        if stats.label_nan:
            raise ValueError(
                f"y contains missing labels ({stats.label_nan} NaN/None); a label must be "
                f"one of the estimator's classes {classes.tolist()}. Drop or impute "
                "those rows."
            )
        labels = np.asarray(stats.labels, dtype=object)
        check_binary(labels)
        positive_labels(labels, len(labels), classes)

    def encode(self, path, stats, frame, n_sample, sensitive) -> Quantized:
        """The variables of the summary frame: bins chosen on its sample of rows."""
        _, w_sample = sample_labels_weights(stats)
        w_summary = w_sample
        if w_sample is not None or n_sample < len(frame):  # the added rows weigh 0
            w_summary = np.zeros(len(frame))
            w_summary[:n_sample] = 1.0 if w_sample is None else w_sample
        if path.kind != "linear":
            return path.encode(frame, sensitive, w_summary)
        path.rescale(decision_scale_of(stats))
        k, l, why = path.quantizer.choose(frame.iloc[:n_sample], sensitive, w_sample)
        on = "" if n_sample == stats.n_rows else f" (on a sample of {n_sample} rows)"
        encoding = Encoding.from_data(frame, path.unit_rule, sensitive, k,
                                      self.settings.random_state,
                                      bin_rows=np.arange(n_sample), sample_weight=w_summary)
        return Quantized(encoding, [l] + path.quantizer.smaller(l), k, f"{k} bins: {why}{on}")

    def gather(self, path, stats, encoding, positive, *, exact_means: bool):
        """The second pass: the distinct rows' codes (and the bins' exact means)."""
        linear = path.kind == "linear"
        unit = path.unit_rule if linear else None
        gathered = gather_codes(self.rows, stats.n_rows, encoding, rule=unit,
                                positive=positive, labels=self.rows.has_y,
                                max_table_size=self.settings.max_table_size)
        if exact_means:
            encoding = exact_bin_means(encoding, gathered.sums, unit, tree=not linear)
        return gathered, encoding

    def _observed(self, gathered: Gathered, path, encoding):
        """The model's decisions on the gathered distinct rows, with their squared weights.

        The linear rule's decision is gathered with the codes; the tree's is a function of
        the codes (its states are refined at the thresholds). The distinct rows' sums of
        weights and of squared weights give the bootstrap pandas's rows give, and the
        draws' rule of the linear path the effective number of rows of each group that
        pandas's rows give (:func:`._draw_rule.effective_rows`), with or without the
        population estimate. None on the tree path with ``n_bootstrap=0``.
        """
        decisions = gathered.reference
        if decisions is None:
            if self.settings.n_bootstrap == 0:
                return None
            decisions = tree_decisions(state_indicators(encoding, path.leaves),
                                       gathered.codes)
        return Observed(decisions, gathered.square)

    def evaluate(self, path, variables, gathered, multipliers):
        """The path's evaluation of the gathered rows and the agreement (1 for a tree)."""
        encoding = variables.encoding
        proxy = FixedCodes(encoding, gathered.codes)
        observed = self._observed(gathered, path, encoding)
        ev = _as_row_counts(path.evaluate(variables, None, gathered.y_pos, proxy, multipliers,
                                          gathered.weight, observed), self.rows)
        if path.kind != "linear":
            return ev, 1.0
        agreement = chunked_agreements(path.quantizer.agreements, encoding, gathered,
                                       [ev.multiplier])[0]
        return ev, float(agreement)
