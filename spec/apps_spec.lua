-- mcp.apps: MCP Apps helpers with the TypeScript SDK's rules.
local mcp = require("mcp")
local apps = mcp.apps

local function tool(name, meta) return { name = name, inputSchema = { type = "object" }, _meta = meta } end

describe("mcp.apps", function()
  it("has the constants and capabilities", function()
    assert.are.equal("io.modelcontextprotocol/ui", apps.EXTENSION_NAME)
    assert.are.equal("text/html;profile=mcp-app", apps.MIME_TYPE)
    assert.are.equal("ui/resourceUri", apps.LEGACY_RESOURCE_URI_META_KEY)
    assert.are.equal('{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}',
      mcp.json.encode(apps.client_capabilities()))
  end)

  local meta_cases = {
    { "no _meta", nil, nil },
    { "ui resourceUri", { ui = { resourceUri = "ui://a", x = 1 } }, { resourceUri = "ui://a", x = 1 } },
    { "legacy key", { ["ui/resourceUri"] = "ui://legacy" }, { resourceUri = "ui://legacy" } },
    { "ui wins over legacy", { ui = { resourceUri = "ui://new" }, ["ui/resourceUri"] = "ui://old" }, { resourceUri = "ui://new" } },
    { "visibility filtered", { ui = { resourceUri = "ui://a", visibility = { "app", "bogus", 3, "model" } } },
      { resourceUri = "ui://a", visibility = { "app", "model" } } },
    { "ui without uri", { ui = { visibility = { "app" } } }, { visibility = { "app" } } },
    { "non-array visibility ignored", { ui = { visibility = "app" } }, {} },
    { "ui not an object", { ui = "x" }, nil },
  }
  for _, c in ipairs(meta_cases) do
    it("get_tool_meta: " .. c[1], function()
      local m, err = apps.get_tool_meta(tool("t", c[2]))
      assert.is_nil(err)
      assert.are.same(c[3], m)
    end)
  end
  for _, bad in ipairs({ "https://x", 5, "UI://x" }) do
    it("rejects resource URI " .. tostring(bad), function()
      local m, err = apps.get_tool_meta(tool("t", { ui = { resourceUri = bad } }))
      assert.is_nil(m)
      assert.truthy(err.message:find("Invalid MCP App resource URI", 1, true))
      assert.is_nil(apps.is_app_tool(tool("t", { ui = { resourceUri = bad } })))
      assert.is_nil(apps.get_resource_uris({ tools = { tool("t", { ui = { resourceUri = bad } }) } }))
      assert.is_nil(apps.split_tools({ tools = { tool("t", { ui = { resourceUri = bad } }) } }))
    end)
  end

  it("finds resource URIs in first-seen order without duplicates", function()
    local defs = { tools = { tool("a", { ui = { resourceUri = "ui://2" } }), tool("b"), tool("c", { ["ui/resourceUri"] = "ui://1" }),
      tool("d", { ui = { resourceUri = "ui://2" } }) } }
    assert.are.same({ "ui://2", "ui://1" }, apps.get_resource_uris(defs))
    assert.is_true(apps.is_app_tool(defs.tools[1]))
    assert.is_false(apps.is_app_tool(defs.tools[2]))
    assert.are.equal("ui://1", apps.get_resource_uri(defs.tools[3]))
  end)

  it("splits by visibility (an empty list hides the tool from both, as TypeScript)", function()
    local defs = { nextCursor = "c2", tools = {
      tool("plain"),
      tool("model_only", { ui = { resourceUri = "ui://a", visibility = { "model" } } }),
      tool("app_only", { ui = { resourceUri = "ui://a", visibility = { "app" } } }),
      tool("both", { ui = { resourceUri = "ui://a", visibility = { "model", "app" } } }),
      tool("no_vis", { ui = { resourceUri = "ui://a" } }),
      tool("empty_vis", { ui = { resourceUri = "ui://a", visibility = { "bogus" } } }),
    } }
    local model, app = apps.split_tools(defs)
    local function names(r)
      local t = {}
      for i, x in ipairs(r.tools) do t[i] = x.name end
      return t
    end
    assert.are.same({ "plain", "model_only", "both", "no_vis" }, names(model))
    assert.are.same({ "app_only", "both" }, names(app))
    assert.are.equal("c2", model.nextCursor)
    assert.are.equal("c2", app.nextCursor)
    local m2, a2 = apps.split_tools(defs.tools) -- a bare array
    assert.are.equal(4, #m2)
    assert.are.equal(2, #a2)
  end)

  local html = "<html><body>\226\128\168&amp;</body></html>"
  local function read_result(content) return { contents = { { uri = "ui://other", mimeType = "text/plain", text = "x" }, content } } end

  it("extracts an app resource from text, with the sanitised meta", function()
    local r, err = apps.resource_from_read_result("ui://a", read_result({ uri = "ui://a", mimeType = apps.MIME_TYPE, text = html,
      _meta = { ui = { prefersBorder = "yes", csp = { connectDomains = { "https://a", 5, "https://b" }, frameDomains = "x", extra = 1 },
        permissions = { camera = {} }, custom = true } } }))
    assert.is_nil(err)
    assert.are.equal(html, r.html)
    assert.are.equal("ui://a", r.uri)
    assert.are.equal(apps.MIME_TYPE, r.mime_type)
    assert.is_nil(r.meta.prefersBorder)
    assert.are.same({ "https://a", "https://b" }, r.meta.csp.connectDomains)
    assert.is_nil(r.meta.csp.frameDomains)
    assert.are.equal(1, r.meta.csp.extra)
    assert.are.same({ camera = {} }, r.meta.permissions)
    assert.is_true(r.meta.custom)
  end)
  it("extracts from a base64 blob (either alphabet)", function()
    local blob = mcp.core.base64_encode(html)
    assert.are.equal(html, apps.resource_from_read_result("ui://a", read_result({ uri = "ui://a", mimeType = apps.MIME_TYPE, blob = blob })).html)
    local url = mcp.core.base64_encode(html, "url")
    assert.are.equal(html, apps.resource_from_read_result("ui://a", read_result({ uri = "ui://a", mimeType = apps.MIME_TYPE, blob = url })).html)
  end)
  local bad_reads = {
    { "missing uri", { uri = "ui://b", mimeType = apps.MIME_TYPE, text = "x" }, "not found in read result" },
    { "wrong mime", { uri = "ui://a", mimeType = "text/html", text = "x" }, "Unsupported MCP App resource MIME type: text/html" },
    { "no text nor blob", { uri = "ui://a", mimeType = apps.MIME_TYPE }, "Unsupported MCP App resource content format" },
    { "bad blob", { uri = "ui://a", mimeType = apps.MIME_TYPE, blob = "%%%" }, "not base64" },
  }
  for _, c in ipairs(bad_reads) do
    it("read result: " .. c[1], function()
      local r, err = apps.resource_from_read_result("ui://a", read_result(c[2]))
      assert.is_nil(r)
      assert.truthy(err.message:find(c[3], 1, true), err.message)
    end)
  end

  it("read_resource refuses a non-ui:// URI without a request", function()
    local fake = { read_resource = function() error("must not be called") end }
    local r, err = apps.read_resource(fake, "https://x")
    assert.is_nil(r)
    assert.truthy(err.message:find("Unsupported MCP App resource URI", 1, true))
    local ok = apps.read_resource({ read_resource = function(_, uri)
      return { contents = { { uri = uri, mimeType = apps.MIME_TYPE, text = "<p>" } } }
    end }, "ui://x")
    assert.are.equal("<p>", ok.html)
  end)

  it("fingerprints like the TypeScript SDK (digest computed with Node)", function()
    local fp = apps.fingerprint_resource({ html = "<b>&</b>\226\128\168", meta = { csp = { connectDomains = { "https://a" } } } })
    assert.are.equal("GDojbPupnaUzDIMp464r6aUt7_eSMFIIWY2rvH8WvVM", fp)
    local same = apps.fingerprint_resource({ html = "<b>&</b>\226\128\168", meta = { csp = { connectDomains = { "https://a" } }, prefersBorder = true } })
    assert.are.equal(fp, same) -- only html, csp and permissions count
    local other = apps.fingerprint_resource({ html = "<b>&</b>", meta = { csp = { connectDomains = { "https://a" } } } })
    assert.is_true(apps.detect_resource_drift(other, fp))
    assert.is_false(apps.detect_resource_drift(fp, same))
  end)
end)
