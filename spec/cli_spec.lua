-- bin/mcp-lua: every command against examples/servers/example_server.lua, server-everything over
-- stdio, the fault server over streamable HTTP and legacy SSE, a config file, the progress bar,
-- elicitation on the terminal, and each exit code. The CLI runs as a child process with the
-- interpreter and the module path of this run, detached from any terminal (setsid), so that
-- elicitation answers come from its stdin.
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

local LUA = helper.lua_cmd()
local CLI = helper.root .. "/bin/mcp-lua"
local EX = "-- " .. LUA .. " " .. helper.example_server_path
local TS = "-- " .. LUA .. " " .. helper.test_server_path

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function have_setsid()
  local f = io.popen("command -v setsid 2>/dev/null")
  local out = f:read("*a")
  f:close()
  return out ~= ""
end
local SETSID = have_setsid() and "setsid " or ""
local _ -- a throwaway result

--- Run the CLI with a shell-quoted argument string, after the shell words in env (assignments);
--- returns stdout, stderr, exit code.
local function run_env(env, args, stdin)
  local errf, inf = os.tmpname(), os.tmpname()
  helper.write_file(inf, stdin or "")
  local cmd = ("%sLUA_PATH=%s LUA_CPATH=%s %s%s %s %s <%s 2>%s; echo \"__EXIT:$?\""):format(
    env, shq(package.path .. ";;"), shq(package.cpath .. ";;"), SETSID, LUA, CLI, args, inf, errf)
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("*a")
  f:close()
  local code = tonumber(out:match("__EXIT:(%d+)%s*$"))
  out = out:gsub("__EXIT:%d+%s*$", "")
  local ef = io.open(errf, "rb")
  local err = ef:read("*a")
  ef:close()
  os.remove(errf)
  os.remove(inf)
  return out, err, code
end

local function run(args, stdin) return run_env("", args, stdin) end

