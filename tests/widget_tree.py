"""What a person sees of an ipywidgets app: its displayed widget tree (shared by the widget
tests, which find controls there rather than as attributes)."""

from __future__ import annotations


def displayed(widget):
    """Every widget a person sees: the app and its children, recursively."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from displayed(child)


def find(app, cls, **traits):
    """The one displayed widget of class ``cls`` whose traits have these values."""
    found = [
        w
        for w in displayed(app)
        if isinstance(w, cls) and all(getattr(w, k) == v for k, v in traits.items())
    ]
    assert len(found) == 1, f"expected one displayed {cls.__name__} with {traits}: {found}"
    return found[0]
