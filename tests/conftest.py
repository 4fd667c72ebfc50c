import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

import oracle  # noqa: E402

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"oracle cases checked: {oracle.CHECKED['cases']}")


def pytest_sessionfinish(session, exitstatus):
    need = int(os.environ.get("FPX_MIN_ORACLE_CASES", "0"))
    if need and exitstatus == 0 and oracle.CHECKED["cases"] < need:
        session.exitstatus = 1
        print(f"\nERROR: only {oracle.CHECKED['cases']} oracle cases checked, need {need}")
