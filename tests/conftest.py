import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def pytest_report_header(config):
    """NumPy, SciPy, SUNDIALS, BLAS, compiler and CPU in the header of every run."""
    import versions
    return versions.lines()


def pytest_addoption(parser):
    parser.addoption("--no-asan", action="store_true", default=False,
                     help="build the C test programs without AddressSanitizer")


@pytest.fixture(scope="session")
def root():
    return ROOT
