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

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from .._linear import bin_of
from ..preprocessing import BinningDiscretizer
from ..s3p import TableTooLargeError
from ..utils._categories import match_categories

__all__ = ["CHUNK_ROWS", "MAX_CODES_BYTES", "MAX_SENSITIVE_VALUES", "Encoding", "Variable",
           "check_codes_size", "code_dtype", "row_chunks"]

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


def row_chunks(n_rows: int, chunk: int | None = None) -> list[slice]:
    """Slices of at most ``chunk`` rows (``CHUNK_ROWS`` when None) covering the rows."""
    chunk = CHUNK_ROWS if chunk is None else int(chunk)
    return [slice(a, min(a + chunk, n_rows)) for a in range(0, n_rows, chunk)]


@dataclass
class Variable:
    """One discrete variable of the verifier."""

    name: str
    kind: str  # "binned", "rule_bins", "values" or "categories"
    states: list
    contribution: np.ndarray  # real contribution of every state to the decision
    sensitive: bool = False
    values: np.ndarray | None = None  # numeric value of every state ("binned", "values")
    widths: np.ndarray | None = None  # width of every bin within [min, max] ("binned")
    coef: float | None = None  # the rule's coefficient ("values" built from data)
    named_states: bool = False  # states are a user network's state names (strings)
    edges: np.ndarray | None = None  # bin edges ("binned")

    def support_distribution(self) -> np.ndarray:
        """Uniform distribution over the variable's support, as state probabilities.

        A binned variable: each bin's share of the observed range ``[min, max]``
        (FVGM Appendix E, "a uniform distribution within the support"); any other
        variable: uniform over its states.
        """
        if self.widths is None:
            return np.full(self.cardinality, 1.0 / self.cardinality)
        return self.widths / self.widths.sum()

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
    ``"1"``), so the verifier's variables and the rule's indicators cannot disagree.
    ``by_name``: the states are the string names of a user-given network's states, which
    a value matches by its printed form.
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


