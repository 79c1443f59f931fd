"""``python -m skfairverify audit``: argument parsing and the command's main.

User mistakes end with one line on standard error and exit status 2 (argparse's
convention), never a traceback. The rule that tells a user mistake from a bug:

- options the parser can check (ranges, types, choices) are refused by argparse;
- reading and checking what the user points to (``--csv``, ``--dataset``, columns,
  ``--positive``, ``--privileged``, ``--model``, output paths, the ESL work) happens
  before the run, in :func:`_prepare`; there ``ValueError``, ``TypeError`` and
  ``OSError`` (and anything ``joblib.load`` raises on a file that is not a model, in
  that call only) are the user's;
- during the run only the errors the package raises to refuse an input are the user's:
  ``ValueError`` (scikit-learn's convention for a bad value, parameter validation
  included) and the size guards (``TableTooLargeError``). Anything else (``TypeError``,
  ``KeyError``, ``AttributeError``, ...) is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..s3p import TableTooLargeError
from ._data import (
    DATASETS,
    check_columns,
    load_bundled,
    load_csv,
    resolve_privileged,
    select_columns,
    taking_all_columns,
)
from ._render import provenance_lines
from ._run import STEPS, run_audit

PROG = "skfairverify audit"

# Coalition models the second ESL stage may fit unless --max-fits says otherwise: the
# Shapley value enumerates all 2 ** n - 1 non-empty coalitions of the n features, so the
# default allows --esl-features 8 (255 fits, ~20 s on the German data at ~0.07 s a fit;
# --esl-features 12 = 4,095 fits took > 300 s).
DEFAULT_MAX_FITS = 256


def _ranged(kind, low=None, high=None, *, closed=True, name="value"):
    """An argparse ``type=`` converting to ``kind`` and refusing values outside the range."""

    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        below = low is not None and (value < low if closed else value <= low)
        above = high is not None and (value > high if closed else value >= high)
        if below or above:
            bounds = f"in [{low}, {high}]" if closed else f"in ({low}, {high})"
            if high is None:
                bounds = f">= {low}" if closed else f"> {low}"
            raise argparse.ArgumentTypeError(f"{name} must be {bounds}, not {text}")
        return value

    return convert


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skfairverify", description="Fairness verification for scikit-learn models."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    audit = sub.add_parser(
        "audit", help="audit a classifier on a bundled dataset or a CSV file",
        description="Train a linear model (or load any fitted classifier) and print one "
                    "fairness report: "
                    "verified group metrics (population under the learned Bayesian "
                    "network, FVGM) beside the empirical ones on the test rows (fairlearn "
                    "MetricFrame), counterfactual flips and ESL values.",
    )
    src = audit.add_mutually_exclusive_group()
    src.add_argument("--dataset", choices=DATASETS, default=None,
                     help="bundled dataset (default: german)")
    src.add_argument("--csv", metavar="FILE", help="a CSV file with a header row")
    audit.add_argument("--target", help="label column of the CSV")
    audit.add_argument("--positive", help="favorable value of the CSV label (needed unless "
                                          "the labels are 0/1, when 1 is taken and said "
                                          "so), or a threshold of a numeric label: '>=70'")
    audit.add_argument("--na-values", nargs="+", metavar="TEXT",
                       help="texts that mean a missing value in the CSV, besides pandas' "
                            "own (empty, NA, NaN, ...), e.g. '?'")
    columns = audit.add_mutually_exclusive_group()
    columns.add_argument("--features", nargs="+", metavar="COL",
                         help="the feature columns to use (the sensitive columns are "
                              "added); default: every column but the label and those "
                              "that identify rows, which are named")
    columns.add_argument("--drop", nargs="+", metavar="COL",
                         help="columns to leave out of the default features")
    audit.add_argument("--sensitive-features", nargs="+", metavar="COL",
                       help="sensitive columns (default for bundled data: its usual ones)")
    audit.add_argument("--privileged", metavar="VALUE",
                       help="privileged group of the counterfactual step, which compares "
                            "the compound groups of every sensitive column: a value, or "
                            "'v1 / v2' for several (default: the documented one of a "
                            "bundled dataset, else CounterfactualFairness's rule); the "
                            "group used is printed")
    audit.add_argument("--model", metavar="FILE",
                       help="a fitted binary classifier saved with joblib, taking the data's "
                            "columns (linear models and decision trees are verified "
                            "exactly, tree ensembles by sound bounds where that pays, any "
                            "other by sampling; unpickling runs code: only files you "
                            "trust)")
    audit.add_argument("--method", choices=["auto", "exact", "bounds", "sampling"],
                       default="auto",
                       help="the verifier's path: 'auto' reads linear models and "
                            "decision trees exactly, bounds a tree ensemble (gradient "
                            "boosting, random forests, XGBoost, LightGBM) where a check "
                            "says the bounds pay, and samples any other model (the report "
                            "says why); 'bounds' bounds a tree ensemble whatever it costs "
                            "(default: auto)")
    audit.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    audit.add_argument("--test-size", type=_ranged(float, 0, 1, closed=False,
                                                   name="--test-size"),
                       default=0.3, help="share of rows held out for testing, in (0, 1)")
    audit.add_argument("--k", type=_ranged(int, 1, name="--k"), default=10,
                       help="counterfactuals per refused row (>= 1)")
    audit.add_argument("--esl-features", type=_ranged(int, 1, name="--esl-features"),
                       default=4, help="features in the second ESL stage (>= 1; 2^n fits "
                                       "for Shapley)")
    audit.add_argument("--max-fits", type=_ranged(int, 1, name="--max-fits"),
                       default=DEFAULT_MAX_FITS,
                       help="most coalition models the second ESL stage may fit "
                            f"(default {DEFAULT_MAX_FITS})")
    audit.add_argument("--random-state", type=_ranged(int, 0, 2**32 - 1,
                                                      name="--random-state"), default=0)
    audit.add_argument("--html", metavar="FILE", help="also write an HTML report with plots")
    audit.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                       help="print strict JSON instead of text, or write it to FILE "
                            "(undefined numbers are null)")
    audit.add_argument("--quiet", action="store_true", help="no progress messages")
    return parser


@dataclass
class _Job:
    """What the arguments point to, read and checked before the run."""

    X: object
    y: object
    sensitive_features: list
    name: str
    model: object = None
    privileged: object = None
    privileged_rule: str | None = None
    provenance: dict | None = None


def _say(args, msg: str) -> None:
    if not args.quiet:
        print(f"[audit] {msg}", file=sys.stderr, flush=True)


def _data(args) -> tuple:
    """Features, labels, sensitive columns, name and provenance of the data pointed to."""
    if args.csv:
        X, y, sensitive_features, provenance = load_csv(
            args.csv, args.target, args.sensitive_features, args.positive,
            features=args.features, drop=args.drop, na_values=args.na_values)
        return X, y, sensitive_features, Path(args.csv).name, provenance
    name = args.dataset or "german"
    X, y, sensitive_features, provenance = load_bundled(name)
    sensitive_features = args.sensitive_features or sensitive_features
    check_columns(X, None, sensitive_features, f"the {name} data",
                  others=[*(args.features or []), *(args.drop or [])])
    X = select_columns(X, sensitive_features, args.features, args.drop, provenance)
    return X, y, sensitive_features, name, provenance


def _check_optional(args) -> None:
    """Refuse, before any computation, an option whose optional dependency is missing."""
    if args.html:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ValueError("--html draws its figures with matplotlib, which is not "
                             "installed: pip install 'skfairverify[plot]' (or leave out "
                             "--html for the text report).") from None


def _say_provenance(args, provenance: dict) -> None:
    """The lines that say which rows and columns the audit uses, and the favorable label."""
    for line in provenance_lines(provenance):
        _say(args, line)


def _check_output(option: str, path: str | None) -> None:
    """Refuse an output path that cannot be written, before the long run."""
    if path is None or path == "-":
        return
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise ValueError(f"{option} {path}: the folder {str(folder)!r} does not exist.")
    if target.is_dir():
        raise ValueError(f"{option} {path} is a directory; give a file name.")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise ValueError(f"{option} {path}: not writable (permission denied).")


def _load_model(path: str, X):
    import joblib

    if Path(path).is_dir():
        raise ValueError(f"--model {path} is a directory, not a saved model.")
    try:
        model = joblib.load(path)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - unpickling runs the file: its errors are its own
        raise ValueError(f"--model {path} is not a model saved with joblib or pickle "
                         f"({type(exc).__name__}: {exc}).") from exc
    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise ValueError(f"--model {path} holds a {type(model).__name__}, not an estimator "
                         "with fit and predict.")
    classes = getattr(model, "classes_", None)
    if classes is not None and len(classes) != 2:
        raise ValueError(f"--model {path} holds a {type(model).__name__} with classes "
                         f"{list(classes)[:10]}; the audit needs a binary classifier.")
    try:
        taking_all_columns(model, X)  # the columns it was fitted on are in the data
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--model {path}: {exc}") from exc
    return model


def _check_esl_work(args, X, sensitive_features) -> str | None:
    """The second ESL stage's number of fits, to print; refused above ``--max-fits``.

    The stage fits one model per non-empty coalition of its ``n`` features, ``2**n - 1``
    (the Shapley, Solidarity, Consensus and LSP members need every coalition).
    """
    if "esl" not in args.steps:
        return None
    n = max(min(args.esl_features, X.shape[1] - len(sensitive_features)), 0)
    fits = 2**n - 1
    if fits > args.max_fits:
        raise ValueError(
            f"--esl-features {args.esl_features} needs 2**{n} - 1 = {fits:,} coalition model "
            f"fits (the Shapley value enumerates every coalition of the features), above "
            f"--max-fits {args.max_fits:,}; lower --esl-features or raise --max-fits."
        )
    return (f"ESL second stage: {n} features, 2**{n} - 1 = {fits:,} coalition model fits "
            f"(limit --max-fits {args.max_fits:,})")


def _prepare(args, parser) -> _Job:
    """Read and check everything the arguments point to; errors name the user's mistake."""
    if args.csv and (not args.target or not args.sensitive_features):
        parser.error("--csv needs --target and --sensitive-features")
    if not args.csv and (args.target or args.positive):
        raise ValueError("--target and --positive apply to --csv only; a bundled dataset "
                         "has its own label.")
    _check_output("--json", args.json)
    _check_output("--html", args.html)
    _check_optional(args)
    X, y, sensitive_features, name, provenance = _data(args)
    job = _Job(X, y, sensitive_features, name, provenance=provenance)
    if not args.model and X.shape[1] <= len(set(sensitive_features)):
        raise ValueError(f"Every feature of {name} is a sensitive column "
                         f"{list(sensitive_features)}: the default model, which does not read "
                         "them, needs at least one other feature.")
    if args.model:
        job.model = _load_model(args.model, X)
    if "counterfactual" in args.steps:
        job.privileged, job.privileged_rule = resolve_privileged(
            X, sensitive_features, args.privileged, None if args.csv else name)
    esl_work = _check_esl_work(args, X, sensitive_features)
    # every check passed: say what the run uses
    _say_provenance(args, provenance)
    if job.privileged is not None:
        shown = (" / ".join(map(str, job.privileged)) if isinstance(job.privileged, tuple)
                 else job.privileged)
        _say(args, f"privileged group of {' x '.join(map(repr, sensitive_features))}: "
                   f"{shown!r}, {job.privileged_rule}")
    if esl_work:
        _say(args, esl_work)
    return job


