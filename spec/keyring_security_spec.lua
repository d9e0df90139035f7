-- mcp.auth.keyring_store's macOS backend ("security"). There is no macOS machine here: these run
-- against a recording fake `security` (a Lua script over a directory of items) that logs every
-- argv and stdin it gets, so they prove what the store sends and how it reads the answers, not
-- that Apple's tool accepts it.
local mcp = require("mcp")
local helper = require("helper")

local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
local function account(key) return hex(mcp.core.sha256(key)):sub(1, 32) end

-- The fake: find-generic-password, delete-generic-password and -i (add-generic-password lines on
-- stdin) over <dir>/items; <dir>/mode says "ok", "noop-add" (add does nothing, exit 0), "hex-w" (-w
-- prints a password with a byte outside 0x20-0x7e in hex, each byte through a signed char, 0xc3 as
-- "ffffffc3", as Apple's keychain_find.c does; "ok" prints every password as it is), "locked",
-- "read-fails" (find-generic-password of an item, not the probe's, exits 36 saying the keychain
-- cannot ask the user: errSecInteractionNotAllowed's low byte, as security exits with) or
-- "piece-fails" (the same for the pieces of a record kept in pieces only), "delete-fails"
-- (delete-generic-password exits 36 the same way, deleting nothing) or "head-delete-fails" (the
-- same for the head of a record only: its pieces are deleted).
local FAKE = [=[
local dir = DIR
local function readall(p) local f = io.open(p, "rb"); if not f then return nil end local s = f:read("*a"); f:close(); return s end
local function writeall(p, s) local f = assert(io.open(p, "wb")); f:write(s); f:close() end
local input = arg[1] == "-i" and io.read("*a") or nil
local log = assert(io.open(dir .. "/log", "ab"))
local parts = {}
for i = 1, #arg do parts[#parts + 1] = ("%q"):format(arg[i]) end
log:write(("calls[#calls + 1] = { argv = { %s }, stdin = %s }\n"):format(table.concat(parts, ", "),
  input and ("%q"):format(input) or "nil"))
log:close()
local mode = readall(dir .. "/mode") or "ok"
if mode:find("locked") then
  io.stderr:write("security: SecKeychainSearchCopyNext: The user name or passphrase you entered is not correct.\n")
  os.exit(51)
end
local function opts(list)
  local o = {}
  local i = 1
  while i <= #list do
    local a = list[i]
    if a == "-s" or a == "-a" or a == "-X" then o[a] = list[i + 1]; i = i + 2 else o[a] = true; i = i + 1 end
  end
  return o
end
local function item(o) return dir .. "/items/" .. o["-s"] .. "_" .. o["-a"] end
local notfound = "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n"
local cmd = arg[1]
local rest = {}
for i = 2, #arg do rest[#rest + 1] = arg[i] end
if cmd == "find-generic-password" then
  local o = opts(rest)
  if (mode == "read-fails" and o["-a"] ~= "lua-mcp-probe") or (mode == "piece-fails" and o["-a"]:find("%-%d+$")) then
    io.stderr:write("security: SecKeychainSearchCopyNext: User interaction is not allowed.\n")
    os.exit(36)
  end
  local v = readall(item(o))
  if not v then io.stderr:write(notfound); os.exit(44) end
  if o["-w"] and mode == "hex-w" and v:find("[^\32-\126]") then
    io.write((v:gsub(".", function(c)
      return c:byte() > 127 and ("ffffff%02x"):format(c:byte()) or ("%02x"):format(c:byte())
    end)), "\n")
  elseif o["-w"] then io.write(v, "\n") else io.write("keychain: \"login.keychain-db\"\n") end
elseif cmd == "delete-generic-password" then
  local o = opts(rest)
  if mode == "delete-fails" or (mode == "head-delete-fails" and not o["-a"]:find("%-%d+$")) then
    io.stderr:write("security: SecKeychainItemDelete: User interaction is not allowed.\n")
    os.exit(36)
  end
  if not os.remove(item(o)) then io.stderr:write(notfound); os.exit(44) end
elseif cmd == "-i" then
  for line in input:gmatch("[^\n]+") do
    local words = {}
    for w in line:gmatch("%S+") do words[#words + 1] = w end
    local c = table.remove(words, 1)
    local o = opts(words)
    if c == "add-generic-password" and o["-U"] and o["-X"] and mode ~= "noop-add" then
      writeall(item(o), (o["-X"]:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)))
    end
  end
else
  io.stderr:write("fake security: unknown command\n")
  os.exit(2)
end
]=]

local function setup(mode)
  local dir = os.tmpname()
  os.remove(dir)
  assert(mcp.core.mkdir_private(dir))
  assert(mcp.core.mkdir_private(dir .. "/items"))
  helper.write_file(dir .. "/fake.lua", (FAKE:gsub("DIR", ("%q"):format(dir), 1)))
  helper.write_file(dir .. "/security", ("#!/bin/sh\nexec %s %s/fake.lua \"$@\"\n"):format(helper.lua_cmd(), dir))
  helper.write_file(dir .. "/uname", "#!/bin/sh\necho Darwin\n")
  os.execute("chmod +x '" .. dir .. "/security' '" .. dir .. "/uname'")
  helper.write_file(dir .. "/mode", mode or "ok")
  return dir
end

local function calls(dir)
  local env = { calls = {} }
  local text = helper.read_file(dir .. "/log") or ""
  local chunk = assert((loadstring or load)(text))
  if setfenv then setfenv(chunk, env) else chunk = assert(load(text, "log", "t", env)) end
  chunk()
  return env.calls
end

local function cleanup(dir) os.execute("rm -rf '" .. dir .. "'") end

describe("mcp.auth.keyring_store (security backend, against a recording fake)", function()
  it("saves with the secret in hex on the stdin of security -i, reads it back, loads and deletes; no secret or key in any argv", function()
    local dir = setup("ok")
    local marker = dir .. "/pwned"
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security", service = "lua-mcp-spec" }))
    assert.equals("security", s.backend)
    local key = "https://mcp.example/$(touch " .. marker .. ")`touch " .. marker .. "`;'\"| -X 00"
    local acct = account(key)
    assert.is_nil(s:load(key))
    local rec = { tokens = { access_token = "at-secret-1", refresh_token = "rt-secret-2" }, client = { client_id = "c" } }
    s:save(key, rec)
    local got = assert(s:load(key))
    assert.equals("at-secret-1", got.tokens.access_token)
    assert.equals("rt-secret-2", got.tokens.refresh_token)
    assert.equals("c", got.client.client_id)
    assert.is_nil(s:load("another"))
    s:delete(key)
    assert.is_nil(s:load(key))

    local log = calls(dir)
    local tool = dir .. "/security"
    local stored = helper.read_file(dir .. "/log")
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", "lua-mcp-probe" }, log[1].argv)
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", acct, "-w" }, log[2].argv)
    -- save: how many pieces the old record had (none here), the command, the read back
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", acct, "-w" }, log[3].argv)
    assert.same({ "-i" }, log[4].argv)
    assert.equals(1, select(2, log[4].stdin:gsub("\n", "")))
    local hexsecret = log[4].stdin:match("^add%-generic%-password %-U %-s lua%-mcp%-spec %-a " .. acct .. " %-X (%x+)\n$")
    assert.truthy(hexsecret, log[4].stdin)
    local secret = hexsecret:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
    assert.same({ key = key, record = rec }, mcp.json.decode(secret))
    -- The write is verified by reading the record back; the load after the save is answered
    -- from the store's memory (no run).
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", acct, "-w" }, log[5].argv)
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", account("another"), "-w" }, log[6].argv)
    -- delete: how many pieces, then the item; it forgets the record, so the load after it asks
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", acct, "-w" }, log[7].argv)
    assert.same({ "delete-generic-password", "-s", "lua-mcp-spec", "-a", acct }, log[8].argv)
    assert.same({ "find-generic-password", "-s", "lua-mcp-spec", "-a", acct, "-w" }, log[9].argv)
    assert.equals(9, #log)
    for _, c in ipairs(log) do
      for _, a in ipairs(c.argv) do
        assert.falsy(a:find("secret", 1, true), a)
        assert.falsy(a:find("mcp.example", 1, true), a)
      end
      if c.argv[1] ~= "-i" then assert.is_nil(c.stdin) end
    end
    assert.falsy(stored:find("at-secret-1", 1, true)) -- only in hex, on stdin
    assert.is_nil(io.open(marker))
    assert.equals(tool, s.tool)
    cleanup(dir)
  end)

  it("save fails when security -i exits 0 but the keychain does not hold the record", function()
    local dir = setup("noop-add")
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    local ok, err = pcall(s.save, s, "https://mcp.example/", { tokens = { access_token = "at" } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("mcp.auth: the keyring store cannot save: the keychain does not hold the record after add-generic-password", 1, true), err)
    local log = calls(dir)
    assert.same({ "-i" }, log[3].argv)
    assert.same({ "find-generic-password", "-s", "lua-mcp", "-a", account("https://mcp.example/"), "-w" }, log[4].argv)
    cleanup(dir)
  end)

  it("writes only printable ASCII, which -w prints as it is: non-ASCII text and hex-digit pieces read back exactly", function()
    local dir = setup("hex-w")
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    -- a token of hex digits long enough that whole pieces are hex digits; text past ASCII, and DEL
    local rec = { tokens = { access_token = ("0a"):rep(2500), refresh_token = "r\127-\195\169-\240\159\152\128" },
      client = { client_name = "Caf\195\169 \226\130\172" } }
    s:save("https://mcp.example/", rec)
    local t = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    assert.same(rec, t:load("https://mcp.example/"))
    local names = io.popen("ls '" .. dir .. "/items'"):read("*a")
    local n = 0
    for name in names:gmatch("%S+") do
      n = n + 1
      local v = helper.read_file(dir .. "/items/" .. name)
      assert.is_nil(v:find("[^\32-\126]"), name)
    end
    assert.equals(4, n) -- 3 pieces and the head
    -- the JSON saved is the record's, its other characters as \u escapes
    local saved = {}
    for i = 1, 3 do saved[i] = helper.read_file(dir .. "/items/lua-mcp_" .. account("https://mcp.example/") .. "-" .. i) end
    saved = table.concat(saved)
    assert.truthy(saved:find('"Caf\\u00e9 \\u20ac"', 1, true), saved)
    assert.truthy(saved:find('"r\\u007f-\\u00e9-\\ud83d\\ude00"', 1, true), saved)
    cleanup(dir)
  end)

  it("a locked keychain, or no security tool, is a clear nil, err", function()
    local dir = setup("locked")
    local s, err = mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" })
    assert.is_nil(s)
    assert.equals("unavailable", err.kind)
    assert.equals("mcp.auth.keyring_store: no keyring is available: security: SecKeychainSearchCopyNext: "
      .. "The user name or passphrase you entered is not correct.", err.message)
    cleanup(dir)
    s, err = mcp.auth.keyring_store({ backend = "security", tool = "/nonexistent/security" })
    assert.is_nil(s)
    assert.equals("unavailable", err.kind)
    assert.equals("mcp.auth.keyring_store: no keyring is available: /nonexistent/security is not installed "
      .. "(macOS: /usr/bin/security)", err.message)
  end)

  it("refuses a service security -i would split or unquote, and an unknown backend", function()
    for _, service in ipairs({ "a b", 'x"y', "it's", "a\nb", "a\\b", "a\tb", "-X", "" }) do
      local ok, err = pcall(mcp.auth.keyring_store, { backend = "security", tool = "/nonexistent/security", service = service })
      assert.is_false(ok, service)
      assert.truthy(tostring(err):find("mcp.auth.keyring_store: ", 1, true), err)
    end
    local ok, err = pcall(mcp.auth.keyring_store, { backend = "keychain" })
    assert.is_false(ok)
    assert.truthy(tostring(err):find('backend must be "secret-tool" or "security"', 1, true), err)
  end)

  it("keeps a record longer than one security -i line in pieces, each line under 4096 bytes; a smaller one drops them", function()
    local dir = setup("ok")
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    -- a real OAuth record with JWTs and an id_token runs to several KB
    local rec = { tokens = { access_token = ("a"):rep(3000), id_token = ("i"):rep(2500), refresh_token = "r" } }
    s:save("k", rec)
    assert.same(rec, s:load("k"))
    local adds = 0
    for _, c in ipairs(calls(dir)) do
      for _, a in ipairs(c.argv) do assert.is_nil(a:find("aaaa", 1, true)) end
      for line in (c.stdin or ""):gmatch("[^\n]+") do
        adds = adds + 1
        assert.is_true(#line + 1 < 4096, #line)
      end
    end
    assert.equals(4, adds) -- 3 pieces of at most 1920 bytes (the record is ~5.6 KB) and the head
    local items = io.popen("ls '" .. dir .. "/items'"):read("*a")
    assert.truthy(items:find(account("k") .. "-3", 1, true), items)
    -- a record that fits one line again: the old pieces are deleted
    s:save("k", { tokens = { access_token = "short" } })
    assert.equals("short", s:load("k").tokens.access_token)
    items = io.popen("ls '" .. dir .. "/items'"):read("*a")
    assert.is_nil(items:find(account("k") .. "-", 1, true), items)
    s:save("k", rec)
    s:delete("k")
    assert.is_nil(s:load("k"))
    assert.equals("", io.popen("ls '" .. dir .. "/items'"):read("*a"))
    cleanup(dir)
  end)

  it("a save or delete whose record's head cannot be read fails and touches nothing: its old pieces are unknown", function()
    local dir = setup("ok")
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    local rec = { tokens = { access_token = ("z"):rep(5000) } } -- 3 pieces and the head
    s:save("k", rec)
    local function items() return io.popen("ls '" .. dir .. "/items'"):read("*a") end
    local before = items()
    assert.truthy(before:find(account("k") .. "-3", 1, true), before)
    local from = #calls(dir)
    helper.write_file(dir .. "/mode", "read-fails") -- the keychain will not let the head be read
    local why = "security: SecKeychainSearchCopyNext: User interaction is not allowed."
    local ok, err = pcall(s.save, s, "k", { tokens = { access_token = "short" } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("mcp.auth: the keyring store cannot save: the record saved before cannot be read, "
      .. "so its pieces are not known (nothing written): " .. why, 1, true), tostring(err))
    local rec2, derr = s:delete("k")
    assert.is_nil(rec2)
    assert.equals("unavailable", derr and derr.kind)
    assert.equals("mcp.auth: mcp.auth.keyring_store(lua-mcp) cannot delete the record: the record saved before cannot "
      .. "be read, so its pieces are not known (nothing deleted): " .. why, derr.message)
    -- nothing was written or deleted: only the two reads of the head ran
    local log = calls(dir)
    assert.equals(from + 2, #log)
    for i = from + 1, #log do assert.equals("find-generic-password", log[i].argv[1]) end
    assert.equals(before, items())
    helper.write_file(dir .. "/mode", "ok")
    assert.same(rec, assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" })):load("k"))
    assert.is_true(s:delete("k"))
    assert.equals("", items())
    cleanup(dir)
  end)

  it("a delete-generic-password that fails is nil, err (kind unavailable); the next load asks the keychain", function()
    local dir = setup("ok")
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    local function items() return io.popen("ls '" .. dir .. "/items'"):read("*a") end
    local why = "security: SecKeychainItemDelete: User interaction is not allowed."
    assert.is_true(s:delete("none")) -- never stored: status 44 is "gone"
    s:save("k", { tokens = { access_token = "kept" } })
    helper.write_file(dir .. "/mode", "delete-fails")
    local ok, err = s:delete("k")
    assert.is_nil(ok)
    assert.equals("unavailable", err and err.kind)
    assert.equals("mcp.auth: mcp.auth.keyring_store(lua-mcp) cannot delete the record: delete-generic-password failed "
      .. "(the record may still be there): " .. why, err.message)
    assert.equals("kept", s:load("k").tokens.access_token) -- memory does not say it is gone
    -- a record in pieces whose head cannot be deleted: its pieces are gone, it reads as not stored
    helper.write_file(dir .. "/mode", "ok")
    local rec = { tokens = { access_token = ("z"):rep(5000) } }
    s:save("k", rec)
    helper.write_file(dir .. "/mode", "head-delete-fails")
    ok, err = s:delete("k")
    assert.is_nil(ok)
    assert.equals("unavailable", err and err.kind)
    assert.equals(account("k") .. "\n", items():gsub("lua%-mcp_", ""))
    helper.write_file(dir .. "/mode", "ok")
    assert.is_nil(s:load("k"))
    assert.is_true(s:delete("k"))
    assert.equals("", items())
    cleanup(dir)
  end)

  it("from a task: the runs do not hold the loop, and a record read or written once is not read again", function()
    local dir = setup("ok")
    local s = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    local rec = { tokens = { access_token = ("a"):rep(3000), refresh_token = "r" } } -- kept in pieces
    local during, got1, got2 = helper.in_task_counting(function()
      s:save("k", rec)
      return s:load("k"), s:load("k")
    end, 1)
    assert.is_true(during > 0)
    assert.same(rec, got1)
    assert.same(rec, got2)
    local log = calls(dir)
    -- the probe; save: the old head, -i, the head and the two pieces read back; no load ran
    assert.equals(6, #log)
    assert.same({ "-i" }, log[3].argv)
    local t = assert(mcp.auth.keyring_store({ backend = "security", tool = dir .. "/security" }))
    assert.same(rec, t:load("k")) -- a new store object reads the keychain
    assert.equals(6 + 1 + 3, #calls(dir))
    cleanup(dir)
  end)

  it("a read that fails other than \"not found\" (status 44) is nil, err (kind unavailable), kept nowhere", function()
    local dir = setup("ok")
    local script = dir .. "/t.lua"
    -- `security` first on PATH, as on macOS; the store's backend found through the fake uname
    helper.write_file(script, ([[
      local mcp = require("mcp")
      local function mode(m) local f = assert(io.open(%q, "w")) f:write(m) f:close() end
      local url = "https://mcp.example/"
      local function show(name, rec, err)
        -- (tostring: Lua 5.1's format takes no nil for %%s)
        print(("%%s=%%s %%s %%s"):format(name, tostring(rec and rec.tokens.access_token), tostring(err and err.kind),
          tostring(err and err.message)))
      end
      local s = assert(mcp.auth.keyring_store({ service = "lua-mcp-spec" }))
      print("backend=" .. s.backend .. " " .. s.tool)
      s:save(url, { tokens = { access_token = "at" } })
      s:save("long", { tokens = { access_token = ("a"):rep(3000) } }) -- kept in pieces
      mode("read-fails")
      local t = assert(mcp.auth.keyring_store({ service = "lua-mcp-spec" }))
      show("load1", t:load(url))
      mode("piece-fails")
      show("pieces", t:load("long"))
      mode("ok")
      show("load2", t:load(url)) -- asked again: the failure was not kept
      print("pieces2=" .. #t:load("long").tokens.access_token)
    ]]):format(dir .. "/mode"))
    local p = io.popen(("PATH=%q LUA_PATH=%q LUA_CPATH=%q %s %s 2>&1"):format(dir .. ":" .. os.getenv("PATH"),
      package.path .. ";;", package.cpath .. ";;", helper.lua_cmd(), script))
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("backend=security security\n", 1, true), out)
    local why = "security: SecKeychainSearchCopyNext: User interaction is not allowed."
    local unavailable = "unavailable mcp.auth: mcp.auth.keyring_store(lua-mcp-spec) cannot read the record: " .. why
    assert.truthy(out:find("load1=nil " .. unavailable .. "\n", 1, true), out)
    assert.truthy(out:find("pieces=nil " .. unavailable .. "\n", 1, true), out)
    assert.truthy(out:find("load2=at nil nil\n", 1, true), out)
    assert.truthy(out:find("pieces2=3000\n", 1, true), out)
    local reads = 0
    for _, c in ipairs(calls(dir)) do
      if c.argv[1] == "find-generic-password" and c.argv[5] == account("https://mcp.example/") then reads = reads + 1 end
    end
    assert.equals(2 + 2, reads) -- the save's two (its old pieces, its read back), then both loads ran the tool
    cleanup(dir)
  end)

  it("is the backend on Darwin (uname -s), found as `security` in PATH; backend = \"secret-tool\" overrides", function()
    local dir = setup("ok")
    local script = dir .. "/t.lua"
    helper.write_file(script, [[
      local mcp = require("mcp")
      local s = assert(mcp.auth.keyring_store({ service = "lua-mcp-spec" }))
      s:save("https://mcp.example/", { tokens = { access_token = "at" } })
      print(s.backend, s.tool, s:load("https://mcp.example/").tokens.access_token)
      local t, err = mcp.auth.keyring_store({ backend = "secret-tool", tool = "/nonexistent/secret-tool" })
      print(t, err.message)
    ]])
    local p = io.popen(("PATH=%q LUA_PATH=%q LUA_CPATH=%q %s %s 2>&1"):format(dir .. ":" .. os.getenv("PATH"),
      package.path .. ";;", package.cpath .. ";;", helper.lua_cmd(), script))
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("security\tsecurity\tat\n", 1, true), out)
    assert.truthy(out:find("nil\tmcp.auth.keyring_store: no keyring is available: /nonexistent/secret-tool is not installed", 1, true), out)
    assert.equals("-i", calls(dir)[3].argv[1])
    cleanup(dir)
  end)
end)
