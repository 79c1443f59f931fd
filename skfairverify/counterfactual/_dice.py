"""Adapter over dice-ml (optional extra ``dice``) for parity with the paper.

dice-ml is imported lazily, in :meth:`DiceCounterfactuals.fit`; without it the
error says ``pip install 'skfairverify[dice]'``.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from numbers import Integral

import numpy as np
import pandas as pd

from .._optional import import_optional
from ..utils._compat import StrOptions
from ._base import BaseGenerator, CounterfactualSet, missing_columns
from ._budget import GenerationTimeout

__all__ = ["DiceCounterfactuals"]

# dice-ml 0.12 calls pandas APIs deprecated since pandas 2.x/3.0; pandas warns at the call
# inside dice_ml's code. Only these known-harmless deprecations are silenced, and only
# when attributed to dice_ml's modules: any other warning (from dice-ml, the model,
# scikit-learn or pandas elsewhere) reaches the user.
_DICE_MODULES = r"dice_ml(\.|$)"
_DICE_HARMLESS = (
    (DeprecationWarning, r"The inplace keyword in DataFrame\.\w+ is deprecated"),
    (FutureWarning, r"The inplace keyword in DataFrame\.\w+ is deprecated"),
    (FutureWarning, r"Downcasting .* is deprecated"),
    (FutureWarning, r"The behavior of DataFrame concatenation with empty or all-NA"),
    (FutureWarning, r"Setting an item of incompatible dtype is deprecated"),
)


@contextlib.contextmanager
def _dice_warnings_filtered():
    """Silence dice-ml's known pandas deprecations (category, message and module).

    Every other warning is recorded and issued again on exit, after dice-ml's console
    output (stdout/stderr) is no longer redirected, so that it reaches the user.
    """
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            for category, message in _DICE_HARMLESS:
                warnings.filterwarnings("ignore", message=message, category=category,
                                        module=_DICE_MODULES)
            yield
    finally:
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

class DiceCounterfactuals(BaseGenerator):
    """Counterfactuals from dice-ml (``genetic``, ``random`` or ``kdtree`` method).

    The model is handed to ``dice_ml.Model(backend="sklearn")`` as is (it receives
    DataFrames with the raw columns), the training rows to ``dice_ml.Data`` with the
    numeric columns as continuous features. Immutable columns are excluded from
    ``features_to_vary``. dice-ml's own ordering is discarded: counterfactuals are
    re-ranked with the package's proximity (see
    :mod:`skfairverify.counterfactual`), or by the prediction gap.

    dice-ml is slow (tens of milliseconds per query for ``genetic`` and ``random``,
    seconds to minutes for ``kdtree``, and a row can take minutes in its post-hoc
    sparsity search: up to 10,000 model calls per counterfactual and feature); prefer
    :class:`KDTreeCounterfactuals` except for parity with the paper.
    ``generate(X, k, max_time=...)`` bounds a call's CPU time: the model calls stop once
    it is spent (:class:`~skfairverify.CounterfactualFairness` passes its own
    ``max_time``). dice-ml does not accept missing values (its data interface takes the
    range and spread of every column): rows with NaN are refused with a ``ValueError``;
    impute them before, or use ``"kdtree"`` / ``"linear"``. dice-ml's ``genetic``
    method takes no seed, so its output is not reproducible; ``random`` is seeded from
    ``random_state``.
    The ``kdtree`` method only returns training rows whose immutable columns equal the
    query's: with a sensitive column held fixed, every counterfactual is a person of
    the query's own group, which is why
    :class:`~skfairverify.CounterfactualFairness` refuses it.

    Parameters
    ----------
    method : {"genetic", "random", "kdtree"}, default="genetic"
    immutable_features : list of str, default=None
    desired_class : label, default=None
        ``None`` means ``estimator.classes_[-1]``.
    ranking : {"distance", "prediction"}, default="distance"
    random_state : int, default=None
        Seed of dice-ml's ``random`` method (and of numpy's global generator around
        the call for the other methods).
    dice_kwargs : dict, default=None
        Extra keyword arguments of ``generate_counterfactuals``.

    Examples
    --------
    >>> from skfairverify.counterfactual import DiceCounterfactuals
    >>> DiceCounterfactuals(method="random", random_state=0)
    DiceCounterfactuals(method='random', random_state=0)
    """

    # dice-ml costs tens of milliseconds to seconds per row: small chunks keep the
    # progress bar and the joblib workers busy
    query_chunk_size = 4
    _fitted_attribute = "explainer_"
    _parameter_constraints: dict = {
        **BaseGenerator._parameter_constraints,
        "method": [StrOptions({"genetic", "random", "kdtree"})],
        "random_state": ["random_state"],
        "dice_kwargs": [dict, None],
    }

    def __init__(self, method="genetic", *, immutable_features=None, desired_class=None,
                 ranking="distance", random_state=None, dice_kwargs=None):
        self.method = method
        self.immutable_features = immutable_features
        self.desired_class = desired_class
        self.ranking = ranking
        self.random_state = random_state
        self.dice_kwargs = dice_kwargs

    def fit(self, X: pd.DataFrame, estimator) -> DiceCounterfactuals:
        """Build dice-ml's data, model and explainer objects.

        Parameters
        ----------
        X : DataFrame
            Training rows.
        estimator : fitted binary classifier taking DataFrames with the columns of X.

        Returns
        -------
        self
        """
        X = self._fit_common(X, estimator)
        _refuse_missing(X, "fit")
        dice_ml = import_optional("dice_ml", "the dice counterfactual generators")
        outcome = "__skfv_outcome__"
        frame = X.copy()
        for c in frame.columns:
            if isinstance(frame[c].dtype, pd.CategoricalDtype) or _is_text(frame[c]):
                frame[c] = frame[c].astype(str)
        frame[outcome] = np.asarray(estimator.predict(X))
        self.continuous_ = [c for c in X.columns if c in self.proximity_.numeric]
        data = dice_ml.Data(dataframe=frame, continuous_features=self.continuous_,
                            outcome_name=outcome)
        model = dice_ml.Model(model=_StringInputModel(estimator, X.dtypes, self),
                              backend="sklearn")
        with _dice_warnings_filtered():
            self.explainer_ = dice_ml.Dice(data, model, method=self.method)
        return self

    def _generate(self, Xq: pd.DataFrame, k: int) -> CounterfactualSet:
        """Ask dice-ml for ``k`` counterfactuals of every query row (one call per row).

        Rows for which dice-ml finds nothing (or fails) have no entry.
        """
        _refuse_missing(Xq, "generate")
        kwargs = dict(self.dice_kwargs or {})
        if self.method == "random" and self.random_state is not None:
            kwargs.setdefault("random_seed", int(self.random_state))
        query = Xq.copy()
        for c in query.columns:
            if isinstance(query[c].dtype, pd.CategoricalDtype) or _is_text(query[c]):
                query[c] = query[c].astype(str)
        frames, positions = [], []
        state = np.random.get_state()  # noqa: NPY002 (dice-ml draws from the global RNG)
        if self.random_state is not None and isinstance(self.random_state, Integral):
            np.random.seed(int(self.random_state))  # noqa: NPY002
        try:
            for i in range(len(query)):
                self._check_time(i)
                self._rows_done = i
                cf = self._ask(query.iloc[[i]], k, kwargs)
                if cf is not None and len(cf):
                    frames.append(cf[list(Xq.columns)])
                    positions.append(np.full(len(cf), i))
        finally:
            if self.random_state is not None:
                np.random.set_state(state)  # noqa: NPY002
        if not frames:
            return self._finalize(Xq, Xq.iloc[:0], np.zeros(0, int), np.zeros(0), k)
        cfs = _restore_dtypes(pd.concat(frames, ignore_index=True), Xq.dtypes)
        pos = np.concatenate(positions)
        ok = self._accepted(cfs)
        cfs, pos = cfs.loc[ok].reset_index(drop=True), pos[ok]
        dist = self.proximity_.distance(Xq.iloc[pos].reset_index(drop=True), cfs)
        return self._finalize(Xq, cfs, pos, dist, k)

    def _ask(self, row: pd.DataFrame, k: int, kwargs: dict):
        """dice-ml's counterfactuals of one row, or None when it finds none (or fails)."""
        try:
            with _dice_warnings_filtered(), contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):  # dice-ml prints progress
                res = self.explainer_.generate_counterfactuals(
                    row, total_CFs=k, desired_class=_dice_class(self),
                    features_to_vary=self.features_, verbose=False, **kwargs)
        except GenerationTimeout:  # raised by the model's calls: the budget is spent
            raise
        except Exception:  # dice-ml raises when it finds nothing  # noqa: BLE001
            return None
        return res.cf_examples_list[0].final_cfs_df


