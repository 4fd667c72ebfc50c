"""The explorer app, ``fpx.explorer()``: state, view and render apart.

- ``state``     the frozen :class:`~.state.State` (compare's arguments, the data source, the
                view and the A/B picks) and its pure transitions; no widgets
- ``yourdata``  your arrays by name, uploads, the observed results measured; no widgets
- ``render``    verdict, table, figure, code and messages drawn from a comparison and a state
- ``controls``  the widgets, their layout, and ``show_state`` (controls set from a state)
- ``running``   compare() in a thread with progress and cancel (in a kernel), else at once
- ``explorer``  :class:`Explorer`: one change handler (transition, show, recompute or redraw)
"""

from .explorer import Explorer, explorer

__all__ = ["Explorer", "explorer"]
