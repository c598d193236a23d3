#!/usr/bin/env node
// MCP-over-ACP client built on the official TypeScript SDK
// (@agentclientprotocol/sdk/unstable, pinned in package-lock.json), speaking
// ACP v1: it provides an MCP server to the agent it spawns with the SDK's
// McpOverAcpProvider.
//
// The server ("typescript-sdk-tools") answers server/discover, tools/list and
// tools/call of "add" (sending a notifications/progress for the request, with
// its progressToken, before the result), and any other method with an inner
// MCP error (-32601). The client runs initialize, session/new declaring the
// server, and one prompt, then prints one JSON line: the server's id and the
// session/prompt response (the agent reports in its _meta).
//
//   node mcp_client.mjs -- AGENT_PROGRAM [ARGS...]

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/unstable";

const command = process.argv.slice(process.argv.indexOf("--") + 1);
if (process.argv.indexOf("--") < 0 || command.length === 0) {
  console.error("usage: node mcp_client.mjs -- AGENT_PROGRAM [ARGS...]");
  process.exit(2);
}

async function tools(context) {
  switch (context.method) {
    case "server/discover":
      return {
        result: { serverInfo: { name: "typescript-sdk-tools", version: "1" }, capabilities: { tools: {} } },
      };
    case "tools/list":
      return { result: { tools: [{ name: "add", inputSchema: { type: "object" } }] } };
    case "tools/call": {
      const { a, b } = context.params?.arguments ?? {};
      const token = context.params?._meta?.progressToken;
      await context.notify("notifications/progress", { progressToken: token ?? null, progress: 1, total: 2 });
      return { result: { content: [{ type: "text", text: String(a + b) }], isError: false } };
    }
    default:
      throw new acp.McpProtocolError(-32601, "Method not found", { method: context.method });
  }
}

const provider = new acp.McpOverAcpProvider();
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const timeout = setTimeout(() => {
  console.error("mcp_client.mjs: timed out after 30 s");
  child.kill();
  process.exit(1);
}, 30_000);

const report = await acp
  .client({ name: "typescript-sdk-mcp-client" })
  .onRequest(acp.methods.client.mcp.message, provider.handleRequest)
  .connectWith(stream, async (agent) => {
    const server = provider.registerServer(agent, { name: "typescript-sdk-tools", handler: tools });
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: "typescript-sdk-mcp-client", version: "1" },
    });
    const session = await agent.request(acp.methods.agent.session.new, {
      cwd: process.cwd(),
      mcpServers: [server.declaration],
    });
    const answer = await agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "use the tools" }],
    });
    return { serverId: server.serverId, answer };
  });

console.log(JSON.stringify(report));
clearTimeout(timeout);
child.stdin.end();
const stopper = setTimeout(() => child.kill(), 2000);
stopper.unref();
