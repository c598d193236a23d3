// Records how the reference SDK's connection reads whole JSON-RPC messages:
// it dispatches on `method` and parses the params with that method's own zod
// schema (`z<ParamsType>`), after replacing absent or null request params with
// `{}` (dist/v1/acp.js `requestSpec`); a ZodError becomes -32602. Responses
// are handed back as they are. Methods the schema lacks are not parsed. Which
// kind a message is follows JSON-RPC 2.0: `method` and `id` make a request,
// `method` alone a notification, exactly one of `result`/`error` beside `id`
// a response; anything else is invalid.
//
// Input: the envelope cases of ./cases/envelopes.json (the payloads of the
// JSON-RPC envelope defs, without "jsonrpc"). Output:
// ../fixtures/reference/dispatch/envelopes.json, one entry per case:
//   {"name", "schema", "message", "kind": "request"|"notification"|"response"|"invalid",
//    "method", "params_def", "ok": true, "params": <parsed>}   or
//   {..., "ok": false, "path": "$.params...", "issue": {...}}  (a -32602)
//
// Usage (from tests/reference, after `npm ci`): node record_dispatch.mjs [--check]

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SDK_DIR = path.join(HERE, "node_modules", "@agentclientprotocol", "sdk");
const OUT = path.join(HERE, "..", "fixtures", "reference", "dispatch", "envelopes.json");
const SCHEMA_MODULES = {
  v1: "dist/v1/schema/zod.gen.js",
  v1_unstable: "dist/v1/unstable/schema/zod.gen.js",
  v2: "dist/v2/schema/zod.gen.js",
  v2_unstable: "dist/v2/unstable/schema/zod.gen.js",
};
const SCHEMA_FILES = {
  v1: "../../schema/v1/schema.json",
  v1_unstable: "../../schema/v1/schema.unstable.json",
  v2: "../../schema/v2/schema.json",
  v2_unstable: "../../schema/v2/schema.unstable.json",
};
const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

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

function jsonPath(segments) {
  let out = "$";
  for (const seg of segments) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "string" && IDENT_RE.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

// {method: {request: ParamsDef, notification: ParamsDef}} from x-method and the
// type names' suffixes.
function methodTable(schema) {
  const table = {};
  for (const [name, def] of Object.entries(schema.$defs)) {
    if (typeof def?.["x-method"] !== "string") continue;
    const kind = name.endsWith("Request") ? "request" : name.endsWith("Notification") ? "notification" : null;
    if (kind) (table[def["x-method"]] ??= {})[kind] = name;
  }
  return table;
}

function record(c, modules, tables) {
  const message = { jsonrpc: "2.0", ...c.input };
  const base = { name: c.name, schema: c.schema, message };
  const hasMethod = typeof message.method === "string";
  if (!hasMethod) {
    const isResponse = ("result" in message) !== ("error" in message) && "id" in message;
    return isResponse ? { ...base, kind: "response" } : { ...base, kind: "invalid" };
  }
  const kind = "id" in message ? "request" : "notification";
  const def = tables[c.schema][message.method]?.[kind];
  if (!def) return { ...base, kind, method: message.method, params_def: null };
  const params = kind === "request" ? (message.params ?? {}) : message.params;
  const result = modules[c.schema][`z${def}`].safeParse(params);
  const entry = { ...base, kind, method: message.method, params_def: def };
  if (result.success) return { ...entry, ok: true, params: canonical(JSON.parse(JSON.stringify(result.data))) };
  const issue = result.error.issues[0];
  return { ...entry, ok: false, path: jsonPath(["params", ...issue.path]), issue: { code: issue.code, message: issue.message } };
}

async function main() {
  const sdkVersion = readJson(path.join(SDK_DIR, "package.json")).version;
  const modules = {};
  const tables = {};
  for (const [key, rel] of Object.entries(SCHEMA_MODULES)) {
    modules[key] = await import(new URL(`file://${path.join(SDK_DIR, rel)}`).href);
    tables[key] = methodTable(readJson(path.join(HERE, SCHEMA_FILES[key])));
  }
  // Cases whose def the schema lacks are "unmapped" in record.mjs: left out here too.
  const cases = readJson(path.join(HERE, "cases", "envelopes.json")).cases.filter((c) =>
    Object.hasOwn(modules[c.schema], `z${c.def}`),
  );
  const document = {
    description:
      "How the reference SDK's connection reads the envelope cases as whole messages: params parsed by the method's own schema. Recorded by tests/reference/record_dispatch.mjs.",
    source: "tests/reference/cases/envelopes.json",
    reference: { package: "@agentclientprotocol/sdk", version: sdkVersion },
    cases: cases.map((c) => record(c, modules, tables)),
  };
  const text = JSON.stringify(document, null, 1) + "\n";
  if (process.argv.includes("--check")) {
    const stale = !fs.existsSync(OUT) || fs.readFileSync(OUT, "utf8") !== text;
    console.log(stale ? "stale: " + OUT : "up to date");
    process.exit(stale ? 1 : 0);
  }
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, text);
  console.log(`wrote ${OUT} (${document.cases.length} cases)`);
}

main();
