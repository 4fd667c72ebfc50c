"""Servers the browser tests start (JupyterLab, Voila): stopping one with its kernels."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_server(proc, log) -> None:
    """Stop a server started in its own process group (``start_new_session=True``), its
    kernels with it, and close its log file."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()
