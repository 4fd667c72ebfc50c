"""The explorer app, ``fpx.explorer()``: its code lives in :mod:`fpexplore.app` (state, view
and render apart); this module keeps the names it has always offered.

``explorer()`` returns an :class:`Explorer`; display it (it is an ``ipywidgets.VBox``). Each
control change recomputes ``compare(...)`` with the controls' values and redraws the one figure
in place (an ipympl canvas when ipympl is installed, so it works with ``%matplotlib widget``,
in Voila and on Binder; otherwise a PNG image widget). Errors appear as a message inside the
app, never as a traceback. A "reproduce this" box shows the public-API call behind the view.
"""

from __future__ import annotations

from .app import Explorer, explorer
from .app.controls import EXPORTS
from .app.render import TABLE_COLUMNS, verdict
from .app.state import BACKEND_CHOICES, PRESETS, SIZES, SOURCES, VIEWS, Preset
from .app.yourdata import UPLOADS, check_user_arrays, observe, read_upload

__all__ = [  # (the app's names, where they were before fpexplore/app/)
    "BACKEND_CHOICES",
    "EXPORTS",
    "PRESETS",
    "SIZES",
    "SOURCES",
    "TABLE_COLUMNS",
    "UPLOADS",
    "VIEWS",
    "Explorer",
    "Preset",
    "check_user_arrays",
    "explorer",
    "observe",
    "read_upload",
    "verdict",
]