def _print_report(report, args) -> None:
    if args.json == "-":
        print(report.to_json())
    else:
        print(report.to_text())
    if args.json not in (None, "-"):
        Path(args.json).write_text(report.to_json(), encoding="utf-8")
        print(f"JSON report written to {args.json}")
    if args.html:
        Path(args.html).write_text(report.to_html(), encoding="utf-8")
        if args.json != "-":
            print(f"HTML report written to {args.html}")


def _one_line(exc: BaseException) -> str:
    """The error as one line: its message, or for a file error the reason and the file."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return " ".join(str(exc).split()) or type(exc).__name__


def _fail(parser, exc: BaseException):
    parser.exit(2, f"{PROG}: error: {_one_line(exc)}\n")


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
        The exit status 0. A user mistake (bad option, unreadable file, unknown column,
        ...) raises ``SystemExit(2)`` after one line on standard error, as argparse does.

    Examples
    --------
    >>> from skfairverify.audit import main
    >>> main(["audit", "--dataset", "german", "--steps", "esl",
    ...       "--quiet"])  # doctest: +SKIP
    0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():  # restores the warnings' display on exit
        warnings.showwarning = _warning_line(args)
        return _main(args, parser)


def _warning_line(args):
    """A warning of the run as one line on standard error (no file, no source line)."""
    def show(message, category, filename, lineno, file=None, line=None):
        if not args.quiet:
            print(f"[audit] {category.__name__}: {' '.join(str(message).split())}",
                  file=sys.stderr, flush=True)

    return show


def _main(args, parser) -> int:
    try:
        job = _prepare(args, parser)
    except (ValueError, TypeError, OSError) as exc:
        _fail(parser, exc)
    try:
        report = run_audit(
            job.X, job.y, job.sensitive_features, model=job.model, dataset_name=job.name,
            steps=args.steps, test_size=args.test_size, k=args.k,
            n_esl_features=args.esl_features, figures=bool(args.html),
            random_state=args.random_state, privileged=job.privileged,
            max_fits=args.max_fits, verbose=0 if (args.quiet or args.json == "-") else 1,
            provenance=job.provenance, method=args.method,
        )
    except (ValueError, TableTooLargeError) as exc:
        _fail(parser, exc)
    if job.privileged_rule and "counterfactual" in report.sections:
        report.sections["counterfactual"]["privileged_rule"] = job.privileged_rule
    _print_report(report, args)
    return 0
