"""``python -m skfairverify audit``: argument parsing and the command's main."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._data import DATASETS, load_bundled, load_csv
from ._run import STEPS, run_audit


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skfairverify", description="Fairness verification for scikit-learn models."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    audit = sub.add_parser(
        "audit", help="audit a linear model on a bundled dataset or a CSV file",
        description="Train (or load) a linear model and print one fairness report: "
                    "verified group metrics (population under the learned Bayesian "
                    "network, FVGM) beside the empirical ones on the test rows (fairlearn "
                    "MetricFrame), counterfactual flips and ESL values.",
    )
    src = audit.add_mutually_exclusive_group()
    src.add_argument("--dataset", choices=DATASETS, default=None,
                     help="bundled dataset (default: german)")
    src.add_argument("--csv", metavar="FILE", help="a CSV file with a header row")
    audit.add_argument("--target", help="label column of the CSV")
    audit.add_argument("--positive", help="favorable value of the CSV label")
    audit.add_argument("--sensitive-features", nargs="+", metavar="COL",
                       help="sensitive columns (default for bundled data: its usual ones)")
    audit.add_argument("--model", metavar="FILE",
                       help="a fitted model saved with joblib (taking the data's columns)")
    audit.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    audit.add_argument("--k", type=int, default=10, help="counterfactuals per refused row")
    audit.add_argument("--esl-features", type=int, default=4,
                       help="features in the second ESL stage (2^n fits for Shapley)")
    audit.add_argument("--random-state", type=int, default=0)
    audit.add_argument("--html", metavar="FILE", help="also write an HTML report with plots")
    audit.add_argument("--json", action="store_true", help="print JSON instead of text")
    audit.add_argument("--quiet", action="store_true", help="no progress messages")
    return parser


def _data(args, parser):
    """Features, labels, sensitive columns and name of the data the arguments point to."""
    if args.csv:
        if not args.target or not args.sensitive_features:
            parser.error("--csv needs --target and --sensitive-features")
        X, y, sensitive_features = load_csv(args.csv, args.target, args.sensitive_features,
                                            args.positive)
        return X, y, sensitive_features, Path(args.csv).name
    name = args.dataset or "german"
    X, y, sensitive_features = load_bundled(name)
    return X, y, args.sensitive_features or sensitive_features, name


def _print_report(report, args) -> None:
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print(report.to_text())
    if args.html:
        Path(args.html).write_text(report.to_html(), encoding="utf-8")
        if not args.json:
            print(f"HTML report written to {args.html}")


def main(argv: list[str] | None = None) -> int:
    """Run the ``skfairverify`` command line.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name, e.g. ``["audit", "--dataset", "german"]``;
        ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        The exit status (0; argument errors exit with status 2).

    Examples
    --------
    >>> from skfairverify.audit import main
    >>> main(["audit", "--dataset", "german", "--steps", "esl",
    ...       "--quiet"])  # doctest: +SKIP
    0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    X, y, sensitive_features, name = _data(args, parser)
    model = None
    if args.model:
        import joblib

        model = joblib.load(args.model)
    report = run_audit(
        X, y, sensitive_features, model=model, dataset_name=name, steps=args.steps,
        k=args.k, n_esl_features=args.esl_features, figures=bool(args.html),
        random_state=args.random_state, verbose=0 if (args.quiet or args.json) else 1,
    )
    _print_report(report, args)
    return 0
