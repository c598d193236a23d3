#!/usr/bin/env node
// Client built on the official TypeScript SDK (@agentclientprotocol/sdk,
// pinned in package-lock.json), speaking ACP v1 or the v2 draft.
//
// Spawns an agent command, then runs initialize, session/new, a prompt whose
// streamed session/update notifications it collects, and a second, long prompt
// that it cancels (session/cancel) as soon as the first chunk of the answer
// arrives. Prints a JSON report of what it saw on stdout (fields: see
// tests/interop/README.md), or only how initialize failed
// (initializeError). A v1 turn ends with the session/prompt response,
// a v2 turn with the first idle state_update after the prompt was accepted.
//
// With --abort-turn (v1) it then sends a third prompt and aborts that request
// with $/cancel_request on the first chunk, and reports the error it got.
//
//   node client.mjs [--protocol v1|v2] [--abort-turn] -- AGENT_PROGRAM [ARGS...]
//   node client.mjs [--protocol v1|v2] -- ws://HOST:PORT/acp | http://HOST:PORT/acp

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const { values: opts, positionals: command } = parseArgs({
  options: {
    protocol: { type: "string", default: "v1" },
    "abort-turn": { type: "boolean", default: false },
  },
  allowPositionals: true,
});
if (command.length === 0) {
  console.error("usage: node client.mjs [--protocol v1|v2] -- AGENT_PROGRAM [ARGS...]");
  process.exit(2);
}
const isV2 = opts.protocol === "v2";
const sdk = isV2 ? v2 : v1;
const sdkVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@agentclientprotocol/sdk/package.json", import.meta.url)),
).version;

const PROMPT = "Hello agent, please echo this back";
const LONG_PROMPT = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");

// The turn in progress: its updates, whether to cancel on the first chunk,
// and (v2) the resolver called with the stop reason of an idle state_update.
let turn = null;
let agentContext = null;

function onSessionUpdate({ params }) {
  if (turn === null) return;
  const update = params.update;
  turn.updates.push(update);
  if (turn.cancelOnFirstChunk && update.sessionUpdate === "agent_message_chunk") {
    turn.cancelOnFirstChunk = false;
    void agentContext.notify(sdk.methods.agent.session.cancel, { sessionId: params.sessionId });
  }
  if (turn.abortOnFirstChunk && update.sessionUpdate === "agent_message_chunk") {
    turn.abortOnFirstChunk.abort();
    turn.abortOnFirstChunk = null;
  }
  if (update.sessionUpdate === "state_update" && update.state === "idle" && turn.onIdle) {
    turn.onIdle(update.stopReason);
  }
}

async function runTurn(sessionId, text, cancelOnFirstChunk) {
  let idle;
  const idleStop = new Promise((resolve) => (idle = resolve));
  turn = { updates: [], cancelOnFirstChunk, onIdle: isV2 ? idle : null };
  const response = await agentContext.request(sdk.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  const stopReason = isV2 ? await idleStop : response.stopReason;
  const { updates } = turn;
  turn = null;
  return {
    sent: text,
    stopReason,
    updates: updates.map((u) => u.sessionUpdate),
    text: updates
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
      .map((u) => u.content.text)
      .join(""),
    ...(isV2 ? { messageId: response.messageId } : {}),
  };
}

// Aborts the prompt request itself ($/cancel_request) on the first chunk.
async function runAbortedTurn(sessionId, text) {
  const controller = new AbortController();
  turn = { updates: [], abortOnFirstChunk: controller };
  const request = { sessionId, prompt: [{ type: "text", text }] };
  try {
    const response = await agentContext.request(sdk.methods.agent.session.prompt, request, {
      cancellationSignal: controller.signal,
    });
    return { result: response };
  } catch (error) {
    return { code: error.code };
  } finally {
    turn = null;
  }
}

// An agent command, or the URL of an agent served over WebSocket (ws://,
// through the ws package) or Streamable HTTP (http://).
const remote = /^(ws|http)s?:\/\//.test(command[0]);
let child = null;
let stream;
if (remote && command[0].startsWith("ws")) {
  const { createWebSocketStream } = await import("@agentclientprotocol/sdk/experimental/ws-client");
  const { WebSocket } = await import("ws");
  stream = createWebSocketStream(command[0], { WebSocket });
} else if (remote) {
  const { createHttpStream } = await import("@agentclientprotocol/sdk/experimental/http-client");
  stream = createHttpStream(command[0]);
} else {
  child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  stream = sdk.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
}
const timeout = setTimeout(() => {
  console.error("client.mjs: timed out after 30 s");
  child?.kill();
  process.exit(1);
}, 30_000);

const report = await sdk
  .client({ name: "typescript-sdk-client" })
  .onNotification(sdk.methods.client.session.update, onSessionUpdate)
  .connectWith(stream, async (agent) => {
    agentContext = agent;
    const clientInfo = { name: "typescript-sdk-client", version: "1" };
    let init;
    try {
      init = await agent.request(
        sdk.methods.agent.initialize,
        isV2
          ? { protocolVersion: v2.PROTOCOL_VERSION, info: clientInfo, capabilities: {} }
          : { protocolVersion: v1.PROTOCOL_VERSION, clientCapabilities: {}, clientInfo },
      );
    } catch (error) {
      // A refused initialize (e.g. -32022), or an answer this version cannot read.
      return {
        client: `typescript-sdk ${sdkVersion} (${opts.protocol})`,
        initializeError: { code: error.code ?? null, data: error.data ?? null, message: String(error.message) },
      };
    }
    const session = await agent.request(sdk.methods.agent.session.new, {
      cwd: process.cwd(),
      mcpServers: [],
    });
    return {
      client: `typescript-sdk ${sdkVersion} (${opts.protocol})`,
      protocolVersion: init.protocolVersion,
      agentInfo: (isV2 ? init.info : init.agentInfo) ?? null,
      agentCapabilities: (isV2 ? init.capabilities : init.agentCapabilities) ?? null,
      sessionId: session.sessionId,
      prompt: await runTurn(session.sessionId, PROMPT, false),
      cancel: await runTurn(session.sessionId, LONG_PROMPT, true),
      ...(opts["abort-turn"] ? { abort: await runAbortedTurn(session.sessionId, LONG_PROMPT) } : {}),
      unknownMethod: await agent.request("_interop/unknown", {}).then(
        () => ({ result: "answered" }),
        (error) => ({ code: error.code }),
      ),
    };
  });

console.log(JSON.stringify(report));
clearTimeout(timeout);
if (child === null) process.exit(0);
child.stdin.end();
// Give the agent a moment to exit on end of input, then stop it.
const stopper = setTimeout(() => child.kill(), 2000);
stopper.unref();
