#!/usr/bin/env node
// MCP-over-ACP agent built on the official TypeScript SDK
// (@agentclientprotocol/sdk/unstable, pinned in package-lock.json), serving
// ACP v1 on stdio: it calls the MCP servers its client provides over
// mcp/message with the SDK's McpOverAcpCaller.
//
// It advertises mcpCapabilities.acp and keeps the "acp" entries of
// session/new's mcpServers. On each session/prompt, for every such server, it
// sends tools/list, tools/call of "add" (2 + 3, collecting the request's
// notifications), a method the server does not have (an inner MCP error) and
// a request to a server nobody declared (an outer ACP error), and ends the
// turn with end_turn and what it saw in the response's _meta.mcp
// ({serverId: report}). Besides what the caller hands the request's
// onNotification ("routed"), it reports every mcp/message notification as it
// arrived ("received"): the caller routes a notification only while its
// request is pending, and in 2.4.0 the response read right after a
// notification can settle the request before the notification's handler runs
// (it is reached through awaits, the response is not), so "routed" may lack
// one that came just before the answer.
//
//   node mcp_agent.mjs

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/unstable";

const caller = new acp.McpOverAcpCaller({ clientInfo: { name: "typescript-sdk-mcp-agent", version: "1" } });
const sessions = new Map();
const received = [];

const agent = acp
  .agent({ name: "typescript-sdk-mcp-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => ({
    protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
    agentInfo: { name: "typescript-sdk-mcp-agent", version: "1" },
    agentCapabilities: { mcpCapabilities: { acp: true } },
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = crypto.randomUUID();
    sessions.set(sessionId, (params.mcpServers ?? []).filter(acp.isMcpServerAcp));
    return { sessionId };
  })
  .onNotification(acp.methods.agent.mcp.message, (context) => {
    received.push(context.params);
    caller.handleNotification(context);
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const servers = sessions.get(params.sessionId);
    if (!servers) throw acp.RequestError.sessionNotFound(params.sessionId);
    const report = {};
    for (const { serverId, name } of servers) {
      const notifications = [];
      const listed = await caller.request(client, serverId, "tools/list", {});
      const called = await caller.request(
        client,
        serverId,
        "tools/call",
        { name: "add", arguments: { a: 2, b: 3 } },
        {
          requestId: `add-${serverId}`,
          onNotification: (n) => notifications.push({ method: n.method, params: n.params ?? null }),
        },
      );
      const inner = await caller.request(client, serverId, "interop/no-such-method", {});
      let outer = null;
      try {
        await caller.request(client, "no-such-server", "tools/list", {});
      } catch (error) {
        outer = { code: error.code, data: error.data ?? null };
      }
      report[serverId] = {
        name,
        listed,
        called,
        routed: notifications,
        received: received.filter((n) => n.serverId === serverId),
        inner,
        outer,
      };
    }
    return { stopReason: "end_turn", _meta: { mcp: report } };
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
await agent.connect(stream).closed;
