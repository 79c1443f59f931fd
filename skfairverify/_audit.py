"""The ``audit`` command (placeholder: prints a summary of a bundled dataset)."""

from __future__ import annotations

import argparse

from .datasets import load_adult, load_compas, load_german

_LOADERS = {"adult": load_adult, "german": load_german, "compas": load_compas}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skfairverify")
    sub = parser.add_subparsers(dest="command", required=True)
    audit = sub.add_parser("audit", help="audit a linear model on a dataset")
    audit.add_argument("--dataset", choices=sorted(_LOADERS), default="german")
    args = parser.parse_args(argv)
    data = _LOADERS[args.dataset]()
    print(f"{args.dataset}: {data.data.shape[0]} rows, {data.data.shape[1]} features")
    print(f"favourable rate: {data.target.mean():.3f}")
    for col in data.sensitive:
        print(data.frame.groupby(col, observed=True)[data.target.name].agg(["size", "mean"]))
    return 0
