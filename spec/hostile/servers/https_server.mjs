// A small working MCP server over HTTPS for spec/hostile/hostile_tls_spec.lua: one listener per
// certificate, so a spec can meet a self-signed, an expired or a misnamed certificate on loopback.
// Node >= 18, no packages.
//
//   node https_server.mjs DIR NAME...
//
// For each NAME it serves DIR/NAME.pem (the certificate chain) with DIR/NAME.key on its own port
// of 127.0.0.1, and prints {"ports": {"NAME": N, ...}} once all listen. Every port answers
// initialize, tools/list and tools/call ("ok"), notifications with 202, GET with 405, DELETE with
// 200. GET /state -> {"requests": {PATH: N}, "tls_errors": N, "pid": N} (requests: HTTP requests
// that got through a handshake, by path; tls_errors: handshakes that failed). It exits when its parent goes, after
// 10 minutes, or on SIGTERM.
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';

const [dir, ...names] = process.argv.slice(2);
const requests = {};
let tlsErrors = 0;

function send(res, status, headers, body) {
  res.writeHead(status, { 'Content-Length': Buffer.byteLength(body ?? ''), ...headers });
  res.end(body ?? '');
}

function handle(req, res, body) {
  const p = req.url.split('?')[0];
  if (p === '/state') {
    return send(res, 200, { 'Content-Type': 'application/json' },
      JSON.stringify({ requests, tls_errors: tlsErrors, pid: process.pid }));
  }
  requests[p] = (requests[p] || 0) + 1;
  if (req.method === 'DELETE') return send(res, 200, {}, '');
  if (req.method !== 'POST') return send(res, 405, {}, '');
  let msg;
  try { msg = JSON.parse(body); } catch { return send(res, 400, {}, 'bad json'); }
  if (msg.method === undefined || msg.id === undefined) return send(res, 202, {}, '');
  const ok = (result, headers) => send(res, 200, { 'Content-Type': 'application/json', ...headers },
    JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  switch (msg.method) {
    case 'initialize':
      return ok({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'tls', version: '1' } },
        { 'Mcp-Session-Id': 'tls-sid' });
    case 'tools/list':
      return ok({ tools: [{ name: 'x', inputSchema: { type: 'object' } }] });
    case 'tools/call':
      return ok({ content: [{ type: 'text', text: 'ok' }] });
    default:
      return ok({});
  }
}

const ports = {};
let listening = 0;
for (const name of names) {
  const server = https.createServer({
    key: fs.readFileSync(path.join(dir, `${name}.key`)),
    cert: fs.readFileSync(path.join(dir, `${name}.pem`)),
  }, (req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('tlsClientError', () => { tlsErrors++; });
  server.listen(0, '127.0.0.1', () => {
    ports[name] = server.address().port;
    if (++listening === names.length) process.stdout.write(JSON.stringify({ ports }) + '\n');
  });
}
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 500).unref();
setTimeout(() => process.exit(0), 600000).unref();
process.on('SIGTERM', () => process.exit(0));
