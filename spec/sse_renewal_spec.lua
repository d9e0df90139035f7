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
