-- The real servers of the differential interop suite (docs/INTEROP.md): npm packages pinned to
-- one version each (interop/install.sh installs exactly these), how to start them offline, the
-- read-only calls both clients make, and the normalisation rules, each with its reason.
--
-- A server: id, package, version, sdk (what it is built on), alias (installs under that name, for
-- a second version of a package), bin (an executable under PREFIX/node_modules) or node (a script
-- there that node runs), args, env ({KEY = value}; "{dir}" stands for the run's scratch directory in args and env),
-- setup(dir) (files the calls read), calls ({method, name | uri, arguments, fails}), era (the
-- protocol version both clients must negotiate: docs/INTEROP.md's table), reports (the on_error
-- reports lua-mcp is known to make with this server, {match = "substring", why = "..."}: every
-- report must match one, every one must happen), expect_lua ({path, value, why}: what lua-mcp
-- must see where a rule takes the comparison away), rules.
-- startup_ms: lua-mcp's protocol_discovery_startup_ms for a server that is slow to its first line.
-- A call succeeds (a result without isError) unless it is marked fails = true (a JSON-RPC error or
-- isError): two clients that agree on an error where a result was meant would agree on nothing.
-- A rule: {path = "a.*.b", action = "drop" | "mask", why = "..."}: drop removes the key (on both
-- sides), mask replaces the value with "<masked>" on both sides. "*" matches any one key or index.
-- A rule without a reason, or that matches nothing, fails the server. Rules every server shares
-- are in M.common.
local M = {}

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

M.common = {}

local function tool(name, arguments) return { method = "tools/call", name = name, arguments = arguments } end
local function read(uri) return { method = "resources/read", uri = uri } end
local function prompt(name, arguments) return { method = "prompts/get", name = name, arguments = arguments } end
-- a call meant to fail (an unknown tool, a missing resource, a path outside the allowed directory)
local function fails(c)
  c.fails = true
  return c
end
-- the rmcp servers exit on a request before initialize: lua-mcp restarts them and says so
local RESTART = { match = "closed on the server/discover probe", why = "rmcp exits on any request before initialize" }

M.servers = {
  {
    id = "everything", era = "2025-11-25",
    package = "@modelcontextprotocol/server-everything", version = "2026.8.31",
    sdk = "TypeScript SDK 1.x (the reference test server)",
    -- by its script, not .bin/mcp-server-everything, which the 2025 release below also claims
    node = "@modelcontextprotocol/server-everything/dist/index.js", args = { "stdio" },
    calls = {
      tool("echo", { message = "interop: ünïcode ✓ \"quoted\"\n" }),
      tool("get-sum", { a = 2, b = 3.25 }),
      tool("get-tiny-image"),
      tool("get-annotated-message", { messageType = "error", includeImage = true }),
      tool("get-structured-content", { location = "Chicago" }),
      tool("get-resource-links", { count = 2 }),
      tool("get-resource-reference", { resourceType = "Blob", resourceId = 2 }),
      fails(tool("no-such-tool")),
      read("demo://resource/static/document/features.md"),
      read("demo://resource/dynamic/text/3"),
      read("demo://resource/dynamic/blob/4"),
      fails(read("demo://no/such/resource")),
      prompt("simple-prompt"),
      prompt("args-prompt", { city = "Lyon", state = "Rhône" }),
      prompt("resource-prompt", { resourceType = "Text", resourceId = "1" }),
    },
    rules = (function()
      local why = "the dynamic resources say the wall-clock time they were made at (\"created at 5:47:57 AM\")"
      return {
        { path = "calls.6.result.content.1.resource.blob", action = "mask", why = why }, -- get-resource-reference
        { path = "calls.9.result.contents.0.text", action = "mask", why = why }, -- demo://resource/dynamic/text/3
        { path = "calls.10.result.contents.0.blob", action = "mask", why = why }, -- demo://resource/dynamic/blob/4
        { path = "calls.14.result.messages.1.content.resource.text", action = "mask", why = why }, -- resource-prompt
      }
    end)(),
  },
  {
    -- an older release of the same server: its resources/list is paginated (10 pages of 10)
    id = "everything-2025", era = "2025-11-25",
    package = "@modelcontextprotocol/server-everything", version = "2025.9.25", alias = "server-everything-2025",
    sdk = "TypeScript SDK 1.x (the reference test server, 2025 line)",
    node = "server-everything-2025/dist/index.js", args = { "stdio" },
    calls = {
      tool("add", { a = 1, b = 2 }),
      read("test://static/resource/1"),
      read("test://static/resource/2"),
      read("test://static/resource/100"),
      prompt("complex_prompt", { temperature = "0.7", style = "terse" }),
    },
    rules = {
      { path = "resources.*.text", action = "drop", why = "this server lists each resource with its contents (text), "
        .. "a field Resource does not have: the TS SDK's schema strips it, lua-mcp hands the listing over whole" },
      { path = "resources.*.blob", action = "drop", why = "the same for the binary resources (blob)" },
      { path = "calls.*.result.contents.*.name", action = "drop", why = "this server's resource contents carry the "
        .. "resource's name, a field ResourceContents does not have: the TS SDK strips it, lua-mcp keeps it" },
    },
  },
  {
    id = "filesystem", era = "2025-11-25",
    package = "@modelcontextprotocol/server-filesystem", version = "2026.8.31",
    sdk = "TypeScript SDK 1.x",
    bin = ".bin/mcp-server-filesystem", args = { "{dir}/files" },
    setup = function(dir)
      os.execute("mkdir -p '" .. dir .. "/files/sub'")
      write(dir .. "/files/hello.txt", "hello, interop\nsecond line\n")
      write(dir .. "/files/sub/data.json", '{"a": [1, 2.5, "x"]}\n')
    end,
    calls = {
      tool("list_allowed_directories"),
      tool("list_directory", { path = "{dir}/files" }),
      tool("read_text_file", { path = "{dir}/files/hello.txt", head = 1 }),
      tool("read_multiple_files", { paths = { "{dir}/files/hello.txt", "{dir}/files/sub/data.json" } }),
      tool("directory_tree", { path = "{dir}/files" }),
      tool("search_files", { path = "{dir}/files", pattern = "*.json" }),
      -- its "accessed:" time is the same for both clients because the read above comes first: under
      -- relatime (the default mount option) lua-mcp's read sets it and the TS SDK's read does not
      -- move it again (a strictatime mount would make it differ)
      tool("get_file_info", { path = "{dir}/files/hello.txt" }),
      fails(tool("read_text_file", { path = "{dir}/outside.txt" })),
    },
    rules = {},
  },
  {
    id = "memory", era = "2025-11-25",
    package = "@modelcontextprotocol/server-memory", version = "2026.8.31",
    sdk = "TypeScript SDK 1.x",
    bin = ".bin/mcp-server-memory", args = {},
    env = { MEMORY_FILE_PATH = "{dir}/memory.jsonl" },
    calls = {
      tool("read_graph"),
      tool("search_nodes", { query = "nothing" }),
      tool("open_nodes", { names = { "nobody" } }),
      read("memory://knowledge-graph"),
    },
    rules = {},
  },
  {
    id = "sequential-thinking", era = "2025-11-25",
    package = "@modelcontextprotocol/server-sequential-thinking", version = "2026.8.31",
    sdk = "TypeScript SDK 1.x",
    bin = ".bin/mcp-server-sequential-thinking", args = {},
    env = { DISABLE_THOUGHT_LOGGING = "true" },
    calls = {
      tool("sequentialthinking", { thought = "one step", nextThoughtNeeded = false, thoughtNumber = 1, totalThoughts = 1 }),
    },
    rules = {},
  },
  {
    id = "context7", era = "2026-07-28",
    package = "@upstash/context7-mcp", version = "4.1.1",
    sdk = "TypeScript SDK 2.x (speaks 2026-07-28)",
    bin = ".bin/context7-mcp", args = {},
    -- its tools query a web service: listed, never called
    calls = {},
    rules = {},
  },
  {
    id = "azure-template", era = "2026-07-28",
    package = "@azure/mcp-template-linux-x64", version = "0.0.12-alpha.6621500",
    sdk = "C# SDK (.NET, a self-contained binary; speaks 2026-07-28)",
    bin = "@azure/mcp-template-linux-x64/dist/mcptmp", args = { "server", "start" },
    env = { DOTNET_CLI_TELEMETRY_OPTOUT = "1", AZURE_MCP_COLLECT_TELEMETRY = "false" },
    -- a fresh HOME makes it unpack itself into ~/.net first: 5.6-8 s to its first line on a loaded
    -- 2-core machine, near the 10 s default; the suite tests the era, not how fast .NET unpacks
    startup_ms = 30000,
    calls = {},
    -- the rule below takes serverInfo out of the comparison: lua-mcp must still have read it
    expect_lua = { { path = "serverInfo", value = { name = "Template MCP Server", version = "0.0.12-alpha.6621500" },
                     why = "the DiscoverResult body's serverInfo" } },
    rules = {
      { path = "serverInfo", action = "drop",
        why = "the server puts serverInfo in the DiscoverResult body, not in _meta[\"io.modelcontextprotocol/serverInfo\"] "
          .. "where 2026-07-28 has it: lua-mcp reads it from either place, the TS SDK only from _meta (null)" },
    },
  },
  {
    id = "mcp-time", era = "2025-03-26",
    package = "mcp-time-linux-x64", version = "0.4.0",
    sdk = "Go, mark3labs/mcp-go",
    bin = "mcp-time-linux-x64/bin/mcp-time", args = {},
    calls = {
      tool("convert_timezone", { time = "2026-07-28T12:00:00Z", output_timezone = "Asia/Tokyo" }),
      tool("compare_time", { time_a = "2026-07-28T12:00:00Z", time_b = "2025-11-25T00:00:00Z" }),
      tool("add_time", { time = "2026-07-28T12:00:00Z", duration = "-1h30m" }),
      fails(tool("convert_timezone", { time = "not a time" })),
    },
    rules = {
      { path = "tools.3.inputSchema.properties.format.description", action = "mask",
        why = "current_time lists its predefined formats from a Go map: the order changes on every start of the server" },
    },
  },
  {
    id = "mcp-cron", era = "2025-11-25",
    package = "mcp-cron-linux-amd64", version = "0.9.1",
    sdk = "Go, the official Go SDK",
    bin = "mcp-cron-linux-amd64/bin/mcp-cron",
    args = { "--transport", "stdio", "--db-path", "{dir}/cron.db", "--log-file", "{dir}/cron.log" },
    calls = {
      tool("list_tasks"),
      fails(tool("get_task", { id = "no-such-task" })),
    },
    rules = {},
  },
  {
    id = "cortex", era = "2025-06-18",
    package = "@temporal-cortex/cortex-mcp-linux-x64", version = "0.9.1",
    sdk = "Rust, rmcp",
    bin = "@temporal-cortex/cortex-mcp-linux-x64/bin/cortex-mcp", args = {},
    reports = { RESTART },
    env = { TZ = "UTC" },
    calls = {
      tool("adjust_timestamp", { datetime = "2026-03-07T12:00:00-05:00", adjustment = "+1d2h", timezone = "America/New_York" }),
      tool("compute_duration", { start = "2025-11-25T00:00:00Z", ["end"] = "2026-07-28T12:30:00Z" }),
      tool("convert_timezone", { datetime = "2026-07-28T12:00:00Z", target_timezone = "Asia/Tokyo" }),
      tool("expand_rrule", { rrule = "FREQ=WEEKLY;BYDAY=TU;COUNT=3", dtstart = "2026-07-28T09:00:00", timezone = "Europe/Paris" }),
      fails(tool("convert_timezone", { datetime = "not a time", target_timezone = "Nowhere/Else" })),
      read("cortex://docs/rrule-reference"),
      prompt("convert_time", { time = "3pm EST", target_timezone = "Asia/Tokyo" }),
    },
    rules = {},
  },
  {
    id = "vaulttools", era = "2024-11-05",
    package = "@vaulttools/mcp-linux-x64", version = "0.1.7",
    sdk = "Rust, rmcp",
    bin = "@vaulttools/mcp-linux-x64/bin/vaulttools-mcp", args = { "--allowed-dir", "{dir}/vault" },
    reports = { RESTART },
    setup = function(dir)
      os.execute("mkdir -p '" .. dir .. "/vault/notes'")
      write(dir .. "/vault/notes/first.md", "---\ntags: [interop]\n---\n# First\n\nSee [[second]].\n")
      write(dir .. "/vault/notes/second.md", "# Second\n\nBack to [[first]].\n")
      write(dir .. "/vault/data.json", '{"b": [1, 2.5, null], "a": "é"}\n')
    end,
    calls = {
      tool("vaulttools_text_word_count", { path = "{dir}/vault/notes/first.md" }),
      tool("vaulttools_file_checksum", { path = "{dir}/vault/data.json" }),
      tool("vaulttools_text_json_validate", { path = "{dir}/vault/data.json" }),
      tool("vaulttools_dev_color_convert", { color = "#ff5733", to_format = "hsl" }),
      fails(tool("vaulttools_text_word_count", { path = "{dir}/outside.md" })),
    },
    rules = {},
  },
  {
    id = "leanspec", era = "2024-11-05",
    package = "@leanspec/mcp-linux-x64", version = "0.3.0",
    sdk = "Rust (tokio)",
    bin = "@leanspec/mcp-linux-x64/leanspec-mcp", args = {},
    reports = { { match = "ignored a message that is neither request, notification nor response",
                  why = "it answers notifications/initialized with a response that has no id (docs/INTEROP.md)" } },
    calls = {
      tool("get_capabilities"),
      tool("get_schema"),
      tool("list_specs"),
      tool("get_stats"),
    },
    rules = {},
  },
}

return M
