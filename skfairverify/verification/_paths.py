"""The verifier's paths, behind one protocol, and the choice among them.

A path is how the group rates of a model are computed:

* :class:`~._linear_path.LinearPath`: a linear rule, exact (FVGM's S3P engine);
* :class:`~._trees_path.TreePath`: a decision tree, exact (its positive leaves);
* :class:`~._ensemble_path.EnsemblePath`: a tree ensemble (boosting, forests), sound
  bounds (``method="bounds"``);
* :class:`~._paths_sampling.SamplingPath`: any classifier, certified sampling.

Each has the methods of :class:`Path`, the exact and bounds paths those of
:class:`DrawsPath` too (the fairness influence's draws); :func:`select_path` chooses one
from what the readers of :mod:`skfairverify.rules` make of the fitted model and
``method``.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from ..ensembles import read_ensemble
from ..rules import read_model
from ..rules._steps import split_final
from ._ensemble_path import (
    AUTO_MAX_COST,
    EnsemblePath,
    estimator_columns,
    plan_bounds,
    read_ensemble_or_reason,
)
from ._evaluation import Evaluation
from ._linear_path import LinearPath
from ._paths_sampling import SamplingPath
from ._quantization import Quantized
from ._settings import Variables
from ._trees_path import TreePath

__all__ = ["DrawsPath", "Path", "PathRun", "run_path", "select_path", "sampling_classes"]


class Path(Protocol):
    """What :class:`FairnessVerifier` asks of a path.

    ``name`` is ``method_`` (``"exact"``, ``"bounds"`` or ``"sampling"``), ``kind`` the
    path's model (``"linear"``, ``"tree"``, ``"ensemble"``; None when sampling);
    ``classes``, ``rule`` and ``decision_scale`` are the fitted attributes of the same
    names; ``reason`` (``method_reason_``) is why :func:`select_path` chose it.
    """

    name: str
    reason: str
    kind: str | None
    classes: np.ndarray
    rule: object
    decision_scale: float | None

    def encode(self, frame, sensitive, weight):
        """The variables of the network and the multipliers to try (``Quantized``)."""

    def evaluate(self, variables, frame, y_pos, encoding, multipliers, weight,
                 observed=None):
        """The ``Evaluation`` of the model on coded rows: groups, metrics, intervals."""

    def agreement(self, encoding, frame, multiplier, weight) -> float:
        """The share of rows where the verified decision is the model's."""

    def check_agreement(self, encoding, frame, weight, agreement, multiplier,
                        reference=None) -> None:
        """Warn when the agreement is low (LowAgreementWarning)."""

    def remember(self, variables, ev, frame=None, weight=None) -> None:
        """Keep fit's evaluation for the fitted verifier's later methods."""


class DrawsPath(Path, Protocol):
    """What :meth:`FairnessVerifier.fairness_influence` asks of the exact and bounds paths.

    Its reference networks' rates and their posterior draws (the sampling path samples
    the influences with its ``influence`` and has no draws).
    """

    def point_rates(self, network) -> np.ndarray:
        """The verified group rates under ``network`` (after ``fit``)."""

    def draw_rates_of(self, network, exact=None):
        """Rates function ``rates_of(draw)`` for posterior draws of ``network``'s structure."""

    def draws_seconds(self, network, n_draws: int, rates_of) -> float:
        """Estimated CPU seconds of solving ``n_draws`` draws of ``network``'s structure.

        ``rates_of`` is :meth:`draw_rates_of`'s for ``network``. Estimated from sizes
        before any draw is solved (the engine's plan, the tree's elimination, the size
        of the point search or its deadline), never from a timing.
        """


def select_path(settings, estimator, frame, weight, y, *, feature_names,
                input_labels, sensitive=None) -> Path:
    """The path of the fitted ``estimator``: linear, tree or ensemble when read, else sampling.

    ``method="auto"`` takes the exact path when a reader of :mod:`skfairverify.rules`
    reads the model (a linear rule first, then a decision tree), the tree-ensemble path
    when the check of :func:`~._ensemble_path.plan_bounds` passes (the model is read, its
    variables are taken, the estimated cost of the branching is within the limit; made
    only with the ``sensitive`` columns of pandas rows), the sampling path otherwise;
    ``method="exact"`` refuses a model no reader reads, with the reader's
    reason; ``method="bounds"`` takes the tree-ensemble path
    (:func:`skfairverify.ensembles.read_ensemble` reads the model) and refuses any
    other model, with the reader's reason; ``method="sampling"`` samples every model.
    ``frame`` and ``weight`` are the rows of ``fit`` (the linear rule's scale), ``y``
    its labels (the classes of a model without ``classes_``), ``feature_names`` and
    ``input_labels`` the columns the sampling path gives the model.
    """
    if settings.method == "bounds":
        return _chosen(_ensemble_path(settings, estimator, feature_names),
                       "method='bounds': the tree ensemble is read")
    if settings.method == "sampling":
        return _chosen(_sampling_path(settings, estimator, y, feature_names, input_labels),
                       "method='sampling'")
    reading = read_model(estimator, settings.estimator_name)
    if reading.kind == "linear":
        return _chosen(LinearPath(settings, reading.rule, frame, weight),
                       "a linear rule is read from the model")
    if reading.kind == "tree":
        return _chosen(TreePath(settings, reading.leaves), "a decision tree is read")
    if settings.method == "exact":
        raise _no_exact_path(settings, reading.reasons[-1]) from reading.reasons[-1]
    reason = f"no exact or bounds path reads the model: {reading.reasons[-1]}"
    if sensitive is not None:
        plan = plan_bounds(settings, estimator, frame, weight, sensitive, feature_names)
        if plan.takes:
            return _chosen(plan.path, f"a tree ensemble: 2**{plan.cost.cost:.1f} joint "
                                      "states of the variables the trees read, within "
                                      f"2**{AUTO_MAX_COST:g}")
        if plan.path is not None or _is_ensemble(estimator):
            reason = f"a tree ensemble, not bounded: {plan.reason}"
    return _chosen(_sampling_path(settings, estimator, y, feature_names, input_labels),
                   reason)


