"""Run the conformance suite against one generated package.

Only the package's public API is used: ``decode(name, data, strict=...)``,
``encode(value)``, ``ValidationError`` (with ``.path``), and for the patch
checks ``apply(state, update)`` (see :mod:`.patch`). What a fixture must give
was decided when the fixture was written; the runner compares, it does not
recompute, except for jsonschema's verdict, which strict mode must match.

Checks, per fixture (a case of ``tests/fixtures/conformance/<key>/``):

* strict decode accepts the input exactly when jsonschema's Draft 2020-12
  validator does (``format`` not asserted); the fixture's recorded verdict
  must still be jsonschema's, or at least jsonschema-rs's (a recorded verdict
  the compiled jsonschema-rs confirms stands; jsonschema decides the rest);
* lenient decode gives ``output`` (compared as JSON, ``true`` != ``1`` and
  ``1`` != ``1.0``), or fails at ``error``; strict decode gives
  ``strict_output`` (else ``output``) or fails at ``strict_error``; a path is
  either exact or ``{"under": path}``;
* what decodes round-trips: ``decode(encode(x)) == x`` and
  ``encode(decode(encode(x))) == encode(x)``, and ``encode`` gives JSON;
* nothing but ``ValidationError`` escapes ``decode``, and the input is left
  as it was.

Per definition, a fixed set of hostile inputs must only ever raise
``ValidationError``. Then the patch fixtures and laws (:mod:`.patch`), and
coverage (:mod:`.coverage`): every definition, union variant, enum value and
lenient field of the schema must be exercised by some fixture.

Fixtures listed in a file's ``known_failures`` (``{name: reason}``) are
expected to fail: they are reported apart, and one that passes is a failure
(the list must not go stale).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from . import coverage as coverage_mod
from .loader import FixtureFile, load_fixtures, sha256
from .messages import MessageChecker, expected_methods
from .model import Model
from .patch import PatchChecker, wire_equal

if TYPE_CHECKING:
    from ..jsontypes import JsonArray, JsonObject

MESSAGES = "(messages)"
"""Where the checks of messages that belong to no method report."""
GENERAL = "(suite)"
"""The pseudo-definition that checks not about one definition report under."""


@dataclass
class Outcome:
    definition: str
    name: str
    ok: bool
    message: str = ""
    known: str | None = None
    """The reason from ``known_failures``, when the fixture is listed there."""
    source: str = ""

    @property
    def status(self) -> str:
        if self.known is None:
            return "passed" if self.ok else "failed"
        return "failed" if self.ok else "known"


@dataclass
class Report:
    package: str
    schema: str
    fixtures: str
    outcomes: list[Outcome] = field(default_factory=list)
    targets: list[coverage_mod.Target] = field(default_factory=list)
    seconds: float = 0.0
    only: tuple[str, ...] = ()
    """The definitions and methods the run was limited to (none: all)."""

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def passed(self) -> int:
        return self.count("passed")

    @property
    def failed(self) -> int:
        return self.count("failed")

    def by_def(self) -> dict[str, list[Outcome]]:
        out: dict[str, list[Outcome]] = {}
        for outcome in self.outcomes:
            out.setdefault(outcome.definition, []).append(outcome)
        return out


def _show(value: Any, limit: int = 300) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(value)
        except RecursionError:
            text = f"<a deeply nested {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def path_matches(expected: Any, got: str) -> bool:
    if isinstance(expected, str):
        return got == expected
    if isinstance(expected, dict) and isinstance(expected.get("under"), str):
        base = expected["under"]
        return got == base or (got.startswith(base) and got[len(base)] in ".[")
    return False


def _path_text(expected: Any) -> str:
    return expected if isinstance(expected, str) else f"at or below {expected.get('under')}"


def _compiled_verdicts(defs: JsonObject) -> Callable[[Any], bool]:
    """``is_valid`` of jsonschema-rs over ``{name: value}`` (a value of
    ``$defs/name`` under its name: one compiled validator answers for every
    definition). Imported here: only a run with fixtures needs it."""
    import jsonschema_rs

    by_name = {name: {"$ref": f"#/$defs/{name}"} for name in defs}
    is_valid: Callable[[Any], bool] = jsonschema_rs.Draft202012Validator(
        {"$defs": defs, "properties": by_name}
    ).is_valid
    return is_valid


HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    2**70,
    -(2**70),
    1.5,
    1e308,
    float("inf"),
    "",
    "\ud800",
    "x" * 10_000,
    [],
    [None],
    {},
    {"": None, "__proto__": {"polluted": True}},
    {"type": None, "sessionUpdate": 5, "outcome": [], "_meta": 7},
]


def _deep(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": [value]}
    return value


DEEP = _deep(5_000)
"""Deeper than Python's recursion limit: decoding must still raise only
ValidationError (it is not round-tripped: no JSON encoder could)."""


class Runner:
    def __init__(
        self,
        package: ModuleType,
        package_label: str,
        schema_path: Path,
        fixtures_dir: Path,
        fixtures_label: str | None = None,
        only: frozenset[str] | None = None,
    ) -> None:
        self.package = package
        self.package_label = package_label
        self.schema_path = schema_path
        self.fixtures_dir = fixtures_dir
        self.fixtures_label = fixtures_label
        """How the report shows the fixtures' origin (default: the directory)."""
        self.document = json.loads(schema_path.read_text(encoding="utf-8"))
        self.defs = self.document["$defs"]
        self.sha = sha256(schema_path)
        self._validators: dict[str, Draft202012Validator] = {}
        self._compiled: Callable[[Any], bool] | None = None
        self.ValidationError = package.ValidationError
        self.only = only
        """The definitions and methods to check (all when None): a definition
        brings its fixtures, hostile inputs, patch fixtures, laws and coverage
        targets; a method its message fixtures, method-table row and message
        coverage, with the envelope fixtures that belong to no method. See
        :func:`unknown_names`."""

    def wanted(self, name: str) -> bool:
        return self.only is None or name in self.only

    def validator(self, name: str) -> Draft202012Validator:
        v = self._validators.get(name)
        if v is None:
            v = self._validators[name] = Draft202012Validator({"$defs": self.defs, "$ref": f"#/$defs/{name}"})
        return v

    def verdict(self, name: str, data: Any, recorded: object) -> bool:
        """The verdict on ``data`` as ``$defs/name``. A fixture's ``recorded``
        verdict (jsonschema's when the fixture was written) that
        jsonschema-rs, compiled once for the whole schema, confirms stands,
        at a fraction of jsonschema's cost; any other case (no verdict
        recorded, jsonschema-rs differing from it or unable to take the value)
        is jsonschema's to decide. So a fixture is stale when jsonschema-rs
        and jsonschema both differ from its verdict (on the fixtures of the
        four ACP schemas the two validators agree on every case)."""
        if type(recorded) is bool:
            if self._compiled is None:
                self._compiled = _compiled_verdicts(self.defs)
            try:
                confirmed = self._compiled({name: data}) is recorded
            except ValueError:  # a value it cannot take: jsonschema decides
                confirmed = False
            if confirmed:
                return recorded
        return self.validator(name).is_valid(data)

    # ------------------------------------------------------------ decoding

    def _decode(self, name: str, data: Any, strict: bool) -> tuple[str, Any]:
        """``("ok", value)``, ``("error", ValidationError)`` or ``("escape",
        exception)`` for anything else."""
        try:
            return "ok", self.package.decode(name, data, strict=strict)
        except self.ValidationError as error:
            return "error", error
        except Exception as exc:
            return "escape", exc

    def _round_trip(self, name: str, value: Any, strict: bool, problems: list[str], mode: str) -> Any:
        try:
            wire = self.package.encode(value)
        except Exception as exc:
            problems.append(f"{mode}: encode raised {type(exc).__name__}: {exc}")
            return None
        try:
            json.dumps(wire, allow_nan=True)
        except (TypeError, ValueError) as exc:
            problems.append(f"{mode}: encode gave something that is not JSON: {exc}")
            return wire
        status, again = self._decode(name, wire, strict)
        if status != "ok":
            problems.append(f"{mode}: decode(encode(x)) fails: {again}")
            return wire
        if again != value:
            problems.append(f"{mode}: decode(encode(x)) != x: {again!r} != {value!r}"[:600])
        try:
            rewire = self.package.encode(again)
        except Exception as exc:
            problems.append(f"{mode}: encode(decode(encode(x))) raised {type(exc).__name__}: {exc}")
            return wire
        if not wire_equal(rewire, wire):
            problems.append(f"{mode}: encode(decode(encode(x))) != encode(x): {_show(rewire)} != {_show(wire)}")
        return wire

    # ------------------------------------------------------------ one case

    def check_case(self, case: JsonObject) -> list[str]:
        """The problems with one fixture (empty when it passes)."""
        name = case["def"]
        if name not in self.defs:
            return [f"the schema has no definition {name!r}"]
        data = json.loads(case["input_json"]) if "input_json" in case else case["input"]
        before = json.dumps(data, sort_keys=True)
        problems: list[str] = []
        valid = self.verdict(name, data, case.get("valid"))
        if "valid" in case and case["valid"] != valid:
            problems.append(f"the fixture says valid={case['valid']} but jsonschema says {valid}: the fixture is stale")
        # strict
        status, result = self._decode(name, data, True)
        if status == "escape":
            problems.append(f"strict: decode raised {type(result).__name__}, not ValidationError: {result}")
        elif status == "ok":
            if not valid:
                problems.append("strict: decode accepts what jsonschema rejects")
            wire = self._round_trip(name, result, True, problems, "strict")
            expected = case.get("strict_output", case.get("output") if valid else None)
            if ("strict_output" in case or (valid and "output" in case)) and not wire_equal(wire, expected):
                problems.append(f"strict: got {_show(wire)}, expected {_show(expected)}")
        else:
            if valid:
                problems.append(f"strict: decode rejects what jsonschema accepts: {result}")
            elif "strict_error" in case and not path_matches(case["strict_error"], result.path):
                problems.append(
                    f"strict: fails at {result.path} ({result.message}), expected {_path_text(case['strict_error'])}"
                )
        # lenient
        status, result = self._decode(name, data, False)
        if status == "escape":
            problems.append(f"lenient: decode raised {type(result).__name__}, not ValidationError: {result}")
        elif status == "ok":
            wire = self._round_trip(name, result, False, problems, "lenient")
            if "output" in case:
                if not wire_equal(wire, case["output"]):
                    problems.append(f"lenient: got {_show(wire)}, expected {_show(case['output'])}")
            elif "error" in case:
                problems.append(
                    f"lenient: decode accepts it ({_show(wire)}), expected a failure at {_path_text(case['error'])}"
                )
        else:
            if "output" in case:
                problems.append(f"lenient: fails at {result.path} ({result.message}), expected {_show(case['output'])}")
            elif "error" in case and not path_matches(case["error"], result.path):
                problems.append(
                    f"lenient: fails at {result.path} ({result.message}), expected {_path_text(case['error'])}"
                )
        if json.dumps(data, sort_keys=True) != before:
            problems.append("decode changed its input")
        return problems

    def check_hostile(self, name: str) -> list[str]:
        problems = []
        for strict in (False, True):
            status, result = self._decode(name, DEEP, strict)
            if status == "escape":
                problems.append(
                    f"{'strict' if strict else 'lenient'}: decode(<5000 nested objects>) raised "
                    f"{type(result).__name__}, not ValidationError"
                )
        for value in HOSTILE:
            for strict in (False, True):
                status, result = self._decode(name, value, strict)
                mode = "strict" if strict else "lenient"
                if status == "escape":
                    problems.append(
                        f"{mode}: decode({_show(value, 60)}) raised {type(result).__name__}, not ValidationError: {result}"
                    )
                elif status == "ok":
                    self._round_trip(name, result, strict, problems, f"{mode} {_show(value, 60)}")
        return problems

    # ------------------------------------------------------------ JSON-RPC

    def check_messages(self, fixtures: list[tuple[FixtureFile, JsonObject]]) -> list[Outcome]:
        """The method table, the message fixtures, and that every method of
        the schema is exercised by them."""
        checker = MessageChecker(self.package, self.document)
        expected = {key: use for key, use in expected_methods(self.document).items() if self.wanted(key[0])}
        if not expected:
            return []
        missing = checker.missing_api()
        if missing:
            return [Outcome(MESSAGES, "the JSON-RPC layer is there", False, f"the package has no {', '.join(missing)}")]
        out = [
            Outcome(method, "method table", not problems, "; ".join(problems))
            for method, problems in checker.check_table()
            if self.wanted(method)
        ]
        exercised: set[tuple[str, str]] = set()
        for file, fixture in fixtures:
            expect = fixture.get("expect", {})
            if (
                self.only is not None
                and not expect.get("raw")
                and expect.get("method", MESSAGES) not in self.only | {MESSAGES}
            ):
                continue  # the envelope fixtures (of no method of the schema) go with every method
            try:
                problems = checker.check(fixture)
            except Exception as exc:
                problems = [f"checking it raised {type(exc).__name__}: {exc}"]
            if "kind" in expect and "method" in expect and not expect.get("raw"):
                exercised.add((expect["method"], expect["kind"]))
            out.append(
                Outcome(
                    expect.get("method", MESSAGES) if not expect.get("raw") else MESSAGES,
                    f"message: {fixture.get('name', '?')}",
                    not problems,
                    "; ".join(problems),
                    file.known_failure(fixture),
                    _relative(file.path, self.fixtures_dir),
                )
            )
        for (method, kind), _use in sorted(expected.items()):
            wanted = [kind] + (["response"] if kind == "request" else [])
            for form in wanted:
                if (method, form) not in exercised:
                    out.append(Outcome(method, f"coverage: a {form} message", False, "no message fixture exercises it"))
        return out

    # ------------------------------------------------------------ the suite

    def run(self) -> Report:
        started = time.perf_counter()
        report = Report(
            package=self.package_label,
            schema=str(self.schema_path),
            fixtures=self.fixtures_label or str(self.fixtures_dir),
            only=tuple(sorted(self.only or ())),
        )
        manifest, files = load_fixtures(self.fixtures_dir)
        outcomes = report.outcomes
        if manifest.get("schema_sha256") not in (None, self.sha):
            outcomes.append(
                Outcome(
                    GENERAL,
                    "fixtures are for this schema",
                    False,
                    f"the fixtures were generated from {manifest.get('schema')} (sha256 "
                    f"{manifest.get('schema_sha256')}), not {self.schema_path.name} ({self.sha}); "
                    "regenerate them (make fixtures)",
                )
            )
        all_cases: list[JsonObject] = []
        patch_cases: list[tuple[FixtureFile, JsonObject]] = []
        message_cases: list[tuple[FixtureFile, JsonObject]] = []
        for file in files:
            source = _relative(file.path, self.fixtures_dir)
            if file.schema_sha256 not in (None, self.sha):
                outcomes.append(
                    Outcome(
                        GENERAL,
                        f"{source} is for this schema",
                        False,
                        f"{source} was generated from another schema (sha256 {file.schema_sha256}); regenerate it",
                    )
                )
            names = set()
            for case in file.cases:
                names.add(case.get("name"))
                all_cases.append(case)
                if not self.wanted(case.get("def", "?")):
                    continue
                problems = self.check_case(case)
                outcomes.append(
                    Outcome(
                        case.get("def", "?"),
                        case.get("name", "?"),
                        not problems,
                        "; ".join(problems),
                        file.known_failure(case),
                        source,
                    )
                )
            for case in file.patches:
                names.add(case.get("name"))
                if self.wanted(case.get("upsert", "?")):
                    patch_cases.append((file, case))
            for message in file.messages:
                names.add(message.get("name"))
                message_cases.append((file, message))
            for stale in sorted(set(file.known_failures) - names - {None}):
                outcomes.append(
                    Outcome(
                        GENERAL,
                        f"known failure {stale!r}",
                        False,
                        f"{source} lists {stale!r} in known_failures, but has no fixture of that name",
                    )
                )
        for name in filter(self.wanted, self.defs):
            problems = self.check_hostile(name)
            outcomes.append(
                Outcome(name, "hostile inputs raise only ValidationError", not problems, "; ".join(problems[:3]))
            )
        # patch fixtures and laws
        samples: dict[str, JsonArray] = {}
        for case in all_cases:
            if case.get("valid") is True and "output" in case and "input" in case and case["def"] in self.defs:
                samples.setdefault(case["def"], []).append(case["input"])
        checker = PatchChecker(self.package, self.document, samples)
        checker.types = [u for u in checker.types if self.wanted(u.name)]
        for file, case in patch_cases:
            result = checker.run_fixture(case)
            outcomes.append(
                Outcome(
                    result.definition,
                    f"patch: {result.name}",
                    result.ok,
                    result.message,
                    file.known_failure(case),
                    _relative(file.path, self.fixtures_dir),
                )
            )
        for result in checker.run_laws():
            outcomes.append(Outcome(result.definition, result.name, result.ok, result.message))
        upserts = {u.name for u in checker.types}
        patched = {case.get("upsert") for _, case in patch_cases}
        for name in sorted(upserts - patched):
            outcomes.append(
                Outcome(
                    name,
                    "has a patch fixture",
                    False,
                    f"{name} is an upsert type but no patch fixture exercises it",
                )
            )
        outcomes.extend(self.check_messages(message_cases))
        # coverage
        report.targets = [
            target
            for target in coverage_mod.evaluate(
                Model(self.document), [c for c in all_cases if self.wanted(str(c.get("def")))]
            )
            if self.wanted(target.definition)
        ]
        for target in report.targets:
            if target.covered_by is None:
                outcomes.append(
                    Outcome(target.definition, f"coverage: {target.name}", False, "no fixture exercises it")
                )
        covered = sum(1 for t in report.targets if t.covered_by is not None)
        missing = len(report.targets) - covered
        outcomes.append(
            Outcome(
                GENERAL,
                f"coverage ({covered}/{len(report.targets)} targets)",
                not missing,
                f"{missing} target(s) not exercised (listed under their definitions)",
            )
        )
        report.seconds = time.perf_counter() - started
        return report


