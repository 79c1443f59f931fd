"""The one base class of every skfairverify scorer.

A fairness scorer is called as ``scorer(estimator, X, y)`` like any scikit-learn
scorer and returns a greater-is-better number. The sensitive features reach it by
one of two routes:

* by name: ``make_*_scorer(sensitive_features="sex")`` takes the column ``"sex"``
  of ``X`` (``X`` must then be a DataFrame holding it);
* as metadata: under ``sklearn.set_config(enable_metadata_routing=True)``, call
  ``scorer.set_score_request(sensitive_features=True)`` and pass
  ``sensitive_features=...`` to ``GridSearchCV.fit``; scikit-learn hands each
  validation fold its rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.utils.metadata_routing import MetadataRequest, _routing_enabled

from ..utils._validation import check_sensitive

__all__ = ["FairnessScorer"]


def _as_name_list(sensitive_features) -> list[str] | None:
    if sensitive_features is None:
        return None
    if isinstance(sensitive_features, str):
        return [sensitive_features]
    if isinstance(sensitive_features, Sequence) or isinstance(
        sensitive_features, (pd.Index, np.ndarray)
    ):
        names = list(sensitive_features)
        if not names or not all(isinstance(n, str) for n in names):
            raise TypeError(
                "sensitive_features must be a column name or a non-empty list of column "
                f"names; got {sensitive_features!r}."
            )
        return names
    raise TypeError(
        "sensitive_features must be a column name or a list of column names; "
        f"got {type(sensitive_features).__name__}."
    )


class FairnessScorer:
    """Base class of the fairness scorers (greater is better).

    Subclasses implement ``_score(estimator, X, y, sensitive)`` where ``sensitive`` is a
    DataFrame with one column per sensitive attribute, aligned with ``X``.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` holding the sensitive attributes. Leave ``None`` to receive them
        as metadata instead (``set_score_request(sensitive_features=True)``).

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.metrics import FairnessScorer
    >>> class GapInPredictions(FairnessScorer):
    ...     def _score(self, estimator, X, y, sensitive):
    ...         rates = pd.Series(estimator.predict(X), index=X.index).groupby(
    ...             sensitive.iloc[:, 0]).mean()
    ...         return -(rates.max() - rates.min())
    >>> class Constant:
    ...     def predict(self, X):
    ...         return (X["a"] > 0).astype(int).to_numpy()
    >>> X = pd.DataFrame({"a": [1, -1, 1, 1], "g": ["x", "x", "y", "y"]})
    >>> float(GapInPredictions("g")(Constant(), X, None))
    -0.5
    """

    def __init__(self, sensitive_features=None):
        self.sensitive_features = sensitive_features
        self._metadata_request = MetadataRequest(owner=self)
        self._metadata_request.score.add_request(param="sensitive_features", alias=None)

    # ------------------------------------------------------------------ routing
    def set_score_request(self, *, sensitive_features=None) -> FairnessScorer:
        """Request ``sensitive_features`` as metadata of ``score`` (metadata routing).

        Parameters
        ----------
        sensitive_features : bool, str or None, default=None
            ``True`` to receive the metadata ``sensitive_features`` from the caller
            (e.g. ``GridSearchCV.fit(X, y, sensitive_features=s)``), a string to receive
            it under another name, ``False``/``None`` not to.

        Returns
        -------
        self : FairnessScorer
        """
        if not _routing_enabled():
            raise RuntimeError(
                "set_score_request is only available when metadata routing is enabled: "
                "sklearn.set_config(enable_metadata_routing=True)."
            )
        self._metadata_request = MetadataRequest(owner=self)
        self._metadata_request.score.add_request(
            param="sensitive_features", alias=sensitive_features
        )
        return self

    def get_metadata_routing(self) -> MetadataRequest:
        """Metadata routing of this scorer (scikit-learn's routing protocol)."""
        return self._metadata_request

    def _accept_sample_weight(self) -> bool:  # used by scikit-learn's multimetric scorer
        return False

    # ------------------------------------------------------------------ calling
    @property
    def _sensitive_names(self) -> list[str] | None:
        return _as_name_list(self.sensitive_features)

    def _resolve_sensitive(self, X, sensitive_features=None) -> pd.DataFrame:
        index = X.index if isinstance(X, pd.DataFrame) else None
        if sensitive_features is not None:
            if index is None:
                index = pd.RangeIndex(len(sensitive_features))
                if hasattr(X, "shape") and X.shape[0] != len(index):
                    raise ValueError(
                        f"Sensitive features have {len(index)} rows but X has {X.shape[0]}."
                    )
            return check_sensitive(sensitive_features, index=index,
                                   name="sensitive_features")
        names = self._sensitive_names
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
        if missing:
            raise ValueError(
                f"Sensitive column(s) {missing} not found in X; available columns: "
                f"{list(X.columns)}."
            )
        return check_sensitive(X[names], index=X.index, name="sensitive_features")

    def _drop_sensitive(self, X):
        """``X`` without the sensitive columns named at creation (unchanged otherwise)."""
        names = self._sensitive_names
        if names is None or not isinstance(X, pd.DataFrame):
            return X
        return X.drop(columns=[c for c in names if c in X.columns])

    def __call__(self, estimator, X, y_true=None, *, sensitive_features=None, **kwargs):
        """Score ``estimator`` on ``X`` (greater is better).

        Parameters
        ----------
        estimator : fitted estimator
        X : DataFrame or array-like
        y_true : array-like, default=None
        sensitive_features : array-like, Series or DataFrame, default=None
            Sensitive values of the rows of ``X`` (metadata route).

        Returns
        -------
        float
        """
        if kwargs:
            raise TypeError(
                f"{type(self).__name__} got unexpected metadata {sorted(kwargs)}."
            )
        sensitive = self._resolve_sensitive(X, sensitive_features)
        score = float(self._score(estimator, X, y_true, sensitive))
        if not np.isfinite(score):
            raise ValueError(f"{type(self).__name__} produced a non-finite score ({score}).")
        return score

    def _score(self, estimator, X, y, sensitive: pd.DataFrame) -> float:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({args})"
