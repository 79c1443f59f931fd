"""Cross-fitted sensitive-feature classifier: no row is judged by a model fitted on it.

The kd-tree generators return training rows as counterfactuals. A classifier fitted
on those rows has memorised their group (a deep tree predicts it perfectly), so the
counterfactuals would look like their own group and CFlips would be biased towards 0.
:class:`CrossFittedSensitiveClassifier` fits one model per fold of the training rows
(folds are drawn over *distinct* rows, so that copies of a row share a fold) and

* judges a training row (matched on all its columns) by the model of the folds that
  exclude it (its out-of-fold prediction);
* judges any other row (a synthetic counterfactual, a test row) by the mean of the
  fold models' probabilities of the privileged group (or of their 0/1 votes when the
  classifier has no ``predict_proba``), privileged when that mean exceeds 1/2.

The fit depends on the rows, their labels and weights, the classifier's parameters,
``n_splits`` and ``random_state`` only, never on the model being audited; a scorer in a
model search fits it on the same rows for every candidate. :class:`CrossFitCache`
keeps a few fitted ones in memory, keyed by those inputs, and :func:`fit_cross_fitted`
reuses them inside :func:`crossfit_cache` (the scorers' ``cache=True``).
"""

from __future__ import annotations

import contextlib
import pickle
import threading
import uuid
from collections import OrderedDict
from contextvars import ContextVar
from numbers import Integral

import joblib
import numpy as np
import pandas as pd
from sklearn.base import clone

from ..s3p import TableTooLargeError
from ..s3p._errors import DEFAULT_MAX_TABLE_SIZE
from ..utils._fitting import fit_with_weights

__all__ = ["SENSITIVE_CLASSIFIER_CACHE", "CrossFitCache", "CrossFittedSensitiveClassifier",
           "KeyedCache", "crossfit_cache", "fit_cross_fitted", "group_report", "hash_key",
           "row_keys"]


_MIX = np.uint64(0x100000001B3)  # the FNV-1a prime: mixes the hashes of the columns
#: Largest out-of-fold probability table (rows x groups) of the sensitive classifier.
_MAX_PROBA_ENTRIES = DEFAULT_MAX_TABLE_SIZE


def row_keys(X: pd.DataFrame) -> np.ndarray:
    """A 64-bit hash of every row's values (dtype-insensitive: 3 and 3.0 match).

    Numbers are hashed as floats (``-0.0`` as ``0.0``), other values as their text;
    the columns' hashes are combined in the order of the columns (the arrays hashed
    directly: a frame of them and ``hash_pandas_object`` took five times as long).
    """
    keys = np.zeros(len(X), dtype=np.uint64)
    for j in range(X.shape[1]):
        col = X.iloc[:, j]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            values = col.to_numpy(dtype=float) + 0.0  # -0.0 -> 0.0
        else:
            values = col.astype(str).to_numpy(dtype=object)
        keys = (keys * _MIX) ^ pd.util.hash_array(values)
    return keys


def _assign_folds(keys: np.ndarray, y: np.ndarray, n_splits: int, seed) -> np.ndarray:
    """Fold of every row: distinct rows shuffled, dealt round-robin within each label."""
    codes, uniques = pd.factorize(keys)
    _, first = np.unique(codes, return_index=True)  # first occurrence of each distinct row
    label = y[first]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(uniques))
    fold_u = np.empty(len(uniques), dtype=int)
    for lab in np.unique(label):
        members = order[label[order] == lab]
        fold_u[members] = np.arange(len(members)) % n_splits
    return fold_u[codes]


