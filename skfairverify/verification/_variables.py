"""The discrete variables of the verifier and their real-valued contributions.

Each column read by the linear rule, and each sensitive column, becomes one
multi-state variable:

* ``"binned"``: a numeric column with more distinct values than bins; its states
  are quantile bins of a :class:`~skfairverify.preprocessing.BinningDiscretizer`
  and state ``j`` contributes ``w * bin_mean_j`` to the decision;
* ``"values"``: a numeric column with few distinct values (at most the number of
  bins, e.g. a 0/1 column); one state per value, contributing ``w * value``
  exactly;
* ``"categories"``: a one-hot encoded (or any non-numeric) column; one state per
  category, contributing the category's coefficient.

A sensitive column that the rule does not read is a variable with contribution 0.

Rows are encoded in chunks of ``CHUNK_ROWS`` (:meth:`Encoding.codes`) into the smallest
unsigned integer type that holds every state (:func:`code_dtype`, one byte per value for
up to 256 states), and the decision scores of the rows are summed chunk by chunk
(:meth:`Encoding.scores`): beyond the codes and one score per row, the memory of the
encoding does not grow with the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from ..preprocessing import BinningDiscretizer
from ..rules import bin_of
from ..s3p import TableTooLargeError
from ..utils._categories import match_categories

__all__ = ["CHUNK_ROWS", "MAX_CODES_BYTES", "MAX_SENSITIVE_VALUES", "ColumnBins", "Encoding",
           "bins_formed", "check_network_columns",
           "Variable", "check_codes_size", "code_dtype", "distinct_numbers", "missing_fields",
           "ordered_states", "presence_variable", "row_chunks", "sorted_values"]

#: A numeric sensitive column with more distinct values than this is "continuous".
MAX_SENSITIVE_VALUES = 10
#: Rows encoded (and scored) at a time: the temporaries of a chunk (the float copy of
#: the binned columns, their bins, the states of the categories) do not grow with the rows.
CHUNK_ROWS = 2**18
#: Largest state-code matrix :meth:`Encoding.codes` allocates (bytes) by default.
MAX_CODES_BYTES = 8 * 2**30


def code_dtype(cardinalities) -> np.dtype:
    """Smallest unsigned integer type holding the codes ``0 .. max(cardinalities) - 1``.

    Parameters
    ----------
    cardinalities : list of int
        Number of states of each variable.

    Returns
    -------
    numpy.dtype
        ``uint8`` up to 256 states, then ``uint16``, ``uint32`` or ``uint64``.

    Examples
    --------
    >>> from skfairverify.verification._variables import code_dtype
    >>> code_dtype([2, 60, 256]), code_dtype([257]), code_dtype([])
    (dtype('uint8'), dtype('uint16'), dtype('uint8'))
    """
    largest = max((int(c) for c in cardinalities), default=1)
    for dtype in (np.uint8, np.uint16, np.uint32):
        if largest - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def check_codes_size(n_rows: int, cardinalities, max_bytes: int = MAX_CODES_BYTES) -> int:
    """Bytes of the state codes of ``n_rows`` rows; a TableTooLargeError beyond ``max_bytes``.

    Parameters
    ----------
    n_rows : int
        Number of rows to encode.
    cardinalities : list of int
        Number of states of every variable encoded.
    max_bytes : int, default=MAX_CODES_BYTES
        Largest size accepted.

    Returns
    -------
    int
        ``n_rows * n_variables * itemsize`` of :func:`code_dtype`.

    Examples
    --------
    >>> from skfairverify.verification._variables import check_codes_size
    >>> check_codes_size(10_000_000, [2, 5] + [60] * 11)
    130000000
    """
    cards = list(cardinalities)
    dtype = code_dtype(cards)
    n_bytes = int(n_rows) * len(cards) * dtype.itemsize
    if n_bytes > max_bytes:
        raise TableTooLargeError(
            f"The state codes of {int(n_rows):,} rows x {len(cards)} variables ({dtype}, "
            f"{dtype.itemsize} byte(s) each, for up to {max(cards)} states) would take "
            f"{n_bytes / 2**30:.2f} GiB, above the limit of {max_bytes / 2**30:.2f} GiB "
            "(MAX_CODES_BYTES). Verify a random sample of the rows, or use fewer states "
            "(lower max_bins / n_bins)."
        )
    return n_bytes


def ordered_states(encoding) -> list:
    """Per variable, whether its states are ordered bins that may be merged (the search).

    ``True`` for a binned variable, ``False`` for the others; a binned variable with a
    missing state: the number of its bins (the missing state is kept apart, never
    merged with the last bin).
    """
    out = []
    for v in encoding.variables:
        if v.kind != "binned":
            out.append(False)
        else:
            out.append(v.cardinality - 1 if v.missing else True)
    return out


def bins_formed(encoding, asked):
    """The bins the numeric variables actually have, and a note when fewer than asked.

    The most states of a non-sensitive numeric variable (its quantile bins once equal
    edges are merged, or its distinct values kept one state each; the missing state
    not counted) when that is below ``asked``; ``asked`` when no variable is numeric
    (or ``asked`` is None: a user network).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._variables import Encoding, Variable, bins_formed
    >>> enc = Encoding([Variable("x", "values", [0, 1, 2], np.zeros(3))])
    >>> bins_formed(enc, 10**6)
    (3, '; 3 formed: the numeric columns have fewer distinct values than 1000000 bins')
    """
    counts = [v.cardinality - int(v.missing) for v in encoding.variables
              if not v.sensitive and v.kind in ("binned", "values")]
    if asked is None or not counts or max(counts) >= asked:
        return asked, ""
    formed = max(counts)
    return formed, (f"; {formed} formed: the numeric columns have fewer distinct values "
                    f"than {asked} bins")


def row_chunks(n_rows: int, chunk: int | None = None) -> list[slice]:
    """Slices of at most ``chunk`` rows (``CHUNK_ROWS`` when None) covering the rows."""
    chunk = CHUNK_ROWS if chunk is None else int(chunk)
    return [slice(a, min(a + chunk, n_rows)) for a in range(0, n_rows, chunk)]


@dataclass
class Variable:
    """One discrete variable of the verifier."""

    name: str
    kind: str  # "binned", "rule_bins", "values", "categories" or "presence"
    states: list
    contribution: np.ndarray  # real contribution of every state to the decision
    sensitive: bool = False
    values: np.ndarray | None = None  # numeric value of every state ("binned", "values")
    widths: np.ndarray | None = None  # width of every bin within [min, max] ("binned")
    coef: float | None = None  # the rule's coefficient ("values" built from data)
    named_states: bool = False  # states are a user network's state names (strings)
    edges: np.ndarray | None = None  # bin edges ("binned")
    missing: bool = False  # the last state stands for a missing value (numeric kinds)
    missing_share: float = 0.0  # share of the rows (weight) with a missing value
    dtype: object = None  # dtype of the column (the groups' values keep it)
    closed: str = "left"  # the side of a bin's interval its edge belongs to ("binned")

    def support_distribution(self) -> np.ndarray:
        """Uniform distribution over the variable's support, as state probabilities.

        A binned variable: each bin's share of the observed range ``[min, max]``
        (FVGM Appendix E, "a uniform distribution within the support"); any other
        variable: uniform over its states. A missing state keeps the share of the rows
        with a missing value (missingness is not a value to spread uniformly), the
        observed states share the rest.
        """
        n_observed = self.cardinality - int(self.missing)
        if self.widths is None:
            observed = np.full(n_observed, 1.0 / max(n_observed, 1))
        else:
            observed = self.widths / self.widths.sum()
        if not self.missing:
            return observed
        return np.append((1.0 - self.missing_share) * observed, self.missing_share)

    def state_labels(self) -> list:
        """What every state stands for: a category, a value, a bin (an interval), NaN.

        A bin of the verifier's quantile bins or of the model's own bins is the
        left-closed interval of its edges, a cell of the tree path the right-closed
        interval between its cuts (``closed``); the outer bins open to infinity, since
        values beyond the outer edges fall in them. A missing state is NaN.
        """
        if self.kind not in ("binned", "rule_bins") or self.edges is None:
            return list(self.states)
        inner = np.asarray(self.edges, dtype=float)[1:-1]
        bounds = np.concatenate([[-np.inf], inner, [np.inf]])
        labels = [pd.Interval(float(a), float(b), closed=self.closed)
                  for a, b in zip(bounds[:-1], bounds[1:])]
        return labels + [np.nan] * int(self.missing)

    @property
    def cardinality(self) -> int:
        return len(self.states)


def _is_numeric(col: pd.Series) -> bool:
    return is_numeric_dtype(col) and not is_bool_dtype(col)


def _map_categories(col: pd.Series, states: list, name: str, *,
                    by_name: bool = False) -> np.ndarray:
    """State of every value of ``col``, by the package's one category rule.

    Values match states as everywhere else in the package
    (:func:`~skfairverify.utils._categories.match_categories`: ``1`` is ``1.0``, never
    ``"1"``; a missing value matches only a missing state), so the verifier's variables
    and the rule's indicators cannot disagree. ``by_name``: the states are the string
    names of a user-given network's states, which a value matches by its printed form.
    """
    if by_name:
        lookup = {str(s): k for k, s in reversed(list(enumerate(states)))}
        codes, uniques = pd.factorize(col.to_numpy(dtype=object), use_na_sentinel=False)
        remap = np.array([lookup.get(str(v), -1) for v in uniques], dtype=np.int64)
        out = remap[codes]
    elif isinstance(col.dtype, pd.CategoricalDtype):
        out = _match_categorical(col, states, name)
    else:
        values = col.to_numpy() if _is_numeric(col) else col
        out = match_categories(values, states, name=name)
    if (out < 0).any():
        shown = sorted({str(u) for u in col.to_numpy(dtype=object)[out < 0]})[:5]
        raise ValueError(
            f"Column {name!r} has values {shown} that are not states of its variable "
            f"(states: {[str(s) for s in states][:10]}): values not seen when the verifier "
            "was fitted, or, with a user BayesNet, values it has no state for."
        )
    return out


def _match_categorical(col: pd.Series, states: list, name: str) -> np.ndarray:
    """:func:`match_categories` of a categorical column, matching its categories only.

    The categories present in ``col`` (and a missing value, if any) are matched once;
    every row takes the position of its category: the same positions as matching the
    values row by row, without converting the rows to Python objects.
    """
    codes = col.cat.codes.to_numpy()
    cats = col.cat.categories
    present = np.bincount(codes[codes >= 0], minlength=len(cats)) > 0
    values = list(np.asarray(cats, dtype=object)[present])
    missing = bool((codes < 0).any())
    pos = match_categories(np.array(values + [np.nan] * missing, dtype=object), states,
                           name=name)
    remap = np.full(len(cats) + 1, -1, dtype=np.int64)  # the last entry: a missing value
    remap[np.flatnonzero(present)] = pos[: len(values)]
    if missing:
        remap[-1] = pos[-1]
    return remap[codes]


def _no_missing_state(name: str, n_missing: int) -> ValueError:
    return ValueError(
        f"Column {name!r} has {n_missing:,} missing value(s) (NaN), but its variable has "
        "no missing state: the rows it was built from (those of fit, or a user network's "
        "states) had none. Fit the verifier on data with the missing values, or give the "
        "network a state for them."
    )


def _match_known(values: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
    """State of every (observed) value of ``x`` among the numeric ``values`` of the states.

    A value must equal a state's value (up to floating-point round-off): the state's
    weight is ``w * value``, so mapping an uncovered value to the nearest state would
    give it another contribution silently.
    """
    if not len(x):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(values, kind="stable")
    v = values[order]
    idx = np.clip(np.searchsorted(v, x), 0, len(v) - 1)
    if len(v) > 1:
        left = np.clip(idx - 1, 0, len(v) - 1)
        idx = np.where(np.abs(x - v[left]) < np.abs(v[idx] - x), left, idx)
    covered = np.isclose(x, v[idx], rtol=1e-9, atol=1e-12) if len(v) else np.zeros(
        len(x), dtype=bool)
    if not covered.all():
        shown = np.unique(x[~covered])
        raise ValueError(
            f"Variable {name!r}: the value(s) {shown[:10].tolist()}"
            f"{' ...' if len(shown) > 10 else ''} of the data are not states of the "
            f"variable (its states stand for {v[:20].tolist()}"
            f"{' ...' if len(v) > 20 else ''}). Give the network a state for every value "
            "of the column, or map the column onto the states before verifying."
        )
    return order[idx]


def _match_values(values: np.ndarray, x: np.ndarray, name: str,
                  missing: bool = False) -> np.ndarray:
    """State of every value of ``x``: its value's state, a missing value the last state.

    ``missing``: the last state of ``values`` (NaN) stands for a missing value.
    """
    nan = np.isnan(x)
    if not nan.any():
        return _match_known(values[:-1] if missing else values, x, name)
    if not missing:
        raise _no_missing_state(name, int(nan.sum()))
    out = np.full(len(x), len(values) - 1, dtype=np.int64)
    out[~nan] = _match_known(values[:-1], x[~nan], name)
    return out


def _with_missing(codes: np.ndarray, x: np.ndarray, variable) -> np.ndarray:
    """``codes`` with the rows where ``x`` is missing in the variable's missing state."""
    nan = np.isnan(x)
    if not nan.any():
        return codes
    if not variable.missing:
        raise _no_missing_state(variable.name, int(nan.sum()))
    codes = np.array(codes, dtype=np.int64, copy=True)
    codes[nan] = variable.cardinality - 1
    return codes


