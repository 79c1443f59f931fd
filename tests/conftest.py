"""Fixtures shared by the test modules."""

import os
import random

import numpy as np
import pytest

#: The seed of NumPy's and Python's global generators before every test; set
#: ``SKFAIRVERIFY_TESTS_GLOBAL_SEED`` to run the suite under another one (a test that
#: passes under one seed only relies on luck: give its estimators a ``random_state``).
GLOBAL_SEED = int(os.environ.get("SKFAIRVERIFY_TESTS_GLOBAL_SEED", "0"))


@pytest.fixture(autouse=True)
def _seed_global_generators():
    """Reseed the global generators, so a test's result does not follow the tests before it.

    ``random_state=None`` draws from NumPy's global generator (scikit-learn's
    convention); without this, its state at a test depends on which tests ran before.
    """
    np.random.seed(GLOBAL_SEED)  # noqa: NPY002 (the legacy generator random_state=None reads)
    random.seed(GLOBAL_SEED)


@pytest.fixture(scope="module")
def client():
    """A dask client on a LocalCluster of two one-thread workers in this process.

    No memory limit: a limit on workers that are threads would count this whole process.
    """
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       memory_limit=0, dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c
