// What the official TypeScript SDK client (@modelcontextprotocol/client) sees on one stdio server:
// the same calls interop/run.lua makes with lua-mcp, written as one JSON document on stdout.
//
//   node interop/ts_probe.mjs PREFIX SPEC
//
// PREFIX: the npm prefix interop/install.sh installed into (its node_modules holds the SDK).
// SPEC: a file holding {command, args, env, cwd, calls: [{method, name|uri, arguments}]} (interop/run.lua).
// The document: {protocolVersion, serverInfo, capabilities, instructions, tools, resources,
// resourceTemplates, prompts, calls: [{result}|{error: {code, message}}]}. The lists are the SDK's
// own walk over every page (listTools() and the others without a cursor aggregate all pages).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [prefix, specFile] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specFile, 'utf8'));
const require = createRequire(path.join(path.resolve(prefix), 'package.json'));
const { Client } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

function failure(e) {
  return { error: { code: typeof e?.code === 'number' ? e.code : null, message: String(e?.message ?? e) } };
}

async function call(client, c) {
  try {
    if (c.method === 'tools/call') return { result: await client.callTool({ name: c.name, arguments: c.arguments ?? {} }) };
    if (c.method === 'resources/read') return { result: await client.readResource({ uri: c.uri }) };
    if (c.method === 'prompts/get') return { result: await client.getPrompt({ name: c.name, arguments: c.arguments ?? {} }) };
    return { error: { code: null, message: `interop: unknown method ${c.method}` } };
  } catch (e) {
    return failure(e);
  }
}

async function main() {
  const client = new Client({ name: 'lua-mcp-interop', version: '0.0.0' },
    { versionNegotiation: { mode: 'auto' }, capabilities: {} });
  const transport = new StdioClientTransport({
    command: spec.command, args: spec.args ?? [], env: spec.env, cwd: spec.cwd, stderr: 'ignore',
  });
  const doc = {};
  await client.connect(transport);
  doc.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  doc.serverInfo = client.getServerVersion() ?? null;
  doc.capabilities = client.getServerCapabilities() ?? null;
  doc.instructions = client.getInstructions() ?? null;
  const caps = doc.capabilities ?? {};
  if (caps.tools) doc.tools = (await client.listTools()).tools;
  if (caps.resources) {
    doc.resources = (await client.listResources()).resources;
    doc.resourceTemplates = (await client.listResourceTemplates()).resourceTemplates;
  }
  if (caps.prompts) doc.prompts = (await client.listPrompts()).prompts;
  doc.calls = [];
  for (const c of spec.calls ?? []) doc.calls.push(await call(client, c));
  await client.close();
  process.stdout.write(JSON.stringify(doc) + '\n');
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`ts_probe: ${e?.stack ?? e}\n`);
  process.exit(1);
});
