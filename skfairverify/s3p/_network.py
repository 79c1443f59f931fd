"""A small discrete Bayesian network container (pure numpy)."""

from __future__ import annotations

import heapq
import warnings
from collections.abc import Sequence

import numpy as np

from ._errors import DEFAULT_MAX_TABLE_SIZE, TableTooLargeError

_ROW_TOL = 1e-6
#: What :meth:`BayesNet.from_pgmpy` reads of a pgmpy model.
_PGMPY_METHODS = ("nodes", "get_cpds", "get_parents")


def _as_int(value, what: str) -> int:
    """Return ``value`` as a Python int or raise a ValueError naming ``what``."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} must be an integer, got the boolean {value!r}.")
    try:
        as_int = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{what} must be an integer, got {value!r}.") from None
    if as_int != value:
        raise ValueError(f"{what} must be an integer, got {value!r}.")
    return as_int


def _check_names(names, n: int) -> list[str]:
    """Return unique variable names, ``X0 .. X{n-1}`` by default."""
    if names is None:
        return [f"X{i}" for i in range(n)]
    names = [str(name) for name in names]
    if len(names) != n:
        raise ValueError(f"names has {len(names)} entries but there are {n} variables.")
    seen = set()
    for name in names:
        if name in seen:
            raise ValueError(f"Duplicate variable name {name!r} in names.")
        seen.add(name)
    return names


class BayesNet:
    """Discrete Bayesian network over multi-state variables.

    Variables are referred to by their index ``0 .. n_variables - 1``. Each
    variable ``i`` has ``cardinalities[i]`` states, a tuple of parent indices
    ``parents[i]`` and a conditional probability table ``cpts[i]`` of shape
    ``(*[cardinalities[p] for p in parents[i]], cardinalities[i])`` whose last
    axis (the distribution of variable ``i`` given one assignment of its
    parents) sums to one.

    The object is immutable by convention: :meth:`replace_cpt` returns a new
    network.

    Parameters
    ----------
    cardinalities : list of int
        Number of states of each variable (at least 1).
    parents : list of tuple of int
        Parent indices of each variable. The graph must be acyclic.
    cpts : list of ndarray
        Conditional probability tables, see above. Entries must be
        non-negative; a row summing to one within ``1e-6`` is renormalised
        silently, a larger deviation raises a ValueError.
    names : list of str, default=None
        Variable names; ``"X0" .. "X{n-1}"`` when None. Must be unique.
    state_names : list of list, default=None
        Names of the states of each variable; ``list(range(card))`` when None.

    Attributes
    ----------
    cardinalities : list of int
        Number of states of each variable.
    parents : list of tuple of int
        Parent indices of each variable.
    cpts : list of ndarray
        Validated (float64, renormalised) conditional probability tables.
    names : list of str
        Variable names.
    state_names : list of list
        State names of each variable.
    n_variables : int
        Number of variables.

    See Also
    --------
    positive_probability : Exact probability that an integer score reaches a
        threshold under this network.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> net = BayesNet(
    ...     cardinalities=[2, 2],
    ...     parents=[(), (0,)],
    ...     cpts=[np.array([0.5, 0.5]), np.array([[0.7, 0.3], [0.4, 0.6]])],
    ...     names=["P", "Q"],
    ... )
    >>> net.n_variables, net.children(0), net.topological_order()
    (2, (1,), [0, 1])
    """

    def __init__(
        self,
        cardinalities: Sequence[int],
        parents: Sequence[tuple[int, ...]],
        cpts: Sequence[np.ndarray],
        names: Sequence[str] | None = None,
        state_names: Sequence[Sequence] | None = None,
    ) -> None:
        n = len(cardinalities)
        if len(parents) != n:
            raise ValueError(
                f"parents has {len(parents)} entries but cardinalities has {n}; "
                "give one tuple of parents per variable."
            )
        if len(cpts) != n:
            raise ValueError(
                f"cpts has {len(cpts)} entries but cardinalities has {n}; "
                "give one table per variable."
            )
        self.n_variables = n
        self.names = _check_names(names, n)
        self.cardinalities = [self._check_cardinality(i, c) for i, c in enumerate(cardinalities)]
        self.parents = [self._check_parents(i, pa) for i, pa in enumerate(parents)]
        children = [[] for _ in range(n)]
        for i, pa in enumerate(self.parents):
            for p in pa:
                children[p].append(i)
        self._children = [tuple(c) for c in children]
        self._order = self._toposort()
        self.state_names = self._check_state_names(state_names)
        self.cpts = [self._check_cpt(i, cpt, self.parents[i]) for i, cpt in enumerate(cpts)]

    # ------------------------------------------------------------------ helpers
    def _check_cardinality(self, i: int, card) -> int:
        card = _as_int(card, f"Cardinality of variable {self.names[i]!r}")
        if card < 1:
            raise ValueError(
                f"Variable {self.names[i]!r} must have at least one state, got cardinality {card}."
            )
        return card

    def _check_parents(self, i: int, pa) -> tuple[int, ...]:
        name = self.names[i]
        try:
            pa = tuple(pa)
        except TypeError:
            raise ValueError(
                f"Parents of variable {name!r} must be a tuple of indices, got {pa!r}."
            ) from None
        checked = []
        for p in pa:
            p = _as_int(p, f"Parent index of variable {name!r}")
            if not 0 <= p < self.n_variables:
                raise ValueError(
                    f"Variable {name!r} has parent index {p}, out of range "
                    f"[0, {self.n_variables - 1}]."
                )
            if p == i:
                raise ValueError(f"Variable {name!r} is its own parent (a cycle).")
            if p in checked:
                raise ValueError(f"Variable {name!r} lists parent {self.names[p]!r} twice.")
            checked.append(p)
        return tuple(checked)

    def _check_state_names(self, state_names) -> list[list]:
        if state_names is None:
            return [list(range(card)) for card in self.cardinalities]
        if len(state_names) != self.n_variables:
            raise ValueError(
                f"state_names has {len(state_names)} entries but there are "
                f"{self.n_variables} variables."
            )
        state_names = [list(s) for s in state_names]
        for i, states in enumerate(state_names):
            if len(states) != self.cardinalities[i]:
                raise ValueError(
                    f"Variable {self.names[i]!r} has {self.cardinalities[i]} states but "
                    f"{len(states)} state names."
                )
        return state_names

    def _check_cpt(self, i: int, cpt, parents: tuple[int, ...]) -> np.ndarray:
        name = self.names[i]
        try:
            table = np.array(cpt, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"CPT of variable {name!r} is not a numeric array.") from None
        expected = tuple(self.cardinalities[p] for p in parents) + (self.cardinalities[i],)
        if table.shape != expected:
            raise ValueError(
                f"CPT of variable {name!r} has shape {table.shape}, expected {expected} "
                "(parent cardinalities in the order of its parents, then its own)."
            )
        if not np.all(np.isfinite(table)):
            raise ValueError(f"CPT of variable {name!r} contains NaN or infinite values.")
        if np.any(table < 0):
            raise ValueError(f"CPT of variable {name!r} has negative probabilities.")
        sums = table.sum(axis=-1)
        worst = float(np.max(np.abs(sums - 1.0))) if sums.size else 0.0
        if worst > _ROW_TOL:
            raise ValueError(
                f"Rows of the CPT of variable {name!r} must sum to 1 over its states "
                f"(last axis); the largest deviation is {worst:.3g}."
            )
        table = table / sums[..., None]
        table.setflags(write=False)
        return table

    def _toposort(self) -> list[int]:
        n = self.n_variables
        indeg = [len(pa) for pa in self.parents]
        ready = [i for i in range(n) if indeg[i] == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for c in self._children[i]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    heapq.heappush(ready, c)
        if len(order) != n:
            stuck = [i for i in range(n) if indeg[i] > 0]
            cycle = ", ".join(repr(self.names[i]) for i in stuck[:5])
            raise ValueError(
                f"The parent graph has a cycle; variables on or below it include {cycle}."
            )
        return order

    # ------------------------------------------------------------------ public
    def children(self, i: int) -> tuple[int, ...]:
        """Return the indices of the children of variable ``i``.

        Parameters
        ----------
        i : int
            Variable index.

        Returns
        -------
        children : tuple of int
            Variables that list ``i`` among their parents.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify.s3p import BayesNet
        >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.full((2, 2), .5)])
        >>> net.children(0)
        (1,)
        """
        return self._children[i]

    def topological_order(self) -> list[int]:
        """Return a topological order (parents first, smallest index first).

        Returns
        -------
        order : list of int
            Every variable appears after all of its parents.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify.s3p import BayesNet
        >>> net = BayesNet([2, 2], [(1,), ()], [np.full((2, 2), .5), np.full(2, .5)])
        >>> net.topological_order()
        [1, 0]
        """
        return list(self._order)

    @classmethod
    def independent(
        cls,
        marginals: Sequence[np.ndarray],
        names: Sequence[str] | None = None,
        state_names: Sequence[Sequence] | None = None,
    ) -> BayesNet:
        """Network of mutually independent variables with the given marginals.

        Parameters
        ----------
        marginals : list of ndarray
            ``marginals[i]`` is the distribution of variable ``i`` (one entry
            per state, summing to one).
        names : list of str, default=None
            Variable names.
        state_names : list of list, default=None
            State names of each variable.

        Returns
        -------
        network : BayesNet
            A network without edges.

        Examples
        --------
        >>> from skfairverify.s3p import BayesNet
        >>> net = BayesNet.independent([[0.6, 0.4], [0.2, 0.3, 0.5]])
        >>> net.cardinalities, net.parents
        ([2, 3], [(), ()])
        """
        tables = [np.asarray(m, dtype=np.float64) for m in marginals]
        for i, table in enumerate(tables):
            if table.ndim != 1:
                label = names[i] if names is not None and i < len(names) else f"X{i}"
                raise ValueError(
                    f"Marginal of variable {label!r} must be one-dimensional, "
                    f"got shape {table.shape}."
                )
        return cls(
            [t.shape[0] for t in tables],
            [() for _ in tables],
            tables,
            names=names,
            state_names=state_names,
        )

    def replace_cpt(
        self, i: int, cpt: np.ndarray, parents: Sequence[int] | None = None
    ) -> BayesNet:
        """Return a new network where variable ``i`` has another CPT (and possibly parents).

        Used, for instance, to give a feature a uniform distribution
        (fairness influence) or to fix a mediator's distribution to the one of
        a given group (path-specific fairness).

        Parameters
        ----------
        i : int
            Index of the variable whose table is replaced.
        cpt : ndarray
            New table of shape ``(*[cardinalities[p] for p in parents],
            cardinalities[i])``.
        parents : tuple of int, default=None
            New parents of ``i``; the current ones when None.

        Returns
        -------
        network : BayesNet
            A new, validated network; ``self`` is unchanged.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify.s3p import BayesNet
        >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.eye(2)])
        >>> uniform = net.replace_cpt(1, np.full(2, .5), parents=())
        >>> uniform.parents
        [(), ()]
        """
        i = _as_int(i, "Variable index i")
        if not 0 <= i < self.n_variables:
            raise ValueError(f"Variable index {i} out of range [0, {self.n_variables - 1}].")
        new_parents = list(self.parents)
        if parents is not None:
            new_parents[i] = tuple(parents)
        new_cpts = list(self.cpts)
        new_cpts[i] = cpt
        return type(self)(
            self.cardinalities,
            new_parents,
            new_cpts,
            names=self.names,
            state_names=self.state_names,
        )

    def sample(self, n_samples: int, random_state=None, *,
               max_table_size: int = DEFAULT_MAX_TABLE_SIZE) -> np.ndarray:
        """Draw states of all variables by ancestral (forward) sampling.

        Parameters
        ----------
        n_samples : int
            Number of joint samples.
        random_state : int, numpy Generator or None, default=None
            Seed or generator.
        max_table_size : int, default=50_000_000
            Largest number of entries of one array of the draw: the samples
            (``n_samples x n_variables`` int64) and, per variable, the cumulative
            table rows of every sample (``n_samples x`` its number of states).

        Returns
        -------
        samples : ndarray of shape (n_samples, n_variables)
            State indices (int).

        Raises
        ------
        TableTooLargeError
            If an array would exceed ``max_table_size`` entries; raised before any
            allocation, naming the size. Draw the samples in batches.

        Examples
        --------
        >>> from skfairverify.s3p import BayesNet
        >>> net = BayesNet.independent([[0.0, 1.0]])
        >>> net.sample(3, random_state=0).ravel().tolist()
        [1, 1, 1]
        """
        n_samples = _as_int(n_samples, "n_samples")
        if n_samples < 0:
            raise ValueError(f"n_samples must be non-negative, got {n_samples}.")
        self._check_sample_size(n_samples, _as_int(max_table_size, "max_table_size"))
        rng = np.random.default_rng(random_state)
        out = np.zeros((n_samples, self.n_variables), dtype=np.int64)
        for i in self._order:
            cdf = np.cumsum(self.cpts[i], axis=-1)
            if self.parents[i]:
                rows = cdf[tuple(out[:, p] for p in self.parents[i])]
            else:
                rows = np.broadcast_to(cdf, (n_samples, cdf.shape[-1]))
            u = rng.random(n_samples)[:, None]
            out[:, i] = np.minimum((u >= rows).sum(axis=1), self.cardinalities[i] - 1)
        return out

    def _check_sample_size(self, n_samples: int, max_table_size: int) -> None:
        """Refuse, before allocating, a draw whose arrays exceed ``max_table_size``."""
        width = max(self.n_variables, max(self.cardinalities, default=1))
        entries = n_samples * width
        if entries <= max_table_size:
            return
        rows = max(max_table_size // width, 1)
        raise TableTooLargeError(
            f"BayesNet.sample(n_samples={n_samples:,}) would allocate arrays of {entries:,} "
            f"entries ({entries * 8 / 2**30:,.1f} GiB): {n_samples:,} samples x {width:,} "
            f"({self.n_variables:,} variable(s), {max(self.cardinalities, default=1):,} "
            f"states for the largest), beyond max_table_size={max_table_size:,}. Draw the "
            f"samples in batches "
            f"of at most {rows:,} (one call per batch, each with its own generator), or "
            "raise max_table_size."
        )

    def __repr__(self) -> str:
        n_edges = sum(len(pa) for pa in self.parents)
        return f"BayesNet(n_variables={self.n_variables}, n_edges={n_edges})"

    # ------------------------------------------------------------------ pgmpy
    @classmethod
    def from_pgmpy(cls, model) -> BayesNet:
        """Build a network from a fitted pgmpy ``DiscreteBayesianNetwork``.

        Variable names and state names are kept; the states of each variable
        are in the order of pgmpy's ``state_names``. Variables are in the order
        of ``model.nodes()``.

        Parameters
        ----------
        model : pgmpy.models.DiscreteBayesianNetwork
            A network with a ``TabularCPD`` for every node.

        Returns
        -------
        network : BayesNet
            The same distribution.

        Raises
        ------
        TypeError
            If ``model`` is not a pgmpy model (it lacks ``nodes``, ``get_cpds`` or
            ``get_parents``).
        ValueError
            If a node has no CPD or a CPD disagrees with the graph.

        Examples
        --------
        >>> from pgmpy.models import DiscreteBayesianNetwork
        >>> from pgmpy.factors.discrete import TabularCPD
        >>> from skfairverify.s3p import BayesNet
        >>> model = DiscreteBayesianNetwork([("A", "B")])
        >>> model.add_cpds(
        ...     TabularCPD("A", 2, [[0.5], [0.5]]),
        ...     TabularCPD("B", 2, [[0.9, 0.2], [0.1, 0.8]], evidence=["A"], evidence_card=[2]),
        ... )
        >>> net = BayesNet.from_pgmpy(model)
        >>> net.names, net.parents
        (['A', 'B'], [(), (0,)])
        """
        lacking = [m for m in _PGMPY_METHODS if not callable(getattr(model, m, None))]
        if lacking:
            raise TypeError(
                "BayesNet.from_pgmpy needs a pgmpy DiscreteBayesianNetwork with a "
                f"TabularCPD for every node; got {type(model).__name__}, which has no "
                f"{', '.join(lacking)}. Build the network with pgmpy (model.fit(data) or "
                "model.add_cpds(...)), or give the tables to BayesNet(cardinalities, "
                "parents, cpts) directly."
            )
        nodes = list(model.nodes())
        index = {node: k for k, node in enumerate(nodes)}
        cpds = {}
        for cpd in model.get_cpds():
            cpds[cpd.variable] = cpd
        missing = [node for node in nodes if node not in cpds]
        if missing:
            raise ValueError(
                f"The pgmpy model has no CPD for {missing[0]!r}; fit it first "
                "(model.fit(data) or model.add_cpds(...))."
            )
        states = {}
        for node in nodes:
            cpd = cpds[node]
            if not hasattr(cpd, "state_names") or node not in cpd.state_names:
                states[node] = list(range(int(cpd.variable_card)))
            else:
                states[node] = list(cpd.state_names[node])
        cards, parents, tables = [], [], []
        for node in nodes:
            cpd = cpds[node]
            variables = list(cpd.variables)
            evidence = variables[1:]
            graph_parents = set(model.get_parents(node))
            if set(evidence) != graph_parents:
                raise ValueError(
                    f"The CPD of {node!r} conditions on {evidence} but its parents in the "
                    f"graph are {sorted(graph_parents, key=str)}."
                )
            values = np.asarray(cpd.get_values(), dtype=np.float64)
            card = int(cpd.variable_card)
            shape = [card] + [int(c) for c in cpd.cardinality[1:]]
            values = values.reshape(shape)
            cpd_states = getattr(cpd, "state_names", {}) or {}
            # Re-index axes whose state order differs from the variable's own CPD.
            for axis, var in enumerate(variables):
                if var not in cpd_states:
                    continue
                here = list(cpd_states[var])
                ref = states[var]
                if here == ref:
                    continue
                if sorted(map(str, here)) != sorted(map(str, ref)) or len(here) != len(ref):
                    raise ValueError(
                        f"State names of {var!r} differ between CPDs: {here} vs {ref}."
                    )
                position = {str(s): k for k, s in enumerate(here)}
                take = [position[str(s)] for s in ref]
                values = np.take(values, take, axis=axis)
            cards.append(card)
            parents.append(tuple(index[e] for e in evidence))
            tables.append(np.moveaxis(values, 0, -1))
        return cls(
            cards,
            parents,
            tables,
            names=[str(node) for node in nodes],
            state_names=[states[node] for node in nodes],
        )

    def to_pgmpy(self):
        """Convert to a pgmpy ``DiscreteBayesianNetwork`` with ``TabularCPD`` tables.

        Returns
        -------
        model : pgmpy.models.DiscreteBayesianNetwork
            Nodes named by :attr:`names`, states by :attr:`state_names`.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify.s3p import BayesNet
        >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.eye(2)], names=["A", "B"])
        >>> model = net.to_pgmpy()
        >>> sorted(model.edges())
        [('A', 'B')]
        """
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            edges = [
                (self.names[p], self.names[i])
                for i in range(self.n_variables)
                for p in self.parents[i]
            ]
            model = DiscreteBayesianNetwork(edges)
            model.add_nodes_from(self.names)
            cpds = []
            for i in range(self.n_variables):
                card = self.cardinalities[i]
                values = np.moveaxis(self.cpts[i], -1, 0).reshape(card, -1)
                evidence = [self.names[p] for p in self.parents[i]]
                state_names = {self.names[i]: list(self.state_names[i])}
                for p in self.parents[i]:
                    state_names[self.names[p]] = list(self.state_names[p])
                cpds.append(
                    TabularCPD(
                        self.names[i],
                        card,
                        values,
                        evidence=evidence or None,
                        evidence_card=[self.cardinalities[p] for p in self.parents[i]] or None,
                        state_names=state_names,
                    )
                )
            model.add_cpds(*cpds)
        return model


def with_tables(network: BayesNet, cpts) -> BayesNet:
    """A network of ``network``'s structure, names and states with other tables, unchecked.

    For tables made valid by construction (the posterior draws of
    :mod:`skfairverify.verification._posterior`: float64, non-negative, rows
    normalised, shapes of the network's tables); they are used as given (views are
    kept, made read-only), without the validation of :class:`BayesNet`.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.s3p._network import with_tables
    >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.eye(2)])
    >>> other = with_tables(net, [np.array([.2, .8]), np.eye(2)])
    >>> other.cpts[0].tolist(), other.parents == net.parents
    ([0.2, 0.8], True)
    """
    net = object.__new__(type(network))
    net.__dict__.update(network.__dict__)
    tables = []
    for table in cpts:
        table = table.view()
        table.setflags(write=False)
        tables.append(table)
    net.cpts = tables
    return net
