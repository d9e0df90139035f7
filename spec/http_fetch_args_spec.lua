-- core.http_fetch's checks of its request table (src/transports/fetch_lua.c): each bad field is
-- refused before any exchange starts, with the message naming it.
local core = require("mcp.core")

local function refused(req)
  local ok, err = pcall(core.http_fetch, req, function() end)
  assert.is_false(ok)
  return err
end

describe("core.http_fetch request checks", function()
  it("refuses a header line without a colon or with CR/LF, naming its index", function()
    assert.matches('headers%[2%] must be a "Name: value" line',
      refused({ url = "http://x/", headers = { "A: b", "bad" } }))
    assert.matches('headers%[1%] must be a "Name: value" line',
      refused({ url = "http://x/", headers = { "A: b\r\nC: d" } }))
    assert.matches("table expected", refused({ url = "http://x/", headers = "A: b" }))
  end)

  it("refuses a resolve entry that is not a string or has a line break", function()
    assert.matches('resolve%[2%] must be a "host:port:address" string',
      refused({ url = "http://x/", resolve = { "h:1:1.2.3.4", 5 } }))
    assert.matches('resolve%[1%] must be a "host:port:address" string',
      refused({ url = "http://x/", resolve = { "h:1:1.2.3.4\n" } }))
  end)

  it("accepts only loopback or local as refuse_addresses", function()
    for _, v in ipairs({ "none", 1, true }) do
      assert.matches('refuse_addresses must be "loopback" or "local"',
        refused({ url = "http://x/", refuse_addresses = v }))
    end
  end)

  it("refuses a URL that is not http(s) and a method that is not a token", function()
    assert.matches("url must be an http%(s%) URL", refused({ url = "ftp://x/" }))
    assert.matches("method must be a token", refused({ url = "http://x/", method = "G T" }))
  end)

  it("starts an exchange with every field valid, and cancels it", function()
    local h = core.http_fetch({
      url = "http://127.0.0.1:9/",
      refuse_addresses = "loopback",
      resolve = { "example.test:9:127.0.0.1" },
      headers = { "A: b" },
    }, function() error("a cancelled exchange never calls back") end)
    assert.is_true(h:active())
    h:cancel()
    assert.is_false(h:active())
    core.step(0)
  end)
end)
