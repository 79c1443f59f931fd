"""AuditReport: everything the audit found, as plain Python data."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._render import render_html, render_text


@dataclass
class AuditReport:
    """Everything the audit found, as plain Python data (JSON-serialisable).

    Parameters
    ----------
    dataset : dict
        Name, numbers of rows and columns, favorable rate, ``sensitive_features``
        (column names) and the sizes of the training and test parts.
    model : dict
        Description of the audited model and its training and test accuracy.
    sections : dict, default={}
        One entry per analysis: ``"empirical"``, ``"verification"``, ``"comparison"``,
        ``"counterfactual"``, ``"esl_first_stage"``, ``"esl_second_stage"``; every
        number is labelled for what it is, every difference with its unit.
    timings : dict, default={}
        Seconds spent in each step.
    figures : dict, default={}
        Title -> PNG image (base64) for the HTML report.

    See Also
    --------
    run_audit : builds the report.

    Examples
    --------
    >>> from skfairverify.audit import AuditReport
    >>> report = AuditReport(dataset={"name": "toy"}, model={"description": "LR"})
    >>> sorted(report.to_dict())
    ['dataset', 'model', 'timings_seconds']
    """

    dataset: dict
    model: dict
    sections: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """The report without figures, for ``--json``.

        Returns
        -------
        dict
            ``dataset``, ``model``, the sections and ``timings_seconds``.
        """
        return {"dataset": self.dataset, "model": self.model, **self.sections,
                "timings_seconds": self.timings}

    def to_text(self) -> str:
        """A readable plain-text report.

        Returns
        -------
        str
            The report, prose lines wrapped at 100 characters.
        """
        return render_text(self)

    def to_html(self) -> str:
        """A self-contained HTML page with the figures embedded.

        Returns
        -------
        str
            The page.
        """
        return render_html(self)
