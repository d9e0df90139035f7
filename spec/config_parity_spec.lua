-- mcp.config reads the configs people already have: VS Code's and Cursor's built-in variables,
-- mcphub's "KEY": null / "" in env and ${cmd: ...} (opt-in), and Zed's context_servers.
local mcp = require("mcp")
local helper = require("helper")

local dir = helper.tmpdir()
os.execute("mkdir -p '" .. dir .. "/proj/.vscode' '" .. dir .. "/proj/.cursor'")

local function write(path, text)
  helper.write_file(path, text)
  return path
end

describe("mcp.config parity", function()
  teardown(helper.remove_tmpdirs)

  it("expands VS Code's workspaceFolder (the directory holding .vscode/) and its siblings", function()
    local f = write(dir .. "/proj/.vscode/mcp.json", [[{ "servers": { "a": { "command": "x",
      "args": ["${workspaceFolder}", "${workspaceFolderBasename}", "${userHome}", "a${pathSeparator}b${/}c"] } } }]])
    local cfg, err = mcp.config.load(f, { trusted = true })
    assert.is_nil(err)
    assert.same({ dir .. "/proj", "proj", os.getenv("HOME"), "a/b/c" }, cfg.servers.a.args)
  end)

  it("expands Cursor's ${userHome} and ${workspaceFolder} (the directory holding .cursor/)", function()
    local f = write(dir .. "/proj/.cursor/mcp.json", [[{ "mcpServers": { "a": { "command": "${userHome}/bin/x",
      "args": ["${workspaceFolder}"] } } }]])
    local cfg, err = mcp.config.load(f, { trusted = true })
    assert.is_nil(err)
    assert.equals(os.getenv("HOME") .. "/bin/x", cfg.servers.a.command)
    assert.same({ dir .. "/proj" }, cfg.servers.a.args)
  end)

  it("takes workspaceFolder as the current directory for any other file; opts.variables wins", function()
    local doc = { mcpServers = { a = { command = "x", args = { "${workspaceFolder}" } } } }
    local cfg = assert(mcp.config.load(doc))
    assert.equals(os.getenv("PWD") or ".", cfg.servers.a.args[1])
    cfg = assert(mcp.config.load(doc, { variables = { workspaceFolder = "/w" } }))
    assert.equals("/w", cfg.servers.a.args[1])
  end)

  it("takes an env value of null or \"\" from the user's environment (mcphub)", function()
    local env = { TOKEN = "t0k", EMPTY = "from-env" }
    local doc = { mcpServers = { a = { command = "x",
      env = { TOKEN = mcp.json.null, EMPTY = "", GONE = mcp.json.null, KEEP = "v" } } } }
    local cfg, err = mcp.config.load(doc, { env = env })
    assert.is_nil(err)
    assert.same({ TOKEN = "t0k", EMPTY = "from-env", KEEP = "v" }, cfg.servers.a.env)
  end)

  it("does not take an env value from the environment for an untrusted file", function()
    local doc = { mcpServers = { a = { command = "x", env = { SECRET = mcp.json.null } } } }
    local cfg, err = mcp.config.load(doc, { trusted = false, trust = function() return "once" end,
      env = { SECRET = "s" } })
    assert.is_nil(cfg)
    assert.equals("untrusted", err.kind)
    assert.matches("env.SECRET", err.message, 1, true)
  end)

  it("runs ${cmd: ...} only when the host opts in, and never for an untrusted file", function()
    local doc = { mcpServers = { a = { command = "x", args = { "${cmd: echo hello}" } } } }
    local cfg, err = mcp.config.load(doc)
    assert.is_nil(cfg)
    assert.matches("allow_cmd", err.message, 1, true)
    cfg = assert(mcp.config.load(doc, { allow_cmd = true }))
    assert.same({ "hello" }, cfg.servers.a.args)
    cfg, err = mcp.config.load(doc, { allow_cmd = true, trusted = false, trust = function() return "once" end })
    assert.is_nil(cfg)
    assert.equals("untrusted", err.kind)
  end)

  it("reads Zed's context_servers: the command object, the flat form, a url; extension servers apart", function()
    local f = write(dir .. "/zed.json", [[{
      "theme": "One Dark",
      "context_servers": {
        "old": { "command": { "path": "node", "args": ["s.js"], "env": { "A": "1" } }, "settings": {} },
        "flat": { "source": "custom", "command": "uvx", "args": ["srv"], "env": {} },
        "remote": { "url": "https://mcp.example.com/mcp", "headers": { "X": "y" } },
        "ext": { "source": "extension", "settings": {} }
      }
    }]])
    local cfg, err = mcp.config.load(f, { trusted = true })
    assert.is_nil(err)
    assert.equals("zed", cfg.format)
    assert.same({ "flat", "old", "remote" }, cfg.order)
    assert.equals("node", cfg.servers.old.command)
    assert.same({ "s.js" }, cfg.servers.old.args)
    assert.same({ A = "1" }, cfg.servers.old.env)
    assert.equals("uvx", cfg.servers.flat.command)
    assert.equals("http", cfg.servers.remote.type)
    assert.same({ "ext" }, cfg.extension_servers)
  end)
end)
