-- mcp.elicitation: answers, SEP-1034 defaults, validation (SEP-1330 enum forms), the field list,
-- the terminal and Neovim handlers, and the client's elicitation/create handling end to end.
local mcp = require("mcp")
local helper = require("helper")
local el = mcp.elicitation
local D = mcp.json.decode

-- The SEP-1330 enum forms (and a few plain fields), as a server sends them.
local FORM = D([[{"type":"object","required":["name","color"],"properties":{
  "name":{"type":"string","title":"Name","minLength":1},
  "email":{"type":"string","format":"email"},
  "age":{"type":"integer","minimum":0,"maximum":150,"default":30},
  "ok":{"type":"boolean","default":false},
  "color":{"type":"string","enum":["red","green"]},
  "hero":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Batman"}],"default":"h1"},
  "tools":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["saw","drill","hammer"]},"default":["saw"]},
  "fish":{"type":"array","items":{"anyOf":[{"const":"f1","title":"Tuna"},{"const":"f2","title":"Salmon"}]}},
  "pet":{"type":"string","enum":["p1","p2"],"enumNames":["Cats","Dogs"]}
}}]])

describe("mcp.elicitation answers", function()
  it("builds accept, decline and cancel", function()
    assert.are.same({ action = "accept", content = { a = 1 } }, el.accept({ a = 1 }))
    assert.are.equal("{}", mcp.json.encode(el.accept().content))
    assert.are.same({ action = "decline", _meta = { k = 1 } }, el.decline({ k = 1 }))
    assert.are.same({ action = "cancel" }, el.cancel())
    assert.has_error(function() el.accept("x") end)
  end)
end)

describe("mcp.elicitation.apply_defaults (SEP-1034)", function()
  it("fills omitted fields only and copies the defaults", function()
    local input = { name = "Ada", ok = true }
    local out = el.apply_defaults(FORM, input)
    assert.are.same({ name = "Ada", ok = true, age = 30, hero = "h1", tools = { "saw" } }, out)
    assert.are.same({ name = "Ada", ok = true }, input)
    out.tools[1] = "x"
    assert.are.equal("saw", FORM.properties.tools.default[1])
    assert.are.equal('["saw"]', mcp.json.encode(el.apply_defaults(FORM, {}).tools))
  end)
  it("does not replace false or 0", function()
    local out = el.apply_defaults(FORM, { ok = false, age = 0 })
    assert.is_false(out.ok)
    assert.are.equal(0, out.age)
  end)
  it("recurses into nested object properties", function()
    local s = { properties = { addr = { type = "object", properties = { city = { default = "Paris" } } } } }
    assert.are.same({ addr = { city = "Paris", zip = "1" } }, el.apply_defaults(s, { addr = { zip = "1" } }))
  end)
end)

describe("mcp.elicitation.validate (SEP-1330 forms)", function()
  local base = { name = "Ada", color = "red" }
  local function with(k, v)
    local t = {}
    for kk, vv in pairs(base) do t[kk] = vv end
    t[k] = v
    return t
  end
  local cases = {
    { "minimal", base, true },
    { "untitled single-select", with("color", "blue"), "/color" },
    { "titled single-select (oneOf const)", with("hero", "h2"), true },
    { "titled single-select, bad value", with("hero", "h3"), "/hero" },
    { "untitled multi-select", with("tools", { "saw", "drill" }), true },
    { "untitled multi-select, bad item", with("tools", { "saw", "axe" }), "/tools/1" },
    { "multi-select, too many", with("tools", { "saw", "drill", "hammer" }), "/tools" },
    { "multi-select, too few", with("tools", mcp.array()), "/tools" },
    { "titled multi-select (anyOf const)", with("fish", { "f2" }), true },
    { "titled multi-select, bad item", with("fish", { "f9" }), "/fish/0" },
    { "legacy enumNames", with("pet", "p2"), true },
    { "legacy enumNames, label is not a value", with("pet", "Dogs"), "/pet" },
    { "email format", with("email", "not an email"), "/email" },
    { "integer bounds", with("age", 151), "/age" },
    { "integer type", with("age", 1.5), "/age" },
    { "boolean type", with("ok", "yes"), "/ok" },
    { "required missing", { color = "red" }, "/name" },
    { "minLength", with("name", ""), "/name" },
  }
  for _, c in ipairs(cases) do
    it(c[1], function()
      local ok, err = el.validate(FORM, el.apply_defaults(FORM, c[2]))
      if c[3] == true then
        assert.is_nil(err)
        assert.is_true(ok)
      else
        assert.is_nil(ok)
        assert.are.equal(c[3], err.data.path, err.message)
        assert.truthy(err.message:find("the elicitation answer does not match its schema: " .. c[3], 1, true), err.message)
      end
    end)
  end
end)

