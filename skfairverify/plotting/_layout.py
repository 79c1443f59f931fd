"""Layout shared by the figures: page-sized figures, wrapped labels, outside legends.

Every figure of the package is made with matplotlib's constrained layout, no wider
than :data:`PAGE_WIDTH` and no taller than :data:`MAX_HEIGHT` inches, with its category
labels on the vertical axis (one row per category, tall enough for the label's lines) so
that long labels, such as the intersectional groups of Adult, never overlap.
"""

from __future__ import annotations

import textwrap

import numpy as np

from .._optional import import_optional

PAGE_WIDTH = 7.5  # inches: a letter / A4 page less its margins
MAX_HEIGHT = 9.0  # inches
LABEL_WIDTH = 24  # characters per line of a category label
LINE_HEIGHT = 0.16  # inches per text line of a category label (10 pt text, spaced)


def pyplot():
    """matplotlib.pyplot, or an ImportError naming the ``plot`` extra."""
    return import_optional("matplotlib.pyplot", "the plots of skfairverify.plotting")


def wrap(text, width: int = LABEL_WIDTH) -> str:
    """Wrap a label on spaces and hyphens into lines of at most ``width`` characters."""
    return "\n".join(textwrap.wrap(str(text), width=width, break_on_hyphens=True)) or str(text)


def group_label(group, names=None) -> str:
    """Label of a group: one line per sensitive attribute (``name=value``), wrapped.

    ``group`` is a value or a tuple of values (an intersection of several attributes);
    ``names`` the attribute names, or None to show the values alone.
    """
    values = group if isinstance(group, tuple) else (group,)
    if names is None or len(names) != len(values):
        parts = [str(v) for v in values]
    else:
        parts = [f"{n}={v}" for n, v in zip(names, values)]
    return "\n".join(wrap(p) for p in parts)


def n_lines(labels) -> int:
    """Largest number of lines of the labels (at least 1)."""
    return max([str(label).count("\n") + 1 for label in labels] or [1])


def new_axes(width: float, height: float, ncols: int = 1, nrows: int = 1, **kwargs):
    """A new figure with constrained layout, clipped to the page size, and its axes.

    Returns the figure and the flat array of its axes.
    """
    plt = pyplot()
    size = (min(max(width, 3.0), PAGE_WIDTH), min(max(height, 2.2), MAX_HEIGHT))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, layout="constrained", squeeze=False,
                             **kwargs)
    return fig, axes.ravel()


def panels(n: int, panel_height: float, panel_width: float = 3.2, margin: float = 1.8):
    """A figure of ``n`` panels, two per row at most; returns it and the ``n`` axes."""
    ncols = min(n, 2)
    nrows = -(-n // ncols)
    height = min(nrows * panel_height, MAX_HEIGHT - 0.6) + 0.6
    fig, axes = new_axes(panel_width * ncols + margin, height, ncols=ncols, nrows=nrows,
                         sharey=True)
    for extra in axes[n:]:
        extra.remove()
    return fig, axes[:n]


def rows_height(n_rows: int, labels, per_row: float = 0.0, extra: float = 1.3) -> float:
    """Figure height (inches) giving each category row room for its label and its bars."""
    row = max(LINE_HEIGHT * n_lines(labels) + 0.06, per_row, 0.26)
    return n_rows * row + extra


def legend_height(labels) -> float:
    """Height (inches) of an outside legend of these labels, with its title and margins."""
    return sum(0.14 * (str(label).count("\n") + 1) + 0.07 for label in labels) + 0.6


def legend_outside(ax, **kwargs):
    """Put the legend of ``ax`` to the right of its axes, outside the data area."""
    kwargs.setdefault("frameon", False)
    kwargs.setdefault("fontsize", "small")
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     **kwargs)


def check_top(top) -> None:
    """Refuse a ``top`` that is not None or a positive integer."""
    if top is not None and (isinstance(top, bool) or not isinstance(top, (int, np.integer))
                            or top < 1):
        raise ValueError(f"top must be a positive integer or None; got {top!r}.")