class CrossFittedSensitiveClassifier:
    """``n_splits`` fold models of the sensitive group; leak-free predictions.

    Fitted on the rows' non-sensitive columns against their group: the privileged
    indicator (``1`` / ``0``, as :class:`CounterfactualFairness` fits it on each audit),
    or the raw sensitive values (any labels). Fitted once on a whole data set (e.g. the
    data of a model search, by
    :func:`~skfairverify.counterfactual.fit_sensitive_classifier`) and passed frozen
    as the ``sensitive_classifier`` of the audit or of the counterfactual scorers, it
    judges each of those rows, and each counterfactual that is one of them, by the fold
    model that did not see it, and is fitted once for every fold and candidate of the
    search.

    Parameters
    ----------
    estimator : classifier
        Unfitted; cloned once per fold and fitted on the other folds.
    n_splits : int
        Number of folds (>= 2).
    random_state : int, RandomState instance or None, default=None
        Seed of the fold assignment.

    Attributes
    ----------
    estimators_ : list of classifiers
        ``estimators_[f]`` is fitted on every training row outside fold ``f``.
    fold_ : numpy.ndarray of int
        Fold of each training row.
    classes_ : numpy.ndarray
        The groups, sorted (``[0, 1]`` for the privileged indicator).
    oof_proba_ : numpy.ndarray of float, shape (n_samples, n_classes)
        Out-of-fold probabilities (or votes) of each group for each training row.
    feature_names_in_ : numpy.ndarray of str
        Columns of ``X`` in ``fit``; ``predict_proba`` reads them by name.
    fit_id_ : str
        A random identifier of this fit (a pickled copy keeps it): the scorers key
        the audits they share by it rather than by a hash of the fold models.

    Notes
    -----
    A row is recognised by its values in every column (numbers compared as floats,
    other values as text): a training row gets its out-of-fold probabilities, any
    other row (a synthetic counterfactual, a row changed in any value) the mean of
    the fold models' probabilities (or of their 0/1 votes when the classifier has no
    ``predict_proba``). With two classes a row is predicted ``classes_[1]`` when its
    probability of it exceeds 1/2, with more the group of highest probability.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skfairverify.counterfactual import CrossFittedSensitiveClassifier
    >>> X = pd.DataFrame({"a": np.arange(8.0)})
    >>> s = np.array([0, 1] * 4)
    >>> clf = CrossFittedSensitiveClassifier(KNeighborsClassifier(1), 2, 0).fit(X, s)
    >>> KNeighborsClassifier(1).fit(X, s).predict(X)  # in-sample: memorised
    array([0, 1, 0, 1, 0, 1, 0, 1])
    >>> clf.predict(X)  # each row judged by the fold model that never saw it
    array([1, 0, 0, 0, 1, 0, 1, 0])
    >>> sex = np.array(["F", "M"] * 4)  # raw values
    >>> CrossFittedSensitiveClassifier(KNeighborsClassifier(1), 2, 0).fit(X, sex).classes_
    array(['F', 'M'], dtype='<U1')
    """

    def __init__(self, estimator, n_splits: int, random_state=None):
        self.estimator = estimator
        self.n_splits = n_splits
        self.random_state = random_state

    def fit(self, X: pd.DataFrame, y, sample_weight=None) -> CrossFittedSensitiveClassifier:
        """Fit one model per fold; record the folds of the distinct training rows.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_features)
            The non-sensitive columns.
        y : array-like of shape (n_samples,)
            The group of each row.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to each fold model's fit (a ``TypeError`` when it cannot take them).

        Returns
        -------
        self
        """
        X = self._check_frame(X)
        codes = self._encode(y, len(X))
        keys = row_keys(X)
        seed = self.random_state
        if isinstance(seed, np.random.RandomState):
            seed = seed.randint(np.iinfo(np.int32).max)
        fold = _assign_folds(keys, codes, self.n_splits, seed)
        counts = np.bincount(fold, minlength=self.n_splits)
        if (counts == 0).any():
            raise ValueError(
                f"Cross-fitting the sensitive classifier needs at least cv={self.n_splits} "
                f"distinct training rows; got {len(np.unique(keys))}. Lower cv."
            )
        base = self.estimator
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.estimators_ = [self._fit_fold(base, X, codes, fold != f, sample_weight, f)
                            for f in range(self.n_splits)]
        oof = np.empty((len(X), len(self.classes_)))
        for f, model in enumerate(self.estimators_):
            oof[fold == f] = self._score(model, X.loc[fold == f])
        self.fold_ = fold
        self.oof_proba_ = oof
        # copies of a row share a fold, hence out-of-fold probabilities: keep them by row
        self._key_proba = pd.DataFrame(oof, index=keys).groupby(level=0).first()
        self.fit_id_ = uuid.uuid4().hex
        return self

    def _encode(self, y, n: int) -> np.ndarray:
        """``classes_`` and the code of each row's group (refused: one group only)."""
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != n:
            raise ValueError(
                f"The groups y of the sensitive classifier must be one value per row of X "
                f"({n}); got shape {y.shape}."
            )
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"The sensitive classifier needs at least two groups in y; got "
                f"{list(self.classes_)}."
            )
        size = n * len(self.classes_)
        if size > _MAX_PROBA_ENTRIES:
            raise TableTooLargeError(
                f"The out-of-fold probabilities of {n:,} rows x {len(self.classes_):,} "
                f"groups would take {size:,} entries, beyond {_MAX_PROBA_ENTRIES:,}: is y "
                "a sensitive attribute (a few groups)? Group its values first."
            )
        return codes.astype(int)

    def _fit_fold(self, base, X, codes, train, sample_weight, f):
        if len(np.unique(codes[train])) < 2:
            raise ValueError(
                f"Fold {f} of the sensitive classifier's cross-fitting has a single "
                "group in its training rows; lower cv or provide more rows per group."
            )
        w = None if sample_weight is None else np.asarray(sample_weight)[train]
        return fit_with_weights(clone(base), X.loc[train], codes[train], w,
                                what="the sensitive classifier")

    def _check_frame(self, X) -> pd.DataFrame:
        """``X`` as a DataFrame; after ``fit``, its columns in the fit's order."""
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                f"The sensitive classifier takes a DataFrame (its rows are recognised by "
                f"their values in named columns); got {type(X).__name__}."
            )
        names = getattr(self, "feature_names_in_", None)
        if names is None or list(X.columns) == list(names):
            return X
        missing = [c for c in names if c not in X.columns]
        if missing:
            raise ValueError(
                f"The sensitive classifier was fitted on the columns {list(names)}; X "
                f"lacks {missing} (has {list(X.columns)}). Fit it on the non-sensitive "
                "columns the audit hands it."
            )
        return X[list(names)]

    def _score(self, model, X: pd.DataFrame) -> np.ndarray:
        """The fold model's probabilities (or 0/1 votes) of every group, shape (n, C)."""
        out = np.zeros((len(X), len(self.classes_)))
        if hasattr(model, "predict_proba"):
            proba = np.asarray(model.predict_proba(X), dtype=float)
            out[:, np.asarray(model.classes_, dtype=int)] = proba
        else:
            out[np.arange(len(X)), np.asarray(model.predict(X), dtype=int)] = 1.0
        return out

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Probabilities of each group in ``classes_`` for every row, leak-free.

        Parameters
        ----------
        X : DataFrame
            Rows with the columns of ``fit`` (read by name).

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes)
        """
        X = self._check_frame(X)
        p = self._key_proba.reindex(row_keys(X)).to_numpy(dtype=float, copy=True)
        synthetic = np.isnan(p[:, 0])
        if synthetic.any():
            Xs = X.loc[synthetic]
            p[synthetic] = np.mean([self._score(m, Xs) for m in self.estimators_], axis=0)
        if len(self.classes_) == 2:  # the complement, as the privileged indicator's
            p[:, 0] = 1.0 - p[:, 1]
        return p

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """The group of every row from its leak-free probabilities (see Notes).

        Parameters
        ----------
        X : DataFrame
            Rows with the columns of ``fit``.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        if len(self.classes_) == 2:
            return self.classes_[(proba[:, 1] > 0.5).astype(int)]
        return self.classes_[np.argmax(proba, axis=1)]


