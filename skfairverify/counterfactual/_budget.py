"""The time budget and the progress bar of the counterfactual generation.

dice-ml's work per row has no bound that a count could give: its post-hoc sparsity
search makes up to ``limit_steps_ls`` (10,000) single-row model calls per
counterfactual and feature, so one refused row took 117 s. The generation therefore
has a budget, ``max_time``, in seconds of **CPU time of the process that generates**
(``time.process_time``), not of the wall clock: a busy machine slows the wall clock of
the same work, not its CPU time, so the same call is refused, or not, whatever the load
(the models are called with one thread, see :func:`single_threaded`).

Two decisions use it: after the first chunk of rows, the rows left times the CPU
seconds per row measured on that chunk (a count times a cost measured once, stated in
the message) is refused beyond ``max_time`` before the long run; during the run, a
generator that loops over rows (:class:`DiceCounterfactuals`) stops when the chunk's
share of the budget is spent, so that no single row can run past it.
"""

from __future__ import annotations

import time

from tqdm.auto import tqdm

from ..s3p import TableTooLargeError
from ..utils._threads import limited_threads

__all__ = ["PROGRESS_AFTER", "Budget", "GenerationTimeout", "single_threaded"]

#: ``verbose="auto"`` shows the progress bar when the generation is expected to take
#: longer than this (seconds, estimated after the first chunk).
PROGRESS_AFTER = 5.0

_ADVICE = (
    "Audit fewer rows (a random sample of X), lower k, pass dice_kwargs such as "
    "{'posthoc_sparsity_param': None} to a DiceCounterfactuals generator (dice-ml's "
    "sparsity search makes up to 10,000 model calls per counterfactual and feature), use "
    "generator='kdtree' (bounded by the rows), or raise max_time."
)


class GenerationTimeout(TableTooLargeError):
    """A generator spent its share of ``max_time`` (raised inside ``generate``)."""

    def __init__(self, message: str, rows_done: int = 0, seconds: float = 0.0):
        super().__init__(message)
        self.rows_done = rows_done
        self.seconds = seconds


def single_threaded():
    """Run the models with one BLAS/OpenMP thread (a busy core slows OpenMP 10-25x).

    Returns
    -------
    context manager
        The package's :func:`~skfairverify.utils._threads.limited_threads`, whose
        threadpoolctl controller is built once (``threadpool_limits`` inspects the
        loaded libraries on every call).
    """
    return limited_threads()


class Budget:
    """CPU seconds spent on the generation, the refusals, and the progress bar.

    Parameters
    ----------
    max_time : float
        CPU seconds allowed for the whole generation.
    n_rows : int
        Rows to generate counterfactuals for.
    verbose : int, bool or "auto"
        ``0`` / ``False``: no bar; ``"auto"``: a bar when the estimate after the first
        chunk exceeds :data:`PROGRESS_AFTER`; otherwise a bar from the start.
    what : str
        The generator, for the messages.
    """

    def __init__(self, max_time: float, n_rows: int, verbose, what: str):
        self.max_time = float(max_time)
        self.n_rows = n_rows
        self.what = what
        self.verbose = verbose
        self.spent = 0.0
        self.done = 0
        self.bar = None
        if verbose != "auto" and verbose:
            self.bar = tqdm(total=n_rows, desc="counterfactuals", unit="row")

    def remaining(self) -> float:
        """CPU seconds left (a chunk may spend at most this)."""
        return max(self.max_time - self.spent, 0.0)

    def clock(self) -> float:
        """The CPU clock of this process."""
        return time.process_time()

    def add(self, rows: int, seconds: float) -> None:
        """Count a finished chunk; refuse the rest when the estimate passes the budget."""
        first = self.done == 0
        self.done += rows
        self.spent += seconds
        if self.bar is not None:
            self.bar.update(rows)
        if self.done >= self.n_rows:
            return
        if not first:
            if self.spent > self.max_time:  # a generator that cannot stop within a chunk
                raise self.timeout(GenerationTimeout("", 0), 0.0)
            return
        per_row = self.spent / max(self.done, 1)
        estimate = per_row * self.n_rows
        if estimate > self.max_time:
            self.close()
            raise TableTooLargeError(
                f"Counterfactual generation ({self.what}) refused: {self.n_rows:,} rows at "
                f"the {per_row:,.3g} CPU s per row measured on the first {self.done:,} "
                f"would take about {estimate:,.0f} CPU s, above max_time={self.max_time:,} "
                f"s. {_ADVICE}"
            )
        if self.bar is None and self.verbose == "auto" and estimate > PROGRESS_AFTER:
            self.bar = tqdm(total=self.n_rows, initial=self.done, desc="counterfactuals",
                            unit="row")

    def timeout(self, exc: GenerationTimeout, seconds: float) -> TableTooLargeError:
        """The error of a chunk that spent its share of the budget after ``seconds``."""
        self.close()
        done = self.done + exc.rows_done
        return TableTooLargeError(
            f"Counterfactual generation ({self.what}) stopped at max_time={self.max_time:,} "
            f"CPU s: {done:,} of {self.n_rows:,} rows done in {self.spent + seconds:,.1f} "
            f"CPU s (a single row can take minutes). {_ADVICE}"
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
