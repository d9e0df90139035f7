// TypeScript SDK benchmark driver (@modelcontextprotocol/sdk on Node): the same rows, the same
// work and the same output as bench/lua_driver.lua (bench/README.md).
//
//   node bench/ts_driver.mjs ROW TRANSPORT TARGET [N] [WARMUP]
//
// The SDK is loaded from $MCP_BENCH_SDK_DIR/node_modules (default: .deps/bench-npm of this
// checkout, where `make bench` installs the pinned version). CPU time is process.cpuUsage()
// (getrusage(RUSAGE_SELF): user+sys of this process and all its threads, not the server's);
// peak RSS is VmHWM from /proc/self/status at the end.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = process.env.MCP_BENCH_SDK_DIR || resolve(here, "..", ".deps", "bench-npm");
const pkgDir = join(sdkDir, "node_modules", "@modelcontextprotocol", "sdk");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));

// The package's own "exports" map decides the file (an exact key, else its "./*" pattern).
async function importSdk(subpath) {
  let entry = pkg.exports[subpath];
  let star = null;
  if (entry === undefined) {
    entry = pkg.exports["./*"];
    star = subpath.slice(2);
  }
  let file = typeof entry === "string" ? entry : entry.import;
  if (typeof file === "object") file = file.default;
  if (star !== null) file = file.replace("*", star);
  return import(pathToFileURL(join(pkgDir, file)).href);
}

const { Client } = await importSdk("./client/index.js");
const { StdioClientTransport } = await importSdk("./client/stdio.js");
const { StreamableHTTPClientTransport } = await importSdk("./client/streamableHttp.js");

const [row, transport, target, nArg, warmArg] = process.argv.slice(2);
const N = Number(nArg) || 1000;
const WARMUP = Number(warmArg) || 0;
if (!row || (transport !== "stdio" && transport !== "http") || !target) {
  console.error("usage: ts_driver.mjs ROW stdio|http TARGET [N] [WARMUP]");
  process.exit(2);
}
const INFLIGHT = 64;
const SIZES = { big1m: 1048576, big10m: 10485760 };

// Open fds of this process now, and the soft limit on open files (Node raises it to the hard
// limit at start-up).
const fdCount = () => readdirSync("/proc/self/fd").length;
function nofileSoft() {
  const m = readFileSync("/proc/self/limits", "utf8").match(/Max open files\s+(\S+)/);
  return m ? m[1] : "?";
}

function procStatus(key) {
  const m = readFileSync("/proc/self/status", "utf8").match(new RegExp(key + ":\\s*(\\d+)"));
  return m ? Number(m[1]) : 0;
}

async function connect() {
  const client = new Client({ name: "ts-bench", version: "1.0.0" }, { capabilities: {} });
  const t =
    transport === "stdio"
      ? // maxBufferSize: the SDK's default (10 MiB) refuses the 10 MiB result's 10.4 MB line;
        // 64 MiB is lua-mcp's default max_message_size.
        new StdioClientTransport({ command: target, args: [], stderr: "inherit", maxBufferSize: 64 << 20 })
      : new StreamableHTTPClientTransport(new URL(target));
  await client.connect(t);
  return client;
}

async function call(c, name) {
  const res = await c.callTool({ name, arguments: { message: "hello" } });
  if (res.isError) throw new Error(`tools/call ${name} failed`);
  return res;
}

// Times fn(): wall ms, own CPU seconds.
async function timed(fn) {
  const c0 = process.cpuUsage();
  const w0 = process.hrtime.bigint();
  await fn();
  const w = Number(process.hrtime.bigint() - w0) / 1e6;
  const c = process.cpuUsage(c0);
  return [w, (c.user + c.system) / 1e6];
}

const out = [];
function emit(ops, wallMs, cpuS, extra = {}) {
  const parts = [
    "BENCH", "client=ts-sdk", `transport=${transport}`, `row=${row}`,
    `ops=${ops}`, `wall_ms=${wallMs.toFixed(3)}`, `cpu_s=${cpuS.toFixed(6)}`,
  ];
  for (const [k, v] of Object.entries(extra)) parts.push(`${k}=${v}`);
  out.push(parts);
}

