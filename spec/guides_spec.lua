-- Every ```lua block of README.md and the guides under docs/ runs (issue 30: no guide drifts).
-- Each block is written to a file and run from the repository root, in a subprocess of this run's
-- interpreter with this checkout's lua/ and C module on the paths, under a timeout; it fails when
-- it raises or exits non-zero. The line before a block's fence may say how it runs:
--
--   <!-- not run: REASON -->            skipped (Neovim only, LÖVE, a real OAuth server ...):
--                                       reported as pending with its reason
--   <!-- run with: example_client -->   `mcp` and `client` (connected to
--                                       examples/servers/example_server.lua) are defined first,
--                                       and the client is closed after the block
--   <!-- run with: skills_client -->    the same with spec/fixtures/skills_server.lua
--   <!-- run with: http_server -->      MCP_URL and MCP_SSE_URL name spec/fixtures/http_server.mjs
--                                       (started once; pending without node and curl)
--   <!-- run with: love -->             a stand-in for LÖVE's `love` table; after the block,
--                                       love.load(), then love.update and love.draw each frame
--                                       until something other than the waiting text is drawn
--
-- docs/API.md is the generated reference (its one block is Neovim-only), not a guide.
local helper = require("helper")
local H = require("http_helper")

local ROOT = helper.root
local TIMEOUT_S = 60 * helper.slow()
local NOT_GUIDES = { ["API.md"] = true }

local PRELUDES = {
  example_client = {
    'local mcp = require("mcp")\n'
      .. 'local client = assert(mcp.create_stdio_client("lua5.4", { "examples/servers/example_server.lua" }))\n',
    "\nclient:close()\n",
  },
  skills_client = {
    'local mcp = require("mcp")\n'
      .. 'local client = assert(mcp.create_stdio_client("lua5.4", { "spec/fixtures/skills_server.lua" }))\n',
    "\nclient:close()\n",
  },
  love = {
    'local drawn\nlove = { graphics = { print = function(text) drawn = text end } }\n',
    '\nlove.load()\nlocal frames = 0\n'
      .. 'repeat\n  love.update(1 / 60)\n  love.draw()\n  frames = frames + 1\n'
      .. '  if drawn == "waiting for the server..." then require("mcp").loop.step(5) end\n'
      .. 'until drawn ~= "waiting for the server..." or frames > 4000\n'
      .. 'love.quit()\nassert(tostring(drawn):find("42"), "drew: " .. tostring(drawn))\n',
  },
}

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local read = helper.read_file

-- README.md, then docs/*.md but the reference, sorted.
local function documents()
  local list = { "README.md" }
  local f = assert(io.popen("cd " .. shq(ROOT) .. " && ls docs/*.md 2>/dev/null"))
  local docs = {}
  for line in f:lines() do
    if not NOT_GUIDES[line:match("[^/]+$")] then docs[#docs + 1] = line end
  end
  f:close()
  table.sort(docs)
  for _, d in ipairs(docs) do list[#list + 1] = d end
  return list
end

-- The ```lua blocks of a Markdown text: {line, code, marker = {kind, arg} or nil}.
local function blocks(text)
  local out, lines = {}, {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local i = 1
  while i <= #lines do
    local indent = lines[i]:match("^(%s*)```lua%s*$")
    if indent then
      local start, code = i, {}
      i = i + 1
      while i <= #lines and not lines[i]:match("^%s*```%s*$") do
        code[#code + 1] = lines[i]:sub(1, #indent) == indent and lines[i]:sub(#indent + 1) or lines[i]
        i = i + 1
      end
      local prev = lines[start - 1] or ""
      local kind, arg = prev:match("^%s*<!%-%-%s*([%w ]-):%s*(.-)%s*%-%->%s*$")
      out[#out + 1] = { line = start, code = table.concat(code, "\n") .. "\n", marker = kind and { kind, arg } }
    end
    i = i + 1
  end
  return out
end

-- The HTTP fixture, started on first use and stopped at the end.
local http_server
local function http_env()
  if not http_server then http_server = H.start() end
  return ("MCP_URL=%s MCP_SSE_URL=%s "):format(http_server.url, http_server.base .. "/sse")
end

local function run_block(code, env)
  local file = os.tmpname()
  local fh = assert(io.open(file, "wb"))
  fh:write(code)
  fh:close()
  local cpath = {}
  for entry in package.cpath:gmatch("[^;]+") do
    cpath[#cpath + 1] = entry:sub(1, 1) == "/" and entry or (ROOT .. "/" .. entry:gsub("^%./", ""))
  end
  -- under ASan the child keeps LD_PRELOAD: it loads this run's sanitized module
  local cmd = ("cd %s && %sLUA_PATH=%s LUA_CPATH=%s timeout %d %s %s </dev/null 2>&1; echo \"__EXIT:$?\""):format(
    shq(ROOT), env or "",
    shq(ROOT .. "/lua/?.lua;" .. ROOT .. "/lua/?/init.lua;;"), shq(table.concat(cpath, ";") .. ";;"),
    TIMEOUT_S, helper.lua_cmd(), shq(file))
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("*a")
  f:close()
  os.remove(file)
  return tonumber(out:match("__EXIT:(%d+)%s*$")), (out:gsub("__EXIT:%d+%s*$", ""))
end

local ran, skipped = 0, {}

describe("the guides' Lua examples", function()
  for _, doc in ipairs(documents()) do
    for _, b in ipairs(blocks(read(ROOT .. "/" .. doc))) do
      local where = doc .. ":" .. b.line
      local kind, arg = b.marker and b.marker[1], b.marker and b.marker[2]
      if kind == "not run" then
        it(where .. " is marked not run", function()
          assert.is_truthy(arg ~= "", where .. ": `not run` needs a reason")
          skipped[#skipped + 1] = where .. " (" .. arg .. ")"
          pending(where .. " not run: " .. arg)
        end)
      else
        it(where .. " runs", function()
          local prelude, env = { "", "" }, nil
          if kind == "run with" and arg == "http_server" then
            if not (H.have_node() and H.have_curl()) then
              pending(where .. ": node and curl are needed to run the HTTP test server")
              return
            end
            env = http_env()
          elseif kind ~= nil then
            assert.are.equal("run with", kind, where .. ": unknown marker '" .. kind .. "'")
            prelude = PRELUDES[arg]
            assert.is_truthy(prelude, where .. ": unknown prelude '" .. tostring(arg) .. "'")
          end
          local code, out = run_block(prelude[1] .. b.code .. prelude[2], env)
          ran = ran + 1
          assert.are.equal(0, code, where .. " failed (exit " .. tostring(code) .. "):\n" .. out)
        end)
      end
    end
  end

  it("ran the runnable ones and named the rest", function()
    io.stderr:write(("\nguides: %d Lua blocks ran, %d not run%s\n"):format(ran, #skipped,
      #skipped > 0 and (": " .. table.concat(skipped, "; ")) or ""))
    assert.is_true(ran > 0)
  end)

  teardown(function()
    if http_server then H.stop(http_server) end
  end)
end)

describe("README.md", function()
  local readme = read(ROOT .. "/README.md")

  it("links to every guide, and every doc it links to exists", function()
    for _, doc in ipairs(documents()) do
      if doc ~= "README.md" then
        assert.is_truthy(readme:find("(" .. doc .. ")", 1, true), "README.md does not link to " .. doc)
      end
    end
    for target in readme:gmatch("%]%((docs/[^)#]+)") do
      assert.is_truthy(io.open(ROOT .. "/" .. target, "rb"), "README.md links to a missing " .. target)
    end
  end)

  it("stays short (at most 16 KB)", function()
    assert.is_true(#readme <= 16 * 1024, "README.md has " .. #readme .. " bytes")
  end)

  it("keeps the two commands exactly as the Makefile has them", function()
    assert.is_truthy(readme:find("\nmake demo ", 1, true))
    assert.is_truthy(readme:find("\nmake test ", 1, true))
    local mk = read(ROOT .. "/Makefile")
    assert.is_truthy(mk:find("\ndemo: deps\n", 1, true))
    assert.is_truthy(mk:find("\ntest: deps\n", 1, true))
  end)
end)
