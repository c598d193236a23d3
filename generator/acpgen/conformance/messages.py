"""The JSON-RPC layer of the conformance suite: the method table and whole
messages.

What a package must have is read from the schema here, independently of the
generator: every definition with ``x-method``/``x-side`` is a request's params,
a response's result or a notification's params by its name's suffix (the
generator reads the envelopes; a unit test checks the two agree), and
``METHODS`` must list each with its side and types, no more.

Message fixtures (``messages.json`` beside the manifest) wrap the per-type
fixtures of each method's params and result types in JSON-RPC envelopes, so
what a message must decode to is what its params must decode to; unknown
methods keep their params as JSON; mutated envelopes must fail at their path.
Only the package's public API is used: ``METHODS``, ``decode_message``,
``encode_message``, ``decode_result``, the message classes, ``encode``,
``ValidationError`` and ``DEFINITIONS``.
"""

from __future__ import annotations

import contextlib
import copy
import json
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..jsontypes import Json, JsonObject


SUFFIXES = {"Request": "request", "Response": "response", "Notification": "notification"}
MESSAGE_CLASSES = {
    "request": "Request",
    "notification": "Notification",
    "response": "Response",
    "error": "ErrorResponse",
}
UNKNOWN_METHOD = "_acpgen/unknown"
PER_METHOD = 3
"""Valid per-type fixtures wrapped in messages, per params or result type."""


@dataclass(frozen=True)
class Expected:
    """One use of a method, as the schema states it."""

    method: str
    kind: str
    side: str
    params: str
    result: str = ""


