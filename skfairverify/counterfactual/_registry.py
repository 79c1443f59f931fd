"""The one place that maps generator names to classes and checks a generator."""

from __future__ import annotations

from sklearn.base import clone

from ..utils._compat import HasMethods, StrOptions
from ._dice import DiceCounterfactuals
from ._kdtree import KDTreeCounterfactuals
from ._linear import LinearCounterfactuals

__all__ = ["GENERATORS", "GENERATOR_CONSTRAINT", "check_audit_generator", "make_generator"]

# name -> (class, parameters)
_REGISTRY = {
    "kdtree": (KDTreeCounterfactuals, {}),
    "linear": (LinearCounterfactuals, {}),
    "dice-genetic": (DiceCounterfactuals, {"method": "genetic"}),
    "dice-random": (DiceCounterfactuals, {"method": "random"}),
    "dice-kdtree": (DiceCounterfactuals, {"method": "kdtree"}),
}

GENERATORS = tuple(_REGISTRY)

#: The constraint on a ``generator`` parameter: a registered name or a generator object.
GENERATOR_CONSTRAINT = [StrOptions(set(GENERATORS)), HasMethods(["fit", "generate"])]

_DICE_KDTREE = (
    "generator='dice-kdtree' cannot audit counterfactual fairness: dice-ml's kdtree "
    "method only returns training rows whose immutable columns equal the query's, so "
    "with the sensitive column held fixed every counterfactual is a person of the "
    "query's own group and CFlips would measure the sensitive classifier's errors, not "
    "the model. Use generator='kdtree' (the same nearest accepted training rows, the "
    "sensitive value carried over from the query)."
)


def make_generator(generator, **params):
    """Build a generator from its name (or clone a generator object).

    Parameters
    ----------
    generator : str or generator object
        One of ``"kdtree"``, ``"linear"``, ``"dice-genetic"``, ``"dice-random"``,
        ``"dice-kdtree"``, or an object with ``fit(X, estimator)`` and
        ``generate(X, k)`` (cloned when it is a scikit-learn estimator).
    **params
        Parameters set on the generator when it accepts them (e.g.
        ``immutable_features``, ``random_state``, ``n_jobs``).

    Returns
    -------
    generator object (unfitted)

    Examples
    --------
    >>> from skfairverify.counterfactual import make_generator
    >>> make_generator("kdtree", immutable_features=["sex"])
    KDTreeCounterfactuals(immutable_features=['sex'])
    """
    if isinstance(generator, str):
        if generator not in _REGISTRY:
            raise ValueError(
                f"Unknown generator {generator!r}; valid names are {list(GENERATORS)} "
                "(or pass a generator object)."
            )
        cls, fixed = _REGISTRY[generator]
        gen = cls(**fixed)
    elif hasattr(generator, "fit") and hasattr(generator, "generate"):
        gen = clone(generator) if hasattr(generator, "get_params") else generator
    else:
        raise TypeError(
            "generator must be a name in "
            f"{list(GENERATORS)} or an object with fit(X, estimator) and generate(X, k); "
            f"got {type(generator).__name__}."
        )
    if hasattr(gen, "get_params"):
        valid = gen.get_params(deep=False)
        gen.set_params(**{k: v for k, v in params.items() if k in valid and v is not None})
    return gen


def check_audit_generator(generator) -> None:
    """Refuse a generator that cannot audit counterfactual fairness (dice-ml's kdtree).

    Parameters
    ----------
    generator : str or generator object
        Already checked against :data:`GENERATOR_CONSTRAINT`.

    Raises
    ------
    ValueError
        For ``"dice-kdtree"`` or a :class:`DiceCounterfactuals` with
        ``method="kdtree"``, saying why.
    """
    if generator == "dice-kdtree" or (
        isinstance(generator, DiceCounterfactuals) and generator.method == "kdtree"
    ):
        raise ValueError(_DICE_KDTREE)
