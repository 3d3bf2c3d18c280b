"""Views are bound to the route table's paths by name, serving exactly its methods."""

from __future__ import annotations

import faust
import pytest
from faust.web import Request, Response, View

from turnstream.entrypoints.http.route_table import ROUTE_TABLE, Space
from turnstream.entrypoints.http.views import Views, served_methods


class _Get(View):
    async def get(self, request: Request) -> Response:
        return self.json({})


class _Post(View):
    async def post(self, request: Request) -> Response:
        return self.json({})


def _views() -> Views:
    return Views(faust.App("t-views", web_enabled=False))


def test_served_methods_are_those_the_class_defines() -> None:
    assert served_methods(_Get) == {"GET"}
    assert served_methods(_Post) == {"POST"}


def test_a_view_serving_another_method_than_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match=r"serves \['GET'\]; the route table lists \['POST'\]"):
        _views()("constraints")(_Get)


def test_a_name_the_table_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="0 paths"):
        _views()("no_such_view")


def test_check_names_the_views_nothing_bound() -> None:
    views = _views()
    views("constraints")(_Post)
    with pytest.raises(ValueError, match="nothing serves") as refused:
        views.check()
    assert "'status'" in str(refused.value) and "'constraints'" not in str(refused.value)


def test_a_view_is_bound_once() -> None:
    views = _views()
    views("constraints")(_Post)
    with pytest.raises(ValueError, match="twice"):
        views("constraints")(_Post)


def test_the_table_s_access_follows_its_role_and_space_rule() -> None:
    for route in ROUTE_TABLE:
        if route.role is None:
            assert route.access is None and route.space is Space.none
        else:
            assert route.access is not None and route.space is not Space.none
            assert route.access.all_spaces == (route.space is Space.every)
