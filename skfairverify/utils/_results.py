"""The base of the small result objects that every analysis returns."""

from __future__ import annotations

import pandas as pd

__all__ = ["Result"]


class Result:
    """Base of skfairverify's result objects: ``to_frame()``, a repr and a notebook view.

    Subclasses (usually dataclasses) implement :meth:`to_frame` and may override
    :meth:`_summary`, the short text of the repr.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.utils._results import Result
    >>> class Rates(Result):
    ...     def to_frame(self):
    ...         return pd.DataFrame({"rate": [0.5, 0.25]}, index=["a", "b"])
    >>> Rates()
    Rates(2 rows: rate)
    """

    def to_frame(self) -> pd.DataFrame:  # pragma: no cover - abstract
        """The result as a DataFrame, one row per group (or per feature)."""
        raise NotImplementedError

    def _summary(self) -> str:
        frame = self.to_frame()
        return f"{len(frame)} rows: {', '.join(map(str, frame.columns))}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._summary()})"

    def _repr_html_(self) -> str:
        return (f"<p><b>{type(self).__name__}</b></p>"
                + self.to_frame()._repr_html_())
