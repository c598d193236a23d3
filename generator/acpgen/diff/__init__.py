"""Compare two schema files at the level users care about, and say what
breaks.

``diff_schemas(old, new)`` lowers both schemas to the named IR (the same
:func:`acpgen.pipeline.build_ir` the generator uses) and lists the changes
between them: types, fields, union variants, enum values, defaults,
``x-deserialize-*`` keywords, methods (``x-method``/``x-side``) and the
top-level message forms (the titled members of the document's ``anyOf``).
Where the IR does not carry something (``additionalProperties``, message
forms, ``x-method``, subschemas kept raw) the raw schema is read instead.

Every change is classified twice, each time with a one-line reason:

* **wire**: can a peer built on the old schema and a peer built on the new
  one still exchange the messages concerned? Two things can fail, and a
  change names which in ``affects``:

  - ``old-senders``: the new schema no longer accepts something the old one
    allowed, so a receiver built on the new schema refuses what a sender
    built on the old one may send (a *narrowing*);
  - ``old-receivers``: the new schema lets a sender emit something the old
    one did not allow, so a receiver built on the old schema refuses what a
    sender built on the new one may send (a *widening*).

  A change can do both. Who sends a type comes from the message forms (the
  ``Agent``, ``Client``, ``Proxy`` and ``ProtocolLevel`` members of the
  document's ``anyOf`` and every type they reach), so the reasons name
  agents and clients: "clients built on the new schema reject an
  ``ElicitationSchema`` without ``type`` that agents built on the old schema
  may send".
* **api**: does Python code written against the package generated from the
  old schema still work with the one generated from the new schema? It
  breaks when a name it uses goes or is renamed (class, variant class,
  attribute, enum member), when a constructor needs a new argument, when a
  definition turns into another kind of thing, or when the Python type of
  an attribute changes other than by gaining union members (readers would
  see ``None``/``UNSET``/another class, writers could not pass theirs).

The rules, change by change (``kind`` is the change's key in the JSON form)::

    kind                     wire                                      Python API
    -----------------------  ----------------------------------------  ---------------------------------
    type-added               compatible: it reaches the wire only      compatible
                             where other changes refer to it
    type-removed             as the changes where the old schema used  breaking: the class or alias is
                             it (old senders may still send it there); gone (the reason names a rename)
                             compatible when renamed: a removed type
                             whose exact shape one added type has
    type-kind-changed        shape against shape (an object that       breaking: a dataclass, enum,
                             became a union, and back)                 union or alias became another
    class-renamed            compatible                                breaking
    field-added              required: breaks old senders (they omit   required without a default:
                             it); optional: compatible, unless the     breaking (a new constructor
                             old object forbids other properties       argument); otherwise compatible
    field-removed            was required: breaks old receivers (new   breaking: the attribute is gone
                             senders omit it); was optional:
                             compatible (receivers did without it, and
                             an unknown property is ignored)
    field-required           breaks old senders                        breaking, unless it has a default
    field-optional           breaks old receivers                      breaking (may now read as UNSET),
                                                                       unless it has a default
    field-nullable           breaks old receivers (null)               breaking (may now read as None)
    field-non-nullable       breaks old senders (null)                 breaking (None is not a value)
    field-type-changed,      by shape: wider breaks old receivers,     breaking when the annotation
    alias-type-changed       narrower old senders, unrelated both      changes, except by new members
    field-renamed            compatible (same wire name)               breaking
    field-default-changed    a changed value breaks both (an omitted   removed: breaking (may now read as
                             field means different things); added or   UNSET), unless now required;
                             removed: compatible                       otherwise compatible
    deserialize-added,       compatible: messages valid under both     compatible
    deserialize-removed      schemas decode the same way; only
    (x-deserialize-*)        invalid values are repaired or refused
    variant-added            breaks old receivers, unless the old      compatible
                             union has a catch-all variant
    variant-removed          breaks old senders, unless the new union  breaking: the variant class is gone
                             has a catch-all variant
    variant-renamed          compatible                                breaking
    variant-changed          shape against shape (new payload type)    breaking when attributes go or a
                                                                       required one comes
    union-tag-changed        breaks both                               breaking
    enum-value-added         closed enum: breaks old receivers; open   compatible
                             enum: compatible (the catch-all)
    enum-value-removed       closed enum: breaks old senders; open     breaking: the member is gone
                             enum: compatible (the catch-all)
    enum-opened              compatible (senders emit known values)    breaking (may read as a plain str)
    enum-closed              compatible (senders emit known values)    breaking (a plain str is refused)
    enum-member-renamed      compatible                                breaking
    method-added             compatible: old peers answer "method not  compatible
                             found", which callers must expect
    method-removed           breaks old senders: old peers may still   compatible (its classes are listed
                             call it                                   as types)
    method-changed           breaks both (another side handles it)     compatible
    message-form-added       compatible                                compatible (not generated)
    message-form-removed     breaks old senders                        compatible (not generated)
    message-form-changed     breaks both (compare the envelopes)       compatible (not generated)

"Shape against shape" asks of the two schemas' types whether every value
one side's senders may emit is accepted by the other side's receivers
(``covers``), in both directions, conservatively: when it cannot tell, the
change breaks. The principles behind the table:

* Senders emit only what they know: the properties an object declares, the
  tagged variants of a union, the members of an enum. Catch-all variants
  and open enums are for *receiving*: they make unknown values acceptable,
  and are not counted as something a sender produces.
* Objects accept properties they do not declare (no ACP object says
  ``additionalProperties: false``; one that does is judged accordingly).
* A change inside a referenced type is reported once, on that type: a field
  of type ``ToolKind`` does not change when ``ToolKind`` gains a value.
* Receivers decode leniently, like the reference SDKs: a widening is
  *tolerated* (compatible, and the reason says so) when old receivers drop
  just the values they do not know, because the field is
  ``x-deserialize-default-on-error`` (or ``-on-null`` for a null), or every
  place that holds the type is, and some of what new senders emit still
  reads (a type that changed beyond recognition is not tolerated). This is
  how ACP adds enum values and variants. A narrowing is never tolerated:
  new receivers that drop what old senders send lose it (the reason then
  says "drop" rather than "reject"). A validator in strict mode tolerates
  nothing.
* Python names come from the naming stage, so a class, variant class,
  attribute or enum member whose generated name changes is reported even
  when the wire name did not change.

``breaking`` on a change is ``wire.breaking or api.breaking``.

The JSON form (:func:`render_json`) has sorted keys and a stable order::

    {
      "format": 1,
      "old": {"file", "sha256", "title", "version"},   # version "" when unknown
      "new": {...},
      "summary": {"changes", "breaking", "wire_breaking", "api_breaking",
                  "compatible", "kinds": {kind: count}},
      "changes": [                                     # by definition, path, kind
        {"kind", "definition", "path", "summary",
         "senders": ["agent", "client", "proxy"],      # who sends it, when the schema says
         "old": ..., "new": ...,                       # what was compared, as JSON, or null
         "breaking": bool,
         "wire": {"breaking": bool, "affects": ["old-receivers", "old-senders"], "reason": str},
         "api": {"breaking": bool, "reason": str}}
      ]
    }

``path`` names the place: ``Type``, ``Type.wireField``, ``Union[tag]``
(``Union[*]`` for the catch-all variant, ``Union[untagged]``/``Union[null]``
for the other untagged roles, ``Union[RefName]`` in a union without a tag),
``Union[tag].wireField``, ``Type.(attribute)`` for a flattened field (the
elicitation's ``scope``: its members share the object, so it has no wire
name), ``Enum:value``, ``method <name> (<side>)`` or ``message <Title>``.
``definition`` is the ``$defs`` name it belongs to (empty for methods and
message forms). ``summary`` and the reasons put names, types and values
between backticks, and show types as the generated package types them
(``list[ContentBlock] (minItems 1)``, ``str (pattern '^[A-Z]{3}$')``, a
union by its variant classes); ``old``/``new`` keep schema terms
(``ContentBlock[](minItems 1)``).
"""

from __future__ import annotations

from .compare import diff_files, diff_schemas, load_cached
from .model import (
    COMPATIBLE,
    FORMAT_VERSION,
    KIND_TITLES,
    KINDS,
    OLD_RECEIVERS,
    OLD_SENDERS,
    Change,
    Impact,
    SchemaDiff,
    SchemaInfo,
)
from .render import RENDERERS, headline, render_json, render_markdown, render_text
from .subtype import show_type

__all__ = [
    "COMPATIBLE",
    "FORMAT_VERSION",
    "KINDS",
    "KIND_TITLES",
    "OLD_RECEIVERS",
    "OLD_SENDERS",
    "RENDERERS",
    "Change",
    "Impact",
    "SchemaDiff",
    "SchemaInfo",
    "diff_files",
    "diff_schemas",
    "headline",
    "load_cached",
    "render_json",
    "render_markdown",
    "render_text",
    "show_type",
]
