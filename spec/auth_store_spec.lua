-- The token stores shared by many processes (issue 25): the file store's lock (mcp.core.file_lock)
-- around read-refresh-write, the record read again before every refresh, a stale copy that never
-- overwrites a newer record, and the file store's owner, mode and symlink checks. Offline parts
-- use the stores and providers directly; the processes run against the OAuth fixture
-- (spec/fixtures/oauth_server.mjs, loopback) with spec/fixtures/oauth_store_client.lua.
local mcp = require("mcp")
local helper = require("helper")
local A = require("auth_helper")

local auth, core = mcp.auth, mcp.core
local URL = "https://mcp.example/mcp"

local function sh(cmd)
  local f = assert(io.popen(cmd .. " 2>&1", "r"))
  local out = f:read("*a")
  f:close()
  return out
end

-- A provider over store with no network use (the refresh grants are the specs' own functions).
local function provider(store)
  return auth.provider({ redirect_url = "http://127.0.0.1:9/callback", server_url = URL, store = store })
end

local function tokens(n, expires_at)
  return { access_token = "access-" .. n, refresh_token = "refresh-" .. n, token_type = "Bearer",
    expires_at = expires_at or (os.time() + 3600) }
end

-- A store directory not made yet, in a directory of its own.
local function newdir()
  return helper.tmpdir() .. "/lua-mcp"
end
teardown(helper.remove_tmpdirs)

describe("mcp.core.file_lock #auth", function()
  it("is exclusive across lock objects, and released by unlock, close and __gc", function()
    local dir = newdir()
    assert(core.mkdir_private(dir))
    local path = dir .. "/x.lock"
    local a = assert(core.file_lock(path))
    assert.is_true(a:held())
    assert.is_false(core.file_lock(path))
    a:unlock()
    assert.is_false(a:held())
    local b = assert(core.file_lock(path))
    assert.is_false(core.file_lock(path))
    b:close()
    do
      local dropped = assert(core.file_lock(path))
      assert.is_true(dropped:held())
    end
    assert.equal(tonumber("600", 8), core.file_mode(path))
    collectgarbage()
    collectgarbage()
    local c = assert(core.file_lock(path))
    c:unlock()
  end)

  it("is exclusive across processes", function()
    local dir = newdir()
    assert(core.mkdir_private(dir))
    local path, go = dir .. "/x.lock", dir .. "/go"
    local script = ([[
      local core = require("mcp.core")
      local lk = assert(core.file_lock(%q))
      io.write("locked\n"); io.flush()
      while not io.open(%q) do core.step(10) end
      lk:unlock()
      io.write("unlocked\n")]]):format(path, go)
    local child = assert(io.popen(("LUA_CPATH='%s;;' %s -e '%s'"):format(package.cpath:match("^[^;]+"),
      helper.lua_cmd(), script), "r"))
    assert.equal("locked", child:read("*l"))
    assert.is_false(core.file_lock(path))
    helper.write_file(go, "")
    assert.equal("unlocked", child:read("*l"))
    child:close()
    local lk = assert(core.file_lock(path))
    lk:unlock()
  end)

  it("never follows a symbolic link, and refuses a lock file another user could use", function()
    local dir = newdir()
    assert(core.mkdir_private(dir))
    helper.write_file(dir .. "/target", "")
    os.execute(("ln -s '%s/target' '%s/l.lock'"):format(dir, dir))
    local lk, err = core.file_lock(dir .. "/l.lock")
    assert.is_nil(lk)
    assert.truthy(helper.has(err, dir .. "/l.lock is a symbolic link"), err)
    helper.write_file(dir .. "/open.lock", "")
    os.execute(("chmod 666 '%s/open.lock'"):format(dir))
    lk, err = core.file_lock(dir .. "/open.lock")
    assert.is_nil(lk)
    assert.truthy(helper.has(err, "chmod 600 " .. dir .. "/open.lock"), err)
  end)
end)

describe("mcp.auth.file_store: owner, mode and symbolic links #auth", function()
  it("refuses a directory with group/other access, saying where and how to fix it", function()
    local dir = newdir()
    local store = auth.file_store({ dir = dir })
    assert(store:save(URL, { tokens = tokens(1) }))
    os.execute(("chmod 755 '%s'"):format(dir))
    local rec, err = store:load(URL)
    assert.is_nil(rec)
    assert.truthy(mcp.is_error(err))
    assert.equal("config", err.kind)
    assert.truthy(helper.has(err.message, dir .. " has mode 0755 (group/other access): chmod 700 " .. dir), err.message)
    local ok, serr = store:save(URL, { tokens = tokens(2) })
    assert.is_nil(ok)
    assert.truthy(helper.has(serr.message, "chmod 700"), serr.message)
    assert.is_nil(store:try_lock(URL))
    -- the flow and a client say so too (nil, err; no login started, nothing raised)
    local p = provider(store)
    local res, aerr = auth.auth(p, { server_url = URL })
    assert.is_nil(res)
    assert.truthy(helper.has(tostring(aerr), "chmod 700"), tostring(aerr))
    local c, cerr = mcp.create_http_client(URL, { auth_provider = p })
    assert.is_nil(c)
    assert.truthy(helper.has(tostring(cerr), "chmod 700"), tostring(cerr))
    os.execute(("chmod 700 '%s'"):format(dir))
    assert.equal("access-1", store:load(URL).tokens.access_token)
  end)

  it("refuses a record with group/other access", function()
    local dir = newdir()
    local store = auth.file_store({ dir = dir })
    assert(store:save(URL, { tokens = tokens(1) }))
    local path = store:path(URL)
    os.execute(("chmod 644 '%s'"):format(path))
    local rec, err = store:load(URL)
    assert.is_nil(rec)
    assert.truthy(helper.has(err.message, path .. " has mode 0644 (group/other access): chmod 600 " .. path), err.message)
    local ok, serr = store:save(URL, { tokens = tokens(2) })
    assert.is_nil(ok)
    assert.truthy(helper.has(serr.message, "chmod 600 " .. path), serr.message)
  end)

  it("never follows a symlinked record, on load or on save", function()
    local dir = newdir()
    local store = auth.file_store({ dir = dir })
    assert(core.mkdir_private(dir))
    local elsewhere = dir .. "/elsewhere.json"
    helper.write_file(elsewhere, mcp.json.encode({ key = URL, record = { tokens = tokens("planted") } }))
    os.execute(("chmod 600 '%s'"):format(elsewhere))
    local path = store:path(URL)
    os.execute(("ln -s '%s' '%s'"):format(elsewhere, path))
    local rec, err = store:load(URL)
    assert.is_nil(rec)
    assert.truthy(helper.has(err.message, path .. " is a symbolic link (never followed): remove it"), err.message)
    local before = helper.read_file(elsewhere)
    local ok, serr = store:save(URL, { tokens = tokens(2) })
    assert.is_nil(ok)
    assert.truthy(helper.has(serr.message, "symbolic link"), serr.message)
    assert.equal(before, helper.read_file(elsewhere)) -- nothing written through the link
    assert.equal(elsewhere, sh(("readlink '%s'"):format(path)):gsub("%s+$", ""))
  end)

  it("never follows a symlinked store directory", function()
    local real = newdir()
    assert(core.mkdir_private(real))
    local dir = newdir()
    assert(core.mkdir_private(dir:match("^(.*)/lua%-mcp$")))
    os.execute(("ln -s '%s' '%s'"):format(real, dir))
    local store = auth.file_store({ dir = dir })
    local ok, err = store:save(URL, { tokens = tokens(1) })
    assert.is_nil(ok)
    assert.truthy(helper.has(err.message, dir .. " is a symbolic link"), err.message)
    local rec, lerr = store:load(URL)
    assert.is_nil(rec)
    assert.truthy(helper.has(lerr.message, "symbolic link"), lerr.message)
    assert.equal("", sh(("ls -A '%s'"):format(real)))
  end)

  it("refuses a record that belongs to another user", function()
    if sh("id -u"):match("^(%d+)") ~= "0" then
      pending("only root can give a file to another user here")
      return
    end
    local dir = newdir()
    local store = auth.file_store({ dir = dir })
    assert(store:save(URL, { tokens = tokens(1) }))
    local path = store:path(URL)
    os.execute(("chown 65534 '%s'"):format(path))
    local rec, err = store:load(URL)
    assert.is_nil(rec)
    assert.truthy(helper.has(err.message, path .. " belongs to uid 65534, not to this user"), err.message)
    local ok, serr = store:save(URL, { tokens = tokens(2) })
    assert.is_nil(ok)
    assert.truthy(helper.has(serr.message, "belongs to uid 65534"), serr.message)
    os.execute(("chown 65534 '%s'"):format(dir))
    os.remove(path)
    rec, err = store:load(URL)
    assert.is_nil(rec)
    assert.truthy(helper.has(err.message, dir .. " belongs to uid 65534"), err.message)
  end)
end)

-- Two providers with their own copies of one stored record, as two processes have.
local function each_store(fn)
  fn("a file store", function() return auth.file_store({ dir = newdir() }) end)
  fn("a memory store", function() return auth.memory_store() end)
end

each_store(function(what, new_store)
  describe("providers sharing " .. what .. " #auth", function()
    it("take the tokens another one rotated behind their back instead of refreshing", function()
      local store = new_store()
      store:save(URL, { tokens = tokens(1) })
      local p, q = provider(store), provider(store)
      local old = p:tokens()
      assert.equal("access-1", q:tokens().access_token)
      local grants = {}
      local function grant(label)
        return function(t)
          grants[#grants + 1] = label .. ":" .. t.refresh_token
          return "AUTHORIZED"
        end
      end
      -- q refreshes: the new tokens are stored; p's copy is stale
      assert.equal("AUTHORIZED", q:locked_refresh(q:tokens(), function(t)
        grants[#grants + 1] = "q:" .. t.refresh_token
        q:save_tokens(tokens(2))
        return "AUTHORIZED"
      end))
      assert.equal("access-1", p:tokens().access_token)
      -- p's refresh reads the record again and takes them: no grant with the used refresh token
      assert.equal("AUTHORIZED", p:locked_refresh(old, grant("p")))
      assert.same({ "q:refresh-1" }, grants)
      assert.equal("access-2", p:tokens().access_token)
      -- rotated again and already expired: refreshed, with the stored refresh token
      store:save(URL, { tokens = tokens(3, os.time() - 10) })
      assert.equal("AUTHORIZED", p:locked_refresh(p:tokens(), grant("p")))
      assert.same({ "q:refresh-1", "p:refresh-3" }, grants)
    end)

    it("never write a stale copy over a newer record", function()
      local store = new_store()
      store:save(URL, { tokens = tokens(1), client_information = { client_id = "c1" } })
      local p, q = provider(store), provider(store)
      assert.equal("c1", p:client_information().client_id)
      q:save_tokens(tokens(2))
      -- p forgets its (used) tokens: the newer stored ones stay, and p takes them
      p:invalidate_credentials("tokens")
      assert.equal("access-2", store:load(URL).tokens.access_token)
      assert.equal("access-2", p:tokens().access_token)
      -- a change p saves keeps what q saved
      q:save_tokens(tokens(3))
      p:save_client_information({ client_id = "c2" })
      local rec = store:load(URL)
      assert.equal("c2", rec.client_information.client_id)
      assert.equal("access-3", rec.tokens.access_token)
      -- q forgets its client (invalid_client): p's newer registration stays
      q:invalidate_credentials("all")
      assert.equal("c2", store:load(URL).client_information.client_id)
      -- its own tokens go
      p:invalidate_credentials("tokens")
      assert.is_nil(store:load(URL).tokens)
    end)

    it("refresh once when they refresh at the same time, and all keep a valid grant", function()
      local store = new_store()
      store:save(URL, { tokens = tokens(1, os.time() - 10) })
      local ps = { provider(store), provider(store), provider(store) }
      for _, p in ipairs(ps) do assert.equal("access-1", p:tokens().access_token) end
      local grants, results, n = {}, {}, 0
      for i, p in ipairs(ps) do
        mcp.spawn(function()
          results[i] = p:locked_refresh(p:tokens(), function(t)
            grants[#grants + 1] = t.refresh_token
            mcp.sleep(100) -- (the token request; the others wait for the lock meanwhile)
            n = n + 1
            p:save_tokens(tokens("new" .. n))
            return "AUTHORIZED"
          end)
        end)
      end
      assert.is_true(helper.wait_until(function() return #results == 3 end, helper.ms(10000)))
      assert.same({ "AUTHORIZED", "AUTHORIZED", "AUTHORIZED" }, results)
      assert.same({ "refresh-1" }, grants)
      for _, p in ipairs(ps) do assert.equal("access-new1", p:tokens().access_token) end
      assert.equal("access-new1", store:load(URL).tokens.access_token)
    end)
  end)
end)

describe("processes sharing one file token store #auth", function()
  local srv = A.serve({ reset = true })
  if not srv then return end

  local function child(dir, go)
    local cmd = ("cd '%s' && LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='%s;;' %s spec/fixtures/oauth_store_client.lua '%s' '%s' '%s'")
      :format(helper.root, package.cpath:match("^[^;]+"), helper.lua_cmd(), srv.url, dir, go)
    return assert(io.popen(cmd, "r"))
  end

  local function count(list, pred)
    local n = 0
    for _, x in ipairs(list) do
      if pred(x) then n = n + 1 end
    end
    return n
  end

  it("a client whose token expired takes the tokens another one refreshed meanwhile", function()
    local dir = newdir()
    local p1 = A.provider(srv, { store = auth.file_store({ dir = dir }) })
    assert.equal("AUTHORIZED", auth.auth(p1, { server_url = srv.url }))
    local p2 = A.provider(srv, { store = auth.file_store({ dir = dir }) })
    local c1 = assert(A.http_client(srv, { auth_provider = p1 }))
    local c2 = assert(A.http_client(srv, { auth_provider = p2 }))
    A.control(srv, { expire_access_tokens = true })
    assert(c1:call_tool("whoami", {})) -- refreshed: the store holds new tokens, p2 the old ones
    local res, err = c2:call_tool("whoami", {})
    c1:close()
    c2:close()
    assert(res, tostring(err))
    local rec = A.state(srv).records
    assert.equal(1, #rec.authorize)
    assert.equal(1, count(rec.token, function(t) return t.grant_type == "refresh_token" end))
    assert.equal(p1:tokens().access_token, p2:tokens().access_token)
  end)

  it("refresh once when their token expired together, and all keep a valid grant", function()
    local dir = newdir()
    local p = A.provider(srv, { store = auth.file_store({ dir = dir }) })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    -- the stored access token is expired; the token endpoint answers slowly, so refreshes overlap
    A.control(srv, { expire_access_tokens = true, token_delay_ms = 300 })
    local go = dir .. "/go"
    local kids = { child(dir, go), child(dir, go), child(dir, go) }
    for _, k in ipairs(kids) do assert.equal("loaded", k:read("*l")) end
    helper.write_file(go, "")
    for _, k in ipairs(kids) do
      local out = k:read("*a")
      k:close()
      local doc = mcp.json.decode(out)
      assert(type(doc) == "table" and doc.ok, out)
    end
    local rec = A.state(srv).records
    assert.equal(1, #rec.authorize) -- no process had to log in again
    assert.equal(1, count(rec.token, function(t) return t.grant_type == "refresh_token" end))
  end)
end)
