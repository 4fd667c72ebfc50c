"""Optional dependencies, imported by the functions that need them, when they run.

A core install (``pip install fpexplore``) has NumPy, ml_dtypes, numba and mpmath; tables
(pandas), figures (matplotlib) and the app (ipywidgets) come with the ``jupyter`` extra.
:func:`require` imports one of them and, where it is missing, says which extra to install
instead of a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib

__all__ = ["EXTRAS", "require"]

#: top-level package -> the fpexplore extra that installs it (pyproject.toml)
EXTRAS = {
    "pandas": "jupyter",
    "matplotlib": "jupyter",
    "ipywidgets": "jupyter",
    "ipympl": "jupyter",
    "tqdm": "jupyter",
}


def require(name: str, what: str | None = None):
    """Import and return the module ``name`` (e.g. ``"pandas"``, ``"matplotlib.figure"``).

    If its package is not installed, raise a :class:`ModuleNotFoundError` that names the
    package, what needs it (``what``, e.g. ``"fpx.compare"``) and the extra to install, e.g.
    ``pip install "fpexplore[jupyter]"``. Other import errors (a dependency of the package
    itself missing) propagate unchanged.
    """
    top = name.partition(".")[0]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or e.name.partition(".")[0] != top:
            raise
        who = f"{what} needs {top}" if what else f"this needs {top}"
        if top in EXTRAS:
            how = f'(a core install of fpexplore lacks it): pip install "fpexplore[{EXTRAS[top]}]"'
        else:
            how = f"(no fpexplore extra provides it): pip install {top}"
        raise ModuleNotFoundError(f"{who}, which is not installed {how}", name=top) from e
