"""The base of the small result objects that every analysis returns."""

from __future__ import annotations

import pandas as pd

from ._html import notebook_block, result_parts

__all__ = ["Result"]


class Result:
    """Base of skfairverify's result objects: ``to_frame()``, a repr and a notebook view.

    Subclasses (usually dataclasses) implement :meth:`to_frame` and may override
    :meth:`_summary`, the short text of the repr, and ``_html_parts``, the tables of
    the notebook display (by default ``to_frame()``, then the fields that are dicts of
    numbers, then the scalar fields; see ``skfairverify.utils._html``).

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.utils._results import Result
    >>> class Rates(Result):
    ...     def to_frame(self):
    ...         return pd.DataFrame({"rate": [0.5, 0.25]}, index=["a", "b"])
    >>> Rates()
    Rates(2 rows: rate)
    >>> '<td class="num">0.2500</td>' in Rates()._repr_html_()
    True
    """

    def to_frame(self) -> pd.DataFrame:  # pragma: no cover - abstract
        """The result as a DataFrame, one row per group (or per feature)."""
        raise NotImplementedError

    def _summary(self) -> str:
        frame = self.to_frame()
        return f"{len(frame)} rows: {', '.join(map(str, frame.columns))}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._summary()})"

    def _html_parts(self) -> list[str]:
        """The HTML tables of the notebook display."""
        return result_parts(self)

    def _repr_html_(self) -> str:
        return notebook_block(type(self).__name__, self._summary(), self._html_parts())
