"""Shared helpers for the dataset loaders: bundled files, checksums, Bunch building."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import IO

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

DATA_MODULE = "skfairverify.datasets"

#: SHA-256 of every bundled file AFTER decompression. They equal the checksums of the
#: original files (``SHA256SUMS`` of the source folder), so the bundled copies are
#: byte-identical to what their publishers released.
CHECKSUMS: dict[str, str] = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    "compas-two-years.csv": "734fbd093b4d661dce9ca789bfa359307bbcbdae315f7259ed59db59e32dc079",
    "titanic.csv": "4a437fde05fe5264e1701a7387ac6fb75393772ba38bb2c9c566405af5af4bd7",
}


@contextmanager
def open_data_file(name: str) -> Iterator[IO[bytes]]:
    """Open the bundled file ``name`` (decompressed) as a binary stream, in a ``with``.

    The ``.gz`` copy is read with :mod:`importlib.resources`, so this works from a
    source tree, an installed wheel or a zip import alike. Both the compressed file and
    the gzip stream are closed on exit (``gzip.open`` on a file object leaves that
    object open, hence a ResourceWarning before).
    """
    resource = resources.files(DATA_MODULE).joinpath("data", f"{name}.gz")
    with resource.open("rb") as raw, gzip.open(raw, "rb") as stream:
        yield stream


def data_file_sha256(name: str) -> str:
    """Hex SHA-256 digest of the decompressed bundled file ``name``."""
    digest = hashlib.sha256()
    with open_data_file(name) as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_descr(name: str) -> str:
    """Text of ``descr/<name>.rst``."""
    resource = resources.files(DATA_MODULE).joinpath("descr", f"{name}.rst")
    return resource.read_text(encoding="utf-8")


def to_category(
    series: pd.Series, categories: list[str] | None = None, *, ordered: bool = False
) -> pd.Series:
    """Cast to a pandas ``category`` dtype.

    With ``categories`` given, only the ones present in ``series`` are kept (in the
    given order), so no category is empty; otherwise the observed values, sorted.
    """
    if categories is None:
        categories = sorted(series.dropna().unique())
    else:
        present = set(series.dropna().unique())
        unknown = present.difference(categories)
        if unknown:  # pragma: no cover - the bundled files are fixed
            raise ValueError(f"Unexpected values {sorted(unknown)} in column {series.name!r}.")
        categories = [c for c in categories if c in present]
    return series.astype(pd.CategoricalDtype(categories, ordered=ordered))


def make_bunch(
    frame: pd.DataFrame,
    *,
    feature_names: list[str],
    target_column: str,
    target_names: list[str],
    sensitive_features: list[str],
    descr: str,
    as_frame: bool,
    return_X_y: bool,
) -> Bunch | tuple:
    """Split ``frame`` into data / target and wrap everything in a Bunch."""
    frame = frame.reset_index(drop=True)
    data = frame[feature_names]
    target = frame[target_column]
    if not as_frame:
        data = data.to_numpy()
        target = target.to_numpy()
        frame = None
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        sensitive_features=list(sensitive_features),
        frame=frame,
        DESCR=descr,
        feature_names=list(feature_names),
        target_names=np.asarray(target_names, dtype=object),
    )