def _kind(c, col: pd.Series, rule, read, sensitive, n_bins: int) -> str:
    """The kind of the variable of column ``c`` (see the module docstring)."""
    if c in (getattr(rule, "binned_features", None) or {}):
        return "rule_bins"
    if c in rule.categorical_features or (c not in read and not _is_numeric(col)):
        return "categories"
    if c not in sensitive and c not in rule.numeric_features and c in rule.missing_features:
        return "presence"
    if c in sensitive or col.nunique() <= n_bins:
        return "values"
    return "binned"


def _contributions(rule, name: str, values) -> np.ndarray:
    """The rule's contribution of every value (0 without a rule, or for a column unread)."""
    if rule is None or name not in rule.read_columns:
        return np.zeros(len(values))
    return rule.contribution(name, pd.Series(list(values), dtype=object))


def _missing_share(col: pd.Series, sample_weight) -> float:
    """Share of the rows (of their weight) where ``col`` is missing."""
    nan = col.isna().to_numpy()
    if not nan.any():
        return 0.0
    if sample_weight is None:
        return float(nan.mean())
    w = np.asarray(sample_weight, dtype=float)
    return float(w[nan].sum() / w.sum())


def missing_fields(col: pd.Series, sample_weight) -> dict:
    """``missing`` and ``missing_share`` of the variable of a numeric column."""
    share = _missing_share(col, sample_weight)
    return {"missing": bool(col.isna().any()), "missing_share": share, "dtype": col.dtype}