if (row === "connect" || row === "connect_nodisc") { // the TS SDK sends no discovery probe
  for (let i = 0; i < WARMUP; i++) await (await connect()).close();
  let wall = 0, cpu = 0;
  for (let i = 0; i < N; i++) {
    let c;
    const [w, p] = await timed(async () => { c = await connect(); });
    wall += w;
    cpu += p;
    await c.close();
  }
  emit(N, wall, cpu);
} else if (row === "seq") {
  const c = await connect();
  for (let i = 0; i < WARMUP; i++) await call(c, "echo");
  const [w, p] = await timed(async () => {
    for (let i = 0; i < N; i++) await call(c, "echo");
  });
  emit(N, w, p);
  await c.close();
} else if (row === "inflight") {
  const c = await connect();
  const round = async (total) => {
    const per = Math.floor(total / INFLIGHT);
    const workers = [];
    for (let k = 0; k < INFLIGHT; k++) {
      workers.push((async () => { for (let i = 0; i < per; i++) await call(c, "echo"); })());
    }
    await Promise.all(workers);
    return per * INFLIGHT;
  };
  if (WARMUP > 0) await round(WARMUP);
  let done;
  const [w, p] = await timed(async () => { done = await round(N); });
  emit(done, w, p, { concurrency: INFLIGHT });
  await c.close();
} else if (row === "big1m" || row === "big10m") {
  const c = await connect();
  const want = SIZES[row];
  const check = (res) => {
    // .length counts UTF-16 units; the text is ASCII, so it equals the byte count
    if (res.content[0].text.length !== want) throw new Error(`${row}: got ${res.content[0].text.length} chars`);
  };
  for (let i = 0; i < WARMUP; i++) check(await call(c, row));
  const [w, p] = await timed(async () => {
    for (let i = 0; i < N; i++) check(await call(c, row));
  });
  emit(N, w, p, { bytes: want });
  await c.close();
} else if (row === "list1000") {
  const c = await connect();
  const list = async () => {
    const r = await c.listTools();
    if (r.tools.length !== 1000) throw new Error(`tools/list: got ${r.tools.length} tools`);
  };
  for (let i = 0; i < WARMUP; i++) await list();
  const [w, p] = await timed(async () => {
    for (let i = 0; i < N; i++) await list();
  });
  emit(N, w, p);
  await c.close();
} else if (row === "scale") {
  let clients;
  const [w1, p1] = await timed(async () => {
    clients = await Promise.all(Array.from({ length: N }, () => connect()));
  });
  const [w2, p2] = await timed(async () => {
    await Promise.all(clients.map((c) => call(c, "echo")));
  });
  emit(N, w1, p1, { phase: "connect_all" });
  emit(N, w2, p2, { phase: "round" });
  const rssAll = procStatus("VmRSS"), fdsAll = fdCount(), soft = nofileSoft();
  await Promise.all(clients.map((c) => c.close()));
  for (const parts of out) parts.push(`rss_connected_kb=${rssAll}`, `fds_connected=${fdsAll}`, `nofile_soft=${soft}`);
} else if (row === "flood") {
  // N calls made at once on one client (one promise each), then drained; the SDK's HTTP
  // transport makes one fetch per call (undici's pool: no connection bound by default).
  // A deadline (MCP_BENCH_FLOOD_DEADLINE_S, default 120 s) stops the measured round: the calls
  // not answered by then are reported as unfinished and the process exits.
  const deadlineMs = (Number(process.env.MCP_BENCH_FLOOD_DEADLINE_S) || 120) * 1000;
  const c = await connect();
  let failed = 0, done = 0, firstErr;
  const round = (total, limitMs) => new Promise((resolve) => {
    let left = total;
    const timer = limitMs ? setTimeout(resolve, limitMs) : null;
    for (let i = 0; i < total; i++) {
      call(c, "echo").then(() => { done++; }, (e) => { failed++; firstErr ??= String(e); }).finally(() => {
        if (--left === 0) {
          if (timer) clearTimeout(timer);
          resolve();
        }
      });
    }
  });
  if (WARMUP > 0) await round(WARMUP);
  failed = 0;
  done = 0;
  const [w, p] = await timed(() => round(N, deadlineMs));
  const unfinished = N - done - failed;
  if (failed > 0) console.error(`flood: ${failed} of ${N} calls failed, first: ${firstErr}`);
  if (unfinished > 0) console.error(`flood: ${unfinished} of ${N} calls unanswered after ${deadlineMs / 1000} s`);
  emit(N, w, p, { failed, unfinished, fds_after: fdCount() });
  if (unfinished === 0) await c.close();
} else {
  console.error(`unknown row ${row}`);
  process.exit(2);
}

const hwm = procStatus("VmHWM");
for (const parts of out) {
  parts.push(`hwm_kb=${hwm}`);
  console.log(parts.join(" "));
}
process.exit(0);
