// Differential-test recorder: parses every hand-written case in ./cases/*.json
// with the zod schemas of the reference implementation (the official
// TypeScript SDK, @agentclientprotocol/sdk, pinned in package.json) and writes
// the results to ../fixtures/reference/<case file name>.json.
//
// Usage (from tests/reference):
//   npm ci && node record.mjs           re-record all fixtures
//   node record.mjs --check             exit 1 if the fixtures on disk are stale
//
// Case file format:
//   { "description": "...", "cases": [ <case>, ... ] }
// Case:
//   { "name": "<unique snake_case id>",
//     "schema": "v1" | "v1_unstable" | "v2" | "v2_unstable",
//     "def": "<$defs name>",
//     "note": "<what rule this case exercises>",
//     "input": <any JSON>            -- or --
//     "input_json": "<raw JSON text>" }
// `input_json` is for payloads whose lexical form matters (1.0 vs 1, 1e2,
// integers beyond 2^53): it is parsed with JSON.parse exactly like the SDK's
// ndjson transport parses a wire line, and is copied verbatim to the fixture
// so that a consumer can parse the same text itself.
//
// Result added to each case:
//   "ok": true,  "output": <parsed value, keys sorted recursively>
//   "ok": false, "path": "$.a.b[2].c", "issue": {"code": ..., "message": ...}
// where path/issue describe the first zod issue, plus "precision_loss": true
// for input_json cases containing integer literals beyond 2^53. Cases whose def has no zod
// export are listed under "unmapped" instead of "cases".

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CASES_DIR = path.join(HERE, "cases");
const OUT_DIR = path.join(HERE, "..", "fixtures", "reference");
const SDK_DIR = path.join(HERE, "node_modules", "@agentclientprotocol", "sdk");
const ZOD_DIR = path.join(HERE, "node_modules", "zod");
const EXPECTED_SDK_VERSION = "2.4.0";

// The zod schemas are not in the package's exports map; import them by path.
const SCHEMA_MODULES = {
  v1: "dist/v1/schema/zod.gen.js",
  v1_unstable: "dist/v1/unstable/schema/zod.gen.js",
  v2: "dist/v2/schema/zod.gen.js",
  v2_unstable: "dist/v2/unstable/schema/zod.gen.js",
};

const CASE_KEYS = new Set(["name", "schema", "def", "note", "input", "input_json"]);
const NAME_RE = /^[a-z0-9][a-z0-9_]*$/;
const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function fail(message) {
  console.error(`record.mjs: ${message}`);
  process.exit(2);
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

// The generated zod export for `$defs/<Name>` is `z<Name>` (hey-api naming).
function zodExportName(def) {
  return `z${def}`;
}

function lookupSchema(module, def) {
  if (typeof def !== "string" || !Object.hasOwn(module, zodExportName(def))) {
    return undefined;
  }
  const schema = module[zodExportName(def)];
  return schema && typeof schema.safeParse === "function" ? schema : undefined;
}

// Recursively sort object keys so the fixtures do not depend on zod's
// internal key ordering (or on JS integer-like-key ordering).
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value).sort()) {
      if (value[key] === undefined) continue;
      out[key] = canonical(value[key]);
    }
    return out;
  }
  return value;
}

// JSON round trip: exactly what a JSON encoder of the parsed value would emit
// (drops undefined-valued keys, turns -0 into 0, etc.).
function jsonValue(value) {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

function jsonPath(segments) {
  let out = "$";
  for (const seg of segments) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "string" && IDENT_RE.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

// Integer literals outside the IEEE-754 safe range are rounded by JSON.parse
// before zod sees them; a decoder with exact integers (Python) will see a
// different value, so such cases are flagged with "precision_loss": true.
function hasUnsafeIntegerLiteral(text) {
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      i++;
      continue;
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m && (ch === "-" || (ch >= "0" && ch <= "9"))) {
      if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(Number(m[0]))) return true;
      i += m[0].length;
      continue;
    }
    i++;
  }
  return false;
}

function validateCase(c, where) {
  if (c === null || typeof c !== "object" || Array.isArray(c)) fail(`${where}: case must be an object`);
  for (const key of Object.keys(c)) {
    if (!CASE_KEYS.has(key)) fail(`${where}: unknown case key ${JSON.stringify(key)}`);
  }
  if (typeof c.name !== "string" || !NAME_RE.test(c.name)) fail(`${where}: bad or missing "name"`);
  if (!Object.hasOwn(SCHEMA_MODULES, c.schema)) fail(`${where} (${c.name}): bad "schema" ${JSON.stringify(c.schema)}`);
  if (typeof c.def !== "string" || c.def === "") fail(`${where} (${c.name}): bad "def"`);
  if (typeof c.note !== "string" || c.note.trim() === "") fail(`${where} (${c.name}): missing "note"`);
  const hasInput = Object.hasOwn(c, "input");
  const hasInputJson = Object.hasOwn(c, "input_json");
  if (hasInput === hasInputJson) fail(`${where} (${c.name}): exactly one of "input" / "input_json" is required`);
  if (hasInputJson && typeof c.input_json !== "string") fail(`${where} (${c.name}): "input_json" must be a string`);
}