def _match_values(values: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
    """State of every value of ``x`` among the numeric ``values`` of the states.

    A value must equal a state's value (up to floating-point round-off): the state's
    weight is ``w * value``, so mapping an uncovered value to the nearest state would
    give it another contribution silently.
    """
    order = np.argsort(values, kind="stable")
    v = values[order]
    idx = np.clip(np.searchsorted(v, x), 0, len(v) - 1)
    if len(v) > 1:
        left = np.clip(idx - 1, 0, len(v) - 1)
        idx = np.where(np.abs(x - v[left]) < np.abs(v[idx] - x), left, idx)
    covered = np.isclose(x, v[idx], rtol=1e-9, atol=1e-12)
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


def _kind(c, col: pd.Series, rule, read, sensitive, n_bins: int) -> str:
    """The kind of the variable of column ``c`` (see the module docstring)."""
    if c in (getattr(rule, "binned_features", None) or {}):
        return "rule_bins"
    if c in rule.categorical_features or (c not in read and not _is_numeric(col)):
        return "categories"
    if c in sensitive or col.nunique() <= n_bins:
        return "values"
    return "binned"


def _rule_bins_variable(rule, name: str, col: pd.Series, edges, sensitive: bool):
    """A column the model bins itself: one state per bin of the rule, contributing exactly.

    The model's pipeline bins the column (KBinsDiscretizer, BinningDiscretizer). The
    state of a value is the rule's own bin (``bin_of``; values beyond the outer edges
    fall in the outer bins); a bin contributes its coefficient, plus ``coef * x`` at
    the bin's mean when the rule also reads the raw value (the mean of the data in the
    bin, or its midpoint when no row falls in it).
    """
    edges = np.asarray(edges, dtype=float)
    x = col.to_numpy(dtype=float)
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
    return Variable(name, "rule_bins", list(range(n)), contrib, sensitive, values=means,
                    widths=_bin_widths(edges, col), edges=edges)


def _bin_widths(edges: np.ndarray, col: pd.Series) -> np.ndarray:
    """Width of every bin within the observed range ``[min, max]`` of ``col``."""
    lo, hi = float(col.min()), float(col.max())
    inner = np.clip(np.asarray(edges, dtype=float)[1:-1], lo, hi)
    return np.diff(np.concatenate([[lo], inner, [hi]]))


def _fit_bins(values, n_bins, random_state, sample_weight):
    """Quantile bins of ``values`` (weighted with ``sample_weight`` when given)."""
    disc = BinningDiscretizer(n_bins=n_bins, strategy="quantile", random_state=random_state)
    return disc.fit(values, sample_weight=sample_weight)


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
    return list(pd.unique(col.to_numpy(dtype=object)))


def _distinct_numbers(col: pd.Series) -> list:
    """Sorted distinct values of a numeric column, as Python numbers."""
    return sorted(pd.unique(col.to_numpy()).tolist())


def _observed_categories(col: pd.Series) -> list:
    """Sorted values of ``col`` and the declared categories of a categorical dtype."""
    seen = _seen_values(col)
    try:
        return sorted(seen)
    except TypeError:
        return sorted(seen, key=str)


class Encoding:
    """Variables built from a rule, the sensitive columns and data; maps rows to codes."""

    def __init__(self, variables: list[Variable], discretizer=None, binned=()):
        self.variables = variables
        self.discretizer = discretizer
        self.binned = list(binned)

    # -------------------------------------------------------------- construction
    @classmethod
    def from_data(cls, X: pd.DataFrame, rule, sensitive: list[str], n_bins: int, random_state,
                  bin_rows=None, sample_weight=None):
        """Variables of ``rule`` and ``sensitive`` with ``n_bins`` quantile bins.

        The bins (and their means) are fitted on the rows ``bin_rows`` of ``X`` (all
        when None), weighted by ``sample_weight`` (one weight per row of ``X``) when
        given; the states of discrete and categorical columns come from all rows.
        """
        rule_bins = dict(getattr(rule, "binned_features", {}) or {})
        read = (list(rule.numeric_features) + list(rule.categorical_features)
                + list(rule_bins))
        names = list(sensitive) + [c for c in rule.feature_names_in if c in read
                                   and c not in sensitive]
        specs = [(c, _kind(c, X[c], rule, read, sensitive, n_bins)) for c in names]
        binned = [c for c, kind in specs if kind == "binned"]
        disc = None
        if binned:
            rows = slice(None) if bin_rows is None else bin_rows
            weight = None if sample_weight is None else sample_weight[rows]
            disc = _fit_bins(X[binned].iloc[rows].to_numpy(dtype=float), n_bins,
                             random_state, weight)
        variables = []
        for c, kind in specs:
            sens = c in sensitive
            col = X[c]
            if kind == "categories":
                states = list(rule.categorical_features.get(c, []))
                # Declared categories absent from these rows (e.g. a rare category of a
                # training split) stay states, so that other data can be verified with
                # the same variables; smoothing gives them some mass.
                seen = _seen_values(col)
                pos = match_categories(seen, states, name=c)
                extra = [v for v, p in zip(seen, pos) if p < 0]
                try:
                    extra = sorted(extra)
                except TypeError:
                    extra = sorted(extra, key=str)
                states = states + extra
                if c in rule.categorical_features:
                    coef = rule.category_coef(c)
                    contrib = np.array(
                        [float(coef.iloc[k]) if k < len(coef) else 0.0
                         for k in range(len(states))]
                    )
                else:
                    contrib = np.zeros(len(states))
                variables.append(Variable(c, kind, states, contrib, sens))
            elif kind == "values":
                states = _distinct_numbers(col)
                vals = np.asarray(states, dtype=float)
                w = float(rule.coef[c]) if c in rule.numeric_features else 0.0
                variables.append(Variable(c, kind, states, w * vals, sens, values=vals,
                                          coef=w))
            elif kind == "rule_bins":
                variables.append(_rule_bins_variable(rule, c, col, rule_bins[c], sens))
            else:
                j = binned.index(c)
                means = np.asarray(disc.bin_means_[j], dtype=float)
                w = float(rule.coef[c])
                states = list(range(len(means)))
                variables.append(Variable(c, kind, states, w * means, sens, values=means,
                                          widths=_bin_widths(disc.bin_edges_[j], col),
                                          edges=np.asarray(disc.bin_edges_[j], dtype=float)))
        return cls(variables, disc, binned)

    @classmethod
    def from_columns(cls, X: pd.DataFrame, sensitive: list[str], n_bins: int, random_state,
                     sample_weight=None):
        """Variables of every column of ``X`` for the sampling path (no contributions).

        The sensitive columns come first, as in :meth:`from_data`. A numeric column
        with more than ``n_bins`` distinct values is ``"binned"`` into quantile bins
        (weighted by ``sample_weight``), one with fewer (or a sensitive one) keeps a
        state per value (``"values"``), any other column (object, category, bool) a
        state per category (``"categories"``, with the declared categories of a
        categorical dtype). Contributions are 0: the model itself is evaluated.
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
        binned = [c for c in names if kinds[c] == "binned"]
        disc = None
        if binned:
            disc = _fit_bins(X[binned].to_numpy(dtype=float), n_bins, random_state,
                             sample_weight)
        variables = []
        for c in names:
            col, sens = X[c], c in sensitive
            if kinds[c] == "categories":
                states = _observed_categories(col)
                variables.append(Variable(c, "categories", states, np.zeros(len(states)),
                                          sens))
            elif kinds[c] == "values":
                states = _distinct_numbers(col)
                vals = np.asarray(states, dtype=float)
                variables.append(Variable(c, "values", states, np.zeros(len(states)), sens,
                                          values=vals, coef=0.0))
            else:
                j = binned.index(c)
                means = np.asarray(disc.bin_means_[j], dtype=float)
                variables.append(Variable(c, "binned", list(range(len(means))),
                                          np.zeros(len(means)), sens, values=means,
                                          widths=_bin_widths(disc.bin_edges_[j], col),
                                          edges=np.asarray(disc.bin_edges_[j], dtype=float)))
        return cls(variables, disc, binned)

    @classmethod
    def from_network(cls, network, rule, sensitive: list[str]):
        """Variables of a user-given network (state names carry values or categories)."""
        if getattr(rule, "binned_features", None):
            raise ValueError(
                f"The model bins the column(s) {list(rule.binned_features)} itself; a given "
                "network's states cannot be matched to its bins. Use network='learn' or "
                "'independent'."
            )
        read = list(rule.numeric_features) + list(rule.categorical_features)
        missing = [c for c in list(sensitive) + read if c not in network.names]
        if missing:
            raise ValueError(
                f"The given network has no variable for the column(s) {missing}; its "
                f"variables are {network.names}. Name the variables after the columns."
            )
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
        has no state for (e.g. a rare value absent from the rows of ``fit``); the other
        variables are unchanged. Used by ``verify``, which learns the network again.
        """
        variables = []
        for v in self.variables:
            if v.kind == "values" and not v.sensitive and v.coef is not None:
                x = np.unique(pd.unique(X[v.name].to_numpy(dtype=float)))  # hash, then sort
                seen = np.isclose(x[:, None], v.values[None, :], rtol=1e-9, atol=1e-12)
                new = x[~seen.any(axis=1)]
                if new.size:
                    vals = np.sort(np.concatenate([v.values, new]))
                    v = Variable(v.name, v.kind, vals.tolist(), v.coef * vals, v.sensitive,
                                 values=vals, coef=v.coef)
            variables.append(v)
        return type(self)(variables, self.discretizer, self.binned)

    # -------------------------------------------------------------- use
    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def cardinalities(self) -> list[int]:
        return [v.cardinality for v in self.variables]

    def index(self, name: str) -> int:
        return self.names.index(name)

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
        """Codes (int64) of the rows of one chunk ``X``, one column per variable."""
        out = np.empty((len(X), len(variables)), dtype=np.int64)
        bins = None
        if self.binned and any(v.kind == "binned" for v in variables):
            bins = self.discretizer.bin_index(X[self.binned].to_numpy(dtype=float))
        for k, v in enumerate(variables):
            col = X[v.name]
            if v.kind == "binned":
                out[:, k] = bins[:, self.binned.index(v.name)]
            elif v.kind == "rule_bins":
                out[:, k] = bin_of(col.to_numpy(dtype=float), v.edges)
            elif v.kind == "values":
                if v.sensitive:
                    out[:, k] = _map_categories(col, v.states, v.name,
                                                by_name=v.named_states)
                else:
                    out[:, k] = _match_values(v.values, col.to_numpy(dtype=float), v.name)
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
