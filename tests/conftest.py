import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

import oracle  # noqa: E402

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def clean_formats():
    """The formats of fpx.format a test defines are forgotten after it (other tests list
    formats): modules of them say ``pytestmark = pytest.mark.usefixtures("clean_formats")``."""
    from fpexplore.userformat import _forget, user_names

    before = set(user_names())
    yield
    for name in set(user_names()) - before:
        _forget(name)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"oracle cases checked: {oracle.CHECKED['cases']}")


def pytest_sessionfinish(session, exitstatus):
    need = int(os.environ.get("FPX_MIN_ORACLE_CASES", "0"))
    if need and exitstatus == 0 and oracle.CHECKED["cases"] < need:
        session.exitstatus = 1
        print(f"\nERROR: only {oracle.CHECKED['cases']} oracle cases checked, need {need}")
