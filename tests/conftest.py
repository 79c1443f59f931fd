"""Fixtures shared by the test modules."""

import pytest


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
