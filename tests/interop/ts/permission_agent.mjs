#!/usr/bin/env node
// Permission agent built on the official TypeScript SDK (@agentclientprotocol/sdk,
// pinned in package-lock.json), serving ACP v1 on stdio: announces a tool
// call, then at once asks permission for it.
//
// It answers initialize and session/new; on each session/prompt it sends a
// tool_call session update (toolCallId "read-1", status pending) and, without
// waiting, a session/request_permission for that tool call (options "allow"
// and "reject"), then reports the outcome as one agent_message_chunk
// ("selected <optionId>" or "cancelled") and ends the turn with end_turn. A
// failed permission request ends the turn with the error.
//
//   node permission_agent.mjs

import { Readable, Writable } from "node:stream";

import * as v1 from "@agentclientprotocol/sdk";

const TOOL_CALL_ID = "read-1";
const sessions = new Set();

const agent = v1
  .agent({ name: "typescript-sdk-permission-agent" })
  .onRequest(v1.methods.agent.initialize, ({ params }) => ({
    protocolVersion: Math.min(params.protocolVersion, v1.PROTOCOL_VERSION),
    agentInfo: { name: "typescript-sdk-permission-agent", version: "1" },
  }))
  .onRequest(v1.methods.agent.session.new, () => {
    const sessionId = crypto.randomUUID();
    sessions.add(sessionId);
    return { sessionId };
  })
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    if (!sessions.has(sessionId)) throw v1.RequestError.sessionNotFound(sessionId);
    const update = (u) => client.notify(v1.methods.client.session.update, { sessionId, update: u });
    await update({
      sessionUpdate: "tool_call",
      toolCallId: TOOL_CALL_ID,
      title: "Read README.md",
      kind: "read",
      status: "pending",
    });
    const answer = await client.request(v1.methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId: TOOL_CALL_ID },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const outcome = answer.outcome;
    const text = outcome.outcome === "selected" ? `selected ${outcome.optionId}` : "cancelled";
    await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    return { stopReason: "end_turn" };
  });

const stream = v1.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
await agent.connect(stream).closed;