function recordCase(c, schema) {
  const input = Object.hasOwn(c, "input_json") ? JSON.parse(c.input_json) : c.input;
  const entry = { name: c.name, schema: c.schema, def: c.def, note: c.note };
  if (Object.hasOwn(c, "input_json")) {
    entry.input_json = c.input_json;
    if (hasUnsafeIntegerLiteral(c.input_json)) entry.precision_loss = true;
  } else {
    entry.input = canonical(jsonValue(c.input));
  }
  const result = schema.safeParse(input);
  if (result.success) {
    entry.ok = true;
    entry.output = canonical(jsonValue(result.data));
  } else {
    const issue = result.error.issues[0];
    entry.ok = false;
    entry.path = jsonPath(issue.path ?? []);
    entry.issue = { code: issue.code, message: issue.message };
  }
  return entry;
}

async function main() {
  const check = process.argv.includes("--check");
  if (!fs.existsSync(SDK_DIR)) fail("node_modules missing: run `npm ci` in tests/reference first");
  const sdkVersion = readJson(path.join(SDK_DIR, "package.json")).version;
  const zodVersion = readJson(path.join(ZOD_DIR, "package.json")).version;
  if (sdkVersion !== EXPECTED_SDK_VERSION) {
    fail(`installed @agentclientprotocol/sdk is ${sdkVersion}, expected ${EXPECTED_SDK_VERSION}; run \`npm ci\``);
  }

  const modules = {};
  for (const [key, rel] of Object.entries(SCHEMA_MODULES)) {
    modules[key] = await import(new URL(`file://${path.join(SDK_DIR, rel)}`).href);
  }

  const caseFiles = fs.readdirSync(CASES_DIR).filter((f) => f.endsWith(".json")).sort();
  if (caseFiles.length === 0) fail("no case files in cases/");
  const seenNames = new Map();
  const outputs = new Map();
  let total = 0;
  let totalUnmapped = 0;

  for (const file of caseFiles) {
    const doc = readJson(path.join(CASES_DIR, file));
    if (!doc || typeof doc !== "object" || !Array.isArray(doc.cases)) fail(`${file}: expected {"description", "cases": [...]}`);
    const cases = [];
    const unmapped = [];
    doc.cases.forEach((c, i) => {
      validateCase(c, `${file}[${i}]`);
      if (seenNames.has(c.name)) fail(`${file}: duplicate case name ${c.name} (also in ${seenNames.get(c.name)})`);
      seenNames.set(c.name, file);
      const schema = lookupSchema(modules[c.schema], c.def);
      if (!schema) {
        unmapped.push({ name: c.name, schema: c.schema, def: c.def, note: c.note });
        return;
      }
      cases.push(recordCase(c, schema));
    });
    total += cases.length;
    totalUnmapped += unmapped.length;
    const fixture = {
      description: typeof doc.description === "string" ? doc.description : "",
      source: `tests/reference/cases/${file}`,
      reference: { package: "@agentclientprotocol/sdk", version: sdkVersion, zod: zodVersion },
      cases,
      unmapped,
    };
    outputs.set(file, JSON.stringify(fixture, null, 2) + "\n");
  }

  fs.mkdirSync(OUT_DIR, { recursive: true });
  const stale = fs
    .readdirSync(OUT_DIR)
    .filter((f) => f.endsWith(".json") && !outputs.has(f))
    .sort();
  let differs = stale.length > 0;
  for (const [file, text] of outputs) {
    const target = path.join(OUT_DIR, file);
    const current = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : null;
    if (current === text) continue;
    differs = true;
    if (check) console.error(`stale fixture: tests/fixtures/reference/${file}`);
    else fs.writeFileSync(target, text);
  }
  for (const file of stale) {
    if (check) console.error(`fixture without case file: tests/fixtures/reference/${file}`);
    else fs.unlinkSync(path.join(OUT_DIR, file));
  }
  const summary = `${total} cases recorded, ${totalUnmapped} unmapped, ${caseFiles.length} files (sdk ${sdkVersion}, zod ${zodVersion})`;
  if (check) {
    console.log(differs ? `fixtures are stale; ${summary}` : `fixtures up to date; ${summary}`);
    process.exit(differs ? 1 : 0);
  }
  console.log(summary);
}

await main();