def _is_seed(value) -> bool:
    """An integer seed (a fixed draw), not ``None``, a generator or a bool."""
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _is_deterministic(estimator, random_state) -> bool:
    """Whether the fit is a function of its inputs: integer seeds everywhere.

    ``random_state=None`` (fresh folds each fit) or a ``RandomState`` (its state
    advances with each fit) make every fit a new draw, which a cache would repeat;
    so does a ``*random_state`` parameter of the classifier left at ``None``.
    """
    if not _is_seed(random_state):
        return False
    params = estimator.get_params(deep=True) if hasattr(estimator, "get_params") else {}
    return all(_is_seed(value) for name, value in params.items()
               if name == "random_state" or name.endswith("__random_state"))


class KeyedCache:
    """A bounded in-memory LRU store of values under string keys, per process.

    The store of :class:`CrossFitCache` and of the scorers' shared audits
    (:data:`skfairverify.metrics._counterfactual_scorer.AUDIT_CACHE`): thread-safe
    (one lock), it pickles empty (a joblib worker starts with its own), and keeps at
    most ``max_entries`` values of at most ``max_bytes`` together (sizes as given to
    :meth:`put`), the least recently used going first.

    Parameters
    ----------
    max_entries : int, default=8
        Entries kept; the least recently used goes first.
    max_bytes : int, default=256 MiB
        Bound on the sizes of all entries together; a value larger than that alone is
        not kept.

    Attributes
    ----------
    hits : int
        Look-ups answered from the store.
    misses : int
        Values stored after a look-up missed (or was not cacheable).

    Examples
    --------
    >>> from skfairverify.counterfactual._crossfit import KeyedCache
    >>> cache = KeyedCache(max_entries=1)
    >>> cache.put("a", 1, size=8); cache.put("b", 2, size=8)
    >>> cache.get("a") is None, cache.get("b"), len(cache), cache.hits
    (True, 2, 1, 1)
    """

    def __init__(self, max_entries: int = 8, max_bytes: int = 256 * 2**20):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._reset()

    def _reset(self) -> None:
        self._entries: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __getstate__(self) -> dict:
        return {"max_entries": self.max_entries, "max_bytes": self.max_bytes}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._reset()

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        """Sizes of the entries kept, in bytes."""
        return sum(size for _, size in self._entries.values())

    def get(self, key):
        """The value kept under ``key`` (now the most recent), or ``None``.

        Parameters
        ----------
        key : str or None
            ``None`` (a value not to be cached) always misses.

        Returns
        -------
        object or None
        """
        if key is None:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key, value, size) -> None:
        """Keep ``value`` under ``key`` (counted as a miss), evicting beyond the bounds.

        Parameters
        ----------
        key : str or None
            ``None``: nothing is kept.
        value : object
            Shared, read-only, with every later :meth:`get` of ``key``.
        size : int or None
            Its size in bytes; ``None`` (unknown): counted, not kept.
        """
        if key is None:
            return
        with self._lock:
            self.misses += 1
            if size is None or size > self.max_bytes:
                return
            self._entries[key] = (value, size)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries or self.nbytes > self.max_bytes:
                self._entries.popitem(last=False)


