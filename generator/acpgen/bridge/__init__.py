"""``acpgen bridge``: a translating proxy between ACP v1 and ACP v2.

A v1 client can use a v2 agent and a v2 client a v1 agent: the bridge
presents one version to its client over stdio and speaks the other to the
agent it starts. What corresponds is computed from the two generated
packages' schemas (:mod:`.shapes`: the same method, the same wire name,
the same variant tag, the same enum value); what only the protocol's prose
decides is in ``rules/bridge.toml`` (:mod:`.rules`); whole messages are
translated by :class:`~.translate.Bridge`, which keeps the state a
conversation needs (requests in flight, prompt turns, tool calls seen), and
:mod:`.proxy` runs it between two processes. Every value with no
counterpart is recorded (:class:`~.shapes.LostValue`): a log record and a
``_meta`` note on the translated message. See docs/bridge.md.
"""

from __future__ import annotations

from types import ModuleType

from .rules import BridgeRules, load_bridge_rules
from .shapes import LostValue, Side
from .translate import META_KEY, Bridge, Routed

__all__ = [
    "META_KEY",
    "Bridge",
    "BridgeRules",
    "LostValue",
    "Routed",
    "Side",
    "load_bridge_rules",
    "make_bridge",
    "sides",
]


def sides(v1: ModuleType, v2: ModuleType) -> dict[int, Side]:
    """The two versions' schemas, from their generated packages."""
    return {1: Side.from_package(v1), 2: Side.from_package(v2)}


def make_bridge(client_version: int, v1: ModuleType, v2: ModuleType, *, notes: bool = True) -> Bridge:
    """A bridge for a client speaking ``client_version``, with the rules acpgen ships."""
    both = sides(v1, v2)
    return Bridge(both, load_bridge_rules(both), client_version, notes=notes)
