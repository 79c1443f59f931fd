"""CounterfactualResult: what CounterfactualFairness.evaluate returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..utils._html import counterfactual_tables, frame_table
from ..utils._results import Result
from ._base import CounterfactualSet

__all__ = ["CounterfactualResult"]

_GROUPS = ("privileged", "unprivileged")


@dataclass(repr=False, eq=False)
class CounterfactualResult(Result):
    """CFlips@k and nDCCF@k per group, from :meth:`CounterfactualFairness.evaluate`.

    Group values are (weighted) means over the audited rows of each group: the rows
    the model refuses and whose group the sensitive classifier recognises (the set
    :math:`\\mathcal{X}^-` of Cornacchia et al.) and that have at least one
    counterfactual.

    Attributes
    ----------
    cflips : dict
        ``{"privileged", "unprivileged", "delta"}``: CFlips@k of each group (a share
        in [0, 1]; 0 = no counterfactual changes group) and ``delta = unprivileged -
        privileged`` (positive: the unprivileged must look privileged more often to
        be accepted).
    ndccf : dict
        ``{"privileged", "unprivileged", "delta"}``: nDCCF@k of each group (in
        [0, 1]; 1 = no counterfactual changes group) and ``delta = privileged -
        unprivileged`` (positive: same reading as for CFlips).
    per_k : pandas.DataFrame
        Indexed by ``k = 1..K``: ``cflips_privileged``, ``cflips_unprivileged``,
        ``ndccf_privileged``, ``ndccf_unprivileged``, ``delta_cflips``,
        ``delta_ndccf``.
    n_refused : dict
        Audited rows of each group (refused and recognised by the sensitive
        classifier); the sum of their weights when ``sample_weight`` is given.
    sensitive_classifier : dict
        ``{"held_out": bool, "accuracy": float, "roc_auc": float, "by_group":
        DataFrame}``: the sensitive classifier's accuracy, ROC AUC (privileged as
        positive) and precision, recall, F1 and support per group (Table 2 of the
        paper), out-of-fold on the training rows (``held_out=False`` for a frozen
        classifier, scored on the rows passed to ``fit``).
    privileged : label
        The privileged value of the sensitive attribute.
    k : int
        Number of counterfactuals per row.
    n_refused_all : dict
        Refused rows of each group before the sensitive classifier's filter (sum of
        weights when weighted).
    n_without_counterfactuals : dict
        Audited rows of each group with no counterfactual (sum of weights when
        weighted); they take no part in the means.
    empty_groups : list of str
        Groups with no audited row with a counterfactual (or a zero total weight):
        their values and the deltas are NaN (with a warning).
    counterfactuals : CounterfactualSet
        The counterfactuals of the audited rows (indexed by the rows' labels in ``X``
        and the rank).
    by_group : pandas.DataFrame or None
        One row per group (per compound group for several attributes), as the
        verifier's groups: ``side`` (``"privileged"`` / ``"unprivileged"``),
        ``cflips`` and ``ndccf`` at ``k`` (means over the group's audited rows with
        counterfactuals; a flip is a counterfactual on the other side of the
        privileged group), ``delta_cflips`` (the group minus the privileged group) and
        ``delta_ndccf`` (the privileged group minus the group), ``n_refused``,
        ``n_without_counterfactuals`` and ``small_sample``: the comparison rests on
        fewer than ``min_group_size`` audited rows with counterfactuals (in the group,
        or in the privileged group). The pooled ``cflips`` / ``ndccf`` are the means
        of the unprivileged rows together.
    groups : dict
        ``{"privileged": [label], "unprivileged": [labels]}``: the groups on each side.
    min_group_size : int or None
        The row count below which a comparison is flagged ``small_sample``.
    privileged_rule : str or None
        How the privileged group was chosen.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.counterfactual import CounterfactualResult
    >>> per_k = pd.DataFrame({"cflips_privileged": [.1], "cflips_unprivileged": [.5],
    ...                       "ndccf_privileged": [.9], "ndccf_unprivileged": [.4]},
    ...                      index=pd.RangeIndex(1, 2, name="k"))
    >>> res = CounterfactualResult.from_per_k(
    ...     per_k, n_refused={"privileged": 10, "unprivileged": 12}, privileged="M")
    >>> res
    CounterfactualResult(k=1, privileged='M': CFlips delta 0.4, nDCCF delta 0.5, \
audited rows 10 privileged / 12 unprivileged)
    >>> res.to_frame()["cflips"].tolist()
    [0.1, 0.5]
    """

    cflips: dict
    ndccf: dict
    per_k: pd.DataFrame
    n_refused: dict
    sensitive_classifier: dict
    privileged: object
    k: int
    n_refused_all: dict = field(default_factory=dict)
    n_without_counterfactuals: dict = field(default_factory=dict)
    empty_groups: list = field(default_factory=list)
    counterfactuals: CounterfactualSet | None = None
    by_group: pd.DataFrame | None = None
    groups: dict = field(default_factory=dict)
    min_group_size: int | None = None
    privileged_rule: str | None = None

    @classmethod
    def from_per_k(cls, per_k: pd.DataFrame, **fields) -> CounterfactualResult:
        """Build the result from its ``per_k`` curves (values at ``k`` = last row).

        Parameters
        ----------
        per_k : DataFrame
            The four group curves (``cflips_privileged`` ...) indexed by ``k``; the
            deltas are added.
        **fields
            The other attributes (``sensitive_classifier`` defaults to ``{}``).

        Returns
        -------
        CounterfactualResult
        """
        per_k = per_k.copy()
        per_k["delta_cflips"] = per_k["cflips_unprivileged"] - per_k["cflips_privileged"]
        per_k["delta_ndccf"] = per_k["ndccf_privileged"] - per_k["ndccf_unprivileged"]
        last = per_k.iloc[-1]
        metrics = {
            name: {"privileged": float(last[f"{name}_privileged"]),
                   "unprivileged": float(last[f"{name}_unprivileged"]),
                   "delta": float(last[f"delta_{name}"])}
            for name in ("cflips", "ndccf")
        }
        fields.setdefault("sensitive_classifier", {})
        fields.setdefault("k", int(per_k.index[-1]))
        return cls(per_k=per_k, **metrics, **fields)

    def to_frame(self) -> pd.DataFrame:
        """One row per group: CFlips@k, nDCCF@k and the audited (refused) rows.

        Returns
        -------
        pandas.DataFrame
            Index ``group`` (``"privileged"``, ``"unprivileged"``); columns
            ``cflips``, ``ndccf``, ``n_refused``, ``n_refused_all`` and
            ``n_without_counterfactuals`` (the last two when known).
        """
        columns = {
            "cflips": [self.cflips[g] for g in _GROUPS],
            "ndccf": [self.ndccf[g] for g in _GROUPS],
            "n_refused": [self.n_refused.get(g, np.nan) for g in _GROUPS],
        }
        for name in ("n_refused_all", "n_without_counterfactuals"):
            counts = getattr(self, name)
            if counts:
                columns[name] = [counts.get(g, np.nan) for g in _GROUPS]
        return pd.DataFrame(columns, index=pd.Index(list(_GROUPS), name="group"))

    @property
    def small_sample(self) -> list:
        """The groups whose comparison rests on fewer than ``min_group_size`` rows."""
        if self.by_group is None:
            return []
        return list(self.by_group.index[self.by_group["small_sample"].to_numpy(bool)])

    def _html_parts(self) -> list[str]:
        """The tables of the audit report's counterfactual section."""
        parts = counterfactual_tables(self.cflips, self.ndccf, self.n_refused,
                                      self.sensitive_classifier)
        if self.by_group is not None:
            parts.insert(1, frame_table(
                self.by_group, f"Per group at k={self.k} (delta: compared with the "
                f"privileged group {self.privileged!r}; small_sample: fewer than "
                f"{self.min_group_size} audited rows with counterfactuals)"))
        return parts

    def _summary(self) -> str:
        def fmt(v):
            return "NaN" if not np.isfinite(v) else f"{v:.4g}"

        rows = " / ".join(f"{fmt(self.n_refused.get(g, np.nan))} {g}" for g in _GROUPS)
        small = self.small_sample
        flag = f"; small samples: {small[:5]}" if small else ""
        return (f"k={self.k}, privileged={self.privileged!r}: CFlips delta "
                f"{fmt(self.cflips['delta'])}, nDCCF delta {fmt(self.ndccf['delta'])}, "
                f"audited rows {rows}{flag}")
