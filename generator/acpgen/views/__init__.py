"""Stage 3b, views: one typed view per generated module, built in Python
from the analysed IR.

A view holds every decision about what a module prints: the names it
binds, the annotations and literals as source text, which branches exist.
The templates receive only their module's view (``{{ view.... }}``) and
contain loops, boolean ``if``\\ s and substitutions, so a type checker sees
the whole contract between the compiler and the templates.

:data:`VIEWS` maps a generated module's stem (``"codec"``, ``"session"``
...) to the function that builds its view from :class:`ViewInputs`; a
module in it is rendered with ``{"view": ...}`` as its only context.
"""

from __future__ import annotations

from . import codec, connection, models, package, patch, protocol, proxy, senders, session
from .inputs import ViewBuilder, ViewInputs

__all__ = ["VIEWS", "ViewBuilder", "ViewInputs"]

VIEWS: dict[str, ViewBuilder] = {
    "__init__": package.build_package_view,
    "_schema": package.build_schema_view,
    "models": models.build_models_view,
    "codec": codec.build_codec_view,
    "patch": patch.build_patch_view,
    "session": session.session_view,
    "protocol": protocol.build,
    "connection": connection.build,
    "senders": senders.build,
    "proxy": proxy.build,
}
"""Generated module stem -> the builder of its view."""
