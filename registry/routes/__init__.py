"""The registry's HTTP surfaces, one module per surface (specs/registry-v1.yaml); each module's
``routes`` is its list of Starlette routes, mounted by :func:`affidavit.registry.app.create_app`.

>>> from affidavit.registry.routes import health
>>> sorted(route.path for route in health.routes)[:2]
['/.well-known/affidavit', '/openapi.yaml']

:mod:`._http` holds what they share: bounded bodies, strict JSON, typed parameters, API keys and
the ``{code, message, details}`` error answer.
"""

from affidavit.registry.routes._http import read_body

__all__ = [
    "discovery",
    "explorer",
    "facts",
    "health",
    "log",
    "lookup",
    "read_body",
    "scitt",
    "tlog",
]
