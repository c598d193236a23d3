#!/usr/bin/env node
// Echo agent built on the official TypeScript SDK (@agentclientprotocol/sdk,
// pinned in package-lock.json), serving ACP v1 or the v2 draft on stdio.
//
// It answers initialize and session/new, streams each prompt's text back word
// by word as agent_message_chunk session updates (--delay seconds apart) and
// ends the turn with end_turn, or with cancelled once session/cancel arrived.
// v1 ends a turn with the session/prompt response; v2 answers session/prompt
// at once with the user message id, echoes the prompt as user_message, and
// ends the turn with an idle state_update carrying the stop reason.
//
//   node echo_agent.mjs [--protocol v1|v2] [--delay SECONDS]

import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const { values: opts } = parseArgs({
  options: {
    protocol: { type: "string", default: "v1" },
    delay: { type: "string", default: "0.005" },
    listen: { type: "boolean", default: false },
  },
});
const delayMs = Number(opts.delay) * 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const words = (blocks) =>
  blocks.map((b) => (b.type === "text" ? b.text : "")).join("").match(/\S+\s*/g) ?? [];

const cancelled = new Map(); // sessionId -> boolean
const info = { name: "typescript-sdk-echo-agent", version: "1" };

function newSession() {
  const sessionId = crypto.randomUUID();
  cancelled.set(sessionId, false);
  return { sessionId };
}

function requireSession(sessionId) {
  if (!cancelled.has(sessionId)) throw v1.RequestError.sessionNotFound(sessionId);
}

// Streams the words; returns the stop reason.
async function streamWords(sessionId, prompt, sendChunk) {
  cancelled.set(sessionId, false);
  for (const word of words(prompt)) {
    if (cancelled.get(sessionId)) return "cancelled";
    await sendChunk({ type: "text", text: word });
    await sleep(delayMs);
  }
  return cancelled.get(sessionId) ? "cancelled" : "end_turn";
}

const v1Agent = v1
  .agent({ name: info.name })
  .onRequest(v1.methods.agent.initialize, ({ params }) => ({
    protocolVersion: Math.min(params.protocolVersion, v1.PROTOCOL_VERSION),
    agentInfo: info,
  }))
  .onRequest(v1.methods.agent.session.new, () => newSession())
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    requireSession(params.sessionId);
    const update = (content) =>
      client.notify(v1.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content },
      });
    return { stopReason: await streamWords(params.sessionId, params.prompt, update) };
  })
  .onNotification(v1.methods.agent.session.cancel, ({ params }) => {
    cancelled.set(params.sessionId, true);
  });

const v2Agent = v2
  .agent({ name: info.name })
  .onRequest(v2.methods.agent.initialize, () => ({
    protocolVersion: v2.PROTOCOL_VERSION,
    info,
    capabilities: {},
  }))
  .onRequest(v2.methods.agent.session.new, () => newSession())
  .onRequest(v2.methods.agent.session.prompt, ({ params, client }) => {
    requireSession(params.sessionId);
    const userMessageId = crypto.randomUUID();
    const agentMessageId = crypto.randomUUID();
    const update = (u) =>
      client.notify(v2.methods.client.session.update, { sessionId: params.sessionId, update: u });
    const turn = async () => {
      await update({ sessionUpdate: "user_message", messageId: userMessageId, content: params.prompt });
      await update({ sessionUpdate: "state_update", state: "running" });
      const stopReason = await streamWords(params.sessionId, params.prompt, (content) =>
        update({ sessionUpdate: "agent_message_chunk", messageId: agentMessageId, content }),
      );
      await update({ sessionUpdate: "state_update", state: "idle", stopReason });
    };
    void turn().catch((error) => console.error("echo agent turn failed", error));
    return { messageId: userMessageId };
  })
  .onNotification(v2.methods.agent.session.cancel, ({ params }) => {
    cancelled.set(params.sessionId, true);
  });

const sdk = opts.protocol === "v2" ? v2 : v1;
const agent = opts.protocol === "v2" ? v2Agent : v1Agent;
if (opts.listen) {
  // The SDK's AcpServer (Streamable HTTP and WebSocket) behind node:http and
  // the ws package, on a free loopback port printed as LISTENING <port>.
  const { createServer } = await import("node:http");
  const { WebSocketServer } = await import("ws");
  const { AcpServer } = await import("@agentclientprotocol/sdk/experimental/server");
  const node = await import("@agentclientprotocol/sdk/experimental/node");
  const acpServer = new AcpServer({ agent });
  const httpServer = createServer(node.createNodeHttpHandler(acpServer));
  httpServer.on("upgrade", node.createNodeWebSocketUpgradeHandler(acpServer, new WebSocketServer({ noServer: true })));
  httpServer.listen(0, "127.0.0.1", () => console.log(`LISTENING ${httpServer.address().port}`));
} else {
  const stream = sdk.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
  await agent.connect(stream).closed;
}
