// A headless "browser" for the oidc leg: follows an authorization URL through oidc-provider's
// development interaction pages (the login form, then the consent form; or "Cancel" with deny),
// keeping the cookies, and finally visits the redirect URL (the client's loopback listener).
// Exits 0 when the redirect was delivered; prints the redirect URL it delivered.
//
//   node oidc/browser.mjs AUTH_URL [approve|deny] [ACCOUNT] [LOG_FILE]
import { appendFileSync } from 'node:fs';

const [authUrl, mode = 'approve', account = 'alice', logFile] = process.argv.slice(2);
// (run detached, its stderr is /dev/null: failures also go to logFile when given)
const fail = (msg) => {
  process.stderr.write(`${msg}\n`);
  if (logFile) appendFileSync(logFile, `${msg}\n`);
  process.exit(1);
};
const origin = new URL(authUrl).origin;
const jar = new Map();

function remember(res) {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    jar.set(pair.slice(0, i), pair.slice(i + 1));
  }
}
const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

async function go(url, body) {
  const init = { redirect: 'manual', headers: { cookie: cookies() } };
  if (body) {
    init.method = 'POST';
    init.headers['content-type'] = 'application/x-www-form-urlencoded';
    init.body = new URLSearchParams(body).toString();
  }
  const res = await fetch(url, init);
  remember(res);
  return res;
}

let url = authUrl;
let body;
for (let step = 0; step < 20; step += 1) {
  if (new URL(url).origin !== origin) {
    // the redirect back to the client: deliver it
    const res = await fetch(url);
    await res.text();
    process.stdout.write(`${url}\n`);
    process.exit(0);
  }
  const res = await go(url, body);
  body = undefined;
  if (res.status >= 300 && res.status < 400) {
    url = new URL(res.headers.get('location'), url).href;
    continue;
  }
  const html = await res.text();
  const prompt = html.match(/name="prompt" value="([a-z]+)"/);
  const action = html.match(/<form[^>]*action="([^"]+)"/);
  if (!prompt || !action) {
    fail(`browser: no form at ${url} (${res.status}): ${html.replace(/\s+/g, ' ').slice(0, 600)}`);
  }
  if (mode === 'deny') {
    url = new URL(`${new URL(action[1], url).pathname}/abort`, url).href;
  } else {
    url = new URL(action[1], url).href;
    body = prompt[1] === 'login' ? { prompt: 'login', login: account, password: 'x' } : { prompt: prompt[1] };
  }
}
fail('browser: too many steps');
