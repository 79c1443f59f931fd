"""Binning of numeric features into one-hot bins with per-bin training means (FVGM, Section 3)."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import KBinsDiscretizer
from sklearn.utils.validation import check_is_fitted, validate_data

from ..s3p._errors import TableTooLargeError
from ..utils._compat import Interval, StrOptions, _check_feature_names_in, _fit_context
from ..utils._validation import check_sample_weight, check_unique_columns
from ._checks import check_finite_columns, check_numeric_columns, column_names

__all__ = ["BinningDiscretizer"]

#: Numbers of bins up to this are always accepted; above it, ``n_bins`` may not
#: exceed the number of training rows (the bins could not all be filled, and the bin
#: edges, quantiles or k-means centres alone take ``8 * n_bins`` bytes per feature).
FREE_N_BINS = 10_000


def _check_n_bins(n_bins, n_rows: int) -> None:
    """Refuse, before anything is allocated, more bins than rows beyond FREE_N_BINS."""
    largest = int(np.max(n_bins))
    if largest > max(FREE_N_BINS, n_rows):
        raise ValueError(
            f"n_bins={largest:,} exceeds the number of training rows (n_samples = {n_rows:,}): "
            f"a feature cannot fill more bins than it has rows, and the bin edges alone "
            f"would take {8 * largest:,} bytes per feature. Use n_bins <= "
            f"{max(FREE_N_BINS, n_rows):,}."
        )


def _output_bytes(n_rows: int, n_features: int, n_bins: int, encode: str) -> tuple[int, int]:
    """``(entries, bytes)`` of the one-hot output: dense float64, or CSR float64 / int32."""
    if encode == "onehot-dense":
        entries = n_rows * n_bins
        return entries, 8 * entries
    entries = n_rows * n_features  # one stored 1.0 per row and feature
    return entries, 12 * entries + 8 * (n_rows + 1)


def _check_output_size(n_rows, n_features, n_bins, encode, limit) -> None:
    """Refuse, before allocating it, a transform output beyond ``max_output_size`` entries."""
    entries, nbytes = _output_bytes(n_rows, n_features, n_bins, encode)
    if limit is None or entries <= limit:
        return
    hint = (
        "use encode='onehot' (sparse: "
        f"{_output_bytes(n_rows, n_features, n_bins, 'onehot')[1]:,} bytes), "
        if encode == "onehot-dense" else ""
    )
    shape = (f"{n_rows:,} rows x {n_bins:,} one-hot bin columns (dense)"
             if encode == "onehot-dense" else
             f"{n_rows:,} rows x {n_features:,} features stored (sparse)")
    raise TableTooLargeError(
        f"BinningDiscretizer.transform would allocate {entries:,} entries ({nbytes:,} bytes): "
        f"{shape}, beyond "
        f"max_output_size={limit:,}. To get past it, {hint}transform fewer rows at a time, "
        "use bin_index() (one integer per row and feature), use fewer bins (n_bins), or "
        "raise max_output_size."
    )


def _ignore_kbins_warnings() -> None:
    """Silence the KBinsDiscretizer warnings that do not apply (see the class Notes)."""
    # Bins with equal edges are merged, as documented (``n_bins_``); scikit-learn
    # would warn about it for every column with repeated values.
    warnings.filterwarnings(
        "ignore", message="Bins whose width are too small", category=UserWarning
    )
    # A constant feature keeps its single bin and that bin's mean (the constant).
    warnings.filterwarnings(
        "ignore", message=r"Feature \d+ is constant and will be replaced with 0",
        category=UserWarning,
    )
    # k-means on repeated values: duplicate centres give coinciding edges, merged.
    warnings.filterwarnings(
        "ignore", message="Number of distinct clusters", category=ConvergenceWarning
    )


#: Columns whose largest magnitude exceeds this are binned on values scaled by a power of
#: two (exact): k-means squares the values (overflow from about 1e154) and the uniform
#: strategy subtracts the extremes (overflow near 1e308).
_LARGE = 2.0**500
#: Rows binned at a time for the bin means (the per-bin sums add up over the chunks).
MEAN_CHUNK_ROWS = 2**18


def _column_scales(X: np.ndarray, threshold: float) -> np.ndarray:
    """Per column, ``2**-e`` with ``max |x| < 2**e`` where it exceeds ``threshold``, else 1.

    Multiplying by a power of two is exact (no rounding), so a scaled column gives the
    same bins, means and edges once scaled back.
    """
    if X.shape[0] == 0:
        return np.ones(X.shape[1])
    largest = np.abs(X).max(axis=0)
    _, exponent = np.frexp(largest)
    return np.where(largest > threshold, np.ldexp(1.0, -exponent), 1.0)


def _unscaled_edges(edges, scale: float, values: np.ndarray) -> np.ndarray:
    """The edges of a column binned at ``scale``, back in its units.

    k-means can leave an edge beyond the values when clusters coincide (an empty
    cluster's centre); on a scaled column that edge, divided back, would overflow, so
    it is clipped to the column's range first.
    """
    edges = np.asarray(edges, dtype=float)
    if scale == 1.0:
        return edges
    scaled = values * scale
    return np.clip(edges, scaled.min(), scaled.max()) / scale


def _bin_scales(magnitude: np.ndarray) -> np.ndarray:
    """Per bin, ``2**-e`` with the bin's largest magnitude below ``2**e`` (1 when small).

    Scaling by a power of two is exact; by the bin's own largest value (not the
    column's), small values in a bin of their own keep their precision.
    """
    _, exponent = np.frexp(magnitude)
    return np.where(magnitude > 1.0, np.ldexp(1.0, -exponent), 1.0)


def _num_rows(X) -> int | None:
    """Rows of an input without converting it (None when it has no shape)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return None


class BinningDiscretizer(TransformerMixin, BaseEstimator):
    """Bin numeric features into one-hot indicators and remember each bin's training mean.

    FVGM (Ghosh et al., 2022, Section 3) replaces a continuous feature ``X_c`` with
    coefficient ``w_c`` by ``k`` bin indicators ``B_i`` whose coefficients are
    ``w_c * mu_i``, where ``mu_i`` is the mean of the training values in bin ``i``;
    then ``X_c ~ sum_i mu_i B_i``. This transformer computes the bins with
    :class:`~sklearn.preprocessing.KBinsDiscretizer` (``encode="ordinal"``
    internally), outputs the one-hot indicator matrix and stores the bin means.

    Parameters
    ----------
    n_bins : int or array-like of shape (n_features,), default=5
        Number of bins per feature (>= 2). Bins whose edges coincide (quantile
        or k-means strategy on data with repeated values) are removed, see
        ``n_bins_``. Above 10,000 (``FREE_N_BINS``), ``n_bins`` may not exceed the
        number of training rows: such a request is refused with a ValueError before
        anything is allocated (it is not clamped, since fewer quantiles would move the
        edges).
    strategy : {"uniform", "quantile", "kmeans"}, default="quantile"
        How the bin edges are placed, as in
        :class:`~sklearn.preprocessing.KBinsDiscretizer` (quantiles by its
        ``quantile_method="averaged_inverted_cdf"``, whatever the scikit-learn
        version's default).
    subsample : int or None, default=200_000
        Maximum number of rows used to compute the quantiles (``strategy="quantile"``);
        ``None`` uses all rows. The bin means always use every training row.
    random_state : int, RandomState instance or None, default=None
        Seed of the subsampling.
    encode : {"onehot-dense", "onehot"}, default="onehot-dense"
        Output of :meth:`transform`: a dense float64 array, or a sparse CSR matrix
        (one stored 1.0 per row and feature).
    max_output_size : int or None, default=50_000_000
        Largest number of entries :meth:`transform` may allocate: ``rows x sum(n_bins_)``
        for the dense output (8 bytes each, 400 MB by default), ``rows x n_features``
        stored values for the sparse one (12 bytes each). A larger output is refused
        with :class:`~skfairverify.s3p.TableTooLargeError` before it is allocated;
        ``None`` removes the limit.

    Attributes
    ----------
    bin_edges_ : list of ndarray of shape (n_bins_[j] + 1,)
        Edges of the bins of each feature (as in ``KBinsDiscretizer``). Values
        below the first edge or above the last one fall in the first / last bin.
    n_bins_ : ndarray of int of shape (n_features,)
        Number of bins per feature after removal of duplicate edges.
    bin_means_ : list of ndarray of shape (n_bins_[j],)
        Mean of the training values that fall in each bin. A bin that received
        no training value (possible with ``strategy="uniform"`` or ``"kmeans"``)
        gets the midpoint of its two edges instead.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of str of shape (n_features_in_,)
        Names of features seen during :term:`fit` (only when ``X`` has string
        column names).

    See Also
    --------
    sklearn.preprocessing.KBinsDiscretizer : The binning used underneath.
    IntegerWeightScaler : Integer coefficients of a linear classifier.

    Notes
    -----
    Warnings of :class:`~sklearn.preprocessing.KBinsDiscretizer` silenced at the
    call, because they do not apply here: "Bins whose width are too small" (the
    merged bins are reported by ``n_bins_``) and "Feature ... is constant and will
    be replaced with 0" (a constant feature keeps one bin whose mean is the
    constant). With ``strategy="kmeans"``, k-means' ``ConvergenceWarning`` "Number
    of distinct clusters ... found smaller than n_clusters" is silenced as well
    (the duplicate centres give coinciding edges, merged as above); any other
    warning reaches the user.

    The output columns are feature-major: all bins of the first feature (in bin
    order), then those of the second, and so on; they are named
    ``"<feature>_bin<k>"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.preprocessing import BinningDiscretizer
    >>> X = pd.DataFrame({"age": [20., 22., 30., 34., 50., 58.]})
    >>> disc = BinningDiscretizer(n_bins=3).fit(X)
    >>> disc.bin_means_[0].tolist()
    [21.0, 32.0, 54.0]
    >>> disc.get_feature_names_out().tolist()
    ['age_bin0', 'age_bin1', 'age_bin2']
    >>> disc.transform(X).astype(int).tolist()[:2]
    [[1, 0, 0], [1, 0, 0]]
    >>> disc.inverse_transform(disc.transform(X)).ravel().tolist()
    [21.0, 21.0, 32.0, 32.0, 54.0, 54.0]
    >>> disc.bin_index(X).ravel().tolist()
    [0, 0, 1, 1, 2, 2]
    """

    # how the rule readers read this step: its row of skfairverify.rules.PIPELINE_STEPS
    _pipeline_step = "BinningDiscretizer"

    _parameter_constraints: dict = {
        "n_bins": [Interval(Integral, 2, None, closed="left"), "array-like"],
        "strategy": [StrOptions({"uniform", "quantile", "kmeans"})],
        "subsample": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "encode": [StrOptions({"onehot-dense", "onehot"})],
        "max_output_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, n_bins=5, strategy="quantile", subsample=200_000, random_state=None,
                 encode="onehot-dense", max_output_size=50_000_000):
        self.n_bins = n_bins
        self.strategy = strategy
        self.subsample = subsample
        self.random_state = random_state
        self.encode = encode
        self.max_output_size = max_output_size

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Compute the bin edges and the per-bin training means.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric data without missing values.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row: weighted quantiles (scikit-learn's
            ``KBinsDiscretizer``, so integer weights give the bins of repeated rows) and
            weighted bin means. ``None``: every row weighs 1.

        Returns
        -------
        self : BinningDiscretizer
            The fitted transformer.
        """
        X = self._validate(X, reset=True)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        _check_n_bins(self.n_bins, X.shape[0])
        kbins = KBinsDiscretizer(
            n_bins=self.n_bins,
            encode="ordinal",
            strategy=self.strategy,
            quantile_method="averaged_inverted_cdf",  # as the verifier's bins
            subsample=self.subsample,
            random_state=self.random_state,
            dtype=np.float64,
        )
        self._scale = _column_scales(X, _LARGE)
        with warnings.catch_warnings():
            _ignore_kbins_warnings()
            kbins.fit(X * self._scale, sample_weight=sample_weight)
        self._kbins = kbins
        self.bin_edges_ = [_unscaled_edges(e, s, X[:, j])
                           for j, (e, s) in enumerate(zip(kbins.bin_edges_, self._scale))]
        self.n_bins_ = np.asarray(kbins.n_bins_, dtype=np.int64)
        self.bin_means_ = self._bin_means(X, sample_weight)
        return self

    def _bin_means(self, X, sample_weight) -> list:
        """Weighted mean of the values in every bin (the midpoint of an empty bin).

        Rows are binned in chunks (the bin indices of all rows at once would take three
        copies of ``X``); the per-bin sums add up over the chunks. The sums are of the
        values scaled, bin by bin, by a power of two below the bin's largest magnitude
        (exact) when the column's values exceed ``2**500``, so that they cannot
        overflow and small values keep their precision: values near 1e308 have finite
        means, and a bin of 1e-300 next to them has mean 1e-300.
        """
        chunk_rows = MEAN_CHUNK_ROWS
        k = [int(n) for n in self.n_bins_]
        scales = self._mean_scales(X, k, chunk_rows)
        mass = [np.zeros(kj) for kj in k]
        sums = [np.zeros(kj) for kj in k]
        for start in range(0, X.shape[0], chunk_rows):
            rows = slice(start, start + chunk_rows)
            idx = self._index(X[rows])
            w = np.ones(idx.shape[0]) if sample_weight is None else sample_weight[rows]
            for j in range(X.shape[1]):
                mass[j] += np.bincount(idx[:, j], weights=w, minlength=k[j])
                scaled = X[rows, j] * scales[j][idx[:, j]]
                sums[j] += np.bincount(idx[:, j], weights=w * scaled, minlength=k[j])
        means = []
        for j in range(X.shape[1]):
            edges = self.bin_edges_[j]
            # A bin without weight: the midpoint of its edges (finite, since a bin with an
            # infinite edge is the single bin of a constant feature and holds every value).
            with np.errstate(invalid="ignore"):  # -inf + inf of that single bin
                mid = 0.5 * edges[:-1] + 0.5 * edges[1:]
            mean = sums[j] / np.where(mass[j] > 0, mass[j], 1.0) / scales[j]
            means.append(np.where(mass[j] > 0, mean, mid))
        return means

    def _mean_scales(self, X, k: list, chunk_rows: int) -> list:
        """Per feature and bin, the power of two the bin's values are summed at.

        1 for the columns whose sums cannot overflow (largest magnitude at most
        ``2**500``: the sums are those of the values themselves); for the others, from
        each bin's largest magnitude, found in one more pass over the rows.
        """
        large = [j for j in range(X.shape[1])
                 if X.shape[0] and np.abs(X[:, j]).max() > _LARGE]
        scales = [np.ones(kj) for kj in k]
        if not large:
            return scales
        peak = {j: np.zeros(k[j]) for j in large}
        for start in range(0, X.shape[0], chunk_rows):
            rows = slice(start, start + chunk_rows)
            idx = self._index(X[rows])
            for j in large:
                np.maximum.at(peak[j], idx[:, j], np.abs(X[rows, j]))
        for j in large:
            scales[j] = _bin_scales(peak[j])
        return scales

    def transform(self, X):
        """One-hot encode the bin of each value.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric data without missing values.

        Returns
        -------
        ndarray or scipy.sparse CSR matrix of float64 of shape (n_samples, sum(n_bins_))
            1.0 in the column of each feature's bin, 0.0 elsewhere; columns are
            feature-major in bin order (see :meth:`get_feature_names_out`). Sparse
            when ``encode="onehot"``.

        Raises
        ------
        TableTooLargeError
            If the output would hold more than ``max_output_size`` entries (checked
            before it is allocated; the message names the size and what to change).
        """
        check_is_fitted(self)
        total = int(self.n_bins_.sum())
        n_rows = _num_rows(X)
        if n_rows is not None:  # before the (copying) validation of a huge input
            _check_output_size(n_rows, len(self.n_bins_), total, self.encode,
                               self.max_output_size)
        X = self._validate(X, reset=False)
        _check_output_size(X.shape[0], X.shape[1], total, self.encode, self.max_output_size)
        idx = self._index(X)
        offsets = np.concatenate([[0], np.cumsum(self.n_bins_)[:-1]])
        cols = idx + offsets[None, :]
        if self.encode == "onehot":
            n, p = idx.shape
            return sparse.csr_matrix(
                (np.ones(n * p), cols.ravel(), np.arange(0, n * p + 1, p)),
                shape=(n, total),
            )
        out = np.zeros((X.shape[0], total), dtype=np.float64)
        rows = np.arange(X.shape[0])
        for j in range(X.shape[1]):
            out[rows, cols[:, j]] = 1.0
        return out

    def bin_index(self, X) -> np.ndarray:
        """Bin of each value, as an integer.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric data without missing values.

        Returns
        -------
        ndarray of int64 of shape (n_samples, n_features)
            The bin of each value in ``0 .. n_bins_[j] - 1``; values outside the
            training edges are clipped to the first or last bin.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        return self._index(X)

    def inverse_transform(self, X):
        """Map one-hot bins back to the bins' training means.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, sum(n_bins_))
            One-hot bin indicators as returned by :meth:`transform`; within each
            feature's block the column with the largest value is taken.

        Returns
        -------
        ndarray of float64 of shape (n_samples, n_features_in_)
            The training mean of each row's bin, per feature.
        """
        check_is_fitted(self)
        if isinstance(X, pd.DataFrame):
            X = X.to_numpy(dtype=float)
        if sparse.issparse(X):
            X = X.toarray()  # as large as the dense output, whose size was accepted
        X = np.asarray(X, dtype=float)
        total = int(self.n_bins_.sum())
        if X.ndim != 2 or X.shape[1] != total:
            raise ValueError(
                f"inverse_transform expects {total} one-hot columns (sum of n_bins_), "
                f"got shape {X.shape}."
            )
        names = column_names(self, self.n_features_in_)
        out = np.empty((X.shape[0], len(self.n_bins_)), dtype=float)
        start = 0
        for j, k in enumerate(self.n_bins_):
            block = X[:, start : start + k]
            if X.shape[0] and np.any(block.max(axis=1) <= 0):
                raise ValueError(
                    f"Some rows have no active bin for feature {names[j]!r} in inverse_transform."
                )
            out[:, j] = self.bin_means_[j][np.argmax(block, axis=1)]
            start += k
        return out

    def get_feature_names_out(self, input_features=None):
        """Names of the one-hot output columns, ``"<feature>_bin<k>"``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; defaults to ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        ndarray of str
            One name per output column, feature-major in bin order.
        """
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        return np.asarray(
            [f"{name}_bin{k}" for name, n in zip(names, self.n_bins_) for k in range(int(n))],
            dtype=object,
        )

    # ------------------------------------------------------------------ helpers

    def _index(self, X):
        idx = self._kbins.transform(X * self._scale)
        return idx.astype(np.int64)

    def _validate(self, X, reset):
        if isinstance(X, pd.DataFrame):
            check_unique_columns(X)
        check_numeric_columns(X, type(self).__name__)
        X = validate_data(self, X, reset=reset, dtype=np.float64, ensure_all_finite=False)
        check_finite_columns(X, column_names(self, X.shape[1]))
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
