#!/usr/bin/env node
// The smallest client on the official TypeScript SDK (@agentclientprotocol/sdk,
// pinned in package-lock.json): spawns an agent command, initializes, opens a
// session, sends one prompt, prints the agent's text and exits 0 when the turn
// ends (v1: the prompt's response; v2: the first idle state_update after it).
// It handles no permission, file system or terminal request: the SDK answers
// them -32601 (Method not found).
//
//   node prompt_client.mjs [--protocol v1|v2] -- AGENT_PROGRAM [ARGS...]

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const { values: opts, positionals: command } = parseArgs({
  options: { protocol: { type: "string", default: "v1" } },
  allowPositionals: true,
});
const isV2 = opts.protocol === "v2";
const sdk = isV2 ? v2 : v1;

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = sdk.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
let onIdle = null;

const stopReason = await sdk
  .client({ name: "prompt-client" })
  .onNotification(sdk.methods.client.session.update, ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      process.stdout.write(update.content.text);
    }
    if (update.sessionUpdate === "state_update" && update.state === "idle" && onIdle) onIdle(update.stopReason);
  })
  .connectWith(stream, async (agent) => {
    const info = { name: "prompt-client", version: "1" };
    await agent.request(
      sdk.methods.agent.initialize,
      isV2
        ? { protocolVersion: v2.PROTOCOL_VERSION, info, capabilities: {} }
        : { protocolVersion: v1.PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: info },
    );
    const session = await agent.request(sdk.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    const idle = new Promise((resolve) => (onIdle = resolve));
    const response = await agent.request(sdk.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello" }],
    });
    return isV2 ? await idle : response.stopReason;
  });

console.log(`\n[${stopReason}]`);
child.stdin.end();
process.exit(0);
