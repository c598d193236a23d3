"""JSON-RPC 2.0 messages: the envelopes, the error codes and the reading and
writing of whole messages.

What varies with the schema (the method table, the codec) is handed to
:class:`MessageCodec` by the generated ``protocol`` module; everything here
is the same in every package.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, cast

from ._runtime import (
    MISSING,
    UNSET,
    NotPlainJson,
    ValidationError,
    check_unknown,
    json_type,
    plain_json,
)

__all__ = [
    "CANCEL_REQUEST",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSONRPC_VERSION",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "Cancellation",
    "DecodeMessage",
    "ErrorResponse",
    "Message",
    "MessageCodec",
    "MethodInfo",
    "Notification",
    "NotificationInfo",
    "ParamsError",
    "Request",
    "RequestError",
    "RequestId",
    "RequestInfo",
    "Response",
    "RpcError",
    "Side",
    "dump_message",
    "json_backend",
    "load_message",
    "new_notification",
    "new_request",
    "new_response",
    "session_of",
    "use_json_backend",
]

P = TypeVar("P")
R = TypeVar("R")

JSONRPC_VERSION = "2.0"
CANCEL_REQUEST = "$/cancel_request"
"""The protocol-level notification that cancels a request in flight."""

# The JSON-RPC 2.0 error codes and the one ACP takes from LSP for
# cancellation (the schema's ErrorCode lists them all).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

RequestId = int | str | None
"""A JSON-RPC request id: an integer or a string (null where the schema allows it)."""

Side = Literal["agent", "client", "protocol", "proxy"]
"""Who handles a method (the schema's ``x-side``): the agent or the client;
``protocol`` for the protocol-level notifications either end acts on
(``$/cancel_request``), ``proxy`` for methods of a proxy chain. A connection
end is ``"agent"`` or ``"client"``."""


# ---------------------------------------------------------------- the method table


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """A method used as a request: its params and result types, the side
    that handles it and the name of its handler."""

    side: Side
    params: Any
    """The class (or type alias) of the params."""
    result: Any
    """The class (or type alias) of the result."""
    handler: str
    params_name: str
    """The ``$defs`` name of the params type, for ``decode``."""
    result_name: str
    """The ``$defs`` name of the result type."""


@dataclass(frozen=True, slots=True)
class NotificationInfo:
    """A method used as a notification."""

    side: Side
    params: Any
    handler: str
    params_name: str


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """A method name and how it is used: as a request, a notification or
    both (JSON-RPC tells them apart by the presence of ``id``)."""

    name: str
    request: RequestInfo | None = None
    notification: NotificationInfo | None = None


@dataclass(frozen=True, slots=True)
class Cancellation:
    """What a session's cancel does to the requests being handled, and what
    a request is answered when its handler is cancelled (the package's
    ``CANCELLATION``, from ``rules/cancellation.toml``).

    When ``notification`` (``session/cancel``) passes through a connection,
    received (an agent's end) or sent (a client's end), the handlers still
    running on that end of the requests in ``answers`` whose params name
    that session (their ``session`` attribute) are cancelled: their asyncio
    tasks get ``CancelledError``. A request of ``answers`` whose handler is
    cancelled so, or by ``$/cancel_request``, is answered with its result
    (JSON: v1's ``{"stopReason": "cancelled"}`` for ``session/prompt``, the
    ``cancelled`` outcome for ``session/request_permission``) instead of
    -32800 (Request cancelled)."""

    notification: str
    session: str
    """The attribute of the params naming the session (``session_id``)."""
    answers: Mapping[str, Any]
    """Method -> the result (JSON) its cancelled handler is answered with."""

    def session_of(self, params: Any) -> str | None:
        """The session ``params`` name: its attribute, or ``sessionId`` of
        params kept as JSON."""
        value: object = getattr(params, self.session, None)
        if value is None and isinstance(params, dict):
            value = cast("dict[str, object]", params).get("sessionId")
        return value if isinstance(value, str) else None


# ---------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Request(Generic[P]):
    """A request: answered with a :class:`Response` or an :class:`ErrorResponse`."""

    id: RequestId
    method: str
    params: P


@dataclass(frozen=True, slots=True)
class Notification(Generic[P]):
    """A notification: never answered."""

    method: str
    params: P


@dataclass(frozen=True, slots=True)
class Response(Generic[R]):
    """A successful answer; ``result`` is JSON until it is decoded by the
    method of its request."""

    id: RequestId
    result: R


_new: Callable[[type], Any] = object.__new__
# The slots of the frozen message classes, set directly: what their
# generated __init__ does (object.__setattr__ per field) at a third of the
# cost, for the messages decode_message reads.
_set_request_id: Callable[[Any, Any], None] = Request.__dict__["id"].__set__
_set_request_method: Callable[[Any, Any], None] = Request.__dict__["method"].__set__
_set_request_params: Callable[[Any, Any], None] = Request.__dict__["params"].__set__
_set_note_method: Callable[[Any, Any], None] = Notification.__dict__["method"].__set__
_set_note_params: Callable[[Any, Any], None] = Notification.__dict__["params"].__set__
_set_response_id: Callable[[Any, Any], None] = Response.__dict__["id"].__set__
_set_response_result: Callable[[Any, Any], None] = Response.__dict__["result"].__set__


def _request(id: RequestId, method: str, params: Any) -> Request[Any]:
    message: Request[Any] = _new(Request)
    _set_request_id(message, id)
    _set_request_method(message, method)
    _set_request_params(message, params)
    return message


def _notification(method: str, params: Any) -> Notification[Any]:
    message: Notification[Any] = _new(Notification)
    _set_note_method(message, method)
    _set_note_params(message, params)
    return message


def _response(id: RequestId, result: Any) -> Response[Any]:
    message: Response[Any] = _new(Response)
    _set_response_id(message, id)
    _set_response_result(message, result)
    return message


# What the classes make, as fast as decode_message makes them: for the
# messages a connection sends (a request, its answer, a notification).
new_request = _request
new_response = _response
new_notification = _notification


@dataclass(frozen=True, slots=True)
class RpcError:
    """A JSON-RPC error object; ``data`` is JSON, or ``UNSET`` when omitted."""

    code: int
    message: str
    data: Any = UNSET


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """A failed answer; ``id`` is None when the request's id was unreadable."""

    id: RequestId
    error: RpcError


Message = Request[Any] | Notification[Any] | Response[Any] | ErrorResponse


class RequestError(Exception):
    """A JSON-RPC error as an exception: a handler raises it to answer with
    that error, and awaiting a request the peer failed raises it.

    ``str()`` shows the code, the message and the data, so a failure that
    reaches a log says what the peer said."""

    def __init__(self, code: int, message: str, data: Any = UNSET) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        text = f"{self.message} ({self.code})"
        if self.data is UNSET:
            return text
        return f"{text}: {_preview(self.data)}"

    def __repr__(self) -> str:
        return f"RequestError({self.code!r}, {self.message!r}, {_preview(self.data)})"

    @property
    def error(self) -> RpcError:
        return RpcError(self.code, self.message, self.data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = UNSET) -> RequestError:
        return cls(INVALID_PARAMS, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = UNSET) -> RequestError:
        return cls(INTERNAL_ERROR, "Internal error", data)


class ParamsError(ValidationError):
    """A message whose envelope is right but whose params do not decode as
    its method's type (a JSON-RPC ``-32602``). ``request`` says whether it
    was a request (with ``id``) or a notification."""

    def __init__(
        self, request: bool, id: RequestId, method: str, error: ValidationError
    ) -> None:
        super().__init__(error.message)
        self.request = request
        self.id = id
        self.method = method
        self.error = error

    @property
    def path(self) -> str:
        return "$.params" + self.error.path[1:]


def session_of(message: Mapping[str, Any], field: str) -> str | None:
    """The ``sessionId`` of a message's ``params`` or ``result`` (``field``),
    as JSON: what the network transports route a message by."""
    holder: object = message.get(field)
    if isinstance(holder, dict):
        value = cast("dict[str, object]", holder).get("sessionId")
        if isinstance(value, str):
            return value
    return None


def _preview(value: Any, limit: int = 200) -> str:
    """A value for a message: its JSON text, cut at ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind(value: object) -> str:
    """A JSON value's kind for a message: "a string", "an object", ..."""
    name = json_type(value)
    if name in ("integer", "number"):
        return "a number"
    if name == "null":
        return "null"
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"


def _a(name: str) -> str:
    """A class's name with its article: "a PromptResponse", "an Answer"."""
    return f"an {name}" if name[:1] in "AEIOUaeiou" else f"a {name}"


def _shown(value: object) -> str:
    """A found value for a message, shortened (a 10 MB string is not echoed)."""
    if type(value) is int and value.bit_length() > 64:
        return "a very large integer"
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
    return _preview(value, 60)


# ---------------------------------------------------------------- reading and writing


_NO_METHOD: Any = object()


class DecodeMessage(Protocol):
    """The type of :attr:`MessageCodec.decode_message`."""

    def __call__(self, data: Any, strict: bool = False) -> Message: ...


class MessageCodec:
    """Reads and writes whole JSON-RPC messages with a package's method table
    and codec: a request's or notification's params are decoded with the
    method's own type, results by the method of their request."""

    __slots__ = (
        "_decode",
        "_encode",
        "_null_id",
        "_results",
        "_types",
        "decode_message",
        "methods",
    )

    decode_message: DecodeMessage
    """Read a whole JSON-RPC message (a value as ``json.loads`` returns it).

    A request's or notification's params are decoded with the method's own
    type (a request's absent or null params read as ``{}``); the params of a
    method the schema does not have (``_``-prefixed extensions included)
    stay JSON, as does a response's result (see :meth:`decode_result`). A
    bad envelope raises :class:`ValidationError`, bad params
    :class:`ParamsError`. ``strict=True`` decodes as the schema says.

    A function bound to this codec's tables when it is made (not a method):
    it runs on every message, and a plain call of a closure costs less than
    a method's."""

    def __init__(
        self,
        methods: Mapping[str, MethodInfo],
        decode: Callable[..., object],
        encode: Callable[..., Any],
        *,
        null_request_id: bool,
    ) -> None:
        self.methods = methods
        """Every JSON-RPC method of the schema, by name."""
        self._decode = decode
        self._encode = encode
        self._null_id = null_request_id
        # Each method's params decoder, bound once (a package's ``decode``
        # lends its table's decoders through ``decoder_of``): reading a
        # message then costs one call, not a lookup by name. When the bound
        # decoder refuses, the params are decoded again through ``decode``,
        # which retries and words the error (decoders never change their
        # input).
        decoder_of: Callable[[str], _Decoder] = getattr(
            decode, "decoder_of", functools.partial(_by_name, decode)
        )
        requests: dict[str, tuple[_Decoder, str]] = {}
        notifications: dict[str, tuple[_Decoder, str]] = {}
        results: dict[str, tuple[_Decoder, str]] = {}
        types: dict[tuple[str, str], tuple[Any, str]] = {}
        for name, info in methods.items():
            if info.request is not None:
                params = info.request.params_name
                requests[name] = (decoder_of(params), params)
                result = info.request.result_name
                try:
                    results[name] = (decoder_of(result), result)
                except KeyError:  # ``decode`` says so when a result comes
                    results[name] = (_by_name(decode, result), result)
                types[name, "params"] = (info.request.params, params)
                types[name, "result"] = (info.request.result, info.request.result_name)
            if info.notification is not None:
                params = info.notification.params_name
                notifications[name] = (decoder_of(params), params)
                types[name, "notification"] = (info.notification.params, params)
        self._results = results
        """Each request method's result decoder and its ``$defs`` name, bound
        as the params decoders are (:meth:`decode_result`)."""
        self._types = types
        """What ``encode_message(validate=True)`` checks a value against:
        (method, ``"params"``, ``"result"`` or ``"notification"``) -> the
        method's type there and its ``$defs`` name."""
        self.decode_message = _message_decoder(
            decode, self._request_id, requests, notifications
        )

    def decode_result(self, method: str, data: Any, *, strict: bool = False) -> Any:
        """Type the result of a request to ``method``; the result of a method
        the schema does not have stays JSON. In lenient mode a ``null``
        result reads as ``{}``, as peers answer methods that return nothing."""
        bound = self._results.get(method)
        if bound is None:
            return data
        try:
            return bound[0](data, strict)
        except (ValidationError, NotPlainJson, RecursionError):
            pass  # ``decode`` retries and words the error
        name = bound[1]
        try:
            return self._decode(name, data, strict=strict)
        except ValidationError:
            if data is None and not strict:
                return self._decode(name, {}, strict=False)
            raise

    def encode_message(
        self, message: Message, *, validate: bool = False, method: str | None = None
    ) -> dict[str, Any]:
        """The wire form of a message, with ``"jsonrpc": "2.0"``; params and
        results are encoded (generated classes to JSON, JSON as it is). With
        ``validate`` a value of a generated class is checked against the
        schema first (:class:`ValidationError` with its path), and against
        the type its method takes there: a request's or notification's
        params as the method's params, a :class:`Response`'s result as the
        result of ``method`` (the method of the request it answers; without
        it, or for a method the schema does not have, only against the
        value's own class)."""
        encode = self._encode if not validate else self._checker(message, method)
        if isinstance(message, Request):
            out: dict[str, Any] = {
                "jsonrpc": JSONRPC_VERSION,
                "id": message.id,
                "method": message.method,
            }
            if message.params is not None and message.params is not UNSET:
                out["params"] = encode(message.params)
        elif isinstance(message, Notification):
            out = {"jsonrpc": JSONRPC_VERSION, "method": message.method}
            if message.params is not None and message.params is not UNSET:
                out["params"] = encode(message.params)
        elif isinstance(message, Response):
            out = {
                "jsonrpc": JSONRPC_VERSION,
                "id": message.id,
                "result": encode(message.result),
            }
        else:
            error: dict[str, Any] = {
                "code": message.error.code,
                "message": message.error.message,
            }
            if message.error.data is not UNSET:
                error["data"] = encode(message.error.data)
            out = {"jsonrpc": JSONRPC_VERSION, "id": message.id, "error": error}
        return out

    def _checker(self, message: Message, method: str | None) -> Callable[[Any], Any]:
        """``encode`` with ``validate=True`` for the params or result of
        ``message``, then checked as its method's type there."""
        if isinstance(message, Request):
            key = (message.method, "params")
        elif isinstance(message, Notification):
            key = (message.method, "notification")
        elif isinstance(message, Response) and method is not None:
            key = (method, "result")
        else:
            return functools.partial(self._encode, validate=True)
        typed = self._types.get(key)
        if typed is None:
            return functools.partial(self._encode, validate=True)
        expected, name = typed
        method_name = key[0]
        verb = "answers" if key[1] == "result" else "takes"

        def encode(value: Any) -> Any:
            if isinstance(expected, type):
                if not isinstance(value, expected):
                    raise ValidationError(
                        f"{method_name} {verb} {_a(expected.__name__)}, "
                        f"not {_a(type(value).__name__)}"
                    )
                return self._encode(value, validate=True)
            # The method's type is a union: the wire form must be one of
            # it, as the peer decodes it.
            wire = self._encode(value, validate=True)
            try:
                self._decode(name, wire, strict=True)
            except ValidationError as error:
                raise ValidationError(
                    f"{method_name} {verb} {_a(name)}, which this "
                    f"{type(value).__name__} is not: {error.message}",
                    error.segments,
                ) from None
            return wire

        return encode

    def _request_id(self, value: Any) -> RequestId:
        found: object = value
        kind = type(found)
        if kind is int or kind is str:
            return cast("int | str", value)
        if kind is float and value.is_integer():
            return int(value)
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return value
        if value is None and self._null_id:
            return None
        what = (
            "an integer, a string or null"
            if self._null_id
            else "an integer or a string"
        )
        raise ValidationError(
            f"expected a request id ({what}), found {_kind(value)}", ("id",)
        )


_Decoder = Callable[[Any, bool], object]
"""A decoder of one definition: ``(data, strict) -> value``."""


def _message_decoder(
    decode: Callable[..., object],
    request_id: Callable[[Any], RequestId],
    requests: dict[str, tuple[_Decoder, str]],
    notifications: dict[str, tuple[_Decoder, str]],
) -> DecodeMessage:
    """:attr:`MessageCodec.decode_message` over a codec's tables: each
    method's params decoder and its definition's name (``decode`` of that
    name words the error when the decoder refuses)."""

    def redecode(
        name: str,
        params: Any,
        strict: bool,
        request: bool,
        id: RequestId,
        method: str,
    ) -> object:
        """Decode ``params`` as ``name`` through ``decode``, after the bound
        decoder refused them: ``decode`` retries plain JSON and words the
        error, raised as the :class:`ParamsError` of the request ``id`` or
        of a notification."""
        try:
            return decode(name, params, strict=strict)
        except ValidationError as error:
            raise ParamsError(request, id, method, error) from None

    def decode_message(data: Any, strict: bool = False) -> Message:
        """Read a whole JSON-RPC message (see
        :attr:`MessageCodec.decode_message`)."""
        if type(data) is not dict and not isinstance(data, dict):
            raise ValidationError(
                f"expected a JSON-RPC message (an object), found {_kind(data)}"
            )
        # Typed by annotation, not cast(), which is a call on every message
        # (the isinstance above leaves pyright a dict of unknown types).
        message: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
        # Subscripts, not ``get``: the envelope is read on every message.
        try:
            version = message["jsonrpc"]
        except KeyError:
            version = _NO_METHOD
        if version != JSONRPC_VERSION:
            found = "nothing" if version is _NO_METHOD else _shown(version)
            raise ValidationError(
                f'expected "jsonrpc": "2.0", found {found}', ("jsonrpc",)
            )
        if strict:
            _check_others(message)
        method = message.get("method")
        if method is not None or "method" in message:
            if type(method) is not str:
                raise ValidationError(
                    f"expected the method name (a string), found {_kind(method)}",
                    ("method",),
                )
            if strict and ("result" in message or "error" in message):
                raise ValidationError(
                    "a request or notification has neither result nor error"
                )
            params = message.get("params")
            if "id" not in message:
                # A notification: the most frequent message (session/update).
                bound = notifications.get(method)
                if bound is None:
                    return _notification(method, params)
                try:
                    decoded = bound[0](params, strict)
                except (ValidationError, NotPlainJson, RecursionError):
                    decoded = redecode(bound[1], params, strict, False, None, method)
                # _notification(method, decoded), inlined.
                note: Notification[Any] = _new(Notification)
                _set_note_method(note, method)
                _set_note_params(note, decoded)
                return note
            id = message["id"]
            if type(id) is not int and type(id) is not str:
                id = request_id(id)
            bound = requests.get(method)
            if bound is None:
                return _request(id, method, params)
            if params is None:
                params = {}
            try:
                decoded = bound[0](params, strict)
            except (ValidationError, NotPlainJson, RecursionError):
                decoded = redecode(bound[1], params, strict, True, id, method)
            # _request(id, method, decoded), inlined.
            request: Request[Any] = _new(Request)
            _set_request_id(request, id)
            _set_request_method(request, method)
            _set_request_params(request, decoded)
            return request
        if "result" in message:
            if "error" in message:
                raise ValidationError("a response has both result and error")
            if "id" not in message:
                raise ValidationError("a response needs the id of its request", ("id",))
            id = message["id"]
            if type(id) is not int and type(id) is not str:
                id = request_id(id)
            answer: Response[Any] = _new(Response)
            _set_response_id(answer, id)
            _set_response_result(answer, message["result"])
            return answer
        if "error" in message:
            if "id" not in message:
                raise ValidationError(
                    "a response needs the id of its request (null if unknown)", ("id",)
                )
            failed = None if message["id"] is None else request_id(message["id"])
            return ErrorResponse(failed, _error(message["error"]))
        raise ValidationError(
            "expected a request (method and id), a notification (method) or a response (result or error)"
        )

    return decode_message


_ENVELOPE = frozenset(("jsonrpc", "id", "method", "params", "result", "error"))
"""The members of a JSON-RPC message that :func:`_message_decoder` reads."""


def _check_others(message: dict[str, Any]) -> None:
    """Strict decoding of the members of a message other than those of
    :data:`_ENVELOPE`: any JSON value, and only a JSON value (subclasses of
    the JSON types, from a caller's ``OrderedDict``, read as plain JSON)."""
    try:
        check_unknown(message, _ENVELOPE)
    except NotPlainJson:
        others = {key: value for key, value in message.items() if key not in _ENVELOPE}
        plain = plain_json(others)
        check_unknown(others if plain is MISSING else plain, frozenset())


def _by_name(decode: Callable[..., object], name: str) -> _Decoder:
    """A decoder of ``name`` through a ``decode(name, data, strict=...)``
    that lends no decoders of its own."""

    def decoder(data: Any, strict: bool) -> object:
        return decode(name, data, strict=strict)

    return decoder


def _error(value: Any) -> RpcError:
    if not isinstance(value, dict):
        raise ValidationError(
            f"expected an error object, found {_kind(value)}", ("error",)
        )
    error = cast("dict[str, Any]", value)
    code = error.get("code")
    if type(code) is float and code.is_integer():
        code = int(code)
    if type(code) is not int:
        raise ValidationError(
            f"expected an integer error code, found {_kind(code)}", ("error", "code")
        )
    message = error.get("message")
    if not isinstance(message, str):
        raise ValidationError(
            f"expected an error message (a string), found {_kind(message)}",
            ("error", "message"),
        )
    return RpcError(code, message, error.get("data", UNSET))


# ---------------------------------------------------------------- JSON text
#
# The text goes through orjson when it is importable (the package needs only
# the standard library: orjson is used when present, never required), with
# the results of ``json``: what orjson refuses or could read or write
# otherwise goes to ``json``, which decides. ``ACPGEN_JSON=stdlib`` in the
# environment (read when the first message is read or written) or
# ``use_json_backend("stdlib")`` keeps to ``json``. orjson is imported then,
# not with the package: importing it costs as much as a third of the
# package's own import.

_PENDING: Any = object()
"""The value of :data:`_fast` until the backend is picked."""
_fast: Any = _PENDING
"""The orjson module in use, None (``json`` only), or :data:`_PENDING`."""
_fast_options = 0
"""orjson's options: what ``json`` does not write (dataclasses, dates, the
subclasses of str, int, dict and list, which ``json`` writes its own way)
goes to ``json``."""
_SHAPE = bytes(
    48 if 48 <= byte <= 57 else 91 if byte in (91, 123) else 32 for byte in range(256)
)
"""A ``bytes.translate`` table: digits become ``0``, ``[`` and ``{`` become
``[``, everything else a space."""
_LONG_NUMBER = b"0" * 19
"""19 digits in a row: orjson reads an integer beyond the 64-bit ranges as a
float where ``json`` keeps it exact, so such a text is read by ``json``."""
_MAX_DEPTH = 500
"""A text nested deeper is read by ``json``: orjson reads 1,024 levels of
nesting, ``json`` as deep as the recursion limit lets it (fewer than 1,000
on Python 3.11), and refuses what it cannot; 500 levels ``json`` reads from
any stack but one already 500 frames deep."""
_SCANNED_BELOW = 4096
"""A text of 4 KiB or more is checked after orjson read it, by what it read
(:func:`_plain`: a cost in its values, not in the bytes of its strings: a
1 MB string is one value)."""
_CLOSED_BELOW = 2 * _MAX_DEPTH + 2
"""A JSON text shorter than this cannot nest deeper than :data:`_MAX_DEPTH`
(each level takes two bytes): it is scanned for long numbers only, before
orjson reads it (its shape, :data:`_SHAPE`: a cost in its bytes, under a
microsecond here). A text from this length up to :data:`_SCANNED_BELOW` is
checked by what orjson read while that costs less than scanning its
bytes (at most one value per :data:`_BYTES_PER_VALUE` bytes: a chunk of
prose, a snippet of code), else scanned, and walked in full only when the
scan cannot tell (more than 500 brackets, 19 digits in a row)."""
_BYTES_PER_VALUE = 64
"""Checking what orjson read costs about as much per value as scanning 32
to 64 bytes of its text (:data:`_SHAPE`, then the search and the count);
the walk stops at the value past its budget, so a text holding many values
costs the part of the walk done and the scan."""
_BIG = float(2**63)
"""orjson reads an integer of at least this magnitude beyond the 64-bit
ranges as a float (and a float so large may have been such an integer)."""


def use_json_backend(name: str | None = None) -> str:
    """Pick the JSON backend of :func:`load_message` and :func:`dump_message`:
    ``"orjson"`` (when importable), ``"stdlib"`` (``json``), or None: orjson
    when importable unless ``ACPGEN_JSON=stdlib`` is set. Returns the name of
    the backend in use."""
    global _fast, _fast_options
    if name is None:
        wanted = os.environ.get("ACPGEN_JSON", "").strip().lower()
        name = "stdlib" if wanted == "stdlib" else "orjson"
    if name not in ("orjson", "stdlib"):
        raise ValueError(f'expected "orjson" or "stdlib", found {name!r}')
    _fast = None
    if name == "orjson":
        try:
            import orjson
        except ImportError:
            return "stdlib"
        _fast = orjson
        _fast_options = (
            orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_SUBCLASS
        )
    return json_backend()


def json_backend() -> str:
    """``"orjson"`` or ``"stdlib"``: the JSON backend in use."""
    fast = _fast if _fast is not _PENDING else _picked()
    return "stdlib" if fast is None else "orjson"


def _picked() -> Any:
    """:data:`_fast` once the backend is picked (by the environment, the
    first time a message is read or written)."""
    use_json_backend()
    return _fast


def load_message(text: bytes | str) -> Any:
    """Parse one message's JSON text. Raises ``ValueError`` for anything that
    is not JSON, nested too deeply included (never ``RecursionError``)."""
    fast = _fast
    if fast is _PENDING:
        fast = _picked()
    if fast is not None and type(text) is bytes:
        size = len(text)
        if size < _CLOSED_BELOW:
            shape = text.translate(_SHAPE)
            # find, not ``in``: the same search at half the cost.
            if shape.find(_LONG_NUMBER) < 0:
                try:
                    return fast.loads(text)
                except fast.JSONDecodeError:  # json decides, and explains
                    return _stdlib_loads(text)
        elif size < _SCANNED_BELOW:
            try:
                value = fast.loads(text)
            except fast.JSONDecodeError:
                return _stdlib_loads(text)
            plain = _plain(value, size // _BYTES_PER_VALUE)
            if plain is None:  # many values for its bytes: scanned
                shape = text.translate(_SHAPE)
                if shape.find(_LONG_NUMBER) < 0 and shape.count(b"[") <= _MAX_DEPTH:
                    return value
                plain = _plain(value)
            if plain:
                return value
            return _stdlib_loads(text)
        # A long text, or a short one with 19 digits in a row: checked by
        # what orjson read, a cost in its values.
        try:
            value = fast.loads(text)
        except fast.JSONDecodeError:  # nested over 1,024 levels too
            pass
        else:
            if _plain(value):
                return value
    return _stdlib_loads(text)


_DECODER = json.JSONDecoder()
"""The decoder ``json.loads`` uses with its default arguments, called
without ``loads``'s own checks of what it is given."""


def _stdlib_loads(text: bytes | str) -> Any:
    """``json.loads``, nesting too deep for it a ``ValueError``.

    A message's text (an object: ``{`` first) goes straight to the decoder
    ``json.loads`` would call: bytes decoded as ``loads`` decodes them
    (``json.detect_encoding`` finds UTF-8 where ``{`` comes first and the
    next byte is not 0: no byte order mark nor UTF-16 or UTF-32 text starts
    so; errors ``surrogatepass``), a string as it is (it starts with no byte
    order mark). Anything else goes through ``json.loads``: the same values
    and errors either way."""
    try:
        if type(text) is bytes:
            if text[:1] == b"{" and text[1:2] != b"\x00":
                return _DECODER.decode(text.decode("utf-8", "surrogatepass"))
        elif type(text) is str and text[:1] == "{":
            return _DECODER.decode(text)
        return json.loads(text)
    except RecursionError:
        raise ValueError("the message is nested too deeply") from None


def _plain(value: Any, budget: int = sys.maxsize) -> bool | None:
    """Whether what orjson read is what ``json`` reads from the same text:
    nested at most :data:`_MAX_DEPTH` levels, and holding no float so large
    it may have been an integer beyond the 64-bit ranges (``json`` keeps
    those exact). Level by level, not recursion: ``value`` may nest 1,024
    levels. None when it holds more than ``budget`` values (in its
    containers): not looked at further."""
    kind = _type(value)
    if kind is not _DICT and kind is not _LIST:
        return kind is not _FLOAT or -_BIG < value < _BIG
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > _MAX_DEPTH:
            return False
        below: list[Any] = []
        for node in level:
            budget -= len(node)
            if budget < 0:
                return None
            for item in node.values() if _type(node) is _DICT else node:
                kind = _type(item)
                if kind is _DICT or kind is _LIST:
                    below.append(item)
                elif kind is _FLOAT and not -_BIG < item < _BIG:
                    return False
        level = below
    return True


# type() and the JSON containers and float, as Any: the values they tell
# apart stay Any for type checkers (not narrowed to a dict of unknown types).
_type: Any = type
_DICT: Any = dict
_LIST: Any = list
_FLOAT: Any = float


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
"""What ``json.dumps(value, ensure_ascii=False, allow_nan=False,
separators=(",", ":"))`` makes for each call, made once: it keeps nothing
from one call to the next."""


def dump_message(wire: dict[str, Any]) -> bytes:
    """One message's JSON text as UTF-8 bytes, with no line break: only JSON
    a strict peer accepts goes out. Raises ``ValueError`` for what has no
    such text: NaN or an infinity, a lone surrogate, a reference cycle, a
    value that is not JSON, nesting too deep to write. The one exception is
    a string ``id`` with a lone surrogate: that is the peer's own id (it
    sent it escaped, ``"\\ud800"``) and goes back as it came, escaped, so
    that the peer can match the answer to its request."""
    fast = _fast
    if fast is _PENDING:
        fast = _picked()
    if fast is not None:
        try:
            data: bytes = fast.dumps(wire, option=_fast_options)
        except TypeError:  # orjson.JSONEncodeError: json decides
            pass
        else:
            # orjson writes NaN and the infinities as null; json refuses them.
            if b"null" not in data or _finite(wire):
                # A short text keeps orjson's buffer (about 4 KiB) however
                # short it is: a copy holds only the text, so what waits in
                # queues is what they count.
                return bytes(memoryview(data)) if len(data) < _COPY_BELOW else data
    try:
        return _ENCODER.encode(wire).encode("utf-8")
    except UnicodeEncodeError as error:
        echoed = _with_escaped_id(wire)
        if echoed is None:
            raise ValueError(f"the message has no JSON text: {error}") from None
        return echoed
    except (TypeError, RecursionError) as error:
        raise ValueError(f"the message has no JSON text: {error}") from None


def _with_escaped_id(wire: dict[str, Any]) -> bytes | None:
    """The text of ``wire`` whose string ``id`` has no UTF-8 (a lone
    surrogate), with that id escaped as JSON allows (``"\\ud800"``); None
    when the id is not such a string. Raises ``ValueError`` when the rest
    of the message has no JSON text."""
    id = wire.get("id")
    if type(id) is not str or printable(id) is id:
        return None
    rest = dump_message({key: value for key, value in wire.items() if key != "id"})
    head = b'{"id":' + json.dumps(id).encode("ascii")
    return head + (b"}" if rest == b"{}" else b"," + rest[1:])


def printable(text: str) -> str:
    """``text`` itself when it has a UTF-8 text (the usual case), else with
    each lone surrogate written as its escape (``\\ud800``): a peer's
    string (a method name) quoted in an error message that must go out."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _finite(value: Any) -> bool:
    """Whether ``value`` (JSON orjson wrote) holds no NaN nor infinity."""
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(cast("dict[str, Any]", node).values())
        elif isinstance(node, (list, tuple)):
            stack.extend(cast("list[Any]", node))
        elif isinstance(node, float) and (node != node or node in (_INF, -_INF)):
            return False
    return True


_INF = float("inf")
_COPY_BELOW = 256 * 1024
"""orjson texts shorter than this are copied (see :func:`dump_message`)."""
