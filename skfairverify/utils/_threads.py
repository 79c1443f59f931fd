"""Bounded thread pools for the computations called in loops, and their CPU time.

A model called many times in a loop (the sampling path's ``predict``) or a thin BLAS
product gains nothing from threads, and on a machine whose cores are busy a
multithreaded call waits for its threads: OpenMP models (HistGradientBoosting) run
10-25x slower when both cores are taken, and their threads spin, so that even the
CPU time they report grows with the load. Inside :func:`limited_threads` every
native thread pool (OpenMP and BLAS, through threadpoolctl) runs one thread, so the
cost of a call is the same whether the machine is idle or busy; :func:`cpu_seconds`
measures it in CPU time, which another process's load does not multiply (a wall-clock
time does). Guards decide on counts (rows, states, evaluations) with a cost per unit
measured this way, never on a wall-clock time.
"""

from __future__ import annotations

import time

__all__ = ["cpu_seconds", "limited_threads"]

_CONTROLLER = []


def _controller():
    """The threadpoolctl controller, built once (about 10 ms)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def limited_threads(user_api: str | None = None, limits: int = 1):
    """Context in which the native thread pools run at most ``limits`` threads.

    Parameters
    ----------
    user_api : {"blas", "openmp"} or None, default=None
        The pools to limit; None: all of them (BLAS and OpenMP).
    limits : int, default=1
        Largest number of threads.

    Returns
    -------
    context manager
        Entering it costs about 50 us.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.utils._threads import limited_threads
    >>> with limited_threads():
    ...     float(np.ones(3) @ np.ones(3))
    3.0
    """
    return _controller().limit(limits=limits, user_api=user_api)


def cpu_seconds() -> float:
    """CPU time of this process so far, in seconds (``time.process_time``).

    Unlike a wall-clock time it does not grow when other processes take the cores;
    with the thread pools limited (:func:`limited_threads`) it is the work done.
    """
    return time.process_time()