def hash_key(*parts) -> str | None:
    """:func:`joblib.hash` of ``parts``, or ``None`` when one cannot be pickled."""
    try:
        return joblib.hash(parts)
    except (pickle.PicklingError, TypeError, AttributeError):  # an unpicklable input
        return None


class CrossFitCache(KeyedCache):
    """Fitted :class:`CrossFittedSensitiveClassifier` objects, kept in memory (LRU).

    An entry is keyed by :func:`joblib.hash` of everything the fit reads: the unfitted
    classifier (its class and parameters), ``n_splits``, ``random_state``, the rows
    ``X`` (values, dtypes, columns and index), the labels and the weights. A fit whose
    result is not a function of those (``random_state`` not an integer, or a
    ``random_state`` of the classifier at ``None``), or whose inputs cannot be hashed,
    is not cached. The fitted classifier is read-only once fitted, so every audit that
    hits an entry shares it. The cache is per process (joblib workers each hold their
    own) and pickles empty (see :class:`KeyedCache`).

    Parameters
    ----------
    max_entries : int, default=8
        Entries kept; the least recently used goes first.
    max_bytes : int, default=256 MiB
        Bound on the pickled size of all entries together; a fitted classifier larger
        than that alone is not kept.

    Attributes
    ----------
    hits : int
        Fits answered from the cache.
    misses : int
        Cacheable fits that were run (and stored).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify.counterfactual._crossfit import CrossFitCache
    >>> X = pd.DataFrame({"a": np.arange(20.0)})
    >>> s = np.array([0, 1] * 10)
    >>> cache = CrossFitCache()
    >>> first = cache.fit(LogisticRegression(random_state=0), 2, 0, X, s)
    >>> cache.fit(LogisticRegression(random_state=0), 2, 0, X, s) is first
    True
    >>> cache.hits, cache.misses, len(cache)
    (1, 1, 1)
    """

    def key(self, estimator, n_splits, random_state, X, y, sample_weight=None):
        """The entry's key of a fit, or ``None`` when that fit is not to be cached.

        Parameters
        ----------
        estimator, n_splits, random_state
            Those of :class:`CrossFittedSensitiveClassifier`.
        X, y, sample_weight
            Those of its ``fit``.

        Returns
        -------
        str or None
            :func:`joblib.hash` of all of them; ``None`` for a fit that is a new draw
            each time or inputs that cannot be hashed.
        """
        if not _is_deterministic(estimator, random_state):
            return None
        y = np.asarray(y, dtype=int)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        classifier = hash_key(estimator)
        if classifier is None:
            return None
        return hash_key(classifier, int(n_splits), int(random_state), X, y, w)

    def fit(self, estimator, n_splits, random_state, X, y, sample_weight=None):
        """The fitted classifier of these inputs: the kept one, or a new fit (kept).

        Parameters are those of :class:`CrossFittedSensitiveClassifier` and its ``fit``.

        Returns
        -------
        CrossFittedSensitiveClassifier
            Fitted (shared with the other users of the entry: do not refit it).
        """
        key = self.key(estimator, n_splits, random_state, X, y, sample_weight)
        fitted = self.get(key)
        if fitted is not None:
            return fitted
        fitted = CrossFittedSensitiveClassifier(estimator, n_splits, random_state).fit(
            X, y, sample_weight=sample_weight)
        if key is not None:
            try:  # the memory it holds, as the pickled size
                size = len(pickle.dumps(fitted, protocol=pickle.HIGHEST_PROTOCOL))
            except (pickle.PicklingError, TypeError, AttributeError):
                size = None
            self.put(key, fitted, size)
        return fitted


