// A hostile MCP server over HTTP for spec/hostile/: raw HTTP/1.1 on a `net` socket, so it can
// send what a well-behaved HTTP library refuses to (a CR inside a header value, say). Node >= 18,
// no packages. Listens on 127.0.0.1; prints {"port": N} once, then exits when its parent goes,
// after 10 minutes, or on SIGTERM.
//
// The first path segment of the URL picks the behaviour (http://127.0.0.1:PORT/<mode>):
//   plain       a small working server: initialize, tools/list, tools/call -> "ok"
//   long-sid    as plain, with a 10000-byte Mcp-Session-Id
//   cr-sid      as plain, with the Mcp-Session-Id "abc\rdef" (a bare CR)
//   bad-json    tools/call -> 200 application/json "{not json"
//   gzip        tools/call -> 200 application/json, Content-Encoding: gzip (never asked for)
//   empty200    tools/call -> 200 application/json with an empty body
//   retry1      GET -> 200 text/event-stream "retry: 1" and the end of the stream, every time
//   idle        tools/call -> never answered (the connection stays open)
//   redirect    every request -> 307 to http://localhost:PORT/plain (another origin)
//   redirect-same  every request -> 307 to /plain (the same origin)
//   ping-flood  GET -> an event stream of 3000 pings; POSTs of responses are never answered
//   endless     tools/call -> an event stream whose one data line never ends (64 KiB every 10 ms)
//   big-body    tools/call -> 200 application/json announcing 100 MB, sending 8 MiB of it
// A TLS ClientHello on any connection gets a plain-text 400 (an https:// URL to this server).
// GET /state -> {"requests":[{method, path, headers, rpc}], "connections": N, "open": N, "held": {},
// "held_peak": {}} (rpc: the JSON-RPC method a POST carried; connections: accepted so far, open: open
// now; held: by path, the ping-flood POSTs of responses left unanswered whose connection is still
// open, held_peak: the most of them open at once)
import net from 'node:net';
import zlib from 'node:zlib';

const records = [];
let connections = 0, open = 0;
const held = {}, heldPeak = {};
let port = 0;

function reply(sock, status, headers, body) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body ?? '');
  let head = `HTTP/1.1 ${status} X\r\n`;
  for (const [k, v] of Object.entries({ 'Content-Length': b.length, ...headers })) head += `${k}: ${v}\r\n`;
  sock.write(Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), b]));
}

function json(sock, obj, headers) {
  reply(sock, 200, { 'Content-Type': 'application/json', ...headers }, JSON.stringify(obj));
}

function sessionHeaders(mode) {
  if (mode === 'long-sid') return { 'Mcp-Session-Id': 'S'.repeat(10000) };
  if (mode === 'cr-sid') return { 'Mcp-Session-Id': 'abc\rdef' };
  return { 'Mcp-Session-Id': 'sid-1' };
}

function handle(sock, req) {
  const [path, query] = req.path.split('?');
  const mode = path.split('/')[1] || 'plain';
  if (mode === 'state') {
    return json(sock, { requests: records, connections, open, held, held_peak: heldPeak, pid: process.pid });
  }
  const rec = { method: req.method, path, headers: req.headers };
  records.push(rec);
  if (mode === 'redirect') return reply(sock, 307, { Location: `http://localhost:${port}/plain` }, '');
  if (mode === 'redirect-same') return reply(sock, 307, { Location: '/plain' }, '');
  if (req.method === 'DELETE') return reply(sock, 200, {}, '');
  if (req.method === 'GET') {
    if (mode === 'retry1') {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 10\r\n\r\nretry: 1\n\n');
      return;
    }
    if (mode === 'ping-flood') {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n');
      let s = '';
      for (let i = 1; i <= 3000; i++) s += `event: message\ndata: {"jsonrpc":"2.0","id":"p${i}","method":"ping"}\n\n`;
      sock.write(s);
      return; // the stream stays open
    }
    return reply(sock, 405, {}, '');
  }
  let msg;
  try { msg = JSON.parse(req.body.toString('utf8')); } catch { return reply(sock, 400, {}, 'bad json'); }
  rec.rpc = msg.method;
  if (msg.method === undefined) { // a response of the client (to a ping)
    if (mode === 'ping-flood') { // never answered
      held[path] = (held[path] || 0) + 1;
      heldPeak[path] = Math.max(heldPeak[path] || 0, held[path]);
      sock.on('close', () => { held[path]--; });
      return;
    }
    return reply(sock, 202, {}, '');
  }
  if (msg.id === undefined) return reply(sock, 202, {}, '');
  const ok = (result) => json(sock, { jsonrpc: '2.0', id: msg.id, result }, msg.method === 'initialize' ? sessionHeaders(mode) : {});
  switch (msg.method) {
    case 'initialize':
      return ok({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: `hostile-${mode}`, version: '1' } });
    case 'tools/list':
      return ok({ tools: [{ name: 'x', inputSchema: { type: 'object' } }] });
    case 'tools/call':
      if (mode === 'bad-json') return reply(sock, 200, { 'Content-Type': 'application/json' }, '{not json');
      if (mode === 'empty200') return reply(sock, 200, { 'Content-Type': 'application/json' }, '');
      if (mode === 'gzip') {
        const body = zlib.gzipSync(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [] } }));
        return reply(sock, 200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body);
      }
      if (mode === 'idle') return; // never answered
      if (mode === 'endless') {
        sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {"jsonrpc":"2.0","id":' + JSON.stringify(msg.id) + ',"result":"');
        const chunk = 'x'.repeat(65536);
        const t = setInterval(() => { if (sock.destroyed) clearInterval(t); else sock.write(chunk); }, 10);
        sock.on('close', () => clearInterval(t));
        return;
      }
      if (mode === 'big-body') {
        sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n');
        sock.write('{"jsonrpc":"2.0","id":' + JSON.stringify(msg.id) + ',"result":"' + 'x'.repeat(8 * 1024 * 1024));
        return;
      }
      return ok({ content: [{ type: 'text', text: 'ok' }] });
    default:
      return ok({});
  }
}

// Minimal HTTP/1.1 request parsing with keep-alive: head, then Content-Length bytes.
const server = net.createServer((sock) => {
  connections++;
  open++;
  sock.on('close', () => { open--; });
  sock.on('error', () => {});
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    if (buf.length === 0 && d[0] === 0x16) { // a TLS handshake: answer in plain text
      sock.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
      const [method, path] = lines[0].split(' ');
      const headers = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const len = Number(headers['content-length'] || 0);
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len);
      buf = buf.subarray(end + 4 + len);
      handle(sock, { method, path, headers, body });
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  process.stdout.write(JSON.stringify({ port }) + '\n');
});
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 500).unref();
setTimeout(() => process.exit(0), 600000).unref();
process.on('SIGTERM', () => process.exit(0));