def _chosen(path, reason: str):
    """``path`` with why it was chosen (its ``reason``, ``method_reason_``)."""
    path.reason = reason
    return path


def _is_ensemble(estimator) -> bool:
    """Whether the final step of ``estimator`` is a tree ensemble of a kind the reader reads.

    Even with options it refuses (those raise ValueError: categorical splits, ...).
    """
    try:
        read_ensemble(split_final(estimator)[1])
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _sampling_path(settings, estimator, y, feature_names, input_labels) -> SamplingPath:
    classes = sampling_classes(estimator, y, settings.estimator_name)
    return SamplingPath(settings, estimator, classes, feature_names, input_labels)


def _no_exact_path(settings, reason) -> TypeError:
    """The refusal of ``method="exact"`` for a model no exact reader reads."""
    return TypeError(
        f"method='exact': {settings.estimator_name} has no exact path "
        "(the exact paths read linear classifiers and decision trees, alone or "
        f"behind per-column steps: {reason}). Use method='sampling' (or "
        "'auto'), which verifies any classifier with certified confidence "
        "intervals; method='bounds' bounds a tree ensemble's rates soundly.")


def _ensemble_path(settings, estimator, feature_names):
    """The tree-ensemble path of ``method="bounds"`` (a model it does not read: refused)."""
    columns = estimator_columns(estimator, feature_names)
    reading, reason = read_ensemble_or_reason(estimator, columns)
    if reading is not None:
        return EnsemblePath(settings, estimator, reading, columns)
    raise TypeError(
        f"method='bounds': {settings.estimator_name} is not a tree ensemble the "
        f"tree-ensemble path reads ({reason}). Use method='auto', which verifies any "
        "classifier (exactly for linear models and decision trees)."
    ) from reason


class PathRun(NamedTuple):
    """What :func:`run_path` makes of the rows: the fitted attributes' sources."""

    variables: Variables
    quantized: Quantized
    evaluation: Evaluation
    agreement: float


def run_path(path: Path, settings, frame, sensitive, y_pos, weight, observed=None
             ) -> PathRun:
    """Encode, evaluate and remember: the sequence of every path on pandas rows.

    ``frame`` holds the model's inputs and the ``sensitive`` columns (rows of positive
    weight only), ``y_pos`` the positive labels (None without labels), ``observed``
    the model's decisions on the rows (:class:`~._population.Observed`, None without
    the population estimate). The path keeps the evaluation for the fitted
    verifier's later methods (``path.remember``).
    """
    quantized = path.encode(frame, sensitive, weight)
    variables = Variables.of(quantized.encoding, sensitive, settings.mediators)
    eo_labels = None if settings.user_network else y_pos
    ev = path.evaluate(variables, frame, eo_labels, quantized.encoding,
                       quantized.multipliers, weight, observed)
    agreement = path.agreement(quantized.encoding, frame, ev.multiplier, weight)
    path.remember(variables, ev, frame, weight)
    return PathRun(variables, quantized, ev, agreement)


def sampling_classes(estimator, y, name: str) -> np.ndarray:
    """The model's two classes (``classes_`` of the estimator, else those of ``y``)."""
    classes = getattr(estimator, "classes_", None)
    if classes is None and y is not None:
        classes = np.unique(y)
    if classes is None:
        raise ValueError(
            f"The classes of {name} are unknown (it has no "
            "classes_): pass y to fit, so that the positive class is classes_[1]."
        )
    classes = np.asarray(classes)
    if len(classes) != 2:
        raise ValueError(
            f"Only binary classification is supported; {name} "
            f"has {len(classes)} classes {classes.tolist()[:10]}."
        )
    return classes
