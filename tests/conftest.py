import pytest
from threadpoolctl import threadpool_limits

from elmofeat.datasets import get_data_home


@pytest.fixture(scope="session", autouse=True)
def _single_blas_thread():
    # BLAS threads compete with pytest-xdist and joblib workers on 2 cores; one each
    # keeps the suite fast and its timings stable.
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="session")
def data_home():
    """The shared data folder ($ELMOFEAT_DATA; CI points it at ../shared/data)."""
    home = get_data_home()
    if not (home / "ag_news" / "test.csv").is_file():
        pytest.fail(
            f"test data not found in {home}: set ELMOFEAT_DATA to the shared data folder "
            "(the README's test command does)"
        )
    return home
