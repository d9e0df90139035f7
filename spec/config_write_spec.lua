-- mcp.config.write: a server's enabled/disabled state saved back into its file, as text edited
-- at the entry (comments kept), atomically, with the file's mode; untrusted files refused.
local mcp = require("mcp")
local core = require("mcp.core")
local helper = require("helper")
local write = require("mcp.config.write")
local trust = require("mcp.config.trust")

local dir
local function path(name) return dir .. "/" .. name end
local function put(name, text)
  local fh = assert(io.open(path(name), "wb"))
  fh:write(text)
  fh:close()
  return path(name)
end
local function get(name)
  local fh = assert(io.open(path(name), "rb"))
  local text = fh:read("*a")
  fh:close()
  return text
end
local function load(p, opts)
  opts = opts or {}
  if opts.trusted == nil then opts.trusted = true end
  return assert(mcp.config.load(p, opts))
end

local MCPHUB = [[{
  // my servers
  "mcpServers": {
    "github": {
      "command": "npx", /* the official one */
      "args": ["-y", "@modelcontextprotocol/server-github"],
    },
    "fs": { "command": "fs-server", "disabled": true },
  },
  "nativeMCPServers": {},
}
]]

describe("mcp.config.write", function()
  before_each(function() dir = helper.tmpdir() end)
  after_each(helper.remove_tmpdirs)

  it("disables a server: a \"disabled\" key on its own line, indented, comments and commas kept", function()
    local p = put("servers.json", MCPHUB)
    assert.is_true(write.set_enabled(p, "github", false, { trusted = true }))
    local want = MCPHUB:gsub('"github": {\n', '"github": {\n      "disabled": true,\n', 1)
    assert.are.equal(want, get("servers.json"))
    assert.is_true(load(p).servers.github.disabled)
    assert.is_true(load(p).servers.fs.disabled)
  end)

  it("round-trips: enabled again, both servers", function()
    local p = put("servers.json", MCPHUB)
    assert.is_true(write.set_enabled(p, "github", false, { trusted = true }))
    assert.is_true(write.set_enabled(p, "github", true, { trusted = true }))
    assert.is_true(write.set_enabled(p, "fs", true, { trusted = true }))
    local cfg = load(p)
    assert.is_false(cfg.servers.github.disabled)
    assert.is_false(cfg.servers.fs.disabled)
    assert.truthy(get("servers.json"):find('"fs": { "command": "fs-server", "disabled": false }', 1, true))
    assert.truthy(get("servers.json"):find("/* the official one */", 1, true))
    assert.truthy(get("servers.json"):find("// my servers", 1, true))
  end)

  it("returns false and writes nothing when the entry already has that state", function()
    local p = put("servers.json", MCPHUB)
    assert.is_false(write.set_enabled(p, "github", true, { trusted = true }))
    assert.is_false(write.set_enabled(p, "fs", false, { trusted = true }))
    assert.are.equal(MCPHUB, get("servers.json"))
  end)

  it("an entry on one line gets the key on that line", function()
    local text = '{"servers": {"a": {"type": "stdio", "command": "x"}}}'
    local new = assert(write.edit(text, "a", false))
    assert.are.equal('{"servers": {"a": { "disabled": true,"type": "stdio", "command": "x"}}}', new)
  end)

  it("Zed's context_servers: \"enabled\": false", function()
    local text = '{\n  "context_servers": {\n    "z": {\n      "command": {"path": "zs", "args": []}\n    }\n  }\n}\n'
    local new = assert(write.edit(text, "z", false))
    assert.truthy(new:find('"z": {\n      "enabled": false,\n      "command"', 1, true))
    local cfg = assert(mcp.config.load(mcp.config.decode_jsonc(new)))
    assert.is_true(cfg.servers.z.disabled)
    assert.are.equal(text, (write.edit(new, "z", true):gsub('"enabled": true,\n      ', "")))
  end)

  it("an existing \"enabled\" key is the one changed", function()
    local new = assert(write.edit('{"mcpServers": {"a": {"command": "x", "enabled": true}}}', "a", false))
    assert.are.equal('{"mcpServers": {"a": {"command": "x", "enabled": false}}}', new)
  end)

  it("VS Code settings.json's mcp.servers", function()
    local text = '{ "editor.fontSize": 12, "mcp": { "servers": { "v": { "command": "x" } } } }'
    local new = assert(write.edit(text, "v", false))
    assert.are.equal('{ "editor.fontSize": 12, "mcp": { "servers": { "v": { "disabled": true, "command": "x" } } } }', new)
  end)

  it("keys and strings that look like the flag are left alone", function()
    local text = '{"mcpServers": {"a": {"command": "x", "args": ["\\"disabled\\": true"], "env": {"disabled": "true"}}}}'
    local new = assert(write.edit(text, "a", false))
    assert.are.equal('{"mcpServers": {"a": { "disabled": true,"command": "x", "args": ["\\"disabled\\": true"], "env": {"disabled": "true"}}}}', new)
  end)

  it("an unknown server or a file without servers is an error, nothing written", function()
    local p = put("servers.json", MCPHUB)
    local ok, err = write.set_enabled(p, "nosuch", false, { trusted = true })
    assert.is_nil(ok)
    assert.are.equal("config", err.kind)
    assert.truthy(err.message:find("no server named 'nosuch'", 1, true))
    assert.are.equal(MCPHUB, get("servers.json"))
    assert.is_nil((write.edit('{"other": {}}', "a", false)))
  end)

  it("keeps the file's mode and writes through a symbolic link", function()
    local p = put("servers.json", MCPHUB)
    core.run_program({ "chmod", "640", p })
    assert(core.run_program({ "ln", "-s", p, path("link.json") }))
    assert.is_true(write.set_enabled(path("link.json"), "github", false, { trusted = true }))
    assert.are.equal(416, core.file_mode(p)) -- 0640
    assert.truthy(get("servers.json"):find('"disabled": true,\n      "command": "npx"', 1, true))
    local r = core.run_program({ "test", "-L", path("link.json") })
    assert.are.equal(0, r.status, "still a link")
  end)

  it("a file outside the user's configuration is not written unless its server was trusted", function()
    local p = put("mcp.json", MCPHUB)
    local tdir = path("trust")
    local ok, err = write.set_enabled(p, "github", false, { trusted = false, trust_dir = tdir })
    assert.is_nil(ok)
    assert.are.equal("untrusted", err.kind)
    assert.are.equal(MCPHUB, get("mcp.json"))
    -- the trust prompt's remembered yes (for this content) allows it, and follows the new content
    assert(trust.remember(tdir, p, trust.hash(MCPHUB), "github"))
    assert.is_true(write.set_enabled(p, "github", false, { trusted = false, trust_dir = tdir }))
    assert.is_true(trust.remembered(tdir, p, trust.hash(get("mcp.json")), "github"))
    assert.is_false(trust.remembered(tdir, p, trust.hash(get("mcp.json")), "fs"))
    assert.is_true(write.set_enabled(p, "github", true, { trusted = false, trust_dir = tdir }))
  end)

  it("misuse raises", function()
    assert.has_error(function() write.set_enabled(nil, "a", true) end)
    assert.has_error(function() write.set_enabled("x", "a", "yes") end)
  end)
end)
