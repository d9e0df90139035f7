// The oidc leg's peers (make oidc, spec/oidc_spec.lua): oidc-provider as the authorization server
// (dynamic registration, PKCE required, resource indicators, rotating refresh tokens, short-lived
// JWT access tokens, exact redirect-URI matching) in front of an MCP server made with the official
// TypeScript SDK, which verifies those JWTs (requireBearerAuth, jose against the issuer's JWKS).
// Prints one JSON line {issuer, mcp, control} when both listen. Control (POST, for the spec):
// /rotate-keys (a new signing key, the old one gone, in a new oidc-provider instance, which no longer
// accepts the clients registered before), /state (what
// the MCP server saw), /exit. The tool admin answers 403 insufficient_scope without mcp:admin.
//
//   node oidc/server.mjs            (OIDC_PREFIX: the npm prefix, default .deps/oidc)
//   env: OIDC_TOKEN_TTL seconds (default 3)
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';

const prefix = path.resolve(process.env.OIDC_PREFIX || '.deps/oidc');
const req = createRequire(path.join(prefix, 'package.json'));
const load = async (name) => import(req.resolve(name));

const { default: Provider } = await load('oidc-provider');
const jose = await load('jose');
const { default: express } = await load('express');
const { McpServer } = await load('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { requireBearerAuth } = await load('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js');
const { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } = await load('@modelcontextprotocol/sdk/server/auth/router.js');
const { InvalidTokenError } = await load('@modelcontextprotocol/sdk/server/auth/errors.js');
const { z } = await load('zod');

const TTL = Number(process.env.OIDC_TOKEN_TTL || 3);
const SCOPES = ['mcp:read', 'mcp:admin'];

const listen = (handler) => new Promise((resolve) => {
  const s = http.createServer(handler);
  s.listen(0, '127.0.0.1', () => resolve(s));
});

async function signingKey() {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

// the resource server first (its URL is the resource indicator), then the issuer
const app = express();
const rs = await listen(app);
const mcpUrl = new URL(`http://127.0.0.1:${rs.address().port}/mcp`);

let keys = [await signingKey()];
const asServer = http.createServer();
await new Promise((r) => asServer.listen(0, '127.0.0.1', r));
const issuer = `http://127.0.0.1:${asServer.address().port}`;

const accounts = new Map();
const configuration = {
  jwks: { keys },
  clientDefaults: { token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  scopes: ['openid', 'offline_access', ...SCOPES],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: TTL, RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600, AuthorizationCode: 60 },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => mcpUrl.href,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== mcpUrl.href) throw new Error(`unknown resource ${indicator}`);
        return { scope: SCOPES.join(' '), audience: mcpUrl.href, accessTokenTTL: TTL, accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
  findAccount: async (_ctx, id) => {
    accounts.set(id, true);
    return { accountId: id, claims: async () => ({ sub: id }) };
  },
};
let provider = new Provider(issuer, configuration);
// exact redirect-URI matching: no RFC 8252 port leeway for native clients' loopback URIs
const exact = (p) => { p.Client.prototype.redirectUriAllowed = function (v) { return this.redirectUris.includes(v); }; };
exact(provider);
// (OIDC_DEBUG=1: the authorization server's refusals on stderr)
const debug = (p) => {
  if (!process.env.OIDC_DEBUG) return;
  for (const ev of ['grant.error', 'server_error', 'authorization.error', 'registration_create.error']) {
    p.on(ev, (_ctx, err) => process.stderr.write(`oidc ${ev}: ${err.error || ''} ${err.error_description || err.message} ${err.error_detail || ''}\n`));
  }
};
debug(provider);
asServer.on('request', (q, r) => provider.callback()(q, r));

// the JWT verifier: the issuer's JWKS, the audience is this resource
const remoteJwks = () => jose.createRemoteJWKSet(new URL(`${issuer}/jwks`), { cooldownDuration: 0 });
let jwks = remoteJwks();
const verifier = {
  async verifyAccessToken(token) {
    try {
      const { payload } = await jose.jwtVerify(token, jwks, { issuer, audience: mcpUrl.href });
      return { token, clientId: payload.client_id, scopes: String(payload.scope || '').split(' ').filter(Boolean),
        expiresAt: payload.exp, resource: mcpUrl, extra: { sub: payload.sub } };
    } catch (e) {
      throw new InvalidTokenError(`token refused: ${e.code || e.message}`);
    }
  },
};

const seen = { notifications: [], tokens: 0, clients: new Set() };
const meta = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
app.use(mcpAuthMetadataRouter({ oauthMetadata: meta, resourceServerUrl: mcpUrl, scopesSupported: ['mcp:read'] }));
app.use(express.json());

const control = express.Router();
control.post('/rotate-keys', async (_q, r) => {
  keys = [await signingKey()];
  provider = new Provider(issuer, { ...configuration, jwks: { keys } });
  exact(provider);
  debug(provider);
  jwks = remoteJwks();
  r.json({ ok: true });
});
control.post('/state', (_q, r) => r.json({ notifications: seen.notifications, clients: [...seen.clients] }));
control.post('/exit', (_q, r) => { r.json({ ok: true }); setTimeout(() => process.exit(0), 10); });
app.use('/control', control);

const bearer = requireBearerAuth({ verifier, requiredScopes: ['mcp:read'],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });

const { RootsListChangedNotificationSchema } = await load('@modelcontextprotocol/sdk/types.js');

const sessions = new Map();
// step-up: the tool admin wants mcp:admin, beyond what the first challenge asked for
const stepUp = (q, r, next) => {
  const b = q.body;
  if (b && b.method === 'tools/call' && b.params?.name === 'admin' && !q.auth.scopes.includes('mcp:admin')) {
    r.set('WWW-Authenticate', `Bearer error="insufficient_scope", scope="mcp:read mcp:admin", resource_metadata="${
      getOAuthProtectedResourceMetadataUrl(mcpUrl)}"`);
    r.status(403).json({ error: 'insufficient_scope' });
    return;
  }
  next();
};

app.all('/mcp', bearer, stepUp, async (q, r) => {
  seen.clients.add(q.auth.clientId);
  const id = q.headers['mcp-session-id'];
  let t = id && sessions.get(id);
  if (!t) {
    if (id) { r.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'no such session' }, id: null }); return; }
    t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, t) });
    const s = new McpServer({ name: 'oidc-leg', version: '1.0.0' });
    s.registerTool('whoami', { description: 'the token the call came with', inputSchema: {} }, async (_a, extra) => ({
      content: [{ type: 'text', text: JSON.stringify({ sub: extra.authInfo?.extra?.sub, scopes: extra.authInfo?.scopes,
        client_id: extra.authInfo?.clientId }) }],
    }));
    s.registerTool('admin', { description: 'needs mcp:admin', inputSchema: {} }, async (_a, extra) => ({
      content: [{ type: 'text', text: JSON.stringify({ scopes: extra.authInfo?.scopes }) }],
    }));
    s.registerTool('ask', { description: 'waits delay_ms, then asks the user', inputSchema: { delay_ms: z.number() } },
      async ({ delay_ms: d }) => {
        await new Promise((res) => setTimeout(res, d));
        const res = await s.server.elicitInput({ message: 'name?', requestedSchema: { type: 'object',
          properties: { name: { type: 'string' } }, required: ['name'] } });
        return { content: [{ type: 'text', text: JSON.stringify(res) }] };
      });
    s.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
      seen.notifications.push('roots/list_changed');
    });
    await s.connect(t);
  }
  await t.handleRequest(q, r, q.body);
});

process.stdout.write(`${JSON.stringify({ issuer, mcp: mcpUrl.href, control: `http://127.0.0.1:${rs.address().port}/control` })}\n`);
