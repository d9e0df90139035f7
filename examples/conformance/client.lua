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

--- Connect to the scenario's server over streamable HTTP with the version the runner asks for.
local function connect(opts)
  opts = opts or {}
  opts.client_name = "lua-mcp-conformance"
  opts.client_version = mcp.VERSION
  opts.protocol_version = protocol_version
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

-- Every other scenario (OAuth, the 2026-07-28 ones): connect and list the tools. What fails is
-- reported and sets the exit status; the runner's checks say what was missing.
local function default_scenario()
  local client = connect()
  list_tools(client)
  return client
end

if not server_url or not server_url:match("^https?://") then
  io.stderr:write("usage: client.lua <server-url>  (MCP_CONFORMANCE_SCENARIO in the environment)\n")
  os.exit(2)
end
log("server %s, protocol version %s%s", server_url, tostring(protocol_version),
  next(context) and (", context " .. mcp.json.encode(context)) or "")

local client = (scenarios[scenario] or default_scenario)()
client:close()
log("done")
