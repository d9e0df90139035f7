-- mcp.config: the mcpServers, VS Code and mcphub formats, JSON with comments, interpolation,
-- inputs, and an error naming the file, the server and the field for every bad value.
local mcp = require("mcp")
local helper = require("helper")

local tmp = os.tmpname()

local function write(text)
  helper.write_file(tmp, text)
  return tmp
end

-- These specs are about parsing: the file is trusted as the host's own (trust has its specs below).
local function load_text(text, opts)
  opts = opts or {}
  if opts.trusted == nil then opts.trusted = true end
  return mcp.config.load(write(text), opts)
end

describe("mcp.config.load", function()
  teardown(function() os.remove(tmp) end)

  describe("formats", function()
    it("reads the mcpServers format (Claude Desktop, Cursor) with stdio and remote servers", function()
      local cfg, err = load_text([[{
        "mcpServers": {
          "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                     "env": { "DEBUG": "1", "PORT": 8080, "VERBOSE": true, "UNSET_ME": null } },
          "remote": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer x" } },
          "legacy": { "type": "sse", "url": "http://127.0.0.1:9/sse" }
        }
      }]])
      assert.is_nil(err)
      assert.equals("mcpServers", cfg.format)
      assert.equals(tmp, cfg.file)
      assert.same({ "files", "legacy", "remote" }, cfg.order)
      local f = cfg.servers.files
      assert.equals("stdio", f.type)
      assert.equals("npx", f.command)
      assert.same({ "-y", "@modelcontextprotocol/server-filesystem", "/tmp" }, f.args)
      assert.same({ DEBUG = "1", PORT = "8080", VERBOSE = "true" }, f.env)
      assert.is_false(f.disabled)
      local r = cfg.servers.remote
      assert.equals("http", r.type)
      assert.is_true(r.type_inferred)
      assert.equals("https://mcp.example.com/mcp", r.url)
      assert.same({ Authorization = "Bearer x" }, r.headers)
      assert.equals("sse", cfg.servers.legacy.type)
    end)

    it("reads the VS Code format: servers, type, inputs asked through the handler once per id", function()
      local asked = {}
      local cfg, err = load_text([[{
        // VS Code .vscode/mcp.json
        "inputs": [
          { "type": "promptString", "id": "api-key", "description": "API key", "password": true },
          { "type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"], "default": "eu" }
        ],
        "servers": {
          "github": { "type": "http", "url": "https://api.example.com/mcp",
                      "headers": { "Authorization": "Bearer ${input:api-key}" } },
          "local": { "type": "stdio", "command": "node", "args": ["server.js", "--region=${input:region}"],
                     "env": { "KEY": "${input:api-key}" }, "cwd": "/srv" },
        },
      }]], {
        on_input = function(input)
          asked[#asked + 1] = input.id
          if input.id == "api-key" then
            assert.is_true(input.password)
            assert.equals("API key", input.description)
            return "sekret"
          end
          assert.equals("pickString", input.type)
          assert.same({ "eu", "us" }, input.options)
          assert.equals("eu", input.default)
          return "us"
        end,
      })
      assert.is_nil(err)
      assert.equals("vscode", cfg.format)
      assert.equals("Bearer sekret", cfg.servers.github.headers.Authorization)
      assert.same({ "server.js", "--region=us" }, cfg.servers["local"].args)
      assert.equals("sekret", cfg.servers["local"].env.KEY)
      assert.equals("/srv", cfg.servers["local"].cwd)
      table.sort(asked)
      assert.same({ "api-key", "region" }, asked)
    end)

    it("reads VS Code settings.json's mcp section", function()
      local cfg = assert(mcp.config.load({ mcp = { servers = { a = { command = "x" } } } }))
      assert.equals("vscode", cfg.format)
      assert.equals("x", cfg.servers.a.command)
    end)

    it("reads mcphub's servers.json: disabled, disabled_tools, autoApprove, nativeMCPServers", function()
      local cfg, err = load_text([[{
        "mcpServers": {
          "fetch": { "command": "uvx", "args": ["mcp-server-fetch"], "autoApprove": ["fetch"],
                     "disabled_tools": ["dangerous"] },
          "off": { "command": "never-started", "disabled": true, "env": { "T": "${env:LUA_MCP_SURELY_UNSET}" } },
          "all": { "command": "x", "autoApprove": true },
          "custom": { "url": "http://127.0.0.1:1/mcp", "custom_instructions": { "text": "be nice" } }
        },
        "nativeMCPServers": { "neovim": { "disabled": false, "autoApprove": ["read_file"] } }
      }]])
      assert.is_nil(err)
      assert.equals("mcphub", cfg.format)
      assert.same({ "fetch" }, cfg.servers.fetch.auto_approve)
      assert.same({ "dangerous" }, cfg.servers.fetch.disabled_tools)
      assert.is_true(cfg.servers.off.disabled)
      assert.is_nil(cfg.servers.off.env) -- a disabled server is not interpolated
      assert.is_true(cfg.servers.all.auto_approve)
      assert.equals("be nice", cfg.servers.custom.raw.custom_instructions.text)
      assert.same({ "read_file" }, cfg.native.neovim.autoApprove)
    end)

    it("accepts the other spellings: auto_approve, alwaysAllow, disabledTools, enabled=false, streamable-http", function()
      local cfg = assert(mcp.config.load({ mcpServers = {
        a = { command = "x", auto_approve = { "t" }, disabledTools = { "u" } },
        b = { command = "x", alwaysAllow = { "v" }, enabled = false },
        c = { type = "streamable-http", url = "http://127.0.0.1:1/mcp" },
        d = { command = "x", timeout = 5 },
      } }))
      assert.same({ "t" }, cfg.servers.a.auto_approve)
      assert.same({ "u" }, cfg.servers.a.disabled_tools)
      assert.same({ "v" }, cfg.servers.b.auto_approve)
      assert.is_true(cfg.servers.b.disabled)
      assert.equals("http", cfg.servers.c.type)
      assert.equals(5000, cfg.servers.d.timeout_ms)
    end)

    it("passes OAuth settings through, interpolated", function()
      local cfg = assert(mcp.config.load({ mcpServers = {
        r = { url = "https://x.example/mcp", oauth = { client_id = "${ID}", scopes = { "read" }, callback_port = 8765 } },
      } }, { env = { ID = "abc" } }))
      assert.same({ client_id = "abc", scopes = { "read" }, callback_port = 8765 }, cfg.servers.r.oauth)
    end)

    it("loads examples/hub.jsonc (the README's config file)", function()
      local cfg = assert(mcp.config.load(helper.root .. "/examples/hub.jsonc", { env = { USER = "u" }, trusted = true }))
      assert.same({ "example", "remote", "test" }, cfg.order)
      assert.same({ "echo" }, cfg.servers.example.auto_approve)
      assert.same({ "spec/fixtures/test_server.lua", "--name=u" }, cfg.servers.test.args)
      assert.same({ "die", "hang" }, cfg.servers.test.disabled_tools)
      assert.is_true(cfg.servers.remote.disabled)
    end)

    it("returns an already loaded config as is", function()
      local cfg = assert(mcp.config.load({ mcpServers = { a = { command = "x" } } }))
      assert.equals(cfg, mcp.config.load(cfg))
    end)
  end)

  describe("JSON with comments", function()
    it("accepts // and /* */ comments and trailing commas, and keeps them inside strings", function()
      local cfg, err = load_text([[
      /* header
         comment */
      {
        "mcpServers": { // servers
          "a": { "command": "echo", "args": ["http://x//y", "/* not a comment */", "a,]", ], },
        },
      }
      ]])
      assert.is_nil(err)
      assert.same({ "http://x//y", "/* not a comment */", "a,]" }, cfg.servers.a.args)
    end)

    it("reports a syntax error with the file, line and column", function()
      local _, err = load_text('{\n  "mcpServers": {\n    "a": { "command": x }\n  }\n}')
      assert.equals("config", err.kind)
      assert.equals(tmp, err.file)
      assert.truthy(helper.has(err.message, tmp .. ": invalid JSON"), err.message)
      assert.truthy(helper.has(err.message, "line 3, column 23"), err.message)
    end)

    it("reports an unterminated comment, an empty file and a missing file", function()
      local _, e1 = load_text('{ /* oops ')
      assert.truthy(helper.has(e1.message, "unterminated /* comment"), e1.message)
      local _, e2 = load_text("  // nothing\n")
      assert.truthy(helper.has(e2.message, "the file is empty"), e2.message)
      local _, e3 = mcp.config.load("/nonexistent/lua-mcp/mcp.json")
      assert.equals("config", e3.kind)
      assert.truthy(helper.has(e3.message, "/nonexistent/lua-mcp/mcp.json: cannot read the file"), e3.message)
    end)

    it("decode_jsonc is usable on its own", function()
      local v = mcp.config.decode_jsonc('[1, 2, /* three */ 3,]')
      assert.same({ 1, 2, 3 }, { v[1], v[2], v[3] })
      assert.equals(3, #v)
    end)
  end)

  describe("interpolation", function()
    local env = { HOME = "/home/u", TOKEN = "t0k", EMPTY = "" }

    it("fills ${env:NAME}, ${NAME}, ${NAME:-default} and opts.variables everywhere", function()
      local cfg = assert(mcp.config.load({ mcpServers = {
        s = { command = "${HOME}/bin/srv", args = { "--token=${env:TOKEN}", "${MISSING:-fallback}", "${EMPTY:-d}", "${workspaceFolder}/x", "${env:NOPE:-dflt}" },
              env = { A = "${env:HOME}" }, cwd = "${env:HOME}/work" },
        h = { url = "https://${HOST:-example.com}/mcp", headers = { Authorization = "Bearer ${TOKEN}" } },
      } }, { env = env, variables = { workspaceFolder = "/ws" } }))
      local s = cfg.servers.s
      assert.equals("/home/u/bin/srv", s.command)
      assert.same({ "--token=t0k", "fallback", "d", "/ws/x", "dflt" }, s.args)
      assert.same({ A = "/home/u" }, s.env)
      assert.equals("/home/u/work", s.cwd)
      assert.equals("https://example.com/mcp", cfg.servers.h.url)
      assert.equals("Bearer t0k", cfg.servers.h.headers.Authorization)
    end)

    it("uses os.getenv by default", function()
      local home = os.getenv("HOME")
      if not home then pending("HOME is not set"); return end
      local cfg = assert(mcp.config.load({ mcpServers = { s = { command = "x", args = { "${env:HOME}" } } } }))
      assert.same({ home }, cfg.servers.s.args)
    end)

    it("an unset variable is an error naming it, the server and the field (or empty with missing_env)", function()
      local doc = { mcpServers = { s = { command = "x", env = { K = "${env:NOPE_NOT_SET}" } } } }
      local _, err = mcp.config.load(doc, { env = {}, file = "my.json" })
      assert.equals("config", err.kind)
      assert.equals("s", err.server)
      assert.equals("env.K", err.field)
      assert.equals("my.json: server 's': field 'env.K': environment variable NOPE_NOT_SET is not set "
        .. "(use ${NOPE_NOT_SET:-default} for a default)", err.message)
      local cfg = assert(mcp.config.load(doc, { env = {}, missing_env = "empty" }))
      assert.equals("", cfg.servers.s.env.K)
    end)

    it("an unknown ${...} is an error", function()
      local _, err = mcp.config.load({ mcpServers = { s = { command = "${shell: pass show x}" } } })
      assert.equals("command", err.field)
      assert.truthy(helper.has(err.message, "unknown variable ${shell: pass show x}"), err.message)
    end)

    it("${input:id} without a handler, a refused input and preset opts.inputs", function()
      local doc = { mcpServers = { s = { command = "x", args = { "${input:key}" } } } }
      local _, e1 = mcp.config.load(doc)
      assert.equals("args[1]", e1.field)
      assert.truthy(helper.has(e1.message, "${input:key} needs a value"), e1.message)
      local _, e2 = mcp.config.load(doc, { on_input = function() return nil, "user pressed escape" end })
      assert.truthy(helper.has(e2.message, "input 'key' was not given: user pressed escape"), e2.message)
      local cfg = assert(mcp.config.load(doc, { inputs = { key = "preset" } }))
      assert.same({ "preset" }, cfg.servers.s.args)
      local seen
      assert(mcp.config.load(doc, { on_input = function(i) seen = i; return "v" end }))
      assert.equals("key", seen.id)
      assert.equals("s", seen.server)
    end)

    it("opts.only interpolates just the named servers", function()
      local doc = { mcpServers = { a = { command = "${A}" }, b = { command = "${UNSET_B}" } } }
      local cfg = assert(mcp.config.load(doc, { env = { A = "x" }, only = { "a" } }))
      assert.equals("x", cfg.servers.a.command)
      assert.is_true(cfg.servers.b.skipped)
      assert.is_nil(cfg.servers.b.command)
      local _, err = mcp.config.load(doc, { env = { A = "x" }, only = { "b" } })
      assert.equals("b", err.server)
      local _, err2 = mcp.config.load({ mcpServers = { c = {} } }, { only = {} })
      assert.equals("c", err2.server) -- still checked
    end)

    it("opts.keep_going keeps one server's problem to that server; the file's own problems still fail", function()
      local doc = { mcpServers = { a = { command = "${A}" }, b = { command = "${UNSET_B}" }, c = { url = "ftp://x" },
        d = 5 } }
      local cfg = assert(mcp.config.load(doc, { env = { A = "x" }, keep_going = true }))
      assert.same({ "a", "b", "c", "d" }, cfg.order)
      assert.equals("x", cfg.servers.a.command)
      assert.is_nil(cfg.servers.a.error)
      assert.equals("config", cfg.servers.b.error.kind)
      assert.equals("command", cfg.servers.b.error.field)
      assert.truthy(cfg.servers.b.error.message:find("UNSET_B is not set", 1, true), cfg.servers.b.error.message)
      assert.equals("${UNSET_B}", cfg.servers.b.raw.command)
      assert.equals("url", cfg.servers.c.error.field)
      assert.equals("d", cfg.servers.d.error.server)
      assert.equals(5, cfg.servers.d.raw)
      assert.same({ "b", "c", "d" }, (function()
        local n = {}
        for k in pairs(cfg.errors) do n[#n + 1] = k end
        table.sort(n)
        return n
      end)())
      assert.equals(cfg.servers.b.error, cfg.errors.b)
      -- without it, the first problem fails the load
      local none, err = mcp.config.load(doc, { env = { A = "x" } })
      assert.is_nil(none)
      assert.equals("b", err.server)
      -- a problem of the file itself is not a server's
      local _, ferr = mcp.config.load({ servers = 5 }, { keep_going = true })
      assert.equals("servers", ferr.field)
    end)

    it("reads VS Code's envFile (relative to the config file), env entries winning", function()
      local envfile = tmp .. ".env"
      helper.write_file(envfile, "# comment\nexport A=1\nB = \"two words\"\nC='3'\n\n")
      local name = envfile:match("[^/]+$")
      local cfg, err = load_text(([[{"servers": {"s": {"command": "x", "envFile": "%s", "env": {"C": "own"}}}}]]):format(name))
      os.remove(envfile)
      assert.is_nil(err)
      assert.same({ A = "1", B = "two words", C = "own" }, cfg.servers.s.env)
    end)
  end)

  describe("tty_input", function()
    it("asks on the given files, offering defaults and numbered choices", function()
      local lines = { "", "2", "typed" }
      local out = { buf = {} }
      function out:write(...) for _, s in ipairs({ ... }) do self.buf[#self.buf + 1] = s end end
      function out:flush() end
      local h = mcp.config.tty_input({ input = function() return table.remove(lines, 1) end, output = out })
      assert.equals("d", h({ id = "a", description = "A", default = "d" }))
      assert.equals("us", h({ id = "r", type = "pickString", options = { "eu", "us" } }))
      assert.equals("typed", h({ id = "k", server = "srv" }))
      local shown = table.concat(out.buf)
      assert.truthy(helper.has(shown, "A [d]: "), shown)
      assert.truthy(helper.has(shown, "  2) us\n"), shown)
      assert.truthy(helper.has(shown, "k (for srv): "), shown)
      assert.same({ nil, "no answer (end of input)" }, { h({ id = "z" }) })
    end)

    it("nvim_input refuses outside Neovim", function()
      assert.same({ nil, "mcp.config.nvim_input works only inside Neovim" }, { mcp.config.nvim_input()({ id = "x" }) })
    end)
  end)

  describe("errors name the file, the server and the field", function()
    local cases = {
      { '[1]', nil, nil, "the top level must be a JSON object, got an array" },
      { '{"other": {}}', nil, nil, "no 'mcpServers' (Claude, Cursor, mcphub), 'servers' (VS Code) or 'context_servers' (Zed) object" },
      { '{"mcpServers": []}', nil, "mcpServers", "must be an object {name: server}, got an array" },
      { '{"mcpServers": {"a": "npx x"}}', "a", nil, "must be an object, got a string" },
      { '{"mcpServers": {"a": {}}}', "a", nil, "needs 'command' (a stdio server) or 'url' (an http or sse server)" },
      { '{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}', "a", nil, "has both 'command' and 'url': give one" },
      { '{"mcpServers": {"a": {"type": "ws", "url": "http://h/"}}}', "a", "type", 'must be "stdio", "http" or "sse", got "ws"' },
      { '{"mcpServers": {"a": {"type": "http", "command": "x"}}}', "a", "url", "is required for an http server" },
      { '{"mcpServers": {"a": {"type": "stdio", "url": "http://h/"}}}', "a", "command", "is required for a stdio server" },
      { '{"mcpServers": {"a": {"command": ""}}}', "a", "command", "is empty" },
      { '{"mcpServers": {"a": {"command": ["x"]}}}', "a", "command", "must be a string, got an array" },
      { '{"mcpServers": {"a": {"command": "x", "args": "-v"}}}', "a", "args", "must be an array of strings, got a string" },
      { '{"mcpServers": {"a": {"command": "x", "args": ["-v", {}]}}}', "a", "args[2]", "must be a string, got an object" },
      { '{"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}', "a", "env", "must be an object {NAME: value}, got an array" },
      { '{"mcpServers": {"a": {"command": "x", "env": {"A": [1]}}}}', "a", "env.A", "must be a string, number or boolean, got an array" },
      { '{"mcpServers": {"a": {"command": "x", "env": {"A=B": "1"}}}}', "a", "env.A=B", "is not a valid name" },
      { '{"mcpServers": {"a": {"command": "x", "cwd": 3.5e0}}}', nil, nil, nil }, -- a number is accepted as a string
      { '{"mcpServers": {"a": {"url": "ftp://h/"}}}', "a", "url", "must be an http:// or https:// URL, got ftp://h/" },
      { '{"mcpServers": {"a": {"url": "http://h/", "headers": {"Bad Name": "v"}}}}', "a", "headers.Bad Name", "is not a valid name" },
      { '{"mcpServers": {"a": {"url": "http://h/", "headers": {"X": {}}}}}', "a", "headers.X", "must be a string, number or boolean, got an object" },
      { '{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}', "a", "disabled", "must be true or false, got a string" },
      { '{"mcpServers": {"a": {"command": "x", "disabled_tools": "t"}}}', "a", "disabled_tools", "must be an array of strings, got a string" },
      { '{"mcpServers": {"a": {"command": "x", "autoApprove": "t"}}}', "a", "autoApprove", "must be an array of strings, got a string" },
      { '{"mcpServers": {"a": {"url": "http://h/", "oauth": "x"}}}', "a", "oauth", "must be an object, got a string" },
      { '{"mcpServers": {"a": {"command": "x", "timeout": -1}}}', "a", "timeout", "must be a positive number" },
      { '{"servers": {}, "inputs": {"a": 1}}', nil, "inputs", "must be an array, got an object" },
      { '{"servers": {}, "inputs": [{"type": "promptString"}]}', nil, "inputs[1].id", "must be a non-empty string" },
      { '{"servers": {}, "inputs": [{"id": "a", "type": "secret"}]}', nil, "inputs[1].type", 'must be "promptString" or "pickString", got secret' },
      { '{"servers": {}, "inputs": [{"id": "a", "type": "pickString"}]}', nil, "inputs[1].options", "must be an array for a pickString input" },
      { '{"servers": {"s": {"command": "x", "envFile": "/nonexistent/.env"}}}', "s", "envFile", "cannot read /nonexistent/.env" },
    }
    for i, c in ipairs(cases) do
      local text, server, field, msg = c[1], c[2], c[3], c[4]
      it(("case %d: %s"):format(i, msg or "accepted"), function()
        local cfg, err = load_text(text)
        if msg == nil then
          assert.is_nil(err)
          assert.equals("3.5", cfg.servers.a.cwd)
          return
        end
        assert.is_nil(cfg)
        assert.equals("config", err.kind)
        assert.equals(tmp, err.file)
        assert.equals(server, err.server)
        assert.equals(field, err.field)
        local prefix = tmp .. ": " .. (server and ("server '" .. server .. "': ") or "")
          .. (field and ("field '" .. field .. "': ") or "")
        assert.equals(prefix, err.message:sub(1, #prefix))
        assert.truthy(helper.has(err.message, msg), err.message)
        assert.truthy(helper.has(tostring(err), "[config]"))
      end)
    end
  end)

  it("misuse raises", function()
    assert.has_error(function() mcp.config.load(42) end, "mcp.config.load: a file path or a table expected")
    assert.has_error(function() mcp.config.load({}, { on_input = "x" }) end, "mcp.config.load: opts.on_input must be a function")
  end)
end)