def _rule_bins_variable(rule, name: str, col: pd.Series, edges, sensitive: bool,
                        sample_weight=None):
    """A column the model bins itself: one state per bin of the rule, contributing exactly.

    The model's pipeline bins the column (KBinsDiscretizer, BinningDiscretizer). The
    state of a value is the rule's own bin (``bin_of``; values beyond the outer edges
    fall in the outer bins); a bin contributes its coefficient, plus ``coef * x`` at
    the bin's mean when the rule also reads the raw value (the mean of the data in the
    bin, or its midpoint when no row falls in it). A missing value (the pipeline
    imputes it) is a state of its own, with the imputed value's contribution.
    """
    edges = np.asarray(edges, dtype=float)
    x = col.to_numpy(dtype=float, na_value=np.nan)
    x = x[~np.isnan(x)]
    codes = bin_of(x, edges)
    n = len(edges) - 1
    sums = np.bincount(codes, weights=x, minlength=n)
    counts = np.bincount(codes, minlength=n)
    mids = (edges[:-1] + edges[1:]) / 2
    means = np.where(counts > 0, sums / np.maximum(counts, 1), mids)
    contrib = rule.bin_coef(name).to_numpy(dtype=float).copy()
    w = float(rule.coef[name]) if name in rule.numeric_features else 0.0
    if w:
        contrib = contrib + w * means
    extra = missing_fields(col, sample_weight)
    states = list(range(n))
    if extra["missing"]:
        states, means = states + [np.nan], np.append(means, np.nan)
        contrib = np.append(contrib, _contributions(rule, name, [np.nan]))
    return Variable(name, "rule_bins", states, contrib, sensitive, values=means,
                    widths=_bin_widths(edges, col), edges=edges, **extra)


