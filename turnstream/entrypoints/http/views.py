"""Registration from the route table: each view class is bound by its name to the path
:data:`turnstream.entrypoints.http.route_table.ROUTE_TABLE` gives it, and must serve exactly the
methods the table lists for it."""

from __future__ import annotations

from collections.abc import Callable

import faust
from faust.web import View

from turnstream.entrypoints.http.route_table import ROUTE_TABLE

__all__ = ["Views", "served_methods"]

_METHODS = ("get", "post", "put", "patch", "delete")


def served_methods(view: type[View]) -> set[str]:
    """The HTTP methods a view class defines (HEAD aside: Faust adds it to every view)."""
    return {m.upper() for m in _METHODS if getattr(view, m) is not getattr(View, m)}


class Views:
    """Binds view classes to ``app`` by the table's names; :meth:`check` when all are."""

    def __init__(self, app: faust.App) -> None:
        self._app = app
        self._bound: set[str] = set()

    def __call__(self, name: str) -> Callable[[type[View]], type[View]]:
        """A class decorator: serve the view named ``name`` in the table at its path."""
        rows = [route for route in ROUTE_TABLE if route.view == name]
        paths = {route.path for route in rows}
        if len(paths) != 1:
            raise ValueError(f"the route table gives the view {name!r} {len(paths)} paths")
        [path] = paths

        def bind(view: type[View]) -> type[View]:
            served, listed = served_methods(view), {route.method for route in rows}
            if served != listed:
                raise ValueError(f"the view {name!r} serves {sorted(served)}; the route table "
                                 f"lists {sorted(listed)} for {path}")  # fmt: skip
            if name in self._bound:
                raise ValueError(f"the view {name!r} is bound twice")
            self._bound.add(name)
            return self._app.page(path)(view)

        return bind

    def check(self) -> None:
        """ValueError naming the views of the table that nothing bound."""
        unbound = sorted({route.view for route in ROUTE_TABLE} - self._bound)
        if unbound:
            raise ValueError(f"views in the route table that nothing serves: {unbound}")
