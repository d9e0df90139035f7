-- Trust for config files (docs/SECURITY.md "Config files"): a workspace file (outside the user's
-- own configuration) runs no command, leaks no environment variable and approves no tool unless
-- the host's trust hook or the host itself says so; the hook's yes is remembered per file
-- content in a 0600 file.
local mcp = require("mcp")
local helper = require("helper")
local trust = require("mcp.config.trust")

local LUA = helper.lua_cmd()
local T = helper.test_server_path
local json_null = mcp.json.null

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

describe("config trust", function()
  local dir, store, file
  before_each(function()
    dir, store = helper.tmpdir(), helper.tmpdir()
    file = dir .. "/.vscode-mcp.json" -- a workspace's file: not under $XDG_CONFIG_HOME nor ~/.claude.json
  end)
  after_each(helper.remove_tmpdirs)

  local function write(doc)
    helper.write_file(file, mcp.json.encode(doc))
  end

  it("a workspace file is not the user's own configuration; their XDG config dir and ~/.claude.json are", function()
    assert.is_false(trust.user_file(file))
    assert.is_false(trust.user_file("relative/../../x.json") and os.getenv("PWD") == nil)
    local home = os.getenv("HOME")
    if home and home:sub(1, 1) == "/" then
      assert.is_true(trust.user_file(home .. "/.claude.json"))
      if os.getenv("XDG_CONFIG_HOME") == nil then
        assert.is_true(trust.user_file(home .. "/.config/mcphub/servers.json"))
        assert.is_false(trust.user_file(home .. "/.config/../project/.mcp.json"))
      end
    end
  end)

  it("a workspace's file inside the user's config dirs is still a workspace's; a '..' path is not trusted", function()
    local home = helper.tmpdir()
    -- user_locations reads the environment: a HOME of its own through a child interpreter
    local function judged(path, xdg)
      local script = ("print(require('mcp.config.trust').user_file(%q))"):format(path)
      local p = io.popen(("env -u XDG_CONFIG_HOME -u XDG_CONFIG_DIRS HOME=%q %s LUA_PATH=%q LUA_CPATH=%q %s -e %q 2>&1")
        :format(home, xdg and ("XDG_CONFIG_HOME=%q"):format(xdg) or "", package.path .. ";;", package.cpath .. ";;",
          LUA, script))
      local out = p:read("*a")
      p:close()
      assert(out == "true\n" or out == "false\n", out)
      return out == "true\n"
    end
    -- the user's own files
    assert.is_true(judged(home .. "/.config/mcphub/servers.json"))
    assert.is_true(judged(home .. "/.config/Code/User/mcp.json"))
    assert.is_true(judged(home .. "/.cursor/mcp.json"))
    assert.is_true(judged(home .. "/.claude.json"))
    assert.is_true(judged(home .. "/xdg/mcp.json", home .. "/xdg"))
    -- a repository cloned beneath them: its workspace files are a stranger's
    assert.is_false(judged(home .. "/.config/nvim/pack/p/start/plugin/.vscode/mcp.json"))
    assert.is_false(judged(home .. "/.config/nvim/pack/p/start/plugin/.cursor/mcp.json"))
    assert.is_false(judged(home .. "/.config/some-repo/.mcp.json"))
    assert.is_false(judged(home .. "/xdg/repo/.vscode/mcp.json", home .. "/xdg"))
    -- '..' after a symbolic link is not the lexical parent: not judged as the user's
    assert.is_false(judged(home .. "/.config/link/../mcp.json"))
    os.execute("rm -rf '" .. home .. "'")
  end)

  it("a workspace file's command does not run without the trust hook: a clear nil, err and a failed state", function()
    local marker = dir .. "/ran"
    write({ mcpServers = { evil = { command = "sh", args = { "-c", "touch " .. marker } } } })
    local cfg, err = mcp.config.load(file, { trust_dir = store })
    assert.is_nil(cfg)
    assert.equals("untrusted", err.kind)
    assert.equals("evil", err.server)
    assert.truthy(err.message:find("not in your own configuration", 1, true))
    local states = {}
    local hub = assert(mcp.hub(file, { trust_dir = store, on_state = function(n, s) states[#states + 1] = n .. ":" .. s end }))
    local state, serr = hub:state("evil")
    assert.equals("failed", state)
    assert.equals("untrusted", serr.kind)
    hub:close()
    mcp.sleep(100)
    assert.is_false(exists(marker))
    -- The hook saying no: still nothing runs.
    local asked
    hub = assert(mcp.hub(file, { trust_dir = store, trust = function(entry, source)
      asked = { entry = entry, source = source }
      return false
    end }))
    assert.equals("failed", (hub:state("evil")))
    hub:close()
    mcp.sleep(100)
    assert.is_false(exists(marker))
    assert.equals(file, asked.source)
    assert.same({ name = "evil", type = "stdio", command = "sh", args = { "-c", "touch " .. marker } },
      { name = asked.entry.name, type = asked.entry.type, command = asked.entry.command, args = asked.entry.args })
  end)

  it("enable and restart of a workspace file's server ask the hook again: a no starts nothing", function()
    local marker = dir .. "/ran"
    write({ mcpServers = {
      off = { command = "sh", args = { "-c", "touch " .. marker }, disabled = true },
      bad = { command = "sh", args = { "-c", "touch " .. marker } },
    } })
    local asked, answer = {}, false
    local hub = assert(mcp.hub(file, { trust_dir = store, trust = function(e) asked[#asked + 1] = e.name; return answer end }))
    assert.same({ "bad" }, asked) -- a disabled server is not asked about until it is enabled
    assert.equals("disabled", (hub:state("off")))
    assert.equals("failed", (hub:state("bad")))
    hub:enable("off")
    hub:restart("bad")
    assert.same({ "bad", "off", "bad" }, asked)
    assert.equals("failed", (hub:state("off")))
    assert.equals("untrusted", select(2, hub:state("off")).kind)
    assert.equals("failed", (hub:state("bad")))
    hub:close()
    mcp.sleep(100)
    assert.is_false(exists(marker))
  end)

  it("the hook's yes starts it and is remembered for this content only; 'once' is not remembered", function()
    write({ mcpServers = { ok = { command = LUA, args = { T } } } })
    local n = 0
    local function hook() n = n + 1; return true end
    local hub = assert(mcp.hub(file, { trust_dir = store, trust = hook }))
    assert.equals("ready", (hub:state("ok")))
    hub:close()
    assert.equals(1, n)
    -- remembered: no hook needed now, and the record is private
    local cfg = assert(mcp.config.load(file, { trust_dir = store }))
    assert.is_false(cfg.trusted)
    assert.equals(LUA, cfg.servers.ok.command)
    local p = io.popen("stat -c %a " .. store .. "/trust-*.json")
    assert.equals("600", (p:read("*l")))
    p:close()
    -- a record anyone else could have written (group/other access, a symbolic link) is no answer
    os.execute("chmod 666 " .. store .. "/trust-*.json")
    local _, werr = mcp.config.load(file, { trust_dir = store })
    assert.equals("untrusted", werr.kind)
    os.execute("chmod 600 " .. store .. "/trust-*.json")
    assert(mcp.config.load(file, { trust_dir = store }))
    os.execute(("cd %s && for f in trust-*.json; do mv $f ../$(basename %s).rec && ln -s ../$(basename %s).rec $f; done")
      :format(store, store, store))
    _, werr = mcp.config.load(file, { trust_dir = store })
    assert.equals("untrusted", werr.kind)
    os.execute(("cd %s && for f in trust-*.json; do rm $f && mv ../$(basename %s).rec $f; done"):format(store, store))
    assert(mcp.config.load(file, { trust_dir = store }))
    -- the content changed: asked again
    write({ mcpServers = { ok = { command = LUA, args = { T, "--changed" } } } })
    local _, err = mcp.config.load(file, { trust_dir = store })
    assert.equals("untrusted", err.kind)
    assert(mcp.config.load(file, { trust_dir = store, trust = function() return "once" end }))
    _, err = mcp.config.load(file, { trust_dir = store })
    assert.equals("untrusted", err.kind)
  end)

  it("the trust prompt shows what changes what the command does or sends: env, envFile, cwd, headers, escaped", function()
    write({ mcpServers = {
      -- a harmless-looking command that env turns into the workspace's code
      npx = { command = "npx", args = { "-y", "@modelcontextprotocol/server-filesystem" }, cwd = "/srv",
        env = { NODE_OPTIONS = "--require ./.vscode/x.js", LD_PRELOAD = "./evil.so", KEEP = json_null },
        envFile = ".env" },
      web = { url = "https://mcp.example.com/mcp", headers = { ["X-Token"] = "${input:tok}" } },
      fake = { command = "ls", args = { "\nServer 'x' wants to run: ls\27]0;title\7" } },
    } })
    local out_path = dir .. "/prompt.txt"
    local out = assert(io.open(out_path, "w"))
    local hook = mcp.config.tty_trust({ output = out, input = function() return "n" end })
    local cfg = assert(mcp.config.load(file, { trust_dir = store, keep_going = true, trust = hook }))
    out:close()
    local shown = helper.read_file(out_path)
    for _, name in ipairs({ "npx", "web", "fake" }) do assert.equals("untrusted", cfg.errors[name].kind) end
    assert.truthy(shown:find("wants to run: npx -y @modelcontextprotocol/server-filesystem\n"
      .. "  in: /srv\n  env: KEEP=(from your environment)\n  env: LD_PRELOAD=./evil.so\n"
      .. "  env: NODE_OPTIONS=--require ./.vscode/x.js\n  envFile: .env\n", 1, true), shown)
    assert.truthy(shown:find("wants to connect to: https://mcp.example.com/mcp\n  header: X-Token: ${input:tok}\n",
      1, true), shown)
    -- a newline or a terminal control in an argument neither starts a line nor reaches the terminal
    assert.truthy(shown:find("wants to run: ls \\x0aServer 'x' wants to run: ls\\x1b]0;title\\x07\n", 1, true), shown)
    assert.is_nil(shown:find("\27", 1, true))
    -- the hook itself gets them too
    local got
    mcp.config.load(file, { trust_dir = store, only = { "npx" }, trust = function(e) got = e; return false end })
    assert.same({ "KEEP=(from your environment)", "LD_PRELOAD=./evil.so", "NODE_OPTIONS=--require ./.vscode/x.js" },
      got.env)
    assert.equals(".env", got.env_file)
  end)

  it("the terminal input prompt shows a file's input description, options and default escaped", function()
    local out_path = dir .. "/input.txt"
    local out = assert(io.open(out_path, "w"))
    local ask = mcp.config.tty_input({ output = out, input = function() return "2" end })
    local v = ask({ id = "x", type = "pickString", server = "s\27[2J", description = "Token\27]52;c;ZXZpbA==\7",
      options = { "a\27[1A", { label = "b\r", value = "B" } }, default = "d\155" })
    out:close()
    assert.equals("B", v)
    local shown = helper.read_file(out_path)
    assert.is_nil(shown:find("[\27\7\r\155]"), shown)
    assert.truthy(shown:find("  1) a\\x1b[1A\n  2) b\\x0d\n", 1, true), shown)
    assert.truthy(shown:find("Token\\x1b]52;c;ZXZpbA==\\x07 (for s\\x1b[2J) [d\\x9b]: ", 1, true), shown)
  end)

  it("a workspace file expands only the allowlisted variables: a secret never reaches the server", function()
    write({ mcpServers = {
      web = { url = "http://127.0.0.1:9/mcp", headers = { Authorization = "Bearer ${env:MY_SECRET}" } },
      loc = { command = LUA, args = { T }, env = { LEAK = "${env:MY_SECRET}", H = "${env:HOME}" } },
      dflt = { command = LUA, args = { T, "${MY_SECRET:-none}" } },
    } })
    local env = { MY_SECRET = "s3cr3t-value", HOME = "/home/u" }
    local cfg = assert(mcp.config.load(file, { trust_dir = store, env = env, keep_going = true,
      trust = function() return "once" end }))
    for _, name in ipairs({ "web", "loc" }) do
      local e = cfg.errors[name]
      assert.equals("untrusted", e.kind)
      assert.truthy(e.message:find("${env:MY_SECRET} is not expanded", 1, true))
      assert.is_nil(e.message:find("s3cr3t", 1, true))
    end
    assert.same({ T, "none" }, cfg.servers.dflt.args)
    -- The host trusts the file: everything expands.
    cfg = assert(mcp.config.load(file, { env = env, trusted = true }))
    assert.equals("s3cr3t-value", cfg.servers.loc.env.LEAK)
    assert.equals("/home/u", cfg.servers.loc.env.H)
  end)

  it("a workspace file's envFile reads only beside the file", function()
    helper.write_file(dir .. "/.env", "A=beside\n")
    write({ mcpServers = {
      ok = { command = "x", envFile = ".env" },
      abs = { command = "x", envFile = "/etc/hostname" },
      up = { command = "x", envFile = "../../etc/passwd" },
    } })
    local cfg = assert(mcp.config.load(file, { trust_dir = store, keep_going = true, trust = function() return "once" end }))
    assert.same({ A = "beside" }, cfg.servers.ok.env)
    assert.equals("untrusted", cfg.errors.abs.kind)
    assert.equals("untrusted", cfg.errors.up.kind)
    assert.truthy(cfg.errors.up.message:find("must be a path inside the file's own directory", 1, true))
    -- a symbolic link the repository carries does not lead out of it
    helper.write_file(store .. "/credentials", "AWS_SECRET=s3cr3t\n")
    os.execute(("ln -s '%s/credentials' '%s/.env.link'"):format(store, dir))
    os.execute(("mkdir '%s/sub' && ln -s '%s' '%s/sub/up'"):format(dir, store, dir))
    write({ mcpServers = {
      link = { command = "x", envFile = ".env.link" },
      dirlink = { command = "x", envFile = "sub/up/credentials" },
      ok = { command = "x", envFile = ".env" },
    } })
    cfg = assert(mcp.config.load(file, { trust_dir = store, keep_going = true, trust = function() return "once" end }))
    assert.same({ A = "beside" }, cfg.servers.ok.env)
    for _, name in ipairs({ "link", "dirlink" }) do
      assert.equals("untrusted", cfg.errors[name].kind, name)
      assert.truthy(cfg.errors[name].message:find("leads out of", 1, true), cfg.errors[name].message)
      assert.is_nil(cfg.servers[name].env)
    end
    -- the host trusts the file: its links are the user's
    cfg = assert(mcp.config.load(file, { trusted = true, keep_going = true }))
    assert.same({ AWS_SECRET = "s3cr3t" }, cfg.servers.link.env)
  end)

  it("a workspace file's autoApprove is ignored unless the host opts in", function()
    write({ mcpServers = { a = { command = LUA, args = { T }, autoApprove = { "echo" } } } })
    local asked = 0
    local function approve() asked = asked + 1; return "allow" end
    local yes = function() return "once" end
    local hub = assert(mcp.hub(file, { trust_dir = store, trust = yes, approve = approve }))
    assert(hub:call_tool("a__echo", { message = "x" }))
    assert.equals(1, asked)
    hub:close()
    hub = assert(mcp.hub(file, { trust_dir = store, trust = yes, approve = approve, honor_auto_approve = true }))
    assert(hub:call_tool("a__echo", { message = "x" }))
    assert.equals(1, asked)
    hub:close()
    hub = assert(mcp.hub(file, { trusted = true, approve = approve }))
    assert(hub:call_tool("a__echo", { message = "x" }))
    assert.equals(1, asked)
    hub:close()
  end)

  it("a relative path is judged from the real working directory; a hook that raises says no", function()
    assert.equals(trust.absolute(file), file)
    local p = io.popen("pwd -P")
    local here = p:read("*l")
    p:close()
    assert.equals(here .. "/x/mcp.json", trust.absolute("./x/../x/mcp.json"))
    write({ mcpServers = { s = { command = "x" } } })
    local _, err = mcp.config.load(file, { trust_dir = store, trust = function() error("no tty", 0) end })
    assert.equals("untrusted", err.kind)
    assert.truthy(err.message:find("the trust hook raised: no tty", 1, true))
  end)

  it("a table from the host is trusted; one marked trusted = false is not", function()
    local doc = { mcpServers = { s = { command = "x", args = { "${env:MY_SECRET}" } } } }
    local cfg = assert(mcp.config.load(doc, { env = { MY_SECRET = "v" } }))
    assert.same({ "v" }, cfg.servers.s.args)
    local _, err = mcp.config.load(doc, { env = { MY_SECRET = "v" }, trusted = false })
    assert.equals("untrusted", err.kind)
    assert.has_error(function() mcp.config.load(doc, { trust = 1 }) end, "mcp.config.load: opts.trust must be a function")
  end)
end)
