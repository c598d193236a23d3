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
* :mod:`.methods`: the JSON-RPC method table;
* :mod:`.package`: the whole package.

``from acpgen.compile import ir`` gives every name of them.
"""

from __future__ import annotations

from .types import (
    NO_DEFAULT,
    AnyT,
    StrT,
    IntT,
    NumT,
    BoolT,
    NullT,
    ConstT,
    ListT,
    MapT,
    RefT,
    NullableT,
    ScalarUnionT,
    FirstMatchT,
    KeyedT,
    RawT,
    TypeExpr,
    JsonValue,
    EnumValue,
    ObjectValue,
    ListValue,
    Value,
)
from .defs import (
    Role,
    ValueKind,
    OnError,
    Empty,
    InitParam,
    Field,
    Method,
    ObjectDef,
    AliasDef,
    EnumMember,
    EnumDef,
    TAGGED,
    CATCH_ALL,
    UNTAGGED,
    NULL_TAG,
    Variant,
    UnionDef,
    Definition,
)
from .patch import (
    Rule,
    Append,
    CapabilityKind,
    PatchField,
    Upsert,
    Chunk,
    Capability,
)
from .session import (
    Container,
    Action,
    SessionSource,
    SessionField,
    SessionAction,
    SessionRules,
)
from .methods import (
    Side,
    CallKind,
    MessageKind,
    Mark,
    SchemaFacts,
    Call,
    RpcMethod,
)
from .package import (
    Fallback,
    Package,
)

__all__ = [
    "NO_DEFAULT",
    "AnyT",
    "StrT",
    "IntT",
    "NumT",
    "BoolT",
    "NullT",
    "ConstT",
    "ListT",
    "MapT",
    "RefT",
    "NullableT",
    "ScalarUnionT",
    "FirstMatchT",
    "KeyedT",
    "RawT",
    "TypeExpr",
    "JsonValue",
    "EnumValue",
    "ObjectValue",
    "ListValue",
    "Value",
    "Role",
    "ValueKind",
    "OnError",
    "Empty",
    "InitParam",
    "Field",
    "Method",
    "ObjectDef",
    "AliasDef",
    "EnumMember",
    "EnumDef",
    "TAGGED",
    "CATCH_ALL",
    "UNTAGGED",
    "NULL_TAG",
    "Variant",
    "UnionDef",
    "Definition",
    "Rule",
    "Append",
    "CapabilityKind",
    "PatchField",
    "Upsert",
    "Chunk",
    "Capability",
    "Container",
    "Action",
    "SessionSource",
    "SessionField",
    "SessionAction",
    "SessionRules",
    "Side",
    "CallKind",
    "MessageKind",
    "Mark",
    "SchemaFacts",
    "Call",
    "RpcMethod",
    "Fallback",
    "Package",
]
