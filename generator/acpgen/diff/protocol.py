"""The changes to the JSON-RPC methods (``x-method``/``x-side``) and to the
top-level message forms (the titled members of the document's ``anyOf``),
as :class:`_ProtocolChanges`, the part of the comparison that reads the
raw schema rather than the IR's definitions."""

from __future__ import annotations

from .facts import _form_senders
from .model import OLD_RECEIVERS, OLD_SENDERS, Impact
from .recorder import _Recorder
from .words import _c, _callers, _list, _plural, _stripped


class _ProtocolChanges(_Recorder):
    def methods(self) -> None:
        def by_name(methods: dict[tuple[str, str], list[str]]) -> dict[str, dict[str, list[str]]]:
            out: dict[str, dict[str, list[str]]] = {}
            for (method, side), names in methods.items():
                out.setdefault(method, {})[side] = sorted(names)
            return out

        old_methods, new_methods = by_name(self.old.methods), by_name(self.new.methods)
        for method in sorted(set(old_methods) | set(new_methods)):
            before, after = old_methods.get(method, {}), new_methods.get(method, {})
            if before and after and set(before) != set(after):
                sides_old, sides_new = ", ".join(sorted(before)), ", ".join(sorted(after))
                self.add(
                    "method-changed",
                    "",
                    f"method {method}",
                    f"{_c(method)} is handled by the {sides_new}, was the {sides_old}",
                    Impact(
                        True,
                        f"peers built on the old schema send {_c(method)} to a side that no longer "
                        "handles it, and expect it from the other",
                        (OLD_RECEIVERS, OLD_SENDERS),
                    ),
                    Impact(False, "the classes keep their names"),
                    old=sides_old,
                    new=sides_new,
                    senders=set(),
                )
                continue
            for side, names in after.items():
                if side not in before:
                    self.add(
                        "method-added",
                        "",
                        f"method {method} ({side})",
                        f"new method {_c(method)}, handled by the {side or 'unknown side'} ({_list(names, code=True)})",
                        Impact(
                            False,
                            f"{_plural({side}, 'peers')} built on the old schema answer 'method not "
                            "found', which callers of a new method must expect",
                        ),
                        Impact(False, "new classes only"),
                        new=names,
                        senders=_callers(side),
                    )
            for side, names in before.items():
                if side not in after:
                    callers = _callers(side)
                    self.add(
                        "method-removed",
                        "",
                        f"method {method} ({side})",
                        f"removed method {_c(method)}, handled by the {side or 'unknown side'} ({_list(names, code=True)})",
                        Impact(
                            True,
                            f"{_plural(callers)} built on the old schema may still call it; "
                            f"{_plural({side}, 'peers')} built on the new schema answer 'method not found'",
                            (OLD_SENDERS,),
                        ),
                        Impact(False, "its classes are reported as types"),
                        old=names,
                        senders=callers,
                    )

    def message_forms(self) -> None:
        old_forms, new_forms = self.old.forms, self.new.forms
        for title in sorted(set(old_forms) | set(new_forms)):
            peers = _form_senders(title)
            path = f"message {title}"
            if title not in old_forms:
                self.add(
                    "message-form-added",
                    "",
                    path,
                    f"new top-level message form {_c(title)}",
                    Impact(False, "a new kind of message: peers that do not take part in it need not handle it"),
                    Impact(False, "message forms are not generated"),
                    senders=peers,
                )
            elif title not in new_forms:
                self.add(
                    "message-form-removed",
                    "",
                    path,
                    f"removed top-level message form {_c(title)}",
                    Impact(
                        True,
                        f"{_plural(peers)} built on the old schema may still send it; "
                        "receivers built on the new schema reject it",
                        (OLD_SENDERS,),
                    ),
                    Impact(False, "message forms are not generated"),
                    senders=peers,
                )
            elif _stripped(old_forms[title]) != _stripped(new_forms[title]):
                self.add(
                    "message-form-changed",
                    "",
                    path,
                    f"the top-level message form {_c(title)} changed",
                    Impact(
                        True,
                        "the envelope itself changed (not only the types it refers to); "
                        "compare the schemas' top-level anyOf",
                        (OLD_RECEIVERS, OLD_SENDERS),
                    ),
                    Impact(False, "message forms are not generated"),
                    senders=peers,
                )