#: The process's cache of the scorers (``make_cflips_scorer(cache=True)``).
SENSITIVE_CLASSIFIER_CACHE = CrossFitCache()

_ACTIVE: ContextVar[CrossFitCache | None] = ContextVar("skfairverify_crossfit_cache",
                                                        default=None)


@contextlib.contextmanager
def crossfit_cache(cache: CrossFitCache | None):
    """Let :func:`fit_cross_fitted` use ``cache`` inside the block (``None``: no cache)."""
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)


def fit_cross_fitted(estimator, n_splits, random_state, X, y, sample_weight=None):
    """A fitted :class:`CrossFittedSensitiveClassifier`, from the active cache if any."""
    cache = _ACTIVE.get()
    if cache is None:
        return CrossFittedSensitiveClassifier(estimator, n_splits, random_state).fit(
            X, y, sample_weight=sample_weight)
    return cache.fit(estimator, n_splits, random_state, X, y, sample_weight)


def group_report(s_true: np.ndarray, s_pred: np.ndarray) -> pd.DataFrame:
    """Precision, recall, F1 and support of each group (1 = privileged, 0 = unprivileged).

    ``precision`` of a group is the share of rows predicted in it that belong to it,
    ``recall`` the share of its rows predicted in it (NaN when undefined).
    """
    rows = {}
    for g, name in ((1, "privileged"), (0, "unprivileged")):
        tp = int(np.sum((s_pred == g) & (s_true == g)))
        n_pred, n_true = int(np.sum(s_pred == g)), int(np.sum(s_true == g))
        prec = tp / n_pred if n_pred else np.nan
        rec = tp / n_true if n_true else np.nan
        f1 = 2 * prec * rec / (prec + rec) if n_pred and n_true and prec + rec > 0 else np.nan
        rows[name] = {"precision": prec, "recall": rec, "f1": f1, "support": n_true}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out