describe("bin/mcp-lua", function()
  it("--help lists the commands, the ways to reach a server and the exit codes", function()
    local out, _, code = run("--help")
    assert.equals(0, code)
    for _, want in ipairs({ "call NAME [JSON]", "read URI", "get NAME [JSON]", "complete REF ARG [VALUE]", "ping",
      "-- COMMAND [ARGS...]", "--url URL", "--sse", "--config FILE --server NAME", "--json",
      "1  the tool ran and reported an error", "2  usage error", "3  config file error", "4  could not connect",
      "5  the request failed", "6  timeout" }) do
      assert.truthy(helper.has(out, want), want)
    end
  end)

  describe("against the example server", function()
    it("tools, as text and as JSON", function()
      local out, _, code = run("tools " .. EX)
      assert.equals(0, code)
      assert.truthy(helper.has(out, "echo(message: string)  Returns the message it was given.\n"), out)
      assert.truthy(helper.has(out, "add(a: number, b: number)  Adds a and b.\n"), out)
      out, _, code = run("tools --json " .. EX)
      assert.equals(0, code)
      local doc = assert(mcp.json.decode(out))
      local names = {}
      for _, t in ipairs(doc.tools) do names[#names + 1] = t.name end
      assert.same({ "echo", "add", "slow_count", "ask_user" }, names)
    end)

    it("tools lists a tool's parameters in the order the server declared them", function()
      local out, err, code = run("tools " .. TS .. " --ordered-tool")
      assert.equals(0, code, err)
      assert.truthy(helper.has(out, "move_file(source: string, destination: string, overwrite?: boolean)  Moves a file.\n"), out)
    end)

    it("--json prints each object's keys in the order the server wrote them", function()
      local out, err, code = run("tools --json " .. TS .. " --ordered-tool")
      assert.equals(0, code, err)
      -- the server's raw schema text: "type" before "properties" before "required", unsorted properties
      assert.truthy(helper.has(out, '"inputSchema":{"type":"object","properties":{"source":{"type":"string"},'
        .. '"destination":{"type":"string"},"overwrite":{"type":"boolean"}},"required":["source","destination"]}'), out)
    end)

    it("call, with arguments inline, from stdin, as JSON; a tool error exits 1", function()
      local out, _, code = run("call add '{\"a\": 2, \"b\": 40}' " .. EX)
      assert.equals(0, code)
      assert.equals("2 + 40 = 42\n", out)
      out, _, code = run("call echo - " .. EX, '{"message": "from stdin"}')
      assert.equals(0, code)
      assert.equals("from stdin\n", out)
      out, _, code = run("--json call add '{\"a\": 1, \"b\": 2}' " .. EX)
      assert.equals(0, code)
      assert.equals(3, mcp.json.decode(out).structuredContent.sum)
      local err
      out, err, code = run("call echo '{\"message\": 5}' " .. EX)
      assert.equals(1, code)
      assert.equals("`message` must be a string\n", out)
      assert.truthy(helper.has(err, "the tool reported an error"), err)
    end)

    it("draws progress on stderr", function()
      local out, err, code = run("call slow_count '{\"n\": 3}' " .. EX)
      assert.equals(0, code)
      assert.equals("Counted to 3\n", out)
      assert.truthy(helper.has(err, "progress [##########--------------------] 1/3"), err)
      assert.truthy(helper.has(err, "progress [##############################] 3/3"), err)
      out, err = run("--no-progress call slow_count '{\"n\": 2}' " .. EX)
      assert.equals("Counted to 2\n", out)
      assert.equals("", err)
    end)

    it("asks the server's elicitation on the terminal, or declines with --no-elicit", function()
      if SETSID == "" then pending("setsid is missing"); return end
      local out, err, code = run("call ask_user '{\"question\": \"Favourite colour?\"}' " .. EX, "teal\n")
      assert.equals(0, code)
      assert.truthy(helper.has(err, "Favourite colour?"), err)
      assert.truthy(helper.has(out, "teal"), out)
      out, _, code = run("--no-elicit call ask_user '{\"question\": \"x\"}' " .. EX)
      assert.equals(1, code)
      assert.truthy(helper.has(out, "does not support elicitation"), out)
    end)

    it("escapes the terminal controls a server sends (tool name, description, result, elicitation message)", function()
      local ESCS = "-- " .. LUA .. " " .. helper.fixtures .. "/escape_server.lua"
      local out, err, code = run("tools " .. ESCS)
      assert.equals(0, code, err)
      assert.is_nil(out:find("\27", 1, true))
      assert.is_nil(out:find("\r", 1, true))
      assert.truthy(helper.has(out, "evil\\x1b]0;pwned\\x07()"), out)
      assert.truthy(helper.has(out, "Looks harmless\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x0d\\x1b[2Kfake line"), out)
      out, err, code = run("call 'evil\27]0;pwned\7' " .. ESCS)
      assert.equals(0, code, err)
      assert.equals("result\\x1b]0;pwned\\x07\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x0d\\x1b[2K\\u009b31m end\n", out)
      out = run("--json tools " .. ESCS)
      assert.is_nil(out:find("\27", 1, true))
      assert.truthy(mcp.json.decode(out))
      -- an error message the server words, and the stderr of a server that failed to start
      _, err, code = run("get 'x\27]0;t\7' " .. ESCS)
      assert.equals(5, code)
      assert.is_nil(err:find("\27", 1, true))
      assert.truthy(helper.has(err, "x\\x1b]0;t\\x07"), err)
      _, err, code = run("tools -- sh -c 'printf \"\\033]0;title\\007 boom\\n\" >&2; exit 3'")
      assert.equals(4, code)
      assert.is_nil(err:find("\27", 1, true))
      assert.truthy(helper.has(err, "server stderr:\n  \\x1b]0;title\\x07 boom"), err)
      if SETSID == "" then pending("setsid is missing"); return end
      _, err, code = run("call ask " .. ESCS, "x\n")
      assert.equals(0, code, err)
      assert.is_nil(err:find("\27", 1, true))
      assert.is_nil(err:find("\r", 1, true))
      assert.truthy(helper.has(err, "Question\\x1b]0;pwned\\x07\\x0d\\x1b[2K?"), err)
      assert.truthy(helper.has(err, "d\\x1b]52;c;ZWNobyBwd25lZA==\\x07"), err)
    end)

    it("a URL elicitation (-32042): shows the URL and its host, a no ends the call and opens nothing", function()
      if SETSID == "" then pending("setsid is missing"); return end
      local out, err, code = run("call url_required '{\"id\": \"cli-1\", \"complete\": true}' " .. TS .. " --spec-1125",
        "n\n")
      assert.equals(5, code)
      assert.truthy(helper.has(err, "https://auth.example.com/authorize?id=cli-1"), err)
      assert.truthy(helper.has(err, "host: auth.example.com"), err)
      assert.falsy(helper.has(err, "Open it in your browser"), err)
      assert.truthy(helper.has(out .. err, "declined"), out .. err)
    end)

    it("a URL elicitation (-32042): the opener runs on yes only, with the URL, and the call goes on", function()
      if SETSID == "" then pending("setsid is missing"); return end
      -- a stand-in for xdg-open on PATH that records what it was asked to open
      local dir = os.tmpname()
      os.remove(dir)
      assert(helper.sh("mkdir -p '" .. dir .. "'"))
      local log = dir .. "/opened"
      helper.write_file(dir .. "/xdg-open", "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" .. log .. "'\n")
      assert(helper.sh("chmod +x '" .. dir .. "/xdg-open'"))
      finally(function() helper.sh("rm -rf '" .. dir .. "'") end)
      local env = "PATH=" .. dir .. ":\"$PATH\" "
      local _, err, code = run_env(env, "call url_required '{\"id\": \"cli-2\", \"complete\": true}' " .. TS
        .. " --spec-1125", "n\n")
      assert.equals(5, code, err)
      assert.truthy(helper.has(err, "host: auth.example.com"), err)
      assert.truthy(helper.has(err, "The server lua-mcp test server asks:"), err)
      local out
      out, err, code = run_env(env, "call url_required '{\"id\": \"cli-3\", \"complete\": true}' " .. TS
        .. " --spec-1125", "y\n")
      assert.equals(0, code, err)
      assert.truthy(helper.has(out, "authorized after 1 rounds"), out .. err)
      assert.falsy(helper.has(err, "Open it in your browser"), err)
      -- (the opener runs detached: its file exists from the shell's >> before printf has written it)
      assert.is_true(helper.wait_until(function()
        return helper.file_exists(log) and (helper.read_file(log) or ""):find("\n", 1, true) ~= nil
      end, helper.ms(5000)))
      -- only the yes opened, and exactly the URL shown
      assert.equals("https://auth.example.com/authorize?id=cli-3\n", helper.read_file(log))
    end)

    it("resources, read, prompts, get, complete, ping, info", function()
      local out, _, code = run("resources " .. EX)
      assert.equals(0, code)
      assert.truthy(helper.has(out, "example://greeting  greeting  (text/plain)\n"), out)
      assert.truthy(helper.has(out, "example://notes/{id}  note  (template)\n"), out)
      out = run("read example://greeting " .. EX)
      assert.equals("Hello from the Lua MCP example server!\n", out)
      out = run("read example://logo.png " .. EX)
      assert.truthy(out:match("^%[example://logo%.png image/png, %d+ bytes of base64%]\n$"), out)
      out = run("prompts " .. EX)
      assert.truthy(helper.has(out, "greet(name)  Writes a greeting for a person\n"), out)
      assert.truthy(helper.has(out, "summarize(topic, style?)"), out)
      out = run("get greet '{\"name\": \"Ada\"}' " .. EX)
      assert.equals("# Greeting for Ada\nuser: Please write a warm, one-line greeting for Ada.\n", out)
      out, _, code = run("complete prompt:greet name Al " .. EX)
      assert.equals(0, code)
      assert.equals("Alice\nAlan\nAlbert\n", out)
      out = run("ping " .. EX)
      assert.truthy(out:match("^pong %(%d+ ms%)\n$"), out)
      out = run("--json ping " .. EX)
      assert.equals("{}\n", out)
      out = run("info " .. EX)
      assert.truthy(helper.has(out, "lua-example-server 1.0.0\nprotocol 2025-11-25\ncapabilities: completions, logging, prompts, resources, tools\n"), out)
    end)
  end)

  describe("exit codes", function()
    it("2 for usage errors", function()
      local cases = {
        { "nope " .. EX, "unknown command 'nope'" },
        { "tools", "give exactly one server" },
        { "tools --url http://127.0.0.1:1/mcp " .. EX, "give exactly one server" },
        { "call", "'call' takes 1 to 2 argument(s), got 0" },
        { "call echo '{bad' " .. EX, "the arguments is not valid JSON" },
        { "call echo '[1]' " .. EX, "the arguments must be a JSON object" },
        { "--frobnicate tools " .. EX, "unknown option --frobnicate" },
        { "--config x.json tools", "--config needs --server NAME" },
        { "tools --", "nothing after --" },
        { "--timeout soon tools " .. EX, "--timeout takes a positive number" },
      }
      for _, c in ipairs(cases) do
        local out, err, code = run(c[1])
        assert.equals(2, code, c[1] .. ": " .. err)
        assert.equals("", out)
        assert.truthy(helper.has(err, c[2]), err)
      end
    end)

    it("4 when the server cannot be reached, with its stderr", function()
      local _, err, code = run("tools -- /nonexistent/lua-mcp-server")
      assert.equals(4, code)
      assert.truthy(helper.has(err, "could not connect"), err)
      _, err, code = run("tools " .. TS .. " --exit-on-init=7")
      assert.equals(4, code)
      assert.truthy(helper.has(err, "server stderr:"), err)
      _, _, code = run("tools --url http://127.0.0.1:1/mcp")
      assert.equals(4, code)
    end)

    it("4 for a server that dies at start: started once, its exit and its stderr printed once", function()
      local _, err, code = run("tools -- sh -c 'echo boom >&2; exit 1'")
      assert.equals(4, code)
      assert.truthy(helper.has(err, "exited with status 1 before reading its input"), err)
      local n = 0
      for _ in err:gmatch("boom") do n = n + 1 end
      assert.equals(1, n, err)
    end)

    it("5 when the request fails, 6 on a timeout", function()
      local _, err, code = run("read example://nope " .. EX)
      assert.equals(5, code)
      assert.truthy(helper.has(err, "Resource not found"), err)
      _, err, code = run("call error " .. TS)
      assert.equals(5, code)
      assert.truthy(helper.has(err, "boom"), err)
      _, err, code = run("--timeout 200 call hang " .. TS)
      assert.equals(6, code)
      assert.truthy(helper.has(err, "timed out"), err)
    end)
  end)

  describe("--config FILE --server NAME", function()
    -- The file is in the user's own configuration ($XDG_CONFIG_HOME), so it is trusted.
    local cfgdir = helper.tmpdir()
    local file = cfgdir .. "/mcp.json"
    local XDG = "XDG_CONFIG_HOME=" .. shq(cfgdir) .. " "
    local function run_xdg(args, stdin) return run_env(XDG, args, stdin) end
    teardown(helper.remove_tmpdirs)

    it("starts a server of a config file, interpolated, and reports config errors with exit 3", function()
      helper.write_file(file, ([[{
        // a comment, and a trailing comma below
        "mcpServers": {
          "ex": { "command": "%s", "args": ["%s"], "env": { "GREETING_NAME": "${env:USER:-someone}" } },
          "off": { "command": "nothing", "disabled": true },
          "broken": { "command": "x", "args": ["${LUA_MCP_CLI_UNSET}"] },
        },
      }]]):format(LUA, helper.example_server_path))
      local out, err, code = run_xdg("--config " .. file .. " --server ex call echo '{\"message\": \"cfg\"}'")
      assert.equals(0, code, err)
      assert.equals("cfg\n", out)
      out, err, code = run_xdg("--config " .. file .. " --server nope tools")
      assert.equals("", out)
      assert.equals(3, code)
      assert.truthy(helper.has(err, "no server 'nope' (servers: broken, ex, off)"), err)
      out, err, code = run_xdg("--config " .. file .. " --server off tools")
      assert.equals("", out)
      assert.equals(3, code)
      assert.truthy(helper.has(err, "server 'off' is disabled"), err)
      out, err, code = run_xdg("--config /nonexistent/mcp.json --server ex tools")
      assert.equals("", out)
      assert.equals(3, code)
      assert.truthy(helper.has(err, "cannot read the file"), err)
    end)

    it("a missing variable in the chosen server is a config error (other servers are not interpolated)", function()
      local _, err, code = run_xdg("--config " .. file .. " --server broken tools")
      assert.equals(3, code)
      assert.truthy(helper.has(err, "server 'broken': field 'args[1]': environment variable LUA_MCP_CLI_UNSET is not set"), err)
    end)

    it("--var NAME=VALUE fills ${NAME} and ${input:NAME} of the file; without --config it is a usage error", function()
      local vfile = cfgdir .. "/vars.json"
      helper.write_file(vfile, ([[{ "mcpServers": { "ex": { "command": "%s", "args": ["%s/examples/servers/${FILE}"],
        "env": { "GREETING_NAME": "${input:who}" } } } }]]):format(LUA, helper.root))
      local out, err, code = run_xdg("--config " .. vfile .. " --server ex --var FILE=example_server.lua"
        .. " --var who=me call echo '{\"message\": \"v\"}'", "")
      assert.equals(0, code, err)
      assert.equals("v\n", out)
      _, err, code = run_xdg("--var A=b tools -- x")
      assert.equals(2, code)
      assert.truthy(helper.has(err, "--var goes with --config"), err)
    end)

    it("a password input with no terminal is read from stdin without /dev/tty noise", function()
      local pfile = cfgdir .. "/pw.json"
      helper.write_file(pfile, ([[{ "inputs": [{ "id": "pw", "type": "promptString", "password": true }],
        "servers": { "ex": { "command": "%s", "args": ["%s"], "env": { "GREETING_NAME": "${input:pw}" } } } }]])
        :format(LUA, helper.example_server_path))
      local out, err, code = run_xdg("--config " .. pfile .. " --server ex call echo '{\"message\": \"p\"}'", "secret\n")
      assert.equals(0, code, err)
      assert.equals("p\n", out)
      assert.falsy(helper.has(err, "/dev/tty"), err)
    end)

    it("a file outside the user's configuration asks on the terminal first; no answer runs nothing", function()
      local ws = os.tmpname()
      local marker = ws .. ".ran"
      helper.write_file(ws, ([[{"mcpServers": {
        "ex": { "command": "sh", "args": ["-c", "touch %s; exec %s %s"] }
      }}]]):format(marker, LUA, helper.example_server_path))
      local out, err, code = run_env("", "--config " .. ws .. " --server ex tools", "n\n")
      assert.equals("", out)
      assert.equals(3, code)
      assert.truthy(helper.has(err, "wants to run: sh -c touch " .. marker), err)
      assert.truthy(helper.has(err, "server 'ex': not started: the trust hook said no"), err)
      assert.is_nil(io.open(marker))
      out, err, code = run_env("", "--config " .. ws .. " --server ex tools", "o\n")
      assert.equals(0, code, err)
      assert.truthy(helper.has(out, "echo("), out)
      assert.truthy(io.open(marker))
      os.remove(marker)
      os.remove(ws)
    end)
  end)

  it("works against server-everything over stdio (tools, call with progress, prompts, complete)", function()
    local bin = os.getenv("MCP_EVERYTHING_SERVER")
    if bin == nil or bin == "" or not H.have_node() then pending("server-everything unavailable"); return end
    local EV = "-- " .. bin .. " stdio"
    local out, err, code = run("tools " .. EV)
    assert.equals(0, code, err)
    assert.truthy(helper.has(out, "get-sum(a: number, b: number)  Returns the sum of two numbers\n"), out)
    out, err, code = run("call get-sum '{\"a\": 2, \"b\": 3}' " .. EV)
    assert.equals(0, code, err)
    assert.truthy(helper.has(out, "5"), out)
    local _, perr, pcode = run("call trigger-long-running-operation '{\"duration\": 0.3, \"steps\": 3}' " .. EV)
    assert.equals(0, pcode, perr)
    assert.truthy(helper.has(perr, "3/3"), perr)
    out, err, code = run("get args-prompt '{\"city\": \"Paris\"}' " .. EV)
    assert.equals(0, code, err)
    assert.truthy(helper.has(out, "Paris"), out)
    out, err, code = run("--context department=Engineering complete prompt:completable-prompt name '' " .. EV)
    assert.equals(0, code, err)
    assert.truthy(#out > 0, "completions listed")
  end)

  describe("over HTTP", function()
    local srv
    before_each(function()
      if H.have_node() and H.have_curl() then srv = H.start() end
    end)
    after_each(function() H.stop(srv); srv = nil end)

    it("--url (streamable HTTP) with a header, and --url --sse (legacy)", function()
      if not srv then pending("node or curl missing"); return end
      local out, err, code = run("-H 'X-Lua-Mcp: cli' call last_headers --url " .. srv.url)
      assert.equals(0, code, err)
      assert.truthy(helper.has(out, '"x-lua-mcp":"cli"'), out)
      out, err, code = run("call echo '{\"message\": \"legacy\"}' --sse --url " .. srv.base .. "/sse")
      assert.equals(0, code, err)
      assert.equals("legacy\n", out)
    end)

    it("--oauth logs in through the browser step (a stand-in xdg-open), keeps the tokens, and is refused for stdio", function()
      if not srv then pending("node or curl missing"); return end
      local A = require("auth_helper")
      local osrv = A.start()
      local dir = os.tmpname()
      os.remove(dir)
      finally(function() -- (busted keeps one finally per test)
        A.stop(osrv)
        os.execute("rm -rf " .. shq(dir))
      end)
      assert(os.execute("mkdir -p " .. shq(dir .. "/bin")))
      -- the "browser": follows the authorization URL to the CLI's redirect listener, as a person would
      -- (without the sanitizer's LD_PRELOAD the CLI passes on under make asan: curl hangs with it)
      helper.write_file(dir .. "/bin/xdg-open",
        "#!/bin/sh\nexec env -u LD_PRELOAD curl -s -L -o /dev/null \"$1\"\n")
      assert(os.execute("chmod +x " .. shq(dir .. "/bin/xdg-open")))
      local env = ("PATH=%s:$PATH "):format(shq(dir .. "/bin"))
      local cmd = "call whoami --oauth --oauth-dir " .. shq(dir .. "/tokens") .. " --url " .. osrv.url
      local out, err, code = run_env(env, cmd)
      assert.equals(0, code, err)
      assert.truthy(helper.has(out, "scopes:"), out)
      assert.truthy(helper.has(err, "/authorize?"), err) -- the URL is printed too
      local st = A.state(osrv)
      assert.equals(1, #st.records.authorize)
      assert.equals(1, #st.records.register)
      -- the next run starts authorized: no second login, no second registration
      out, err, code = run_env("PATH=/nonexistent:$PATH ", cmd)
      assert.equals(0, code, err)
      assert.truthy(helper.has(out, "scopes:"), out)
      assert.is_nil(err:find("/authorize?", 1, true), err)
      st = A.state(osrv)
      assert.equals(1, #st.records.authorize)
      assert.equals(1, #st.records.register)
      -- a stdio server has no OAuth; the other --oauth options need --oauth
      _, err, code = run("tools --oauth " .. EX)
      assert.equals(2, code)
      assert.truthy(helper.has(err, "--oauth is for HTTP servers"), err)
      _, err, code = run("tools --oauth-dir /tmp --url " .. osrv.url)
      assert.equals(2, code)
      assert.truthy(helper.has(err, "go with --oauth"), err)
      _, err, code = run("tools --oauth-timeout 500 --url " .. osrv.url)
      assert.equals(2, code)
      assert.truthy(helper.has(err, "go with --oauth"), err)
      _, err, code = run("tools --oauth --oauth-timeout soon --url " .. osrv.url)
      assert.equals(2, code)
      assert.truthy(helper.has(err, "--oauth-timeout takes a positive number"), err)
      -- no redirect comes (a browser that does nothing): --oauth-timeout ends the wait, and says why
      helper.write_file(dir .. "/bin/xdg-open", "#!/bin/sh\nexit 0\n")
      _, err, code = run_env(env, "call whoami --oauth --oauth-timeout 300 --oauth-dir " .. shq(dir .. "/other")
        .. " --url " .. osrv.url)
      assert.are_not.equals(0, code)
      assert.truthy(helper.has(err, "no redirect arrived"), err)
      assert.truthy(helper.has(err, "refused the redirect URI"), err)
    end)

    it("--url without --sse tries legacy HTTP+SSE when the POST is refused with 405", function()
      if not srv then pending("node or curl missing"); return end
      local out, err, code = run("call echo '{\"message\": \"fell back\"}' --url " .. srv.base .. "/sse")
      assert.equals(0, code, err)
      assert.equals("fell back\n", out)
      local posts = 0
      for _, r in ipairs(H.state(srv).requests) do
        if r.http_method == "POST" and r.path == "/sse" then posts = posts + 1 end
      end
      assert.is_true(posts >= 1, "the streamable HTTP POST was not tried first")
    end)
  end)
end)
