"""The ``audit`` command: one fairness report of a linear model on a dataset.

``python -m skfairverify audit`` trains (or loads) a linear model and reports, in one
place, the verified group rates and DI/SP/EO with the network used beside the empirical
ones on the test rows (fairlearn's ``MetricFrame``), the features with the largest
fairness influence, the CFlips/nDCCF gaps, the first-stage ESL values with their test and
the second-stage contributions of the features. Every number is labelled for what it is
(verified: population under the learned Bayesian network; empirical: test rows) and every
difference with its unit and direction.

Modules: ``_cli`` (arguments, main), ``_data`` (datasets, default model), ``_run`` (the
steps), ``_empirical`` (fairlearn's observed rates), ``_report`` (AuditReport),
``_tables`` and ``_render`` (comparison tables, text and HTML).
"""

from ._cli import main
from ._data import default_model
from ._empirical import empirical_group_metrics
from ._report import AuditReport
from ._run import run_audit
from ._tables import group_comparison, metric_comparison

__all__ = ["AuditReport", "main", "run_audit"]
