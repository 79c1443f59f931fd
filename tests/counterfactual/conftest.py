"""Fixtures of the counterfactual tests."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_thread():
    """Every test with one thread per pool: the OpenMP threads of the sensitive classifier
    (HistGradientBoosting) spin for seconds on a shared 2-core machine."""
    with threadpool_limits(1):
        yield