def expected_methods(document: JsonObject) -> dict[tuple[str, str], Expected]:
    """``{(method, "request"|"notification"): Expected}`` from the schema."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for name, node in document.get("$defs", {}).items():
        if not isinstance(node, dict) or "x-method" not in node:
            continue
        kind = next((k for suffix, k in SUFFIXES.items() if name.endswith(suffix)), None)
        if kind is None:
            continue
        use = "request" if kind == "response" else kind
        entry = found.setdefault((node["x-method"], use), {"side": node.get("x-side")})
        entry["result" if kind == "response" else "params"] = name
    return {
        key: Expected(key[0], key[1], entry["side"], entry.get("params", ""), entry.get("result", ""))
        for key, entry in found.items()
    }


# ------------------------------------------------------------------ fixtures


def build(document: JsonObject, cases: dict[str, list[JsonObject]], sha: str) -> dict[str, Any]:
    """The ``messages.json`` document for a schema whose per-type fixtures
    are ``cases`` (``{definition: [case, ...]}``)."""
    out: list[JsonObject] = []
    ids = iter(range(1, 1_000_000))

    def valid(name: str) -> list[JsonObject]:
        return [c for c in cases.get(name, ()) if c.get("valid") is True and "output" in c and "input" in c][
            :PER_METHOD
        ]

    for use in sorted(expected_methods(document).values(), key=lambda e: (e.method, e.kind)):
        for case in valid(use.params):
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": use.method, "params": case["input"]}
            expect: dict[str, Any] = {"kind": use.kind, "method": use.method, "params_def": use.params}
            if use.kind == "request":
                message = {"jsonrpc": "2.0", "id": next(ids), **{k: message[k] for k in ("method", "params")}}
                expect["id"] = message["id"]
            expect["params"] = case["output"]
            if "strict_output" in case:
                expect["strict_params"] = case["strict_output"]
            out.append({"name": f"{use.method} {use.kind}: {case['name']}", "message": message, "expect": expect})
        invalid = [
            c for c in cases.get(use.params, ())
            if c.get("valid") is False and "output" not in c and isinstance(c.get("error"), str) and isinstance(c.get("input"), dict)
        ][:PER_METHOD]  # fmt: skip
        for case in invalid:
            message = {"jsonrpc": "2.0", "method": use.method, "params": case["input"]}
            if use.kind == "request":
                message = {"jsonrpc": "2.0", "id": next(ids), "method": use.method, "params": case["input"]}
            out.append(
                {
                    "name": f"{use.method} {use.kind}: {case['name']}",
                    "message": message,
                    "expect": {"method": use.method, "error": "$.params" + case["error"][1:], "params_error": True},
                }
            )
        if use.kind == "request":
            for case in valid(use.result):
                id = next(ids)
                out.append(
                    {
                        "name": f"{use.method} response: {case['name']}",
                        "message": {"jsonrpc": "2.0", "id": id, "result": case["input"]},
                        "expect": {
                            "kind": "response", "id": id, "method": use.method, "result_def": use.result,
                            "result": case["output"], **({"strict_result": case["strict_output"]} if "strict_output" in case else {}),
                        },
                    }
                )  # fmt: skip
    out.extend(_unknown_methods(document))
    out.extend(_bad_envelopes(_allows_null(document.get("$defs", {}).get("RequestId"))))
    return {
        "description": "Generated by `acpgen conformance-fixtures`: JSON-RPC messages built from the per-type fixtures.",
        "schema_sha256": sha,
        "messages": out,
    }


def _unknown_methods(document: JsonObject) -> list[JsonObject]:
    params = {"anything": [1, {"nested": None}], "_meta": 5}
    out = [
        {
            "name": "an unknown request keeps its params as JSON",
            "message": {"jsonrpc": "2.0", "id": "u1", "method": UNKNOWN_METHOD, "params": params},
            "expect": {"kind": "request", "id": "u1", "method": UNKNOWN_METHOD, "params": params, "raw": True},
        },
        {
            "name": "an unknown notification keeps its params as JSON",
            "message": {"jsonrpc": "2.0", "method": UNKNOWN_METHOD, "params": [1, 2]},
            "expect": {"kind": "notification", "method": UNKNOWN_METHOD, "params": [1, 2], "raw": True},
        },
        {
            "name": "an unknown request keeps even string params",
            "message": {"jsonrpc": "2.0", "id": "u2", "method": UNKNOWN_METHOD, "params": "p"},
            "expect": {"kind": "request", "id": "u2", "method": UNKNOWN_METHOD, "params": "p", "raw": True},
        },
        {
            "name": "an unknown request without params",
            "message": {"jsonrpc": "2.0", "id": 0, "method": UNKNOWN_METHOD},
            "expect": {"kind": "request", "id": 0, "method": UNKNOWN_METHOD, "params": None, "raw": True},
        },
        {
            "name": "an error response with a null id",
            "message": {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            "expect": {"kind": "error", "id": None, "code": -32700},
        },
        {
            "name": "an error response keeps its data as JSON",
            "message": {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -32602, "message": "Invalid params", "data": {"x": [1]}},
            },
            "expect": {"kind": "error", "id": 3, "code": -32602, "data": {"x": [1]}},
        },
    ]
    uses = expected_methods(document)
    requests_only = sorted(m for (m, k) in uses if k == "request" and (m, "notification") not in uses)
    notifications_only = sorted(m for (m, k) in uses if k == "notification" and (m, "request") not in uses)
    if notifications_only:
        method = notifications_only[0]
        out.append(
            {
                "name": f"{method} sent as a request (with an id) is an unknown request",
                "message": {"jsonrpc": "2.0", "id": 9, "method": method, "params": {"x": 1}},
                "expect": {"kind": "request", "id": 9, "method": method, "params": {"x": 1}, "raw": True},
            }
        )
    if requests_only:
        method = requests_only[0]
        out.append(
            {
                "name": f"{method} sent as a notification (no id) is an unknown notification",
                "message": {"jsonrpc": "2.0", "method": method, "params": {"x": 1}},
                "expect": {"kind": "notification", "method": method, "params": {"x": 1}, "raw": True},
            }
        )
    return out


def _allows_null(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_allows_null(option) for key in ("anyOf", "oneOf") for option in node.get(key) or ())


def _bad_envelopes(null_id: bool) -> list[JsonObject]:
    request: JsonObject = {"jsonrpc": "2.0", "id": 1, "method": UNKNOWN_METHOD, "params": {}}
    response: JsonObject = {"jsonrpc": "2.0", "id": 1, "result": {}}

    def without(message: JsonObject, key: str) -> JsonObject:
        return {k: v for k, v in message.items() if k != key}

    bad: list[tuple[str, Json, str]] = [
        ("not an object", [request], "$"),
        ("no jsonrpc", without(request, "jsonrpc"), "$.jsonrpc"),
        ("jsonrpc 1.0", {**request, "jsonrpc": "1.0"}, "$.jsonrpc"),
        ("a boolean id", {**request, "id": True}, "$.id"),
        ("a fractional id", {**request, "id": 1.5}, "$.id"),
        ("an object id", {**request, "id": {}}, "$.id"),
        ("a numeric method", {**request, "method": 5}, "$.method"),
        ("both result and error", {**response, "error": {"code": 1, "message": "m"}}, "$"),
        ("neither method, result nor error", {"jsonrpc": "2.0", "id": 1}, "$"),
        ("a result without an id", without(response, "id"), "$.id"),
        ("an error that is not an object", {"jsonrpc": "2.0", "id": 1, "error": "boom"}, "$.error"),
        ("a string error code", {"jsonrpc": "2.0", "id": 1, "error": {"code": "E1", "message": "m"}}, "$.error.code"),
        ("an error without a message", {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "$.error.message"),
    ]
    out = [
        {"name": f"bad envelope: {label}", "message": message, "expect": {"error": path}}
        for label, message, path in bad
    ]
    if null_id:  # v1's RequestId allows null, as serde's Null
        expect: dict[str, Any] = {"kind": "request", "id": None, "method": UNKNOWN_METHOD, "params": {}, "raw": True}
        out.append(
            {"name": "a null request id (RequestId allows null)", "message": {**request, "id": None}, "expect": expect}
        )
        expect = {"kind": "response", "id": None, "method": UNKNOWN_METHOD, "result_def": "", "result": {}}
        out.append(
            {"name": "a null result id (RequestId allows null)", "message": {**response, "id": None}, "expect": expect}
        )
    else:
        out.append(
            {"name": "bad envelope: a null request id", "message": {**request, "id": None}, "expect": {"error": "$.id"}}
        )
        out.append(
            {"name": "bad envelope: a null result id", "message": {**response, "id": None}, "expect": {"error": "$.id"}}
        )
    return out


# ------------------------------------------------------------------ checks


class MessageChecker:
    def __init__(self, package: ModuleType, document: JsonObject) -> None:
        self.package = package
        self.document = document
        self.definitions: dict[str, Any] = getattr(package, "DEFINITIONS", {})

    def missing_api(self) -> list[str]:
        names = (
            "METHODS",
            "decode_message",
            "encode_message",
            "decode_result",
            "Request",
            "Notification",
            "Response",
            "ErrorResponse",
        )
        return [n for n in names if not hasattr(self.package, n)]

    def check_table(self) -> list[tuple[str, list[str]]]:
        """``[(method, problems)]``: every method of the schema, then extras."""
        table = self.package.METHODS
        out = []
        expected = expected_methods(self.document)
        for method in sorted({m for m, _ in expected}):
            problems: list[str] = []
            info = table.get(method)
            if info is None:
                out.append((method, ["METHODS has no entry for it"]))
                continue
            for kind in ("request", "notification"):
                want = expected.get((method, kind))
                got = getattr(info, kind, None)
                if want is None:
                    if got is not None:
                        problems.append(f"METHODS lists it as a {kind}, the schema does not")
                    continue
                if got is None:
                    problems.append(f"METHODS does not list it as a {kind}")
                    continue
                if got.side != want.side:
                    problems.append(f"{kind}: side {got.side!r}, the schema says {want.side!r}")
                if got.params is not self.definitions.get(want.params):
                    problems.append(f"{kind}: params {got.params!r}, expected the {want.params} type")
                if kind == "request" and got.result is not self.definitions.get(want.result):
                    problems.append(f"request: result {got.result!r}, expected the {want.result} type")
                if not (isinstance(got.handler, str) and got.handler.isidentifier()):
                    problems.append(f"{kind}: handler {got.handler!r} is not a Python name")
                interface = {"agent": "Agent", "client": "Client"}.get(want.side)
                if interface and not hasattr(getattr(self.package, interface, None), got.handler):
                    problems.append(f"{kind}: {interface} has no {got.handler!r} handler")
            out.append((method, problems))
        for extra in sorted(set(table) - {m for m, _ in expected}):
            out.append((extra, ["METHODS lists a method the schema does not have"]))
        return out

    def check(self, fixture: JsonObject) -> list[str]:
        """The problems with one message fixture, in both modes."""
        problems: list[str] = []
        message, expect = fixture["message"], fixture["expect"]
        before = json.dumps(message, sort_keys=True)
        for strict in (False, True):
            mode = "strict" if strict else "lenient"
            try:
                decoded = self.package.decode_message(copy.deepcopy(message), strict=strict)
            except self.package.ValidationError as error:
                if "error" not in expect:
                    problems.append(f"{mode}: fails at {error.path} ({error.message})")
                elif error.path != expect["error"] and not (
                    strict and expect.get("params_error") and error.path.startswith("$.params")
                ):
                    problems.append(f"{mode}: fails at {error.path} ({error.message}), expected {expect['error']}")
                continue
            except Exception as exc:
                problems.append(f"{mode}: decode_message raised {type(exc).__name__}, not ValidationError: {exc}")
                continue
            if "error" in expect:
                problems.append(f"{mode}: decode_message accepts it, expected a failure at {expect['error']}")
                continue
            problems += [f"{mode}: {p}" for p in self._compare(decoded, message, expect, strict)]
            problems += [f"{mode}: {p}" for p in self._round_trip(decoded, message, expect, strict)]
        with contextlib.suppress(Exception):
            self.package.decode_message(message)
        if json.dumps(message, sort_keys=True) != before:
            problems.append("decode_message changed its input")
        return problems

    def _compare(self, decoded: Any, message: JsonObject, expect: JsonObject, strict: bool) -> list[str]:
        cls = getattr(self.package, MESSAGE_CLASSES[expect["kind"]])
        if type(decoded) is not cls:
            return [f"decoded to {type(decoded).__name__}, expected {cls.__name__}"]
        problems = []
        if "id" in expect and decoded.id != expect["id"]:
            problems.append(f"id {decoded.id!r}, expected {expect['id']!r}")
        if expect["kind"] in ("request", "notification"):
            if decoded.method != expect["method"]:
                problems.append(f"method {decoded.method!r}, expected {expect['method']!r}")
            if expect.get("raw"):
                if not _same_json(decoded.params, expect["params"]):
                    problems.append(f"params {decoded.params!r}, expected the JSON {expect['params']!r}")
            else:
                params = expect.get("strict_params", expect["params"]) if strict else expect["params"]
                problems += self._typed(decoded.params, expect["params_def"], params, "params")
        elif expect["kind"] == "response":
            if not _same_json(decoded.result, message["result"]):
                problems.append(f"the result is {decoded.result!r}, not the JSON it was sent as")
            try:
                typed = self.package.decode_result(expect["method"], decoded.result, strict=strict)
            except self.package.ValidationError as error:
                problems.append(f"decode_result fails at {error.path}: {error.message}")
            else:
                result = expect.get("strict_result", expect["result"]) if strict else expect["result"]
                problems += self._typed(typed, expect["result_def"], result, "decode_result")
        else:
            if decoded.error.code != expect["code"]:
                problems.append(f"error code {decoded.error.code!r}, expected {expect['code']!r}")
            if "data" in expect and decoded.error.data != expect["data"]:
                problems.append(f"error data {decoded.error.data!r}, expected {expect['data']!r}")
        return problems

    def _typed(self, value: Any, def_name: str, wire: Any, what: str) -> list[str]:
        cls = self.definitions.get(def_name)
        problems = []
        if isinstance(cls, type) and cls is not Any and not isinstance(value, cls):
            problems.append(f"{what} is a {type(value).__name__}, expected {def_name}")
        try:
            encoded = self.package.encode(value)
        except Exception as exc:
            return [*problems, f"encode({what}) raised {type(exc).__name__}: {exc}"]
        if not _same_json(encoded, wire):
            problems.append(f"{what} encodes to {json.dumps(encoded)[:200]}, expected {json.dumps(wire)[:200]}")
        return problems

    def _round_trip(self, decoded: Any, message: JsonObject, expect: JsonObject, strict: bool) -> list[str]:
        try:
            wire = self.package.encode_message(decoded)
        except Exception as exc:
            return [f"encode_message raised {type(exc).__name__}: {exc}"]
        wanted = dict(message)
        if expect["kind"] in ("request", "notification") and not expect.get("raw"):
            wanted["params"] = expect.get("strict_params", expect["params"]) if strict else expect["params"]
        if expect["kind"] in ("request", "notification") and wanted.get("params") is None:
            wanted.pop("params", None)
        if not _same_json(wire, wanted):
            return [f"encode_message gives {json.dumps(wire)[:200]}, expected {json.dumps(wanted)[:200]}"]
        again = self.package.decode_message(wire)
        if again != self.package.decode_message(json.loads(json.dumps(wanted))):
            return ["decode_message(encode_message(m)) differs"]
        return []


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON: ``true`` is not ``1``, ``1`` is not ``1.0``."""
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):
        return False