def _bin_widths(edges: np.ndarray, col: pd.Series) -> np.ndarray:
    """Width of every bin within the observed range ``[min, max]`` of ``col``."""
    lo, hi = float(col.min()), float(col.max())
    inner = np.clip(np.asarray(edges, dtype=float)[1:-1], lo, hi)
    return np.diff(np.concatenate([[lo], inner, [hi]]))


class ColumnBins:
    """Quantile bins fitted column by column, each on the rows where its column is observed.

    The verifier's binning when a binned column has missing values: one
    :class:`~skfairverify.preprocessing.BinningDiscretizer` per column, fitted on that
    column's observed values (and their weights), so that the rows where it is missing
    do not move its quantiles; those rows are the variable's missing state. Its
    ``bin_edges_``, ``bin_means_``, ``n_bins_`` and :meth:`bin_index` are those of one
    BinningDiscretizer of all the columns (and equal them when no value is missing).

    Parameters
    ----------
    discretizers : list of BinningDiscretizer
        One fitted discretizer of one column per binned column.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.preprocessing import BinningDiscretizer
    >>> from skfairverify.verification._variables import ColumnBins
    >>> x = np.arange(10.0)[:, None]
    >>> bins = ColumnBins([BinningDiscretizer(n_bins=2).fit(x),
    ...                    BinningDiscretizer(n_bins=5).fit(x)])
    >>> bins.n_bins_.tolist(), bins.bin_index(np.array([[0.0, 9.0]])).tolist()
    ([2, 5], [[0, 4]])
    """

    def __init__(self, discretizers):
        self.discretizers = list(discretizers)
        self.bin_edges_ = [np.asarray(d.bin_edges_[0], dtype=float) for d in self.discretizers]
        self.bin_means_ = [np.asarray(d.bin_means_[0], dtype=float) for d in self.discretizers]
        self.n_bins_ = np.array([int(d.n_bins_[0]) for d in self.discretizers], dtype=np.int64)

    def bin_index(self, X) -> np.ndarray:
        """Bin of every (finite) value, column by column, as an ``int64`` matrix."""
        X = np.asarray(X, dtype=float)
        out = np.empty(X.shape, dtype=np.int64)
        for j, disc in enumerate(self.discretizers):
            out[:, j] = disc.bin_index(X[:, [j]])[:, 0]
        return out


