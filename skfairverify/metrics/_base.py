"""The one private base class of every skfairverify scorer.

A fairness scorer is called as ``scorer(estimator, X, y)`` like any scikit-learn
scorer and returns a greater-is-better number. The sensitive features reach it by
one of two routes:

* by name: ``make_*_scorer(sensitive_features="sex")`` takes the column ``"sex"``
  of ``X`` (``X`` must then be a DataFrame holding it);
* as metadata: under ``sklearn.set_config(enable_metadata_routing=True)``, call
  ``scorer.set_score_request(sensitive_features=True)`` and pass
  ``sensitive_features=...`` to ``GridSearchCV.fit``; scikit-learn hands each
  validation fold its rows.

``sample_weight`` reaches it the way it reaches scikit-learn's own scorers: as metadata
under routing (``set_score_request(sample_weight=True)``), and, without routing, from
``GridSearchCV.fit(X, y, sample_weight=w)`` (the scorer declares that it accepts
weights), or by a direct call ``scorer(estimator, X, y, sample_weight=w)``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils.metadata_routing import MetadataRequest

from ..utils._compat import _routing_enabled
from ..utils._validation import check_sample_weight, check_sensitive, check_sensitive_features

__all__ = ["_FairnessScorer"]

_ROUTED = ("sensitive_features", "sample_weight")


def _is_label(name) -> bool:
    """A column label: a string or an integer (a DataFrame's default labels), not a bool."""
    return isinstance(name, (str, Integral)) and not isinstance(name, (bool, np.bool_))


def _as_name_list(sensitive_features) -> list[str] | None:
    """Return the column names given at scorer creation, or None (metadata route)."""
    if sensitive_features is None:
        return None
    if _is_label(sensitive_features):
        return [sensitive_features]
    if isinstance(sensitive_features, (list, tuple, pd.Index, np.ndarray)):
        names = list(sensitive_features)
        if not names or not all(_is_label(n) for n in names):
            raise TypeError(
                "sensitive_features of a scorer must be a column name or a non-empty list "
                f"of column names; got {sensitive_features!r}. Pass the values themselves "
                "as metadata instead (set_score_request(sensitive_features=True))."
            )
        if len(set(names)) != len(names):
            raise ValueError(f"sensitive_features names a column twice: {names}.")
        return names
    raise TypeError(
        "sensitive_features of a scorer must be a column name or a list of column names; "
        f"got {type(sensitive_features).__name__}. Pass the values themselves as metadata "
        "instead (set_score_request(sensitive_features=True))."
    )


def _n_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


class _FairnessScorer:
    """Base class of the fairness scorers (greater is better).

    Subclasses implement ``_score(estimator, X, y, sensitive, sample_weight)`` where
    ``sensitive`` is a DataFrame with one column per sensitive attribute, aligned with
    ``X`` (same index when ``X`` is a DataFrame), and ``sample_weight`` is a validated
    float array of one non-negative weight per row of ``X``, or ``None`` for unit
    weights.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` holding the sensitive attributes. Leave ``None`` to receive the
        values as metadata instead (``set_score_request(sensitive_features=True)``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skfairverify.metrics._base import _FairnessScorer
    >>> class GapInPredictions(_FairnessScorer):
    ...     def _score(self, estimator, X, y, sensitive, sample_weight):
    ...         w = np.ones(len(X)) if sample_weight is None else sample_weight
    ...         pred, group = estimator.predict(X), sensitive.iloc[:, 0].to_numpy()
    ...         rates = [np.average(pred[group == g], weights=w[group == g])
    ...                  for g in np.unique(group)]
    ...         return -(max(rates) - min(rates))
    >>> class Rule:
    ...     def predict(self, X):
    ...         return (X["a"] > 0).astype(int).to_numpy()
    >>> X = pd.DataFrame({"a": [1, -1, 1, 1], "g": ["x", "x", "y", "y"]})
    >>> float(GapInPredictions("g")(Rule(), X, None))
    -0.5
    >>> float(GapInPredictions("g")(Rule(), X, None, sample_weight=[3, 1, 1, 1]))
    -0.25
    """

    def __init__(self, sensitive_features=None):
        self.sensitive_features = sensitive_features
        _as_name_list(sensitive_features)  # refuse bad names at creation
        self._metadata_request = self._request()

    # ------------------------------------------------------------------ routing
    def _request(self, **aliases) -> MetadataRequest:
        request = MetadataRequest(owner=self)
        for param in _ROUTED:
            request.score.add_request(param=param, alias=aliases.get(param))
        return request

    def set_score_request(self, *, sensitive_features=None, sample_weight=None):
        """Request ``sensitive_features`` and ``sample_weight`` as metadata of ``score``.

        Only available under ``sklearn.set_config(enable_metadata_routing=True)``. As
        with scikit-learn's scorers, each call replaces the previous request.

        Parameters
        ----------
        sensitive_features : bool, str or None, default=None
            ``True`` to receive the metadata ``sensitive_features`` from the caller
            (e.g. ``GridSearchCV.fit(X, y, sensitive_features=s)``), a string to receive
            it under another name, ``False`` not to, ``None`` to raise if it is passed.
        sample_weight : bool, str or None, default=None
            The same for ``sample_weight``.

        Returns
        -------
        self
            The scorer, for chaining.
        """
        if not _routing_enabled():
            raise RuntimeError(
                "set_score_request is only available when metadata routing is enabled: "
                "sklearn.set_config(enable_metadata_routing=True)."
            )
        self._metadata_request = self._request(
            sensitive_features=sensitive_features, sample_weight=sample_weight
        )
        return self

    def get_metadata_routing(self) -> MetadataRequest:
        """Metadata routing of this scorer (scikit-learn's routing protocol).

        Returns
        -------
        MetadataRequest
            The requests of ``score`` for ``sensitive_features`` and ``sample_weight``.
        """
        return self._metadata_request

    def _accept_sample_weight(self) -> bool:
        """Whether searches pass ``sample_weight`` to this scorer without routing."""
        return True

    # ------------------------------------------------------------------ calling
    @property
    def _sensitive_names(self) -> list[str] | None:
        """The columns of ``X`` named at creation, or ``None`` (metadata route)."""
        return _as_name_list(self.sensitive_features)

    def _resolve_sensitive(self, X, sensitive_features=None) -> pd.DataFrame:
        names = self._sensitive_names
        if sensitive_features is not None:
            if names is not None:
                raise ValueError(
                    f"{type(self).__name__} got the sensitive features twice: columns "
                    f"{names} named at creation and values as metadata. Use one route: "
                    "sensitive_features=None at creation for the metadata route."
                )
            index = X.index if isinstance(X, pd.DataFrame) else None
            return check_sensitive(sensitive_features, index=index, n_rows=_n_rows(X),
                                   name="sensitive_features")
        if names is None:
            raise ValueError(
                f"{type(self).__name__} has no sensitive features: name the columns of X "
                "with sensitive_features=..., or enable metadata routing and call "
                "set_score_request(sensitive_features=True)."
            )
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                f"{type(self).__name__} reads the sensitive columns {names} by name, so X "
                "must be a pandas DataFrame."
            )
        missing = [c for c in names if c not in X.columns]
        if missing:  # names are never read as values here, whatever the fold's length
            raise ValueError(
                f"Sensitive column(s) {missing} not found in X; available columns: "
                f"{list(X.columns)}."
            )
        return check_sensitive_features(names, X).frame

    def __call__(self, estimator, X, y_true=None, *, sensitive_features=None,
                 sample_weight=None) -> float:
        """Score ``estimator`` on ``X`` (greater is better).

        Parameters
        ----------
        estimator : fitted estimator
            The model to score.
        X : DataFrame or array-like of shape (n_samples, n_features)
            The rows to score it on.
        y_true : array-like of shape (n_samples,), default=None
            True labels, when the metric needs them.
        sensitive_features : array-like, Series or DataFrame, default=None
            Sensitive values of the rows of ``X`` (metadata route); ``None`` to read the
            columns named at creation.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows of ``X``; ``None`` for unit weights.

        Returns
        -------
        float
            The score; a non-finite one is refused with a ``ValueError``.
        """
        sensitive = self._resolve_sensitive(X, sensitive_features)
        weights = check_sample_weight(sample_weight, _n_rows(X))
        score = float(self._score(estimator, X, y_true, sensitive, weights))
        if not np.isfinite(score):
            raise ValueError(f"{type(self).__name__} produced a non-finite score ({score}).")
        return score

    def _score(self, estimator, X, y, sensitive: pd.DataFrame,
               sample_weight: np.ndarray | None) -> float:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({args})"

