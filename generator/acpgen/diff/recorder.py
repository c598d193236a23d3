"""The base of the comparison: :class:`_Recorder` holds the two analysed
schemas (``facts._Side``) and the types renamed between them, records each
change (:meth:`_Recorder.add`) and words the wire verdict of a narrowing or
widening (:meth:`_Recorder.wire`), which every kind of change shares."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable

from ..compile import ir
from ..compile.lower import strip_annotations
from ..jsontypes import Json
from .facts import _Side
from .model import OLD_RECEIVERS, OLD_SENDERS, Change, Impact
from .subtype import _Shapes, python_type
from .words import _a, _c, _count, _list, _plural, _receivers


class _Recorder(_Shapes):
    def __init__(self, old: _Side, new: _Side) -> None:
        self.old = old
        self.new = new
        self.renamed = self._renames()
        self.changes: list[Change] = []

    def _renames(self) -> dict[str, str]:
        """Removed types whose exact shape (without annotations) one added
        type carries: ``{old name: new name}``."""

        def by_shape(side: _Side, names: Iterable[str]) -> dict[str, list[str]]:
            out: dict[str, list[str]] = {}
            for name in names:
                key = json.dumps(strip_annotations(side.raw[name]), sort_keys=True)
                out.setdefault(key, []).append(name)
            return out

        removed = by_shape(self.old, [n for n in self.old.raw if n not in self.new.raw])
        added = by_shape(self.new, [n for n in self.new.raw if n not in self.old.raw])
        return {
            names[0]: added[key][0]
            for key, names in removed.items()
            if len(names) == 1 and len(added.get(key, ())) == 1
        }

    # -------------------------------------------------------- building changes

    def senders(self, *names: str) -> set[str]:
        peers: set[str] = set()
        for name in names:
            peers |= self.old.senders.get(name, set()) | self.new.senders.get(name, set())
        return peers

    def add(
        self,
        kind: str,
        definition: str,
        path: str,
        summary: str,
        wire: Impact,
        api: Impact,
        *,
        old: Json = None,
        new: Json = None,
        senders: Collection[str] | None = None,
        python: tuple[str, ...] = (),
    ) -> Change:
        """Record a change; ``python`` names what of the old package it
        concerns (``Class``, ``Class.attribute``, ``Enum.MEMBER``), for
        :mod:`acpgen.diff.usage`."""
        peers = self.senders(definition) if senders is None else senders
        change = Change(
            kind=kind,
            definition=definition,
            path=path,
            summary=summary,
            wire=wire,
            api=api,
            senders=tuple(p for p in ("agent", "client", "proxy") if p in peers),
            old=old,
            new=new,
            python=python,
        )
        self.changes.append(change)
        return change

    def wire(
        self,
        owner: str,
        *,
        narrows: bool,
        widens: bool,
        what: str,
        narrow_why: str = "",
        widen_why: str = "",
        old_tolerant: str = "",
        new_tolerant: str = "",
        compatible: str = "",
        overlap: bool = True,
    ) -> Impact:
        """The wire impact of a change that ``narrows`` (new receivers refuse
        what old senders may send) and/or ``widens`` (old receivers refuse
        what new senders may send) what ``owner`` allows; ``what`` names the
        thing in the reasons.

        A widening is tolerated when old receivers drop just the values they
        do not know: ``old_tolerant`` says why at the field, or every place
        that holds an ``owner`` is ``x-deserialize-*``; and some of what new
        senders emit must still be readable (``overlap``), or everything
        would be dropped. A narrowing is not: new receivers that drop what
        old senders send lose it all the same."""
        peers = self.senders(owner)
        sends, gets = _plural(peers, "peers"), _plural(_receivers(peers), "receivers")
        affects, reasons, tolerated = [], [], []
        if narrows:
            why = new_tolerant or (
                f"every place that holds {_a(owner)} drops an invalid one (x-deserialize-*)"
                if owner and owner in self.new.protected
                else ""
            )
            affects.append(OLD_SENDERS)
            reasons.append(
                f"{gets} built on the new schema {'drop' if why else 'reject'} {what} that {sends} "
                "built on the old schema may send"
                + (f" ({narrow_why})" if narrow_why else "")
                + (f"; {why}" if why else "")
            )
        if widens:
            why = old_tolerant or (
                f"old receivers drop {_a(owner)} they cannot read: every place that holds one is x-deserialize-*"
                if owner and owner in self.old.protected
                else ""
            )
            if not overlap:
                why = ""
            if why:
                tolerated.append(why)
            else:
                affects.append(OLD_RECEIVERS)
                reasons.append(
                    f"{gets} built on the old schema reject {what} that {sends} built on the new schema may send"
                    + (f" ({widen_why})" if widen_why else "")
                )
        if affects:
            return Impact(True, "; ".join(reasons), tuple(sorted(affects)))
        if tolerated:
            return Impact(False, "tolerated: " + "; ".join(tolerated))
        return Impact(False, compatible or "messages valid under one schema are valid under the other")

    # -------------------------------------------------------- types

    def describe(self, definition: ir.Definition, side: _Side) -> str:
        """What a definition is in the package generated from ``side``: a
        dataclass, an enum, a union of the variant classes it names, or an
        alias of a Python type."""
        if isinstance(definition, ir.ObjectDef):
            return f"dataclass ({_count(len(definition.fields), 'field')})"
        if isinstance(definition, ir.EnumDef):
            return f"{'open' if definition.open else 'closed'} enum ({_count(len(definition.members), 'value')})"
        if isinstance(definition, ir.UnionDef):
            how = f"tagged by {_c(definition.tag)}" if definition.tag else "untagged"
            classes = [v.class_name for v in definition.variants]
            return f"union {how} of {_count(len(classes), 'variant')}: {_list(classes, limit=6, code=True)}"
        return f"alias of {_c(python_type(definition.target, side))}"
