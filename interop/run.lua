-- The differential interop suite (make interop; docs/INTEROP.md): every server of
-- interop/servers.lua is probed by lua-mcp (here, in process) and by the official TypeScript SDK
-- client (interop/ts_probe.mjs) with the same calls; both documents are normalised by the
-- server's rules and compared as canonical JSON (interop/compare.lua). Exit 1 when a difference no
-- rule explains, a probe failed, or a check says the pass would be vacuous: a call that did not
-- end as its server's list says, an era other than the documented one, an on_error report not
-- listed (or a listed one missing), a rule without a reason or that matched nothing, an --only
-- id that names no server.
--
--   lua5.4 interop/run.lua --prefix=DIR [--only=id,id] [--show=id] [--keep]
--
-- --show prints both normalised documents of that server; --keep leaves the scratch directories.
local mcp = require("mcp")
local canonical = require("mcp.util.canonical")
local compare = require("compare")
local json = require("mcp.json")
local servers = require("servers")

local opts = {}
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-([%w-]+)=(.*)$")
  if k then opts[k] = v elseif a:match("^%-%-[%w-]+$") then opts[a:sub(3)] = true end
end
local prefix = assert(opts.prefix, "interop/run.lua: --prefix=DIR (the npm prefix of interop/install.sh)")
local here = (arg[0]:match("^(.*)/[^/]*$") or ".")
local only = {}
for id in tostring(opts.only or ""):gmatch("[^,]+") do only[id] = true end
for id in pairs(only) do
  local known = false
  for _, s in ipairs(servers.servers) do known = known or s.id == id end
  if not known then
    io.stderr:write("interop/run.lua: --only names no server: " .. id .. "\n")
    os.exit(2)
  end