def _refuse_missing(X: pd.DataFrame, method: str) -> None:
    """dice-ml cannot read missing values: refuse them, naming the columns."""
    columns = missing_columns(X)
    if columns:
        raise ValueError(
            f"DiceCounterfactuals.{method}: X has missing values in the columns {columns}, "
            "which dice-ml does not accept (its data interface takes the range and spread "
            "of every column). Impute them first, or use generator='kdtree' or 'linear', "
            "which accept missing values."
        )


def _is_text(series: pd.Series) -> bool:
    return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)


def _dice_class(gen) -> int | str:
    classes = list(gen.estimator_.classes_)
    return classes.index(gen.desired_class_) if classes != [0, 1] else int(gen.desired_class_)


def _restore_dtypes(frame: pd.DataFrame, dtypes: pd.Series) -> pd.DataFrame:
    out = {}
    for c, dt in dtypes.items():
        col = frame[c]
        if isinstance(dt, pd.CategoricalDtype):
            cats = dt.categories
            mapping = {str(v): v for v in cats}
            out[c] = pd.Categorical(col.astype(str).map(mapping), dtype=dt)
        elif pd.api.types.is_bool_dtype(dt):
            out[c] = col.astype(str).map({"True": True, "False": False}).astype(bool)
        elif pd.api.types.is_integer_dtype(dt):
            out[c] = np.round(pd.to_numeric(col)).astype(dt)
        elif pd.api.types.is_numeric_dtype(dt):
            out[c] = pd.to_numeric(col).astype(dt)
        else:
            out[c] = col.astype(dt)
    return pd.DataFrame(out)


class _StringInputModel:
    """Give the model back the column dtypes it was trained with (dice-ml passes strings)."""

    def __init__(self, estimator, dtypes: pd.Series, owner):
        self.estimator = estimator
        self.dtypes = dtypes
        self.classes_ = estimator.classes_
        self.owner = owner  # the generator: its generate call's CPU budget

    def _fix(self, X):
        self.owner._check_time(getattr(self.owner, "_rows_done", 0))
        X = pd.DataFrame(X).reset_index(drop=True)
        return _restore_dtypes(X[list(self.dtypes.index)], self.dtypes)

    def predict_proba(self, X):
        return self.estimator.predict_proba(self._fix(X))

    def predict(self, X):
        return self.estimator.predict(self._fix(X))
