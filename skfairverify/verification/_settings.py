"""What every step of a verification reads: the verifier's settings and its variables.

:class:`Settings` is a frozen copy of :class:`FairnessVerifier`'s parameters, taken
once per ``fit`` (the steps do not read the estimator object); :class:`Variables` are
the network's variables once encoded (the encoding, the sensitive variables and the
mediators). The paths (:mod:`._paths`), the network learner (:mod:`._learning`) and
the evaluation (:mod:`._evaluation`) are built from them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from sklearn.utils import check_random_state

from ..s3p import BayesNet
from ._variables import Encoding

__all__ = ["Settings", "Variables", "mediator_names"]


@dataclass(frozen=True)
class Settings:
    """The parameters of :class:`FairnessVerifier` (see its docstring for each)."""

    estimator: object
    sensitive_features: object
    n_bins: object
    max_bins: int
    multiplier: object
    max_multiplier: int
    network: object
    method: str
    tolerance: float
    confidence: float
    max_samples: int
    max_time: float
    n_draws: int
    credible_level: float
    n_bootstrap: int
    prior: str
    mediators: object
    pcf_definition: str
    max_indegree: int | None
    max_table_size: int
    sample_rows: int
    random_state: object
    n_jobs: int | None
    verbose: int

    @classmethod
    def of(cls, verifier) -> Settings:
        """The settings of ``verifier`` (its ``get_params(deep=False)``)."""
        params = verifier.get_params(deep=False)
        return cls(**{f.name: params[f.name] for f in fields(cls)})

    @property
    def user_network(self) -> bool:
        """Whether the network is the user's :class:`~skfairverify.s3p.BayesNet`."""
        return isinstance(self.network, BayesNet)

    @property
    def learned(self) -> bool:
        """Whether the network's structure is learned from the rows."""
        return isinstance(self.network, str) and self.network == "learn"

    @property
    def draws_wanted(self) -> bool:
        """Posterior draws: ``n_draws > 0`` and a network learned from the data."""
        return self.n_draws > 0 and not self.user_network

    def seed(self) -> int:
        """A seed from ``random_state`` (advances it when it is a RandomState)."""
        return check_random_state(self.random_state).randint(np.iinfo(np.int32).max)

    def population_rng(self, stream: int):
        """A generator of the population estimate (2: replicates, 3: metrics, 4: rows)."""
        return np.random.default_rng([self.seed(), stream])

    @property
    def estimator_name(self) -> str:
        return type(self.estimator).__name__


@dataclass(frozen=True)
class Variables:
    """The network's variables: the encoding, the sensitive ones and the mediators."""

    encoding: Encoding
    sensitive: list
    mediators: list

    @classmethod
    def of(cls, encoding: Encoding, sensitive, mediators) -> Variables:
        """The variables of ``encoding``, with the mediators checked against them."""
        return cls(encoding, list(sensitive), mediator_names(mediators, encoding, sensitive))

    @property
    def sens_idx(self) -> list[int]:
        """The indices of the sensitive variables in the encoding."""
        return [self.encoding.index(s) for s in self.sensitive]

    def covering(self, frame) -> Variables:
        """The same variables with states for values of ``frame`` unseen in ``fit``."""
        return Variables(self.encoding.covering(frame), self.sensitive, self.mediators)

    def with_encoding(self, encoding: Encoding) -> Variables:
        return Variables(encoding, self.sensitive, self.mediators)


def mediator_names(mediators, encoding: Encoding, sensitive) -> list[str]:
    """The mediators (``None``, a name or names), checked to be non-sensitive variables."""
    if mediators is None:
        return []
    items = [mediators] if isinstance(mediators, str) else list(mediators)
    out = []
    for m in items:
        if not isinstance(m, str):
            raise TypeError(f"mediators must be column names; got {m!r}.")
        if m in sensitive:
            raise ValueError(f"Mediator {m!r} is a sensitive feature; it cannot mediate.")
        if m not in encoding.names:
            raise ValueError(
                f"Mediator {m!r} is not a variable of the verifier (a column read by the "
                f"model); variables: {encoding.names}."
            )
        out.append(m)
    return out
