-- Legacy SSE's new connection after its stream ended (lua/mcp/era/legacy.lua, renew_connection):
-- a call made while it is under way waits for it and is sent on the new connection, as the era
-- says ("Calls that start meanwhile wait for it"), also once the reconnection's connect has begun
-- (it gives the client a new era object, which knew nothing of the renewal: the call went out on
-- the transport not started yet and failed with "Not connected"). Against
-- spec/fixtures/oauth_server.mjs, whose token endpoint answers late (token_delay_ms), so that the
-- renewal (its start refreshes an expired token) lasts a second.
local mcp = require("mcp")
local auth = mcp.auth
local helper = require("helper")
local A = require("auth_helper")

local function token_posts(srv)
  local n = 0
  for _, r in ipairs(A.state(srv).records.requests) do
    if r.method == "POST" and r.path == "/token" then n = n + 1 end
  end
  return n
end

describe("legacy SSE: a call during the background reconnection #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  it("waits for it and goes out on the new connection", function()
    local p = auth.interactive_provider({ store = auth.memory_store(), server_url = srv.base .. "/sse",
      headless = function(u) return auth.follow_authorization(u) end })
    local reconnected = 0
    local c = assert(A.sse_client(srv, { auth_provider = p,
      on_reconnect = function() reconnected = reconnected + 1 end }))
    local posts = token_posts(srv)
    -- the stream ends with the token expired: the background try's connect refreshes it, 1 s at
    -- the token endpoint
    A.control(srv, { expire_access_tokens = true, token_delay_ms = 1000, end_sse_streams = true })
    assert.is_true(helper.wait_until(function() return token_posts(srv) > posts end, helper.ms(10000)))
    local res, err = c:call_tool("whoami", {})
    assert.is_nil(err, tostring(err))
    assert.truthy(res.content[1].text:find("^scopes: "), res.content[1].text)
    assert.equal(1, reconnected)
    c:close()
  end)
end)

-- The background try's reconnection is the client's own work, through its ping; a call that waited
-- for it and goes out while that ping is still out is the user's all the same (the client's own
-- work is marked per exchange, not by a time window from the try's start to its end): a 403
-- insufficient_scope on it steps up with a login, as any call's does.
describe("legacy SSE: a call held behind the background reconnection #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  it("is the user's: its step-up logs in", function()
    local p
    p = auth.interactive_provider({ store = auth.memory_store(), server_url = srv.base .. "/sse",
      headless = function(u)
        p.logins = p.logins + 1
        return auth.follow_authorization(u)
      end })
    p.logins = 0
    local reconnected = 0
    local c = assert(A.sse_client(srv, { auth_provider = p,
      on_reconnect = function() reconnected = reconnected + 1 end }))
    assert.equal(1, p.logins)
    local posts = token_posts(srv)
    -- the stream ends with the token expired: the try's connect refreshes it, 1 s at the token
    -- endpoint, and its ping is answered 2 s late; tools/call needs a scope the token has not
    A.control(srv, { call_scope = "mcp:tools", expire_access_tokens = true, token_delay_ms = 1000,
      ping_delay_ms = 2000, end_sse_streams = true })
    assert.is_true(helper.wait_until(function() return token_posts(srv) > posts end, helper.ms(10000)))
    local res, err = c:call_tool("whoami", {})
    assert.is_nil(err, tostring(err and err.message))
    assert.truthy(res.content[1].text:find("mcp:tools", 1, true), res.content[1].text)
    assert.equal(2, p.logins) -- (login_required, with no login: the defect)
    assert.equal(1, reconnected)
    c:close()
  end)
end)