describe("mcp.elicitation.fields", function()
  it("lists the fields in the server's property order, with choices for every enum form", function()
    local fs = el.fields(FORM)
    local names = {}
    for i, f in ipairs(fs) do names[i] = f.name end
    assert.are.same({ "name", "email", "age", "ok", "color", "hero", "tools", "fish", "pet" }, names)
    local f = mcp.tools.by_name(fs)
    assert.is_true(f.name.required)
    assert.are.equal("Name", f.name.title)
    assert.are.same({ { value = "red", label = "red" }, { value = "green", label = "green" } }, f.color.choices)
    assert.are.same({ { value = "h1", label = "Superman" }, { value = "h2", label = "Batman" } }, f.hero.choices)
    assert.are.same({ { value = "p1", label = "Cats" }, { value = "p2", label = "Dogs" } }, f.pet.choices)
    assert.is_true(f.tools.multiple)
    assert.are.equal(3, #f.tools.choices)
    assert.are.same({ value = "f2", label = "Salmon" }, f.fish.choices[2])
    assert.are.equal(30, f.age.default)
    assert.are.equal("email", f.email.format)
    assert.are.same({}, el.fields(nil))
  end)
  it("keeps the wire order of any decoded schema, and orders a Lua-built one required first, then by name", function()
    local names = {}
    for i, f in ipairs(el.fields(D('{"properties":{"zz":{},"b":{},"aa":{}},"required":["aa"]}'))) do names[i] = f.name end
    assert.are.same({ "zz", "b", "aa" }, names)
    names = {}
    for i, f in ipairs(el.fields({ properties = { b = {}, a = {}, c = {} }, required = { "c" } })) do names[i] = f.name end
    assert.are.same({ "c", "a", "b" }, names)
  end)
end)

describe("mcp.elicitation.parse_answer", function()
  local f = mcp.tools.by_name(el.fields(FORM))
  local cases = {
    { f.age, " 42 ", 42 }, { f.age, "4.5", nil }, { f.age, "x", nil },
    { f.ok, "Yes", true }, { f.ok, "n", false }, { f.ok, "0", false }, { f.ok, "maybe", nil },
    { f.color, "2", "green" }, { f.color, "red", "red" }, { f.color, "blue", nil },
    { f.hero, "batman", "h2" }, { f.hero, "h1", "h1" }, { f.pet, "Dogs", "p2" },
    { f.tools, "1, drill", { "saw", "drill" } }, { f.tools, "1,9", nil },
    { f.name, "  Ada Lovelace ", "Ada Lovelace" },
    -- each answer is checked against its field's schema as well
    { f.age, "200", nil }, { f.age, "-1", nil }, { f.name, "   ", nil }, { f.email, "not-an-email", nil },
    { f.email, "ada@example.com", "ada@example.com" }, { f.tools, "1,2,3", nil },
  }
  for i, c in ipairs(cases) do
    it(("case %d: %s %q"):format(i, c[1].name, c[2]), function()
      local v, err = el.parse_answer(c[1], c[2])
      if c[3] == nil then
        assert.is_nil(v)
        assert.is_string(err)
      else
        assert.are.same(c[3], v)
      end
    end)
  end
end)

describe("mcp.elicitation.finish", function()
  local form_req = { mode = "form", requested_schema = FORM }
  it("applies defaults and validates an accepted form", function()
    local r = assert(el.finish(form_req, el.accept({ name = "Ada", color = "green" }, { trace = "t" })))
    assert.are.same({ action = "accept", content = { name = "Ada", color = "green", age = 30, ok = false, hero = "h1",
      tools = { "saw" } }, _meta = { trace = "t" } }, r)
  end)
  local bad = {
    { "a non-table", "accept", "not a result table", "handler" },
    { "an unknown action", { action = "maybe" }, "action must be accept, decline or cancel", "handler" },
    { "array content", { action = "accept", content = { "x" } }, "must be an object", "handler" },
    { "an invalid answer", { action = "accept", content = { name = 5, color = "red" } }, "/name: expected string", "validation" },
  }
  for _, c in ipairs(bad) do
    it("rejects " .. c[1], function()
      local r, err = el.finish(form_req, c[2])
      assert.is_nil(r)
      assert.are.equal(c[4], err.kind)
      assert.are.equal(-32603, err.code)
      assert.truthy(err.message:find(c[3], 1, true), err.message)
    end)
  end
  it("drops content for decline, cancel and URL mode", function()
    assert.are.same({ action = "decline" }, el.finish(form_req, { action = "decline", content = { x = 1 } }))
    assert.are.same({ action = "accept" }, el.finish({ mode = "url", url = "https://x" }, el.accept({ x = 1 })))
  end)
  it("accepts anything without a requested schema", function()
    assert.are.same({ action = "accept", content = { x = 1 } }, el.finish({ mode = "form" }, el.accept({ x = 1 })))
  end)
end)

-- ---- ready handlers ----------------------------------------------------------------------------

local function lines(list)
  local i = 0
  return function()
    i = i + 1
    return list[i]
  end
end

local function sink()
  local buf = {}
  return { write = function(self, ...) for _, s in ipairs({ ... }) do buf[#buf + 1] = s end return self end,
           flush = function() end, text = function() return table.concat(buf) end }
end

describe("mcp.elicitation.terminal_handler", function()
  local req = { message = "Tell me", mode = "form", requested_schema = FORM }
  it("asks every field, with choices and defaults", function()
    local out = sink()
    -- order: name, email, age, ok, color, hero, tools, fish, pet
    local h = el.terminal_handler({ output = out, input = lines({ "", "Ada", "", "", "y", "9", "2", "batman", "", "1,2", "" }) })
    local r = h(req)
    assert.are.equal("accept", r.action)
    assert.are.same({ name = "Ada", color = "green", fish = { "f1", "f2" }, hero = "h2", ok = true }, r.content)
    local text = out.text()
    assert.truthy(text:find("Tell me", 1, true))
    assert.truthy(text:find("this field is required", 1, true))
    assert.truthy(text:find("not one of the choices: 9", 1, true))
    assert.truthy(text:find("2) Batman", 1, true))
    assert.truthy(text:find("default 30", 1, true))
    assert.truthy(el.finish(req, r))
  end)
  it("asks a field again at once when its answer fails the field's schema", function()
    local out = sink()
    local h = el.terminal_handler({ output = out,
      input = lines({ "Ada", "bad-email", "ada@example.com", "200", "40", "", "red", "", "1,2,3", "2", "", "" }) })
    local r = h(req)
    assert.are.equal("accept", r.action)
    assert.are.same({ name = "Ada", email = "ada@example.com", age = 40, color = "red", tools = { "drill" } }, r.content)
    local text = out.text()
    assert.truthy(text:find("must be a valid email", 1, true), text)
    assert.truthy(text:find("150", 1, true), text)
    assert.truthy(el.finish(req, r))
  end)
  it("declines, cancels, and cancels at the end of input", function()
    assert.are.equal("decline", el.terminal_handler({ output = sink(), input = lines({ "Ada", ":decline" }) })(req).action)
    assert.are.equal("cancel", el.terminal_handler({ output = sink(), input = lines({ ":cancel" }) })(req).action)
    assert.are.equal("cancel", el.terminal_handler({ output = sink(), input = lines({ "Ada" }) })(req).action)
  end)
  it("handles URL mode", function()
    local url_req = { message = "Authorize", mode = "url", url = "https://example.com/auth" }
    local out = sink()
    assert.are.equal("accept", el.terminal_handler({ output = out, input = lines({ "?", "yes" }) })(url_req).action)
    assert.truthy(out.text():find("https://example.com/auth", 1, true))
    assert.are.equal("decline", el.terminal_handler({ output = sink(), input = lines({ "n" }) })(url_req).action)
    assert.are.equal("cancel", el.terminal_handler({ output = sink(), input = lines({}) })(url_req).action)
  end)
  it("reads from a file handle", function()
    local path = os.tmpname()
    helper.write_file(path, "Ada\n\n\n\nred\n\n\n\n\n")
    local fh = assert(io.open(path, "r"))
    local r = el.terminal_handler({ output = sink(), input = fh })(req)
    fh:close()
    os.remove(path)
    assert.are.same({ name = "Ada", color = "red" }, r.content)
  end)
end)

-- A stand-in for Neovim: vim.schedule queues, the test drains the queue between loop steps (as
-- Neovim's main loop would); vim.ui.* answer from a script.
local function fake_vim(script)
  local v = { queue = {}, prompts = {}, opened = {} }
  v.schedule = function(f) v.queue[#v.queue + 1] = f end
  v.notify = function(msg) v.prompts[#v.prompts + 1] = "notify: " .. msg end
  v.log = { levels = { WARN = 3 } }
  local i = 0
  local function answer() i = i + 1 return script[i] end
  v.ui = {
    input = function(opts, cb)
      v.prompts[#v.prompts + 1] = "input: " .. opts.prompt .. (opts.default and ("[" .. opts.default .. "]") or "")
      cb(answer())
    end,
    select = function(items, opts, cb)
      local labels = {}
      for k, it in ipairs(items) do labels[k] = opts.format_item and opts.format_item(it) or tostring(it) end
      v.prompts[#v.prompts + 1] = "select: " .. opts.prompt .. " {" .. table.concat(labels, "|") .. "}"
      local a = answer()
      if a == nil then return cb(nil, nil) end
      cb(items[a], a)
    end,
    open = function(url) v.opened[#v.opened + 1] = url end,
  }
  return v
end

local function run_nvim(vim, req)
  local h = el.nvim_handler({ vim = vim })
  local result, done
  mcp.spawn(function()
    result = h(req)
    done = true
  end)
  local deadline = os.time() + 10
  while not done and os.time() < deadline do
    local q = vim.queue
    vim.queue = {}
    for _, f in ipairs(q) do f() end
    mcp.loop.step(0)
  end
  assert.is_true(done, "the handler did not finish")
  return result
end

describe("mcp.elicitation.url_host", function()
  local function host(u) return (el.url_host(u)) end
  it("is the host a browser opens: userinfo, port and case left out", function()
    assert.are.equal("login.example.com", host("HTTPS://User@Login.Example.com:8443/a?b=c"))
    assert.are.equal("c.example", host("https://a@b@c.example/"))
    assert.are.equal("[::1]", host("https://[::1]:80/"))
  end)
  it("is not fooled by what a browser reads differently from a naive split", function()
    -- a backslash is a slash in http(s): the browser goes to evil.example, not good.example
    assert.are.equal("evil.example", host("https://evil.example\\@good.example/x"))
    assert.are.equal("evil.example", host("https:evil.example/x"))
    assert.are.equal("evil.example", host("https:\\\\evil.example/x"))
    assert.are.equal("evil.example", host("https://ev%69l.example/"))
    assert.are.equal("evil.example", host(" https://evil.exa\tmple/"))
  end)
  it("flags an internationalized host: punycode, or non-ASCII characters (a Cyrillic a)", function()
    assert.is_true(select(2, el.url_host("https://xn--pple-43d.com/")))
    assert.is_true(select(2, el.url_host("https://\208\176pple.com/")))
    assert.is_false(select(2, el.url_host("https://apple.com/")))
  end)
  it("is nil for a URL without a host", function()
    assert.is_nil(host("mailto:a@b.example"))
    assert.is_nil(host("file:///etc/passwd"))
    assert.is_nil(host("not a url"))
  end)
end)

describe("mcp.elicitation.nvim_handler", function()
  local req = { message = "Tell me", mode = "form", requested_schema = FORM }
  it("asks with vim.ui.select and vim.ui.input", function()
    -- Answer; name; email (skip); age (input, default offered); ok (select 2 = No); color (select 2);
    -- hero (select 1); tools (pick 1 = done: none); fish (pick 2 then done); pet (select 1)
    local vim = fake_vim({ 1, "Ada", "", "", 2, 2, 1, 1, 2, 1, 1 })
    local r = run_nvim(vim, req)
    if r == nil then return end
    assert.are.equal("accept", r.action)
    assert.are.same({ name = "Ada", color = "green", fish = { "f1" }, hero = "h1", ok = false, pet = "p1" }, r.content)
    local all = table.concat(vim.prompts, "\n")
    assert.truthy(all:find("select: Tell me {Answer|Decline|Cancel}", 1, true))
    assert.truthy(all:find("input: age: [30]", 1, true))
    assert.truthy(all:find("Superman|Batman", 1, true))
    assert.truthy(el.finish(req, r))
  end)
  it("re-asks a multiple choice the field's schema refuses", function()
    local form = D('{"type":"object","properties":{"fish":{"type":"array","minItems":2,' ..
      '"items":{"anyOf":[{"const":"f1","title":"Tuna"},{"const":"f2","title":"Salmon"}]}}},"required":["fish"]}')
    -- Answer; pick Tuna then done (too few: asked again); pick Tuna, then Salmon (all picked)
    local vim = fake_vim({ 1, 2, 1, 2, 2 })
    local r = run_nvim(vim, { message = "Fish", mode = "form", requested_schema = form })
    if r == nil then return end
    assert.are.same({ fish = { "f1", "f2" } }, r.content)
    assert.truthy(table.concat(vim.prompts, "\n"):find("notify: MCP: ", 1, true))
  end)
  it("re-asks an unparsable input and cancels on <Esc>", function()
    local vim = fake_vim({ 1, "Ada", "", "many" })
    local r = run_nvim(vim, req)
    if r == nil then return end
    assert.are.equal("cancel", r.action)
    assert.truthy(table.concat(vim.prompts, "\n"):find("notify: MCP: not a number", 1, true))
  end)
  it("declines and cancels from the first prompt", function()
    if run_nvim(fake_vim({ 2 }), req) == nil then return end
    assert.are.equal("decline", run_nvim(fake_vim({ 2 }), req).action)
    assert.are.equal("cancel", run_nvim(fake_vim({}), req).action)
  end)
  it("opens the URL in URL mode", function()
    local vim = fake_vim({ 1 })
    local r = run_nvim(vim, { message = "Authorize", mode = "url", url = "https://example.com/a" })
    if r == nil then return end
    assert.are.equal("accept", r.action)
    assert.are.same({ "https://example.com/a" }, vim.opened)
    assert.are.equal("decline", run_nvim(fake_vim({ 2 }), { message = "m", mode = "url", url = "u" }).action)
  end)
  it("URL mode shows the URL's host (and warns about punycode); a decline opens nothing", function()
    local vim = fake_vim({ 2 })
    local r = run_nvim(vim, el.request_from_params({ message = "Pay", mode = "url", url = "https://xn--pple-43d.com/pay" }))
    if r == nil then return end
    assert.are.equal("decline", r.action)
    assert.are.same({}, vim.opened)
    local all = table.concat(vim.prompts, "\n")
    assert.truthy(all:find("host xn--pple-43d.com", 1, true), all)
    assert.truthy(all:find("internationalized name", 1, true), all)
  end)
  it("names the asking server in its prompts", function()
    local vim = fake_vim({ 2 })
    local r = run_nvim(vim, { message = "Pay", mode = "url", url = "https://pay.example/", server = "Shop" })
    assert.are.equal("decline", r.action)
    assert.truthy(table.concat(vim.prompts, "\n"):find("select: [Shop] Pay (https://pay.example/", 1, true))
    vim = fake_vim({ 3 })
    run_nvim(vim, { message = "Tell me", mode = "form", requested_schema = FORM, server = "Shop" })
    assert.truthy(table.concat(vim.prompts, "\n"):find("select: [Shop] Tell me {", 1, true))
  end)
  it("URL mode opens only http(s) with vim.ui.open; another scheme is shown for the user to open", function()
    local vim = fake_vim({ 1 })
    local r = run_nvim(vim, el.request_from_params({ message = "m", mode = "url", url = "file:///tmp/x.desktop" }))
    assert.are.equal("accept", r.action)
    assert.are.same({}, vim.opened)
    local all = table.concat(vim.prompts, "\n")
    assert.truthy(all:find("notify: MCP: open it in your browser: file:///tmp/x.desktop", 1, true), all)
  end)
end)

-- ---- through the client --------------------------------------------------------------------------

describe("elicitation/create through the client", function()
  local client, reported
  local function connect(handler, opts)
    reported = {}
    local o = { on_error = function(e) reported[#reported + 1] = e end, on_elicitation_request = handler }
    for k, v in pairs(opts or {}) do o[k] = v end
    local err
    client, err = helper.test_server(nil, o)
    assert(client, tostring(err))
  end
  after_each(function()
    if client then client:close() end
    client = nil
  end)
  -- the test server's elicit tool answers with the client's full response message
  local function elicit(args)
    local res = assert(client:call_tool("elicit", args or {}))
    return res.structuredContent
  end

  it("advertises the capability and applies defaults to an accepted answer", function()
    local seen
    connect(function(req)
      seen = req
      return el.accept({ name = "Ada" })
    end)
    local msg = elicit()
    assert.are.same({ action = "accept", content = { name = "Ada", age = 30 } }, msg.result)
    assert.are.equal("Please enter your details", seen.message)
    assert.are.equal("form", seen.mode)
    assert.are.equal("object", seen.requested_schema.type)
    assert.are.same({}, reported)
  end)
  it("hands the fields over in the order the server wrote them, and the terminal handler re-asks a bad answer", function()
    local out = sink()
    connect(el.terminal_handler({ output = out, input = lines({ "x", "5", "Zed", "no-at-sign", "z@example.com" }) }))
    local schema_json = '{"type":"object","properties":{"zebra":{"type":"integer","minimum":3},' ..
      '"apple":{"type":"string","title":"Apple"},"mango":{"type":"string","format":"email"}},"required":["mango"]}'
    local msg = elicit({ schema_json = schema_json })
    assert.are.same({ action = "accept", content = { zebra = 5, apple = "Zed", mango = "z@example.com" } }, msg.result)
    local text = out.text()
    local z, a, m = text:find("zebra", 1, true), text:find("Apple", 1, true), text:find("mango", 1, true)
    assert.is_true(z < a and a < m, text)
    assert.truthy(text:find("not a number", 1, true), text)
    assert.truthy(text:find("must be a valid email", 1, true), text)
  end)
  it("answers decline and cancel", function()
    local action = "decline"
    connect(function() return { action = action, content = { ignored = true } } end)
    assert.are.same({ action = "decline" }, elicit().result)
    action = "cancel"
    assert.are.same({ action = "cancel" }, elicit().result)
  end)
  it("answers an invalid answer with a JSON-RPC error and reports it", function()
    connect(function() return el.accept({ name = 5 }) end)
    local msg = elicit()
    assert.is_nil(msg.result)
    assert.are.equal(-32603, msg.error.code)
    assert.truthy(msg.error.message:find("/name: expected string", 1, true), msg.error.message)
    assert.is_true(helper.wait_until(function() return #reported > 0 end, 2000))
    assert.are.equal("validation", reported[1].kind)
    assert.are.equal("/name", reported[1].data.path)
  end)
  it("answers a raising handler with a JSON-RPC error and reports it", function()
    connect(function() error("handler exploded") end)
    local msg = elicit()
    assert.are.equal(-32603, msg.error.code)
    assert.truthy(msg.error.message:find("handler exploded", 1, true))
    assert.is_true(helper.wait_until(function() return #reported > 0 end, 2000))
    assert.truthy(tostring(reported[1]):find("handler exploded", 1, true))
  end)
  it("answers a handler that returns an invalid result with a JSON-RPC error", function()
    connect(function() return { action = "sure" } end)
    assert.are.equal(-32603, elicit().error.code)
    assert.is_true(helper.wait_until(function() return #reported > 0 end, 2000))
  end)
  it("handles URL mode (no content in the answer)", function()
    local seen
    connect(function(req)
      seen = req
      return el.accept({ stray = 1 })
    end, { elicitation_url = true }) -- 2025-11-25: URL mode only when declared
    local msg = elicit({ mode = "url", url = "https://example.com/x", elicitationId = "e-9" })
    assert.are.same({ action = "accept" }, msg.result)
    assert.are.same({ "url", "https://example.com/x", "e-9" }, { seen.mode, seen.url, seen.elicitation_id })
  end)
  it("rejects malformed params without calling the handler", function()
    local called = false
    connect(function() called = true return el.cancel() end)
    local msg = elicit({ params = { requestedSchema = { type = "object" } } })
    assert.truthy(msg.error)
    assert.truthy(msg.error.message:find("message must be a string", 1, true))
    assert.is_false(called)
    msg = elicit({ params = { message = "m", mode = "carrier-pigeon" } })
    assert.truthy(msg.error.message:find("unknown mode", 1, true))
  end)
  it("validates against a custom schema with SEP-1330 forms", function()
    connect(function() return el.accept({ name = "Ada", color = "red", tools = { "saw", "axe" } }) end)
    local msg = elicit({ schema = FORM })
    assert.truthy(msg.error.message:find("/tools/1", 1, true), msg.error.message)
  end)
end)
