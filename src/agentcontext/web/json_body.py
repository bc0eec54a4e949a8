"""A JSON request body parsed and validated in one pass, where FastAPI takes two.

FastAPI reads a JSON body with ``json.loads`` and then validates the objects against the
route's model; pydantic's JSON mode does both in one pass over the bytes, in about 0.8 of
the CPU (the agent's 10-resource push, 12 KB: 276 us to 213 us) and, on a push of 1,000
skills (4 MiB), a peak of 5.9 MB instead of 8.5 MB: no tree of Python objects is built
first (``bench/json_body.py``).

A route of ``OnePassRoute`` whose body is one model tries that first on a body sent as
``application/json``. A body that passes becomes the JSON Starlette keeps for the request, so
FastAPI reads the model instance back as the body and passes it through as it is (pydantic
does not validate an instance's fields again; a model's ``mode="after"`` validator does run
again, and returns early: ``PushRequest._whole``). A body that does not pass is left to
FastAPI, which reads it again its own way: every refusal, and the few inputs only
``json.loads`` takes (a BOM, UTF-16, ``NaN``), stay exactly as they were. Only bodies
pydantic accepts in JSON mode take the short way, and a model accepts no more in JSON mode
than from the objects ``json.loads`` makes (``tests/web/test_json_body.py`` holds them side by side).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import params
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class OnePassRoute(APIRoute):
    """An ``APIRoute`` that validates a single-model JSON body in one pass when it can (see the module)."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        model = one_model_body(self)
        if model is None:
            return handler

        async def one_pass(request: Request) -> Response:
            if is_json(request.headers.get("content-type")):
                try:
                    raw = await request.body()  # kept by the request: FastAPI's own read gets it back
                except Exception as exc:  # a refusal, a client gone: FastAPI's own read meets it and answers it
                    request.body = _raising(exc)  # type: ignore[method-assign]
                    return await handler(request)
                # a body that fails is left to FastAPI, which reads it again and says what is wrong as it always has
                with contextlib.suppress(ValidationError):
                    if raw:
                        request._json = model.model_validate_json(raw)  # Starlette's parsed-JSON slot
            return await handler(request)

        return one_pass


def one_model_body(route: APIRoute) -> type[BaseModel] | None:
    """The model of the route's body, when the body is exactly one model (not embedded, not a form)."""
    field = route.body_field
    if field is None or route._embed_body_fields or len(route.dependant.body_params) != 1:
        return None
    info, annotation = field.field_info, field.field_info.annotation
    json_body = isinstance(info, params.Body) and info.media_type == _JSON  # a form is a Body of its own type
    if json_body and isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


_JSON = "application/json"


def _raising(exc: Exception) -> Callable[[], Coroutine[Any, Any, bytes]]:
    async def body() -> bytes:
        raise exc

    return body


def is_json(content_type: str | None) -> bool:
    return content_type is not None and content_type.partition(";")[0].strip().lower() == _JSON
