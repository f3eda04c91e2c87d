// Connects to the server with the v2 TypeScript client (@modelcontextprotocol/client) in
// versionNegotiation "auto" mode: it probes with server/discover and takes the modern
// (2026-07-28) era on definitive evidence, else falls back to the initialize handshake. It
// validates structuredContent of successful results against each tool's outputSchema (JSON
// Schema 2020-12). Lists all tools, calls each tool the plan names, and prints one JSON report
// on stdout for the Go test to assert on.
//
// Usage: node ts-client-v2.mjs PLAN.json
// PLAN: {"command": "...", "args": [...], "cwd": "...", "calls": [{"label": "...", "name": "...", "arguments": {...}}]}
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const report = { client: 'client-v2', tools: [], calls: [] };

const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args,
  cwd: plan.cwd,
  env: plan.env,
  stderr: 'inherit',
});
const client = new Client(
  { name: 'runlens-compat-client-v2', version: '2.0.0' },
  { versionNegotiation: { mode: 'auto' } },
);
try {
  await client.connect(transport);
  report.era = client.getProtocolEra() ?? null;
  report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  report.serverInfo = client.getServerVersion() ?? null;
  report.instructions = client.getInstructions() ?? null;
  const listed = await client.listTools();
  report.tools = listed.tools.map((t) => t.name);
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