def unknown_names(document: JsonObject, names: frozenset[str]) -> list[str]:
    """The names of ``names`` that are neither a ``$defs`` definition nor a
    method (``x-method``) of the schema ``document``."""
    methods = {method for method, _kind in expected_methods(document)}
    return sorted(name for name in names if name not in document.get("$defs", {}) and name not in methods)


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


# ------------------------------------------------------------------ output


def summary_lines(report: Report, quiet: bool = False, verbose: bool = False) -> list[str]:
    lines = [
        f"conformance of {report.package}",
        f"  schema:   {report.schema}",
        f"  fixtures: {report.fixtures}",
    ]
    if report.only:
        lines.append(f"  only:     {', '.join(report.only)}")
    groups = report.by_def()
    width = max((len(name) for name in groups), default=10)
    for name, outcomes in groups.items():
        passed = sum(1 for o in outcomes if o.status == "passed")
        failed = [o for o in outcomes if o.status == "failed"]
        known = [o for o in outcomes if o.status == "known"]
        if quiet and not failed and not verbose:
            continue
        text = f"  {name:<{width}}  {passed:4d} passed"
        if failed:
            text += f", {len(failed)} failed"
        if known:
            text += f", {len(known)} known failure{'s' if len(known) != 1 else ''}"
        lines.append(text)
        for outcome in failed:
            if outcome.known is not None:
                lines.append(
                    f"    FAIL {name}: {outcome.name}: listed in known_failures ({outcome.known}) but passes now; remove it"
                )
            else:
                lines.append(f"    FAIL {name}: {outcome.name}: {outcome.message}")
        if verbose:
            for outcome in known:
                lines.append(f"    known {name}: {outcome.name}: {outcome.known} [{outcome.message[:200]}]")
    kinds: dict[str, list[int]] = {}
    for target in report.targets:
        entry = kinds.setdefault(target.kind, [0, 0])
        entry[0] += target.covered_by is not None
        entry[1] += 1
    if kinds:
        lines.append("coverage: " + ", ".join(f"{kind} {c}/{t}" for kind, (c, t) in kinds.items()))
    known_count = report.count("known")
    if known_count:
        lines.append(
            f"{known_count} known failure{'s' if known_count != 1 else ''} (listed in known_failures, still failing)"
        )
    lines.append(f"{report.passed} passed, {report.failed} failed")
    return lines
