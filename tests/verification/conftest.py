"""Fixtures of the verifier's tests.

Tests that check an internal step of ``FairnessVerifier.fit`` (the encoding of the rows,
a path's quantizer, the draws a path regenerates) build that step through the internal
objects' interfaces (:class:`Settings`, :func:`select_path`, :func:`run_path`) with the
fitted verifier's public parameters and ``estimator_``, instead of reading the private
attributes of a fitted verifier. :func:`rebuild` checks that what it built is fit's: the
evaluation reproduces ``groups_`` exactly (its point rates with ``random_state=None``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from skfairverify.utils._validation import check_sample_weight
from skfairverify.verification._checks import check_fit_labels, check_frame, positive_labels
from skfairverify.verification._paths import run_path, select_path
from skfairverify.verification._population import Observed
from skfairverify.verification._sensitive import SensitiveColumns
from skfairverify.verification._settings import Settings


@dataclass
class Parts:
    """The steps of a verifier's fit, rebuilt: the path, the encoding, the rows.

    ``run`` (a :class:`~skfairverify.verification._paths.PathRun`: the variables, the
    quantization, the evaluation, the agreement) is None when only the encoding was
    asked for.
    """

    path: object
    encoding: object
    frame: pd.DataFrame
    sensitive: list
    weight: np.ndarray | None
    run: object = None

    @property
    def variables(self):
        """The variables of the network (the encoding, sensitive ones, mediators)."""
        return self.run.variables


def _inputs(ver, X, y, sensitive_features, sample_weight):
    """``fit``'s reading of the rows (the checks are the package's own functions)."""
    frame, positional = check_frame(X, fitting=True)
    weight = check_sample_weight(sample_weight, len(frame))
    y = None if y is None else check_fit_labels(y, len(frame), ver.estimator)
    frame, sensitive = SensitiveColumns(ver.sensitive_features).resolve(
        frame, sensitive_features, fitting=True, positional_labels=positional)
    if weight is not None and not weight.all():
        raise ValueError("rebuild: weights of 0 drop rows in fit; pass positive weights")
    return frame, sensitive, y, weight


def rebuild(ver, X, y=None, *, sensitive_features=None, sample_weight=None,
            evaluate=True) -> Parts:
    """The steps of ``ver.fit(X, y, ...)`` for a verifier fitted on those rows.

    With ``evaluate=False`` only the path and the encoding (no network is learned),
    checked against the fitted verifier's variables and their numbers of states.
    """
    frame, sensitive, y, weight = _inputs(ver, X, y, sensitive_features, sample_weight)
    settings = Settings.of(ver)
    input_labels = list(X.columns) if isinstance(X, pd.DataFrame) else None
    path = select_path(settings, ver.estimator_, frame, weight, y,
                       feature_names=ver.feature_names_in_, input_labels=input_labels)
    if not evaluate:
        encoding = path.encode(frame, sensitive, weight).encoding
        assert encoding.names == ver.variables_
        assert list(encoding.cardinalities) == list(ver.network_.cardinalities)
        return Parts(path, encoding, frame, sensitive, weight)
    observed = None
    if ver.n_bootstrap and path.name == "sampling":
        observed = Observed(path.decisions(X, frame[list(sensitive)],
                                           settings.population_rng(4)))
    elif ver.n_bootstrap:
        observed = Observed(path.decisions(frame))
    y_pos = None if y is None else positive_labels(y, len(frame), path.classes)
    run = run_path(path, settings, frame, sensitive, y_pos, weight, observed)
    got, fitted = run.evaluation.groups, ver.groups_
    if ver.random_state is None:  # the draws and replicates differ: the point rates only
        kept = [c for c in fitted.columns if c in ver.sensitive_features_
                or c in ("support", "positive_rate")]
        got, fitted = got[kept], fitted[kept]
    pd.testing.assert_frame_equal(got, fitted, check_exact=True)
    return Parts(path, run.quantized.encoding, frame, sensitive, weight, run)


def two_groups(n=400, seed=0, z_weight=1.0):
    """A binary sensitive column ``a``, ``x ~ N(a, 1)``, ``z ~ N(0, 1)`` and labels
    ``x + z_weight * z + N(0, 0.5) > 0.5``: the smallest data every path reads."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0, n), "z": rng.normal(0.0, 1.0, n)})
    y = (X["x"] + z_weight * X["z"] + rng.normal(0, 0.5, n) > 0.5).astype(int)
    return X, y


@pytest.fixture(scope="session")
def two_group_data():
    """:func:`two_groups`, for the tests of this folder."""
    return two_groups


@pytest.fixture(scope="session")
def rebuilt():
    """:func:`rebuild`, for the tests of this folder."""
    return rebuild
