"""The intermediate representation: what will be generated, nothing more.

Small immutable dataclasses of semantic facts (no output text: the render
side composes that). ``lower`` builds them from a schema with wire names
only; ``naming`` fills in the Python names; the later passes of
:mod:`acpgen.compile` add what they find; the templates print them. The
families, one module each:

* :mod:`.types`: type expressions (:data:`TypeExpr`), the JSON a field or an
  alias holds, and default values (:data:`Value`);
* :mod:`.defs`: definitions (:data:`Definition`), one per ``$defs`` entry;
* :mod:`.patch`: upserts, chunks and capabilities;
* :mod:`.session`: the session fold;
* :mod:`.senders`: the agent's session senders;
* :mod:`.methods`: the JSON-RPC method table;
* :mod:`.package`: the whole package.

``from acpgen.compile import ir`` gives every name of them.
"""

from __future__ import annotations

from .defs import (
    CATCH_ALL,
    NULL_TAG,
    TAGGED,
    UNTAGGED,
    AliasDef,
    Definition,
    Empty,
    EnumDef,
    EnumMember,
    Field,
    InitParam,
    Method,
    ObjectDef,
    OnError,
    Role,
    UnionDef,
    ValueKind,
    Variant,
)
from .methods import (
    Call,
    CallKind,
    Cancellation,
    Gate,
    GateSource,
    Mark,
    MessageKind,
    RpcMethod,
    SchemaFacts,
    Side,
)
from .package import (
    Fallback,
    Package,
    Resumption,
)
from .patch import (
    Append,
    Capability,
    CapabilityKind,
    Chunk,
    PatchField,
    Rule,
    Upsert,
)
from .senders import (
    Helper,
    Sender,
    Senders,
    SessionCall,
    ToolCall,
)
from .session import (
    Action,
    Container,
    SessionAction,
    SessionField,
    SessionRules,
    SessionSource,
)
from .types import (
    NO_DEFAULT,
    AnyT,
    BoolT,
    ConstT,
    EnumValue,
    FirstMatchT,
    IntT,
    JsonValue,
    KeyedT,
    ListT,
    ListValue,
    MapT,
    NullableT,
    NullT,
    NumT,
    ObjectValue,
    RawT,
    RefT,
    ScalarUnionT,
    StrT,
    TypeExpr,
    Value,
)

__all__ = [
    "CATCH_ALL",
    "NO_DEFAULT",
    "NULL_TAG",
    "TAGGED",
    "UNTAGGED",
    "Action",
    "AliasDef",
    "AnyT",
    "Append",
    "BoolT",
    "Call",
    "CallKind",
    "Cancellation",
    "Capability",
    "CapabilityKind",
    "Chunk",
    "ConstT",
    "Container",
    "Definition",
    "Empty",
    "EnumDef",
    "EnumMember",
    "EnumValue",
    "Fallback",
    "Field",
    "FirstMatchT",
    "Gate",
    "GateSource",
    "Helper",
    "InitParam",
    "IntT",
    "JsonValue",
    "KeyedT",
    "ListT",
    "ListValue",
    "MapT",
    "Mark",
    "MessageKind",
    "Method",
    "NullT",
    "NullableT",
    "NumT",
    "ObjectDef",
    "ObjectValue",
    "OnError",
    "Package",
    "PatchField",
    "RawT",
    "RefT",
    "Resumption",
    "Role",
    "RpcMethod",
    "Rule",
    "ScalarUnionT",
    "SchemaFacts",
    "Sender",
    "Senders",
    "SessionAction",
    "SessionCall",
    "SessionField",
    "SessionRules",
    "SessionSource",
    "Side",
    "StrT",
    "ToolCall",
    "TypeExpr",
    "UnionDef",
    "Upsert",
    "Value",
    "ValueKind",
    "Variant",
]
