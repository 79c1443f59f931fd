"""Validation of the engine's arguments: weights, threshold, evidence, variables, order."""

from __future__ import annotations

import math

import numpy as np

from ._errors import INT64_MAX, overflow_error
from ._network import BayesNet, _as_int


def check_network(network) -> BayesNet:
    """Return ``network`` if it is a BayesNet, else raise a TypeError."""
    if not isinstance(network, BayesNet):
        raise TypeError(
            f"network must be a skfairverify.s3p.BayesNet, got {type(network).__name__}; "
            "use BayesNet.from_pgmpy(model) for a pgmpy network."
        )
    return network


def check_weights(weights, network: BayesNet) -> list[np.ndarray]:
    """One int64 weight vector per variable, one entry per state."""
    if len(weights) != network.n_variables:
        raise ValueError(
            f"weights has {len(weights)} entries but the network has "
            f"{network.n_variables} variables; give one weight vector per variable."
        )
    return [_check_weight_vector(w, network, i) for i, w in enumerate(weights)]


def _check_weight_vector(w, network: BayesNet, i: int) -> np.ndarray:
    """Return the weights of variable ``i`` as exact int64, or raise naming the variable."""
    name = network.names[i]
    arr = np.asarray(w)
    if arr.ndim != 1 or arr.shape[0] != network.cardinalities[i]:
        raise ValueError(
            f"weights of variable {name!r} must have one entry per state "
            f"({network.cardinalities[i]}), got shape {arr.shape}."
        )
    if arr.dtype.kind in "iu":
        if arr.size and int(arr.max()) > INT64_MAX:
            raise overflow_error(
                f"weights of variable {name!r} reach {int(arr.max()):,}, beyond int64"
            )
        return arr.astype(np.int64)
    if arr.dtype.kind == "O" and all(
        isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in arr
    ):
        big = max((abs(int(x)) for x in arr), default=0)
        if big > INT64_MAX:
            raise overflow_error(
                f"weights of variable {name!r} reach {big:,} in magnitude, beyond int64"
            )
        return arr.astype(np.int64)
    if arr.dtype.kind not in "fb":
        raise ValueError(f"weights of variable {name!r} must be integers, got {arr.dtype}.")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"weights of variable {name!r} contain NaN or infinite values.")
    if np.any(arr != np.round(arr)):
        raise ValueError(
            f"weights of variable {name!r} must be integer-valued, got {arr.tolist()}; "
            "scale and round them first (e.g. IntegerWeightScaler)."
        )
    if np.any(np.abs(arr) > 2.0**53):
        raise ValueError(f"weights of variable {name!r} are too large to be exact.")
    return arr.astype(np.int64)


def check_threshold(threshold) -> int:
    """Return the threshold as a Python int."""
    if isinstance(threshold, float) and not math.isfinite(threshold):
        raise ValueError(f"threshold must be an integer, got {threshold!r}.")
    return _as_int(threshold, "threshold")


def check_evidence(evidence, network: BayesNet) -> dict[int, int]:
    """``{variable index: state index}``, every index in range."""
    if evidence is None:
        return {}
    out = {}
    for var, state in evidence.items():
        var = check_var(var, network, "evidence")
        state = _as_int(state, f"Evidence state of variable {network.names[var]!r}")
        if not 0 <= state < network.cardinalities[var]:
            raise ValueError(
                f"Evidence state {state} of variable {network.names[var]!r} is out of range "
                f"[0, {network.cardinalities[var] - 1}]."
            )
        out[var] = state
    return out


def check_var(var, network: BayesNet, what: str) -> int:
    """Return a variable index in range, as a Python int."""
    var = _as_int(var, f"Variable index in {what}")
    if not 0 <= var < network.n_variables:
        raise ValueError(
            f"Variable index {var} in {what} is out of range [0, {network.n_variables - 1}]."
        )
    return var


def check_vars(variables, network: BayesNet, what: str) -> list[int]:
    """Distinct variable indices in range."""
    out = []
    for v in variables:
        v = check_var(v, network, what)
        if v in out:
            raise ValueError(f"Variable {network.names[v]!r} appears twice in {what}.")
        out.append(v)
    return out


def check_order(order, network: BayesNet) -> list[int]:
    """Return a permutation of the variables listing every variable after its parents."""
    order = [check_var(v, network, "order") for v in order]
    if sorted(order) != list(range(network.n_variables)):
        raise ValueError("order must be a permutation of all variable indices.")
    position = {v: k for k, v in enumerate(order)}
    for v in order:
        for p in network.parents[v]:
            if position[p] > position[v]:
                raise ValueError(
                    f"order is not topological: {network.names[v]!r} comes before its "
                    f"parent {network.names[p]!r}."
                )
    return order
