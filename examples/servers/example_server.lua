#!/usr/bin/env lua5.4
-- example_server.lua: a small MCP server in plain Lua, speaking the stdio transport
-- (one JSON-RPC message per line on stdin/stdout; logs on stderr).
--
--   lua5.4 examples/servers/example_server.lua      (also luajit, lua5.1; needs lua-cjson)
--
-- It offers:
--   tools      echo, add (structured output), slow_count (progress), ask_user (elicitation)
--   resources  example://greeting, example://config, example://logo.png (binary)
--   template   example://notes/{id}
--   prompts    greet, summarize
--   completion greet's `name` argument and the notes template's `id`

-- Load the helper module that sits next to this file, whatever the current directory is.
local here = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local mcp = dofile(here .. "/mcp_server.lua")

local server = mcp.new {
  name = "lua-example-server",
  title = "Lua MCP example server",
  version = "1.0.0",
  instructions = "A demo server. Try the `echo` and `add` tools, read example://greeting, "
    .. "or get the `greet` prompt.",
}

---------------------------------------------------------------------------------------------
-- Tools
---------------------------------------------------------------------------------------------

server:tool {
  name = "echo",
  title = "Echo",
  description = "Returns the message it was given.",
  inputSchema = {
    type = "object",
    properties = { message = { type = "string", description = "Text to echo back" } },
    required = { "message" },
  },
  annotations = { readOnlyHint = true, openWorldHint = false },
  call = function(args)
    if type(args.message) ~= "string" then
      return mcp.text_result("`message` must be a string", true)
    end
    return args.message
  end,
}

server:tool {
  name = "add",
  title = "Add two numbers",
  description = "Adds a and b.",
  inputSchema = {
    type = "object",
    properties = { a = { type = "number" }, b = { type = "number" } },
    required = { "a", "b" },
  },
  outputSchema = {
    type = "object",
    properties = { sum = { type = "number" } },
    required = { "sum" },
  },
  annotations = { readOnlyHint = true, idempotentHint = true },
  call = function(args)
    local a, b = tonumber(args.a), tonumber(args.b)
    if not a or not b then
      return mcp.text_result("`a` and `b` must be numbers", true)
    end
    local sum = a + b
    return {
      content = mcp.array { mcp.text(mcp.number(a) .. " + " .. mcp.number(b) .. " = " .. mcp.number(sum)) },
      structuredContent = { sum = sum },
    }
  end,
}

server:tool {
  name = "slow_count",
  title = "Count with progress",
  description = "Counts from 1 to n, reporting progress along the way (send a progressToken).",
  inputSchema = {
    type = "object",
    properties = { n = { type = "integer", minimum = 0, maximum = 1000 } },
    required = { "n" },
  },
  call = function(args, req)
    local n = mcp.int(args.n)
    if not n or n < 0 or n > 1000 then
      return mcp.text_result("`n` must be an integer between 0 and 1000", true)
    end
    for i = 1, n do
      req:progress(i, n, "counted " .. i .. " of " .. n)
    end
    return "Counted to " .. n
  end,
}

server:tool {
  name = "ask_user",
  title = "Ask the user",
  description = "Asks the user a question through the client (MCP elicitation).",
  inputSchema = {
    type = "object",
    properties = { question = { type = "string" } },
    required = { "question" },
  },
  call = function(args)
    if not server.client_capabilities or not server.client_capabilities.elicitation then
      return mcp.text_result("This client does not support elicitation", true)
    end
    local reply = server:request("elicitation/create", {
      message = tostring(args.question or "?"),
      requestedSchema = {
        type = "object",
        properties = { answer = { type = "string", default = "yes" } },
        required = { "answer" },
      },
    })
    if reply.msg.error then
      return mcp.text_result("Elicitation failed: " .. tostring(reply.msg.error.message), true)
    end
    local result = reply.msg.result or {}
    local text = "action: " .. tostring(result.action)
    if type(result.content) == "table" then
      text = text .. ", content: " .. mcp.encode(result.content)
    end
    return text
  end,
}

---------------------------------------------------------------------------------------------
-- Resources
---------------------------------------------------------------------------------------------

server:resource {
  uri = "example://greeting",
  name = "greeting",
  title = "Greeting",
  description = "A friendly greeting",
  mimeType = "text/plain",
  text = "Hello from the Lua MCP example server!",
}

server:resource {
  uri = "example://config",
  name = "config",
  description = "The server's configuration as JSON",
  mimeType = "application/json",
  read = function()
    return { text = mcp.encode { name = server.info.name, version = server.info.version,
                                 features = mcp.array { "tools", "resources", "prompts" } } }
  end,
}

-- A 1x1 PNG image, base64-encoded.
local LOGO_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4n8YAAAPNAWb9kSz2AAAAAElFTkSuQmCC"

server:resource {
  uri = "example://logo.png",
  name = "logo",
  description = "A tiny PNG image (binary resource)",
  mimeType = "image/png",
  blob = LOGO_PNG,
}

local notes = {
  ["1"] = "Buy milk.",
  ["7"] = "Seven is a lucky number.",
  ["12"] = "Call the plumber.",
  ["42"] = "The answer.",
}

server:resource_template {
  uriTemplate = "example://notes/{id}",
  name = "note",
  description = "A note by numeric id (try 7)",
  mimeType = "text/plain",
  pattern = "^example://notes/(%d+)$",
  read = function(uri, id)
    return notes[id] and { text = notes[id] } -- nil -> "Resource not found"
  end,
  complete = {
    id = function()
      local ids = {}
      for id in pairs(notes) do ids[#ids + 1] = id end
      table.sort(ids, function(x, y) return tonumber(x) < tonumber(y) end)
      return ids -- the helper keeps those starting with what was typed
    end,
  },
}

---------------------------------------------------------------------------------------------
-- Prompts
---------------------------------------------------------------------------------------------

local function user_message(text)
  return { role = "user", content = { type = "text", text = text } }
end

server:prompt {
  name = "greet",
  title = "Greet someone",
  description = "Writes a greeting for a person",
  arguments = { { name = "name", description = "Who to greet", required = true } },
  get = function(args)
    return {
      description = "Greeting for " .. tostring(args.name),
      messages = { user_message("Please write a warm, one-line greeting for " .. tostring(args.name) .. ".") },
    }
  end,
  complete = {
    name = function()
      return { "Alice", "Alan", "Albert", "Bob", "Carol", "Charlie", "Dave", "Eve" }
    end,
  },
}

server:prompt {
  name = "summarize",
  description = "Asks for a summary of a topic",
  arguments = {
    { name = "topic", description = "What to summarize", required = true },
    { name = "style", description = "e.g. brief, detailed, bullet points", required = false },
  },
  get = function(args)
    local style = args.style ~= nil and args.style ~= mcp.null and tostring(args.style) or "brief"
    return { user_message("Give a " .. style .. " summary of: " .. tostring(args.topic)) }
  end,
}

---------------------------------------------------------------------------------------------

mcp.log("[example-server] ready (" .. (_VERSION or "Lua") .. ")")
server:run()
mcp.log("[example-server] stdin closed, bye")
