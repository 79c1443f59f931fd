"""Command line: ``python -m skfairverify audit ...`` (also the ``skfairverify`` script)."""

from __future__ import annotations

import sys

from .audit import main as _audit_main


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``skfairverify`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> from skfairverify.__main__ import main
    >>> main(["--help"])  # doctest: +SKIP
    """
    return _audit_main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
