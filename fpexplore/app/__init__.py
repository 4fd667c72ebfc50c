"""The explorer app, ``fpx.explorer()``: state, view and render apart.

- ``state``     the frozen :class:`~.state.State` (compare's arguments, the data source, the
                view and the A/B picks) and its pure transitions; no widgets
- ``fit``       why a variant does not run on a format's data, found without running it
- ``links``     the first state from explorer()'s keywords and a view's link; no widgets
- ``presets``   the presets (one click per common question) as transitions of the state
- ``yourdata``  your arrays by name, uploads, the observed results measured; no widgets
- ``render``    verdict, table, figure, code and messages drawn from a comparison and a state
- ``controls``  the widgets, their layout, and ``show_state`` (controls set from a state)
- ``running``   Runner: compare() in a thread with progress and cancel (in a kernel), else at once
- ``showing``   Output: a finished comparison on the widgets; the exports and the detective
- ``widget``    :class:`Explorer`: one change handler (transition, show, recompute or redraw)
"""

__all__ = ["Explorer", "explorer"]


def __getattr__(name):
    """Explorer and explorer load ipywidgets with them; state, yourdata and render do not."""
    if name in __all__:
        from .widget import Explorer, explorer

        return {"Explorer": Explorer, "explorer": explorer}[name]
    raise AttributeError(f"module 'fpexplore.app' has no attribute {name!r}")