def _fit_bins(values, n_bins, random_state, sample_weight):
    """Quantile bins of ``values`` (weighted with ``sample_weight`` when given).

    One :class:`BinningDiscretizer` of all the columns; when a column has missing values,
    a :class:`ColumnBins` (each column binned on its observed values).
    """
    nan = np.isnan(values)

    def fit(x, w):
        disc = BinningDiscretizer(n_bins=n_bins, strategy="quantile",
                                  random_state=random_state)
        return disc.fit(x, sample_weight=w)

    if not nan.any():
        return fit(values, sample_weight)
    return ColumnBins([
        fit(values[~nan[:, j], j][:, None],
            None if sample_weight is None else np.asarray(sample_weight)[~nan[:, j]])
        for j in range(values.shape[1])
    ])


def sorted_values(values) -> list:
    """Distinct values sorted (by their text when they do not compare), a missing one last."""
    observed = [v for v in values if not pd.isna(v)]
    try:
        observed = sorted(observed)
    except TypeError:
        observed = sorted(observed, key=str)
    return observed + [np.nan] * (len(observed) < len(values))


def _seen_values(col: pd.Series) -> list:
    """Distinct values of ``col`` and the declared categories of a categorical dtype.

    A categorical column: its categories (all declared, observed or not) and a missing
    value if any, read from the categories rather than from the rows.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        seen = list(np.asarray(col.cat.categories, dtype=object))
        if (col.cat.codes.to_numpy() < 0).any():
            seen.append(np.nan)
        return seen
    seen = list(pd.unique(col.to_numpy(dtype=object)))
    observed = [v for v in seen if not pd.isna(v)]
    return observed + [np.nan] * (len(observed) < len(seen))  # one missing value


def distinct_numbers(col: pd.Series) -> list:
    """Sorted distinct values of a numeric column, as Python numbers (NaN last if any)."""
    numbers = sorted(pd.unique(col.dropna().to_numpy()).tolist())
    return numbers + [np.nan] * bool(col.isna().any())


def _category_variable(name, col, rule, sensitive) -> Variable:
    """A categorical column: the rule's categories, then the other values seen (sorted).

    Declared categories absent from these rows (e.g. a rare category of a training
    split) stay states, so that other data can be verified with the same variables;
    smoothing gives them some mass. A missing value is a category of its own,
    contributing as the model reads it (an imputed category, or an encoder's own).
    """
    states = list(rule.categorical_features.get(name, [])) if rule is not None else []
    seen = _seen_values(col)
    pos = match_categories(np.array(seen, dtype=object), states, name=name)
    states = states + sorted_values([v for v, p in zip(seen, pos) if p < 0])
    return Variable(name, "categories", states, _contributions(rule, name, states),
                    sensitive, dtype=col.dtype)


def _values_variable(name, col, rule, sensitive, sample_weight) -> Variable:
    """A numeric column with few values: one state per value, a missing one last."""
    states = distinct_numbers(col)
    vals = np.asarray(states, dtype=float)
    w = float(rule.coef[name]) if rule is not None and name in rule.numeric_features else 0.0
    return Variable(name, "values", states, _contributions(rule, name, states), sensitive,
                    values=vals, coef=w, **missing_fields(col, sample_weight))


def presence_variable(name, col, rule, sample_weight) -> Variable:
    """A column the model reads only through its missing-value indicator: two states."""
    states = ["observed", np.nan]
    return Variable(name, "presence", states, _contributions(rule, name, states),
                    **missing_fields(col, sample_weight))


def _binned_variable(name, col, rule, sensitive, edges, means, sample_weight) -> Variable:
    """A numeric column in quantile bins (state ``j`` at its bin's mean), a missing state last."""
    means = np.asarray(means, dtype=float)
    w = float(rule.coef[name]) if rule is not None and name in rule.numeric_features else 0.0
    contrib, states = w * means, list(range(len(means)))
    extra = missing_fields(col, sample_weight)
    if extra["missing"]:
        states, means = states + [np.nan], np.append(means, np.nan)
        contrib = np.append(contrib, _contributions(rule, name, [np.nan]))
    return Variable(name, "binned", states, contrib, sensitive, values=means,
                    widths=_bin_widths(edges, col), edges=np.asarray(edges, dtype=float),
                    **extra)


def _with_missing_state(v: Variable, rule) -> Variable:
    """``v`` with a missing state (NaN) after its states, contributing as the rule reads it."""
    values = None if v.values is None else np.append(v.values, np.nan)
    return replace(v, states=list(v.states) + [np.nan], values=values,
                   contribution=np.append(v.contribution,
                                          _contributions(rule, v.name, [np.nan])),
                   missing=v.kind != "categories")


def _new_values(v: Variable, x: np.ndarray) -> Variable:
    """A ``"values"`` variable with a state (``coef * value``) for every new value of ``x``."""
    x = np.unique(pd.unique(x[~np.isnan(x)]))  # hash, then sort
    observed = v.values[:-1] if v.missing else v.values
    seen = np.isclose(x[:, None], observed[None, :], rtol=1e-9, atol=1e-12)
    new = x[~seen.any(axis=1)]
    if not new.size:
        return v
    vals = np.sort(np.concatenate([observed, new]))
    contrib = v.coef * vals
    states = vals.tolist()
    if v.missing:
        vals, contrib = np.append(vals, np.nan), np.append(contrib, v.contribution[-1])
        states = states + [np.nan]
    return replace(v, states=states, contribution=contrib, values=vals)


def check_network_columns(network, columns) -> None:
    """Refuse a user-given network that has no variable for some of ``columns``."""
    missing = [c for c in columns if c not in network.names]
    if missing:
        raise ValueError(
            f"The given network has no variable for the column(s) {missing}; its "
            f"variables are {network.names}. Name the variables after the columns."
        )


class Encoding:
    """Variables built from a rule, the sensitive columns and data; maps rows to codes."""

    def __init__(self, variables: list[Variable], discretizer=None, binned=(), rule=None):
        self.variables = variables
        self.discretizer = discretizer
        self.binned = list(binned)
        self.rule = rule  # the linear rule the contributions come from (None: zeros)

    # -------------------------------------------------------------- construction
    @classmethod
    def from_data(cls, X: pd.DataFrame, rule, sensitive: list[str], n_bins: int, random_state,
                  bin_rows=None, sample_weight=None):
        """Variables of ``rule`` and ``sensitive`` with ``n_bins`` quantile bins.

        The bins (and their means) are fitted on the rows ``bin_rows`` of ``X`` (all
        when None), weighted by ``sample_weight`` (one weight per row of ``X``) when
        given; the states of discrete and categorical columns come from all rows. A
        missing value of a numeric column is a state of its own after the bins (or the
        values), of a categorical column a category; it contributes as the model reads
        it (the imputed value, with its indicator; :meth:`LinearRule.contribution`).
        """
        read = rule.read_columns
        names = list(sensitive) + [c for c in rule.feature_names_in if c in read
                                   and c not in sensitive]
        kinds = {c: _kind(c, X[c], rule, read, sensitive, n_bins) for c in names}
        return cls._build(X, names, kinds, rule, sensitive, n_bins, random_state, bin_rows,
                          sample_weight)

    @classmethod
    def from_columns(cls, X: pd.DataFrame, sensitive: list[str], n_bins: int, random_state,
                     sample_weight=None):
        """Variables of every column of ``X`` for the sampling path (no contributions).

        The sensitive columns come first, as in :meth:`from_data`. A numeric column
        with more than ``n_bins`` distinct values is ``"binned"`` into quantile bins
        (weighted by ``sample_weight``), one with fewer (or a sensitive one) keeps a
        state per value (``"values"``), any other column (object, category, bool) a
        state per category (``"categories"``, with the declared categories of a
        categorical dtype). A missing value is a state of its own (NaN, drawn as NaN
        for the model). Contributions are 0: the model itself is evaluated.
        """
        names = list(sensitive) + [c for c in X.columns if c not in sensitive]
        kinds = {}
        for c in names:
            col = X[c]
            if not _is_numeric(col):
                kinds[c] = "categories"
            elif c in sensitive or col.nunique() <= n_bins:
                kinds[c] = "values"
            else:
                kinds[c] = "binned"
        return cls._build(X, names, kinds, None, sensitive, n_bins, random_state, None,
                          sample_weight)

    @classmethod
    def _build(cls, X, names, kinds, rule, sensitive, n_bins, random_state, bin_rows,
               sample_weight):
        """The variables of ``names`` of the given ``kinds`` (the bins fitted once)."""
        binned = [c for c in names if kinds[c] == "binned"]
        disc = None
        if binned:
            rows = slice(None) if bin_rows is None else bin_rows
            weight = None if sample_weight is None else sample_weight[rows]
            disc = _fit_bins(X[binned].iloc[rows].to_numpy(dtype=float), n_bins,
                             random_state, weight)
        variables = []
        for c in names:
            col, sens, kind = X[c], c in sensitive, kinds[c]
            if kind == "categories":
                variables.append(_category_variable(c, col, rule, sens))
            elif kind == "values":
                variables.append(_values_variable(c, col, rule, sens, sample_weight))
            elif kind == "presence":
                variables.append(presence_variable(c, col, rule, sample_weight))
            elif kind == "rule_bins":
                variables.append(_rule_bins_variable(rule, c, col, rule.binned_features[c],
                                                     sens, sample_weight))
            else:
                j = binned.index(c)
                variables.append(_binned_variable(c, col, rule, sens, disc.bin_edges_[j],
                                                  disc.bin_means_[j], sample_weight))
        return cls(variables, disc, binned, rule)

    @classmethod
    def from_network(cls, network, rule, sensitive: list[str]):
        """Variables of a user-given network (state names carry values or categories)."""
        if getattr(rule, "binned_features", None):
            raise ValueError(
                f"The model bins the column(s) {list(rule.binned_features)} itself; a given "
                "network's states cannot be matched to its bins. Use network='learn' or "
                "'independent'."
            )
        check_network_columns(network, list(sensitive) + list(rule.numeric_features)
                              + list(rule.categorical_features))
        variables = []
        for i, name in enumerate(network.names):
            states = list(network.state_names[i])
            sens = name in sensitive
            if name in rule.categorical_features:
                coef = rule.category_coef(name)
                lookup = {str(k): float(v) for k, v in coef.items()}
                contrib = np.array([lookup.get(str(s), 0.0) for s in states])
                variables.append(Variable(name, "categories", states, contrib, sens,
                                          named_states=True))
            elif name in rule.numeric_features:
                try:
                    vals = np.array([float(s) for s in states])
                except (TypeError, ValueError):
                    raise ValueError(
                        f"Variable {name!r} of the given network is a numeric input of the "
                        f"model, so its state names must be numbers (the value each state "
                        f"stands for); got {states}."
                    ) from None
                w = float(rule.coef[name])
                variables.append(Variable(name, "values", states, w * vals, sens,
                                          values=vals, named_states=True))
            else:
                variables.append(
                    Variable(name, "categories", states, np.zeros(len(states)), sens,
                             named_states=True)
                )
        return cls(variables)

    def covering(self, X: pd.DataFrame) -> Encoding:
        """Return the encoding with a state for every value of ``X`` of its discrete columns.

        A non-sensitive numeric variable with one state per value (built from data) gets
        a new state, contributing ``coef * value`` exactly, for each value of ``X`` it
        has no state for (e.g. a rare value absent from the rows of ``fit``); a variable
        built from data whose column has missing values in ``X`` but had none before
        gets a missing state, contributing as the rule reads a missing value; the other
        variables are unchanged. Used by ``verify``, which learns the network again.
        """
        variables = []
        for v in self.variables:
            if not (v.sensitive or v.named_states) and v.name in X.columns:
                col = X[v.name]
                if v.kind == "values" and v.coef is not None:
                    v = _new_values(v, col.to_numpy(dtype=float, na_value=np.nan))
                has_state = v.missing or (v.kind == "categories"
                                          and any(pd.isna(s) for s in v.states))
                if not has_state and v.kind != "presence" and col.isna().any():
                    v = _with_missing_state(v, self.rule)
            variables.append(v)
        return type(self)(variables, self.discretizer, self.binned, self.rule)

    # -------------------------------------------------------------- use
    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def cardinalities(self) -> list[int]:
        return [v.cardinality for v in self.variables]

    def index(self, name: str) -> int:
        return self.names.index(name)

    def state_labels(self) -> list[list]:
        """What the states of every variable stand for (:meth:`Variable.state_labels`)."""
        return [v.state_labels() for v in self.variables]

    def group_values(self, i: int, codes) -> pd.Series:
        """The values of variable ``i``'s states ``codes``, in its column's dtype.

        A numeric or boolean column keeps its dtype (an integer sensitive column gives
        integers), any other column its values as they are.
        """
        v = self.variables[i]
        values = pd.Series([v.states[int(s)] for s in codes], name=v.name)
        dtype = v.dtype
        if dtype is not None and (is_numeric_dtype(dtype) or is_bool_dtype(dtype)) \
                and not isinstance(dtype, pd.CategoricalDtype):
            try:
                return values.astype(dtype)
            except (TypeError, ValueError):
                return values
        return values

    def codes(self, X: pd.DataFrame, only=None, *, max_bytes: int = MAX_CODES_BYTES
              ) -> np.ndarray:
        """State code of every row for every variable (or the variables in ``only``).

        A pure function of the rows of ``X`` (a chunk of rows gets the codes of those
        rows), in the smallest unsigned type of the variables' cardinalities
        (:func:`code_dtype`). The rows are encoded ``CHUNK_ROWS`` at a time; the codes
        are refused beyond ``max_bytes`` (:func:`check_codes_size`) before anything
        is allocated.
        """
        variables = self.variables if only is None else [self.variables[i] for i in only]
        missing = [v.name for v in variables if v.name not in X.columns]
        if missing:
            raise ValueError(f"X lacks the column {missing[0]!r} used by the verifier.")
        cards = [v.cardinality for v in variables]
        check_codes_size(len(X), cards, max_bytes)
        out = np.empty((len(X), len(variables)), dtype=code_dtype(cards))
        for rows in row_chunks(len(X)):
            out[rows] = self._chunk_codes(X.iloc[rows], variables)
        return out

    def _chunk_codes(self, X: pd.DataFrame, variables) -> np.ndarray:
        """Codes (int64) of the rows of one chunk ``X``, one column per variable.

        A missing value of a numeric variable is its missing state (the last one), of
        a categorical variable its missing category.
        """
        out = np.empty((len(X), len(variables)), dtype=np.int64)
        raw = bins = None
        if self.binned and any(v.kind == "binned" for v in variables):
            raw = X[self.binned].to_numpy(dtype=float, na_value=np.nan)
            bins = self.discretizer.bin_index(np.where(np.isnan(raw), 0.0, raw))
        for k, v in enumerate(variables):
            col = X[v.name]
            if v.kind == "binned":
                j = self.binned.index(v.name)
                out[:, k] = _with_missing(bins[:, j], raw[:, j], v)
            elif v.kind == "rule_bins":
                x = col.to_numpy(dtype=float, na_value=np.nan)
                out[:, k] = _with_missing(bin_of(np.where(np.isnan(x), 0.0, x), v.edges), x, v)
            elif v.kind == "presence":
                out[:, k] = col.isna().to_numpy()
            elif v.kind == "values" and not v.sensitive:
                out[:, k] = _match_values(v.values, col.to_numpy(dtype=float, na_value=np.nan),
                                          v.name, v.missing)
            else:
                out[:, k] = _map_categories(col, v.states, v.name, by_name=v.named_states)
        return out

    def contributions(self, codes: np.ndarray) -> np.ndarray:
        """Real contribution of every variable for every row of ``codes``.

        An ``(n_rows, n_variables)`` float matrix: for sums over the variables use
        :meth:`scores`, which does not build it.
        """
        cols = [v.contribution[codes[:, k]] for k, v in enumerate(self.variables)]
        return np.column_stack(cols) if cols else np.zeros((len(codes), 0))

    def scores(self, codes: np.ndarray, weights=None) -> np.ndarray:
        """Sum over the variables of the weight of every row's state.

        Parameters
        ----------
        codes : ndarray of shape (n_rows, n_variables)
            State codes of the rows (:meth:`codes`), one column per variable.
        weights : list of ndarray, default=None
            The weight of every state of every variable, e.g. the integer weights of
            the verified rule (``rint(l * contribution)``); None: the real
            contributions. Integer weights give exact int64 sums.

        Returns
        -------
        ndarray of shape (n_rows,)
            ``sum_k weights[k][codes[:, k]]``, accumulated ``CHUNK_ROWS`` rows at a time
            (no ``(n_rows, n_variables)`` matrix), in int64 for integer weights and
            float64 otherwise.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify.verification._variables import Encoding, Variable
        >>> enc = Encoding([Variable("a", "values", [0, 1], np.array([0.0, 0.5])),
        ...                 Variable("x", "binned", [0, 1, 2], np.array([-1.0, 0.0, 2.0]))])
        >>> codes = np.array([[0, 0], [1, 2], [1, 1]], dtype=np.uint8)
        >>> enc.scores(codes).tolist()
        [-1.0, 2.5, 0.5]
        >>> enc.scores(codes, [np.array([0, 5]), np.array([-10, 0, 20])]).tolist()
        [-10, 25, 5]
        """
        if weights is None:
            weights = [v.contribution for v in self.variables]
        weights = [np.asarray(w) for w in weights]
        if len(weights) != codes.shape[1]:
            raise ValueError(f"scores needs one weight table per column of codes "
                             f"({codes.shape[1]}); got {len(weights)}.")
        integer = all(w.dtype.kind in "iu" for w in weights)
        tables = [w.astype(np.int64 if integer else np.float64) for w in weights]
        out = np.zeros(len(codes), dtype=np.int64 if integer else np.float64)
        for rows in row_chunks(len(codes)):
            part = out[rows]
            for k, table in enumerate(tables):
                part += table[codes[rows, k]]
        return out
