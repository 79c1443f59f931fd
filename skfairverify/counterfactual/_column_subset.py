"""ColumnSubsetClassifier: a fitted model seen through a selection of columns."""

from __future__ import annotations

__all__ = ["ColumnSubsetClassifier"]


class ColumnSubsetClassifier:
    """A fitted classifier that receives only some columns of the frames it is given.

    The counterfactual audit needs the sensitive column inside ``X`` (the generator
    keeps it fixed, the sensitive classifier learns it). A model fitted without that
    column is wrapped so that the audit can add it: every prediction call selects
    ``columns`` first (and hands a NumPy array on when the model was fitted on one).
    The generators read the wrapped model (``estimator``) where they need its
    structure (:class:`LinearCounterfactuals` reads its linear rule). ``fit`` does
    nothing: wrap the view in :class:`~sklearn.frozen.FrozenEstimator` to pass it to
    :class:`~skfairverify.CounterfactualFairness`.

    Parameters
    ----------
    estimator : fitted classifier
        The model, fitted on ``columns`` (in this order).
    columns : list
        The columns of ``X`` the model reads.
    as_array : bool, default=False
        Hand the model ``X[columns].to_numpy()`` instead of a DataFrame (for a model
        fitted on an array). :class:`LinearCounterfactuals` reads such a model's rule
        on the array's column names ``x0, x1, ...``: name ``columns`` so.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The classes of ``estimator``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify.counterfactual import ColumnSubsetClassifier
    >>> X = pd.DataFrame({"skill": np.arange(8.0), "sex": list("FMFMFMFM")})
    >>> model = LogisticRegression().fit(X[["skill"]], (X.skill > 3).astype(int))
    >>> view = ColumnSubsetClassifier(model, ["skill"])
    >>> view.predict(X).tolist()  # "sex" is not handed to the model
    [0, 0, 0, 0, 1, 1, 1, 1]
    """

    def __init__(self, estimator, columns, *, as_array: bool = False):
        self.estimator = estimator
        self.columns = list(columns)
        self.as_array = as_array
        self.classes_ = estimator.classes_

    def _select(self, X):
        X = X[self.columns]
        return X.to_numpy() if self.as_array else X

    def predict(self, X):
        """Predictions of the model on the selected columns of ``X``."""
        return self.estimator.predict(self._select(X))

    def predict_proba(self, X):
        """Class probabilities of the model on the selected columns of ``X``."""
        return self.estimator.predict_proba(self._select(X))

    def decision_function(self, X):
        """Decision values of the model on the selected columns of ``X``."""
        return self.estimator.decision_function(self._select(X))

    def fit(self, X, y=None, **fit_params):
        """Do nothing: the wrapped model is already fitted."""
        return self

    def __repr__(self) -> str:
        return f"ColumnSubsetClassifier({self.estimator!r}, columns={self.columns!r})"
