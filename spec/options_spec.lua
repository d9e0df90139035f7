-- mcp.util.options: the "did you mean" hint of an unknown option key (issue 30: `timeout` among
-- the client config keys was answered with 'name').
local options = require("mcp.util.options")
local mcp = require("mcp")

local function set(list)
  local t = {}
  for _, k in ipairs(list) do t[k] = true end
  return t
end

local function message(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  return tostring(err)
end

describe("options.suggestions", function()
  it("prefers a known key that the typed key is a prefix of", function()
    assert.are.same({ "timeout_ms" }, options.suggestions("timeout", set({ "name", "timeout_ms", "meta" })))
    assert.are.same({ "request_timeout_ms" }, options.suggestions("request_timeout", set({ "request_timeout_ms", "name" })))
  end)

  it("then known keys that contain the typed key, all of the same rank (at most 3)", function()
    local known = set({ "name", "version", "connect_timeout_ms", "request_timeout_ms", "capabilities" })
    assert.are.same({ "connect_timeout_ms", "request_timeout_ms" }, options.suggestions("timeout", known))
  end)

  it("then the one key at the smallest edit distance (a swap of neighbours is one edit)", function()
    assert.are.same({ "close" }, options.suggestions("clsoe", set({ "send", "close" })))
    assert.are.same({ "on_error" }, options.suggestions("on_eror", set({ "on_error", "on_message" })))
    assert.are.same({ "env" }, options.suggestions("ENVV", set({ "env", "cwd" })))
  end)

  it("names nothing when no key is near (a cut-off on the distance)", function()
    assert.are.same({}, options.suggestions("timeout", set({ "name", "cwd", "env" })))
    assert.are.same({}, options.suggestions("zzzzqq", set({ "cwd", "env", "stderr" })))
    assert.is_nil(options.nearest("x", set({ "cwd", "env" })))
    -- a one- or two-letter key matches only by distance, never as a prefix
    assert.are.same({}, options.suggestions("co", set({ "command_line_arguments" })))
  end)

  it("keeps the distance itself exact", function()
    assert.are.equal(0, options.distance("abc", "abc"))
    assert.are.equal(1, options.distance("abc", "acb"))
    assert.are.equal(3, options.distance("", "abc"))
    assert.are.equal(2, options.distance("kitten", "sitting") - 1)
  end)
end)

describe("unknown option hints through the public API", function()
  it("name timeout_ms for `timeout` in per-call options and HTTP options", function()
    assert.is_truthy(message(function()
      mcp.create_http_client("http://127.0.0.1:1/mcp", { timeout = 5 })
    end):find("unknown option 'timeout' (did you mean 'timeout_ms'?)", 1, true))
  end)

  it("name the *_timeout_ms keys, not 'name', for `timeout` in a stdio client's options", function()
    local err = message(function() mcp.create_stdio_client("true", {}, { timeout = 5 }) end)
    assert.is_nil(err:find("'name'", 1, true), err)
    assert.is_truthy(err:find("unknown option 'timeout' (did you mean 'connect_timeout_ms', ", 1, true), err)
    assert.is_truthy(err:find("'request_timeout_ms'", 1, true), err)
  end)

  it("give no hint when nothing is near", function()
    local err = message(function() mcp.stdio_transport({ command = "true", timeout = 5 }) end)
    assert.is_truthy(err:find("unknown option 'timeout'$"), err)
  end)

  it("refuse an unknown key inside oauth = {...} as at the top level, with the hint", function()
    local err = message(function()
      mcp.http_transport({ url = "http://127.0.0.1:1/mcp",
        oauth = { access_token = "t", refresh_token_func = function() end } })
    end)
    assert.is_truthy(err:find("mcp: oauth: unknown option 'refresh_token_func' (did you mean 'refresh_token'", 1, true), err)
    err = message(function()
      mcp.create_http_client("http://127.0.0.1:1/mcp", { oauth = { acess_token = "t" } })
    end)
    assert.is_truthy(err:find("unknown option 'acess_token' (did you mean 'access_token'?)", 1, true), err)
    assert(mcp.http_transport({ url = "http://127.0.0.1:1/mcp", oauth = { access_token = "t", token_url = "http://x/t",
      refresh_token = "r", client_id = "c", client_secret = "s", scopes = { "a" }, expires_at = 1 } }))
  end)
end)