end

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function shell(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("*a")
  local ok, _, code = p:close()
  return out, ok == true or code == 0
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function subst(s, dir) return (tostring(s):gsub("{dir}", dir)) end

-- A copy of a call's arguments with "{dir}" replaced in every string.
local function deep_subst(v, dir)
  if type(v) == "string" then return subst(v, dir) end
  if type(v) ~= "table" then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = deep_subst(x, dir) end
  return setmetatable(c, getmetatable(v))
end

-- ---- the two probes ----------------------------------------------------------------------------

local function failure(err)
  return { error = { code = err and err.code or mcp.null, message = tostring(err and err.message or err) } }
end

-- Every page of a paginated list, following nextCursor page by page (the TS SDK's listX() walks
-- the pages itself); the page counts go to the report.
local function all(client, pages, method, with_cursor, field)
  local items, cursor, n = json.array(), nil, 0
  repeat
    local res, err = client[with_cursor](client, cursor)
    if not res then error(method .. ": " .. tostring(err), 0) end
    n = n + 1
    for _, item in ipairs(res[field] or {}) do items[#items + 1] = item end
    cursor = res.nextCursor
  until cursor == nil or cursor == mcp.null or n >= 1000
  pages[#pages + 1] = method .. " " .. n .. " pages"
  -- lua-mcp's own walk over the pages (list_all_*, with its repeated-cursor guard) must find the same
  local whole, err = client[with_cursor:gsub("^list_(.*)_with_cursor$", "list_all_%1")](client)
  if not whole then error(method .. " (list_all): " .. tostring(err), 0) end
  if canonical.encode(whole) ~= canonical.encode(items) then
    error(method .. ": list_all found " .. #whole .. " items, the page walk " .. #items, 0)
  end
  return items
end

local function call(client, c)
  local res, err
  if c.method == "tools/call" then
    res, err = client:call_tool(c.name, c.arguments or json.object())
  elseif c.method == "resources/read" then
    res, err = client:read_resource(c.uri)
  elseif c.method == "prompts/get" then
    res, err = client:get_prompt(c.name, c.arguments or json.object())
  else
    error("interop: unknown method " .. tostring(c.method))
  end
  if res == nil then return failure(err) end
  return { result = res }
end

-- lua-mcp's view of the server; also what the report needs (the time connect took, on_error).
local function lua_probe(spec)
  local reports = {}
  local t0 = mcp.core.now_ms()
  local client, err = mcp.create_stdio_client(spec.command, spec.args, {
    env = spec.env, cwd = spec.cwd, stderr = "discard", request_timeout_ms = 60000,
    protocol_discovery_startup_ms = spec.startup_ms,
    client_name = "lua-mcp-interop", client_version = "0.0.0",
    on_error = function(e) reports[#reports + 1] = tostring(e.message) end,
  })
  if not client then return nil, "connect: " .. tostring(err) end
  local info = { connect_ms = mcp.core.now_ms() - t0, reports = reports, pages = {} }
  local ok, doc = pcall(function()
    local init = client:initialize_result()
    local doc, pages = {}, info.pages
    doc.protocolVersion = client:protocol_version()
    doc.serverInfo = client:server_info()
    doc.capabilities = client:server_capabilities()
    doc.instructions = init.instructions == nil and json.null or init.instructions
    local caps = doc.capabilities
    if caps.tools then doc.tools = all(client, pages, "tools/list", "list_tools_with_cursor", "tools") end
    if caps.resources then
      doc.resources = all(client, pages, "resources/list", "list_resources_with_cursor", "resources")
      doc.resourceTemplates = all(client, pages, "resources/templates/list", "list_resource_templates_with_cursor",
        "resourceTemplates")
    end
    if caps.prompts then doc.prompts = all(client, pages, "prompts/list", "list_prompts_with_cursor", "prompts") end
    doc.calls = json.array()
    for i, c in ipairs(spec.calls) do doc.calls[i] = call(client, c) end
    return doc
  end)
  client:close()
  if not ok then return nil, tostring(doc) end
  -- through JSON, so both documents are the same kind of value
  return json.decode(json.encode(doc)), info
end

local function ts_probe(spec, dir)
  write(dir .. "/spec.json", json.encode(spec))
  local out, ok = shell(("node %s %s %s 2>%s"):format(sh_quote(here .. "/ts_probe.mjs"), sh_quote(prefix),
    sh_quote(dir .. "/spec.json"), sh_quote(dir .. "/ts_probe.stderr")))
  local doc = ok and json.decode(out) or nil
  if doc == nil then
    local f = io.open(dir .. "/ts_probe.stderr", "rb")
    return nil, (f and f:read("*a") or "") .. out
  end
  return doc
end

-- ---- the run -----------------------------------------------------------------------------------

local function spec_of(s, dir)
  local args = {}
  for i, a in ipairs(s.args or {}) do args[i] = subst(a, dir) end
  local env = { HOME = dir, PATH = os.getenv("PATH") or "/usr/bin:/bin" }
  for k, v in pairs(s.env or {}) do env[k] = subst(v, dir) end
  local calls = json.array()
  for i, c in ipairs(s.calls or {}) do
    calls[i] = { method = c.method, name = c.name, uri = c.uri,
                 arguments = c.arguments and deep_subst(c.arguments, dir) or json.object() }
  end
  local command = prefix .. "/node_modules/" .. (s.bin or s.node)
  if s.node then
    table.insert(args, 1, command)
    command = "node"
  end
  return { command = command, args = json.array(args), env = env, cwd = dir, calls = calls, startup_ms = s.startup_ms }
end

-- The checks that keep an agreement from being vacuous (interop/compare.lua); problems go to result.
local function check(s, rules, ldoc, tdoc, linfo)
  local problems = {}
  local function add(list) for _, p in ipairs(list) do problems[#problems + 1] = p end end
  for _, r in ipairs(rules) do problems[#problems + 1] = compare.bad_rule(r) end
  if ldoc.protocolVersion ~= s.era or tdoc.protocolVersion ~= s.era then
    problems[#problems + 1] = ("negotiated lua-mcp %s, TS SDK %s; servers.lua (and docs/INTEROP.md) say %s"):format(
      tostring(ldoc.protocolVersion), tostring(tdoc.protocolVersion), tostring(s.era))
  end
  add(compare.outcomes("lua-mcp", ldoc, s.calls or {}))
  add(compare.outcomes("TS SDK", tdoc, s.calls or {}))
  add(compare.reports(linfo.reports, s.reports or {}))
  for _, e in ipairs(s.expect_lua or {}) do
    local got = compare.get(ldoc, e.path)
    if got == nil or canonical.encode(got) ~= canonical.encode(e.value) then
      problems[#problems + 1] = ("lua-mcp's %s is %s, expected %s (%s)"):format(e.path,
        got == nil and "absent" or canonical.encode(got), canonical.encode(e.value), e.why)
    end
  end
  return problems
end

local function run_one(s)
  local dir = (shell("mktemp -d \"${TMPDIR:-/tmp}/lua-mcp-interop.XXXXXX\"")):gsub("%s+$", "")
  if s.setup then s.setup(dir) end
  local spec = spec_of(s, dir)
  local result = { server = s, dir = dir }
  local ldoc, linfo = lua_probe(spec)
  local tdoc, terr = ts_probe(spec, dir)
  if not ldoc then result.failed = "lua-mcp: " .. tostring(linfo) end
  if not tdoc then result.failed = (result.failed and result.failed .. "; " or "") .. "TS SDK: " .. tostring(terr) end
  if result.failed then return result end
  result.info, result.era, result.ts_era = linfo, ldoc.protocolVersion, tdoc.protocolVersion
  local rules = {}
  for _, r in ipairs(servers.common) do rules[#rules + 1] = r end
  for _, r in ipairs(s.rules or {}) do rules[#rules + 1] = r end
  result.problems = check(s, rules, ldoc, tdoc, linfo)
  local used_l, used_t = compare.normalise(ldoc, rules), compare.normalise(tdoc, rules)
  for _, r in ipairs(rules) do
    -- a rule that matches nothing is stale: it explains no difference any more
    if used_l[r] + used_t[r] == 0 then result.problems[#result.problems + 1] = "a rule that matched nothing: " .. r.path end
  end
  result.same, result.diffs = compare.compare(ldoc, tdoc, 20)
  result.counts = ("%d tools, %d resources, %d templates, %d prompts, %d calls"):format(#(ldoc.tools or {}),
    #(ldoc.resources or {}), #(ldoc.resourceTemplates or {}), #(ldoc.prompts or {}), #(ldoc.calls or {}))
  if opts.show == s.id then
    print("-- lua-mcp:\n" .. canonical.encode(ldoc) .. "\n-- TS SDK:\n" .. canonical.encode(tdoc))
  end
  if not opts.keep then os.execute("rm -rf " .. sh_quote(dir)) end
  return result
end

-- One server's lines of the report; returns whether it failed.
local function report(s, r)
  local head = ("%-20s %s@%s (%s)"):format(s.id, s.package, s.version, s.sdk)
  if r.failed then
    print("FAIL  " .. head .. "\n  " .. r.failed:gsub("\n", "\n  "))
    return true
  end
  local tag = not r.same and "DIFF" or #r.problems > 0 and "FAIL" or "ok  "
  print(("%s  %s\n  era: lua-mcp %s, TS SDK %s; lua-mcp connected in %d ms; %s; %d rules"):format(
    tag, head, tostring(r.era), tostring(r.ts_era), r.info.connect_ms, r.counts, #(s.rules or {}) + #servers.common))
  local paged = {}
  for _, p in ipairs(r.info.pages) do
    if not p:match(" 1 pages$") then paged[#paged + 1] = p end
  end
  if #paged > 0 then print("  paginated (lua-mcp): " .. table.concat(paged, ", ")) end
  for _, m in ipairs(r.info.reports) do print("  on_error: " .. m) end
  for _, p in ipairs(r.problems) do print("  check: " .. p) end
  for _, d in ipairs(r.diffs) do print(d) end
  return tag ~= "ok  "
end

local bad = 0
for _, s in ipairs(servers.servers) do
  if (next(only) == nil or only[s.id]) and report(s, run_one(s)) then bad = bad + 1 end
end
local total = 0
for _, s in ipairs(servers.servers) do if next(only) == nil or only[s.id] then total = total + 1 end end
-- the plain closing line CI counts
print(("interop: %d passed, %d failed"):format(total - bad, bad))
os.exit(bad == 0 and 0 or 1)
