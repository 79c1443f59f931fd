"""AuditReport: everything the audit found, as plain Python data."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from importlib import metadata

from ._common import finite_or_none, jsonable
from ._html import render_html
from ._render import render_text

# The packages whose versions make an audit reproducible, in the order shown.
PACKAGES = ("skfairverify", "numpy", "scipy", "pandas", "scikit-learn", "pgmpy", "fairlearn",
            "joblib", "matplotlib", "dice-ml")


def package_versions() -> dict:
    """Python's and the audit's packages' versions (``"not installed"`` when absent).

    Returns
    -------
    dict
        ``{"python": "3.x.y", "skfairverify": ..., "numpy": ..., ...}``.

    Examples
    --------
    >>> from skfairverify.audit._report import package_versions
    >>> list(package_versions())[:3]
    ['python', 'skfairverify', 'numpy']
    """
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


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
        Title -> figure for the HTML report: a PNG image (base64 text or bytes) or SVG
        text.
    settings : dict, default={}
        The options of the run that made the report (``random_state``, ``test_size``,
        ``k``, ...), shown in the methods of the HTML report.
    environment : dict, default=package_versions()
        Python's and the packages' versions, recorded when the report is created.

    See Also
    --------
    run_audit : builds the report.

    Notes
    -----
    JSON schema (``to_json()``, ``--json``): one object whose keys are

    - ``dataset``: ``name``, ``rows``, ``features``, ``favorable_rate`` (share of label
      1), ``sensitive_features`` (list of column names), ``train_rows``, ``test_rows``;
    - ``model``: ``description``, ``train_accuracy``, ``test_accuracy``;
    - ``empirical``: observed rates on the test rows: ``label``, ``rows``, ``groups``
      (one record per group: the sensitive columns, ``selection_rate``,
      ``true_positive_rate``, ``false_positive_rate``, ``rows``, ``positives``,
      ``negatives``) and ``metrics`` (``disparate_impact``, ``statistical_parity``,
      ``equalized_odds``);
    - ``verification`` (step ``verify``): ``label``, ``groups`` (verified rates,
      ``support`` and the selection rate's interval ``ci_low`` / ``ci_high``),
      ``metrics``, ``metric_intervals`` (metric -> ``[low, high]``), ``intervals``
      (what the intervals are: ``kind``, ``level``, ``n_draws`` or ``tolerance``, and
      the ``label`` the reports show), ``metrics_network_relearned_on_test_rows`` and
      ``metric_intervals_network_relearned_on_test_rows`` (or null with
      ``network_relearned_on_test_rows_error``), ``most_favored_group``,
      ``least_favored_group``, ``agreement``, ``n_bins`` (and ``n_bins_reason``), ``multiplier``,
      ``method`` (and ``method_reason``: why that path),
      ``network_edges`` (``[parent, child]`` pairs), ``fairness_influence`` (records),
      ``fairness_influence_ci_low`` / ``fairness_influence_ci_high`` (records of the
      same shape: the credible bounds of every influence, or null without posterior
      draws), ``fairness_influence_intervals`` (what they are, as ``intervals``, or why
      there is none) and ``fairness_influence_units``;
    - ``comparison`` (step ``verify``): one record per metric: ``metric``,
      ``definition``, ``verified``, ``verified_interval`` (``[low, high]`` or null),
      ``verified_interval_kind``, ``verified_network_relearned_on_test_rows``,
      ``empirical_test_rows``, ``empirical_fairlearn_function``;
    - ``counterfactual`` (step ``counterfactual``): ``sensitive_features``, ``k``,
      ``privileged``, ``privileged_rule``, ``unprivileged``, ``cflips`` and ``ndccf``
      (``privileged``, ``unprivileged``, ``delta``), ``n_refused``,
      ``delta_definition``, ``units``, ``sensitive_classifier``, ``warnings``;
    - ``esl_first_stage`` / ``esl_second_stage`` (step ``esl``): the groups' ESL values
      with their two-group ``test``, and the features' contributions (``table``), each
      with its ``units``;
    - ``timings_seconds``: seconds per step;
    - ``settings`` (when recorded): the options of the run;
    - ``environment``: Python's and the packages' versions.

    Steps not run leave their keys out. Every number is a JSON number or ``null``:
    an undefined value (NaN, e.g. the TPR of a group without positive labels, or an
    infinite ratio) is written as ``null``, never as a bare ``NaN`` / ``Infinity``.

    Examples
    --------
    >>> from skfairverify.audit import AuditReport
    >>> report = AuditReport(dataset={"name": "toy"}, model={"description": "LR"})
    >>> sorted(report.to_dict())
    ['dataset', 'environment', 'model', 'timings_seconds']
    """

    dataset: dict
    model: dict
    sections: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict, repr=False)
    settings: dict = field(default_factory=dict)
    environment: dict = field(default_factory=package_versions, repr=False)

    def to_dict(self) -> dict:
        """The report without figures, for ``--json``.

        Returns
        -------
        dict
            ``dataset``, ``model``, the sections, ``timings_seconds``, then
            ``settings`` and ``environment`` when not empty.
        """
        out = {"dataset": self.dataset, "model": self.model, **self.sections,
               "timings_seconds": self.timings}
        out.update({k: v for k, v in (("settings", self.settings),
                                      ("environment", self.environment)) if v})
        return out

    def to_json(self, indent: int | None = 2) -> str:
        """The report as strict JSON (undefined numbers as ``null``; see Notes).

        Parameters
        ----------
        indent : int or None, default=2
            Indentation of the JSON text.

        Returns
        -------
        str
            JSON text that ``json.loads`` reads without ``NaN`` or ``Infinity``.

        Examples
        --------
        >>> from skfairverify.audit import AuditReport
        >>> AuditReport(dataset={"name": "toy", "rate": float("nan")}, model={},
        ...             environment={}).to_json(indent=None)
        '{"dataset": {"name": "toy", "rate": null}, "model": {}, "timings_seconds": {}}'
        """
        data = finite_or_none(jsonable(self.to_dict()))
        return json.dumps(data, indent=indent, allow_nan=False)

    def to_text(self) -> str:
        """A readable plain-text report.

        Returns
        -------
        str
            The report, prose lines wrapped at 100 characters.
        """
        return render_text(self)

    def to_html(self, thresholds: dict | None = None) -> str:
        """One self-contained HTML page: summary and verdict, sections, methods.

        The page works offline (styles inline, figures as data URIs or inline SVG, no
        script, no external address), fits a 1280-pixel window without horizontal
        scrolling (wide tables scroll inside their box) and prints to PDF (print styles
        included). Every user-provided string is escaped.

        Parameters
        ----------
        thresholds : dict, default=None
            Overrides of the verdict thresholds, by metric key:
            ``disparate_impact`` (passes at or above; default 0.8, the four-fifths
            rule), ``statistical_parity``, ``equalized_odds``,
            ``path_specific_causal``, ``cflips_delta``, ``ndccf_delta``,
            ``tpr_difference`` (pass when the absolute value is at or below; default
            0.1 each). A verified metric with an interval (the verifier's
            ``metric_intervals``) passes or fails only when the value and its whole
            interval do; it is ``uncertain`` when the interval holds values on both sides
            of the threshold.

        Returns
        -------
        str
            The page.

        Raises
        ------
        ValueError
            On an unknown threshold key or a threshold that is not a number >= 0.

        Examples
        --------
        >>> from skfairverify.audit import AuditReport
        >>> report = AuditReport(
        ...     dataset={"name": "<toy>", "sensitive_features": ["s"]}, model={},
        ...     sections={"empirical": {"groups": [{"s": "a", "selection_rate": 0.5,
        ...                                         "rows": 4}],
        ...                             "metrics": {"disparate_impact": 0.7}}})
        >>> page = report.to_html(thresholds={"disparate_impact": 0.6})
        >>> "Fairness audit: &lt;toy&gt;" in page, '<td class="pass">pass</td>' in page
        (True, True)
        """
        return render_html(self, thresholds)
