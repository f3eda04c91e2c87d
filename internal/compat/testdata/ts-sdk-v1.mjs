// Connects to the server with the v1 TypeScript SDK (@modelcontextprotocol/sdk), which speaks
// the handshake era only and validates structuredContent against each tool's outputSchema with
// Ajv (draft-07 semantics). Lists every page of tools, calls each tool the plan names, and
// prints one JSON report on stdout for the Go test to assert on.
//
// Usage: node ts-sdk-v1.mjs PLAN.json
// PLAN: {"command": "...", "args": [...], "cwd": "...", "calls": [{"label": "...", "name": "...", "arguments": {...}}]}
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const report = { client: 'sdk-v1', tools: [], calls: [] };

const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args,
  cwd: plan.cwd,
  env: plan.env,
  stderr: 'inherit',
});
// The v1 client reports the negotiated revision only to a transport that asks for it.
transport.setProtocolVersion = (version) => {
  report.protocolVersion = version;
};
const client = new Client({ name: 'runlens-compat-sdk-v1', version: '1.0.0' });
try {
  await client.connect(transport);
  report.serverInfo = client.getServerVersion() ?? null;
  report.instructions = client.getInstructions() ?? null;
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    report.tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  for (const call of plan.calls) {
    const entry = { label: call.label, name: call.name };
    try {
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      entry.isError = result.isError === true;
      entry.structuredContent = result.structuredContent ?? null;
      entry.text = result.content?.find((c) => c.type === 'text')?.text ?? null;
    } catch (err) {
      entry.error = String(err?.message ?? err);
    }
    report.calls.push(entry);
  }
} catch (err) {
  report.fatal = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + '\n');
