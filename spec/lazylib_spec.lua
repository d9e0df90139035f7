-- libcurl and libcrypto are opened on first use (src/lazylib.c, curl_api.c, crypto_api.c): with
-- the library's files hidden, each first use fails with a message naming the library, the
-- module itself still loads, and what needs neither library keeps working. The files are hidden
-- in a private mount namespace (`unshare -rm`, /dev/null bound over each); where that is not
-- allowed the cases are skipped.
local helper = require("helper")

local DIRS = { "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
  "/usr/local/lib", "/usr/lib/aarch64-linux-gnu" }
local NAMES = {
  curl = { "libcurl.so.4", "libcurl.so" },
  crypto = { "libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so" },
}

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function namespaces_allowed()
  local ok = os.execute("unshare -rm true >/dev/null 2>&1")
  return ok == true or ok == 0
end

-- Runs `code` in a child interpreter with the given library's files hidden; its output.
local function run_hidden(lib, code)
  local binds = {}
  for _, d in ipairs(DIRS) do
    for _, n in ipairs(NAMES[lib]) do
      local f = d .. "/" .. n
      binds[#binds + 1] = ("[ -e %s ] && mount --bind /dev/null %s;"):format(f, f)
    end
  end
  local script = table.concat(binds, " ") .. " exec env LUA_CPATH=" .. sh_quote(package.cpath)
    .. " LUA_PATH=" .. sh_quote(package.path) .. " " .. helper.lua_cmd() .. " -e " .. sh_quote(code)
  local p = assert(io.popen("unshare -rm sh -c " .. sh_quote(script) .. " 2>&1"))
  local out = p:read("*a")
  p:close()
  return out
end

describe("libraries opened on first use", function()
  local allowed = namespaces_allowed()

  it("fails a digest, random bytes and a key without libcrypto, naming it, every time", function()
    if not allowed then return pending("unshare -rm is not allowed here") end
    local out = run_hidden("crypto", [[
      local core = require("mcp.core")
      print(select(2, pcall(core.sha256, "x")))
      print(select(2, pcall(core.random_bytes, 4)))
      print(select(2, pcall(core.sha256, "x")))
      print(select(2, pcall(core.pkey_generate, "EC")))
      print(core.json_encode({ ok = true }))
    ]])
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.matches("^mcp: SHA%-256 needs OpenSSL's libcrypto: cannot load libcrypto%.so%.3 %(", lines[1])
    assert.matches("^mcp: random bytes need OpenSSL's libcrypto: cannot load libcrypto%.so%.3 %(", lines[2])
    assert.equals(lines[1], lines[3])
    assert.matches("keys and signatures need OpenSSL's libcrypto: cannot load libcrypto%.so%.3 %(", lines[4])
    assert.equals('{"ok":true}', lines[5])
  end)

  it("fails an HTTP exchange without libcurl, naming it", function()
    if not allowed then return pending("unshare -rm is not allowed here") end
    local out = run_hidden("curl", [[
      local core = require("mcp.core")
      print(select(2, pcall(core.http_fetch, { url = "http://127.0.0.1:9/" }, function() end)))
      print(#core.sha256("x"))
    ]])
    assert.matches("mcp: libcurl is needed for HTTP transports: cannot load libcurl%.so%.4 %(", out)
    assert.matches("\n32\n", out)
  end)
end)

describe("the library file names (src/lazylib.c)", function()
  local core = require("mcp.core")

  it("libcrypto on macOS: only versioned names, never the system's aborting libcrypto.dylib stub", function()
    local names = core._lazylib_names("crypto")
    assert.are.equal("libcrypto.so.3", names[1]) -- the soname built against comes first
    local dylibs = {}
    for _, n in ipairs(names) do
      assert.are_not.equal("libcrypto.dylib", n:match("[^/]*$"))
      if n:match("%.dylib$") then
        dylibs[#dylibs + 1] = n
        assert.truthy(n:match("libcrypto%.%d[%d.]*%.dylib$"), n) -- libcrypto.3.dylib, libcrypto.1.1.dylib
      end
    end
    assert.truthy(#dylibs > 0)
    local has = {}
    for _, n in ipairs(dylibs) do has[n] = true end
    assert.truthy(has["libcrypto.3.dylib"])
    assert.truthy(has["/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib"]) -- Homebrew, Apple silicon
    assert.truthy(has["/usr/local/opt/openssl@3/lib/libcrypto.3.dylib"]) -- Homebrew, Intel
    assert.truthy(has["/opt/local/lib/libcrypto.3.dylib"]) -- MacPorts
  end)

  it("libcurl: the soname first, macOS's system library kept", function()
    local names = core._lazylib_names("curl")
    assert.are.equal("libcurl.so.4", names[1])
    assert.are.same({ "libcurl.so.4", "libcurl.so", "libcurl.4.dylib", "libcurl.dylib" }, names)
    assert.has_error(function() core._lazylib_names("ssl") end)
  end)
end)
