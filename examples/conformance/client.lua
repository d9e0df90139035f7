--- The lua-mcp client for the official MCP conformance suite (@modelcontextprotocol/conformance).
---
---   conformance client --command "lua5.4 examples/conformance/client.lua" --scenario tools_call
---
--- The runner starts one mock server per scenario and runs this program with the server's URL as
--- the last argument and MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION (0.2.x; the
--- lifecycle to use) and MCP_CONFORMANCE_CONTEXT (JSON, for scenarios with data) in the
--- environment. It uses only the public API of require("mcp"): every piece of protocol behaviour a
--- scenario checks (headers, sessions, SSE resumption and its retry delay, elicitation defaults,
--- raw tool schemas, version choice) is the library's. `make conformance` runs it (README.md,
--- "Conformance").
---
--- It logs each step on stderr and `[<scenario>] done` last when every step worked (exit 0);
--- otherwise the failure (exit 1). The runner's verdict comes from its own checks, not from this;
--- conformance/table.lua uses it to tell a real pass from a vacuous one.
local mcp = require("mcp")

local server_url = arg[#arg]
local scenario = os.getenv("MCP_CONFORMANCE_SCENARIO") or ""
-- Not set by the 0.1.x runners: the library's default version then.
local protocol_version = os.getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
local context = {}
if os.getenv("MCP_CONFORMANCE_CONTEXT") then
  context = assert(mcp.json.decode(os.getenv("MCP_CONFORMANCE_CONTEXT")))
end

local function log(fmt, ...)
  io.stderr:write(("[%s] " .. fmt .. "\n"):format(scenario, ...))
end

local function fail(what, err)
  log("%s failed: %s", what, tostring(err))
  os.exit(1)
end

-- OAuth (the auth/* scenarios without a function of their own below): a headless provider. The
-- runner's authorization server approves at once, so the authorization URL is fetched without a
-- browser and the code taken from the redirect. Pre-registered credentials come from the context (auth/pre-registration); the
-- Client ID Metadata Document URL is the one the suite expects (nothing fetches it).
local auth_provider

-- Credentials are pinned to an issuer (a malicious MCP server could name its own authorization
-- server): a real host configures it; here the runner is trusted, so the issuer is the context's,
-- else the one its server names.
local function runner_issuer()
  if context.issuer then return context.issuer end
  local opts = { protocol_version = protocol_version }
  local prm = mcp.auth.discover_protected_resource_metadata(server_url, opts)
  local as_url = type(prm) == "table" and type(prm.authorization_servers) == "table"
    and prm.authorization_servers[1] or server_url:match("^https?://[^/]+")
  local meta = mcp.auth.discover_authorization_server_metadata(as_url, server_url, opts)
  return type(meta) == "table" and meta.issuer or as_url
end

if scenario:match("^auth/") then
  local info
  if context.client_id then
    info = { client_id = context.client_id, client_secret = context.client_secret,
      issuer = context.client_secret and runner_issuer() or context.issuer }
  end
  auth_provider = mcp.auth.headless_provider({
    redirect_url = "http://localhost:3000/callback",
    client_name = "lua-mcp-conformance",
    client_information = info,
    client_metadata_url = "https://conformance-test.local/client-metadata.json",
    server_url = server_url,
  })
end

--- Connect to the scenario's server over streamable HTTP with the version the runner asks for.
local function connect(opts)
  opts = opts or {}
  opts.client_name = "lua-mcp-conformance"
  opts.client_version = mcp.VERSION
  opts.protocol_version = protocol_version
  -- The runner starts every scenario at once, and its mock servers compile their JSON schemas on
  -- the first request: the probe gets more than the default second before it counts as a
  -- timeout (which means "legacy server").
  opts.protocol_discovery_timeout_ms = 10000
  if opts.auth_provider then
    opts.transport_on_error = function(err) log("transport: %s", tostring(err)) end
  end
  local client, err = mcp.create_http_client(server_url, opts)
  if not client then fail("connect", err) end
  log("connected, protocol %s", tostring(client:protocol_version()))
  return client
end

local function list_tools(client)
  local tools, err = client:list_all_tools()
  if not tools then fail("tools/list", err) end
  local by_name = {}
  for _, t in ipairs(tools) do by_name[t.name] = t end
  log("tools/list: %d tools", #tools)
  return tools, by_name
end

local function call(client, name, args)
  local res, err = client:call_tool(name, args)
  if not res then fail("tools/call " .. name, err) end
  log("tools/call %s: %s", name, mcp.json.encode(res.content))
  return res
end

local function need(tool, name)
  if not tool then fail("tools/list", "the server offers no tool " .. name) end
  return tool
end

local scenarios = {}

-- The handshake, then one request to show the session works.
scenarios["initialize"] = function()
  local client = connect()
  list_tools(client)
  return client
end

scenarios["tools_call"] = function()
  local client = connect()
  local _, tools = list_tools(client)
  need(tools.add_numbers, "add_numbers")
  call(client, "add_numbers", { a = 5, b = 3 })
  return client
end

-- SEP-1034: the user accepts without filling anything in; the library fills in the schema's
-- defaults before it answers (and validates the answer against the schema).
scenarios["elicitation-sep1034-client-defaults"] = function()
  local client = connect({
    on_elicitation_request = function(req)
      log("elicitation/create: %s", tostring(req.message))
      return mcp.elicitation.accept({})
    end,
  })
  local _, tools = list_tools(client)
  local name = "test_client_elicitation_defaults"
  need(tools[name], name)
  call(client, name, {})
  return client
end

-- SEP-1699: the server ends the tools/call stream after a priming event with `retry: 500`; the
-- transport resumes it with a GET carrying Last-Event-ID after that delay.
scenarios["sse-retry"] = function()
  local client = connect()
  local _, tools = list_tools(client)
  need(tools.test_reconnection, "test_reconnection")
  call(client, "test_reconnection", {})
  return client
end

-- SEP-1613/SEP-2106: send the focal tool's inputSchema back exactly as the API returned it.
scenarios["json-schema-2020-12-preservation"] = function()
  local client = connect()
  local _, tools = list_tools(client)
  local focal = need(tools.json_schema_2020_12_tool, "json_schema_2020_12_tool")
  need(tools.json_schema_echo, "json_schema_echo")
  call(client, "json_schema_echo", { schema = focal.inputSchema })
  return client
end

-- SEP-2640 (skills extension), as a host does it: at connection, build the skill catalog from
-- skills/list alone (no file is read: sep-2640-client-no-prefetch); when the model asks for a
-- skill, load it, which reads SKILL.md and verifies it (size, digest, frontmatter) before use.
-- The verify-* servers serve a SKILL.md that fails one check: the load must be refused, and then
-- nothing else of the skill is read.
local function skills_host(load)
  return function()
    local client = connect()
    local entries, err = client:list_skills()
    if not entries then fail("skills/list", err) end
    for _, s in ipairs(mcp.skills.for_agent(entries)) do
      log("catalog: %s (%s): %s", s.name, s.uri, s.description)
    end
    if not load then return client end
    local expect_refusal = scenario:match("^sep%-2640%-client%-verify%-") ~= nil
    for _, entry in ipairs(entries) do
      local skill, lerr = client:load_skill(entry)
      if skill then
        if expect_refusal then fail("load_skill " .. entry.uri, "a skill that fails verification was loaded") end
        log("loaded %s: %d bytes of instructions", skill.name, #skill.body)
      elseif expect_refusal and lerr.kind == "verification" then
        log("refused %s: %s", tostring(entry.uri), tostring(lerr))
      else
        fail("load_skill " .. tostring(entry.uri), lerr)
      end
    end
    return client
  end
end
scenarios["sep-2640-client-no-prefetch"] = skills_host(false)
scenarios["sep-2640-client-verify-digest"] = skills_host(true)
scenarios["sep-2640-client-verify-size"] = skills_host(true)
scenarios["sep-2640-client-verify-frontmatter"] = skills_host(true)

-- ---- 2026-07-28 scenarios ----------------------------------------------------------------------

-- SEP-2322: two tools answer input_required (with and without requestState); the library
-- answers through the elicitation handler and sends the call again. While the first one waits
-- for our answer, an unrelated call goes out, which must carry none of its state.
scenarios["sep-2322-client-request-state"] = function()
  local client, unrelated_called
  client = connect({
    on_elicitation_request = function(req)
      log("input request: %s", tostring(req.message))
      if not unrelated_called then
        unrelated_called = true
        call(client, "test_mrtr_unrelated", {})
      end
      return mcp.elicitation.accept({ confirmed = true })
    end,
  })
  local _, tools = list_tools(client)
  for _, name in ipairs({ "test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type" }) do
    need(tools[name], name)
  end
  call(client, "test_mrtr_echo_state", {})
  call(client, "test_mrtr_no_state", {})
  call(client, "test_mrtr_no_result_type", {})
  return client
end

-- SEP-2243: Mcp-Method on every POST, Mcp-Name on tools/call, resources/read and prompts/get.
-- Drive every method the scenario checks (initialize and notifications/initialized do not exist
-- in 2026-07-28).
scenarios["http-standard-headers"] = function()
  local client = connect()
  local tools = list_tools(client)
  if tools[1] then call(client, tools[1].name, {}) end
  local resources, err = client:list_resources()
  if not resources then fail("resources/list", err) end
  if resources[1] then
    local res, rerr = client:read_resource(resources[1].uri)
    if not res then fail("resources/read " .. resources[1].uri, rerr) end
    log("resources/read %s: %d contents", resources[1].uri, #res.contents)
  end
  local prompts, perr = client:list_prompts()
  if not prompts then fail("prompts/list", perr) end
  if prompts[1] then
    local res, gerr = client:get_prompt(prompts[1].name, {})
    if not res then fail("prompts/get " .. prompts[1].name, gerr) end
    log("prompts/get %s: %d messages", prompts[1].name, #res.messages)
  end
  return client
end

-- SEP-2243 x-mcp-header: list the tools (the library learns their header bindings), then make
-- the calls the runner gives in the context; the library adds the Mcp-Param-* headers.
scenarios["http-custom-headers"] = function()
  local client = connect()
  local _, tools = list_tools(client)
  for _, c in ipairs(context.toolCalls or {}) do
    need(tools[c.name], c.name)
    call(client, c.name, c.arguments)
  end
  return client
end

-- SEP-2243: the tools whose x-mcp-header annotations are invalid are dropped from the listing
-- (and reported to on_error); call every tool that is left.
scenarios["http-invalid-tool-headers"] = function()
  local client = connect({
    on_error = function(err) log("on_error: %s", tostring(err)) end,
  })
  local tools = list_tools(client)
  for _, t in ipairs(tools) do call(client, t.name, { region = "us-west1" }) end
  return client
end

-- The OAuth extensions for clients with no person present: the provider gets a token from the
-- authorization server the server's metadata names (mcp.auth.auth: discovery, then the
-- provider's grant), then the client connects with it.
local function machine_client(p, err)
  if not p then fail("provider", err) end
  local res, aerr = mcp.auth.auth(p, { server_url = server_url, protocol_version = protocol_version })
  if not res then fail("authorization", aerr) end
  local tokens = p:tokens()
  log("%s: %s token, scope %s", tostring(p), tostring(tokens.token_type), tostring(tokens.scope))
  local client = connect({ headers = { Authorization = "Bearer " .. tokens.access_token } })
  list_tools(client)
  return client
end

-- SEP-1046, client_secret_basic.
scenarios["auth/client-credentials-basic"] = function()
  return machine_client(mcp.auth.client_credentials_provider({
    client_id = context.client_id, client_secret = context.client_secret, issuer = runner_issuer() }))
end

-- SEP-1046, private_key_jwt: an ES256 client assertion signed with the PEM key of the context.
scenarios["auth/client-credentials-jwt"] = function()
  return machine_client(mcp.auth.client_credentials_provider({
    client_id = context.client_id, private_key = context.private_key_pem, alg = context.signing_algorithm,
    issuer = runner_issuer() }))
end

-- Workload identity federation: the JWT bearer grant with the workload's token.
scenarios["auth/wif-jwt-bearer"] = function()
  return machine_client(mcp.auth.workload_identity_provider({
    client_id = context.client_id, token = context.valid_jwt, issuer = runner_issuer() }))
end

-- SEP-990: the user's ID token for an ID-JAG at the IdP, then the JWT bearer grant.
local function enterprise()
  return machine_client(mcp.auth.enterprise_provider({
    client_id = context.client_id, client_secret = context.client_secret, issuer = runner_issuer(),
    idp = { token_endpoint = context.idp_token_endpoint, client_id = context.idp_client_id },
    id_token = function() return context.idp_id_token end,
  }))
end
-- DPoP (RFC 9449): the authorization code flow with a proof on every token request (and the
-- authorization server's nonce honoured); then the provider is the transport's auth_provider,
-- so every MCP POST carries a fresh proof and the resource server's nonce challenge is answered.
local function dpop_scenario()
  local p, err = mcp.auth.with_dpop(mcp.auth.headless_provider({
    redirect_url = "http://localhost:3000/callback", client_name = "lua-mcp-conformance", server_url = server_url }))
  if not p then fail("provider", err) end
  local res, aerr = mcp.auth.auth(p, { server_url = server_url, protocol_version = protocol_version })
  if not res then fail("authorization", aerr) end
  log("%s: %s token", tostring(p), tostring(p:tokens().token_type))
  local client = connect({ auth_provider = p })
  list_tools(client)
  return client
end
scenarios["auth/dpop"] = dpop_scenario
scenarios["auth/dpop-nonce"] = dpop_scenario

scenarios["auth/enterprise-managed-authorization"] = enterprise
scenarios["auth/cross-app-access-complete-flow"] = enterprise -- its name in the 0.1.x suites

-- Every other scenario (the 2026-07-28 ones): connect and list the tools. What fails is
-- reported and sets the exit status; the runner's checks say what was missing.
local function default_scenario()
  local client = connect()
  list_tools(client)
  return client
end

-- OAuth scenarios: the flow runs inside the transport on the first 401 (or 403
-- insufficient_scope); then list the tools and call the first one, so that scenarios that
-- gate tools/call on another scope (step-up) or move the authorization server between
-- requests (migration) see an authorized request of each kind.
local function auth_scenario()
  local client = connect({ auth_provider = auth_provider })
  local tools = list_tools(client)
  if tools[1] then call(client, tools[1].name, {}) end
  local _, err = client:list_tools()
  if err then fail("tools/list (again)", err) end
  return client
end

if not server_url or not server_url:match("^https?://") then
  io.stderr:write("usage: client.lua <server-url>  (MCP_CONFORMANCE_SCENARIO in the environment)\n")
  os.exit(2)
end
-- The context's names only: it holds secrets and keys (client_secret, private_key_pem, tokens).
local context_keys = {}
for k in pairs(context) do context_keys[#context_keys + 1] = k end
table.sort(context_keys)
log("server %s, protocol version %s%s", server_url, tostring(protocol_version),
  #context_keys > 0 and (", context " .. table.concat(context_keys, " ")) or "")

-- Scenarios where the right outcome is a refusal: the client must stop before it hands a code
-- or a token to the wrong party (RFC 8707 resource, RFC 9207 iss, RFC 8414 issuer), or stop
-- asking for more scope. The runner's checks say whether it stopped at the right point.
local REFUSALS = {
  ["auth/resource-mismatch"] = true, ["auth/iss-supported-missing"] = true, ["auth/iss-wrong-issuer"] = true,
  ["auth/iss-unexpected"] = true, ["auth/iss-normalized"] = true, ["auth/metadata-issuer-mismatch"] = true,
  ["auth/scope-retry-limit"] = true,
}
if REFUSALS[scenario] then
  local real_fail = fail
  fail = function(what, err)
    -- (scope-retry-limit: the 403s of a scope that is never granted; 0.1.16 ends the test with 410)
    if mcp.auth.is_oauth_error(err) or (type(err) == "table" and (err.status_code == 403 or err.status_code == 410)) then
      log("%s refused, as this scenario requires: %s", what, tostring(err))
      log("done")
      os.exit(0)
    end
    real_fail(what, err)
  end
end

local client = (scenarios[scenario] or (auth_provider and auth_scenario) or default_scenario)()
client:close()
log("done")
