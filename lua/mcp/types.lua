---@meta
-- LuaCATS declarations (lazydev.nvim and LuaLS read them from the plugin's lua/ directory): the
-- shapes of options and results the API passes around, and what lua-mcp defines dynamically
-- (generated methods, the C core). Not a module to require: it declares, it does nothing.
-- luacheck: ignore 241

-- ---- options -------------------------------------------------------------------------------

---@class mcp.CallOptions per-call options of every request method
---@field timeout_ms number|nil overrides request_timeout_ms; 0 = no timeout
---@field on_progress fun(params: mcp.ProgressParams)|nil each notifications/progress of this call
---@field cancel mcp.CancelToken|nil from mcp.cancel_token()
---@field reset_timeout_on_progress boolean|nil progress restarts timeout_ms
---@field max_total_timeout_ms number|nil fails the call after this long whatever its progress
---@field meta table|nil call_tool: sent as params._meta
---@field cache boolean|nil false: bypass the 2026-07-28 result cache (ttlMs)
---@field headers table<string, string|number|false>|nil per-request headers (the transport's send options; HTTP)
---@field max_pages number|nil list_all_*: the most pages followed
---@field task table|nil call_tool, legacy era: run the call as a 2025-11-25 task ({ttl = ms})
---@field validate_output boolean|nil call_tool: check structuredContent against the tool's outputSchema

---@class mcp.CancelToken
---@field cancelled boolean
---@field reason string|nil
local CancelToken = {}
---@param reason string|nil
function CancelToken:cancel(reason) end

---@class mcp.ClientConfig
---@field client_name string|nil
---@field client_version string|nil
---@field capabilities table|nil
---@field request_timeout_ms number|nil default 30000
---@field connect_timeout_ms number|nil bound on initialize (default request_timeout_ms; 60000 at least for a stdio server's first connect)
---@field max_retries integer|nil call_tool retries on retryable transport errors
---@field protocol_version string|nil one of mcp.SUPPORTED_PROTOCOL_VERSIONS
---@field protocol_version_discovery boolean|nil default true: probe with server/discover (2026-07-28) first
---@field protocol_discovery_timeout_ms number|nil the probe's deadline, default 1000 (for a spawned server: from its first line on stdout)
---@field protocol_discovery_startup_ms number|nil how long a spawned (stdio) server may take to write its first line during the probe, default 10000
---@field max_input_rounds number|nil input_required rounds per call (SEP-2322), default 16
---@field on_error fun(err: mcp.Error)|nil
---@field on_close fun(reason: string)|nil
---@field on_elicitation_request fun(req: mcp.ElicitationRequest): table|nil
---@field on_sampling_request fun(params: table): table|string|nil
---@field on_roots_list fun(): table[]|nil
---@field on_message fun(direction: "send"|"receive", message: table)|nil
---@field roots table[]|nil
---@field elicitation_url boolean|nil the elicitation handler takes URL mode (declares elicitation.url)
---@field sampling_tools boolean|nil the sampling handler takes tools (declares sampling.tools)
---@field trace_context table|fun(span: table): table|nil {traceparent=, tracestate=} put in every request's _meta
---@field on_span_start fun(span: table): table|nil each request starts (may return its trace context)
---@field on_span_end fun(span: table)|nil each request ended (status, error, duration_ms)
---@field key_order boolean|nil every object received keeps the server's key order (its metatable's __keyorder), which mcp.json.encode follows

-- ---- results -------------------------------------------------------------------------------

---@class mcp.ProgressParams
---@field progressToken any
---@field progress number
---@field total number|nil
---@field message string|nil

---@class mcp.Tool a tools/list entry as the server sent it
---@field name string
---@field title string|nil
---@field description string|nil
---@field inputSchema table
---@field outputSchema table|nil
---@field annotations table|nil readOnlyHint, destructiveHint, idempotentHint, openWorldHint
---@field _meta table|nil

---@class mcp.ContentItem an item of CallToolResult.content or of a prompt message
---@field type "text"|"image"|"audio"|"resource"|"resource_link"|string
---@field text string|nil
---@field data string|nil base64
---@field mimeType string|nil
---@field uri string|nil resource_link
---@field resource mcp.ResourceContents|nil embedded resource
---@field annotations table|nil
---@field _meta table|nil

---@class mcp.CallToolResult
---@field content mcp.ContentItem[]
---@field structuredContent table|nil
---@field isError boolean|nil
---@field _meta table|nil

---@class mcp.Resource a resources/list entry
---@field uri string
---@field name string
---@field title string|nil
---@field description string|nil
---@field mimeType string|nil
---@field size integer|nil

---@class mcp.ResourceContents
---@field uri string
---@field mimeType string|nil
---@field text string|nil
---@field blob string|nil base64

---@class mcp.ReadResourceResult
---@field contents mcp.ResourceContents[]

---@class mcp.Prompt a prompts/list entry
---@field name string
---@field title string|nil
---@field description string|nil
---@field arguments {name: string, description: string|nil, required: boolean|nil}[]|nil

---@class mcp.GetPromptResult
---@field description string|nil
---@field messages {role: "user"|"assistant", content: mcp.ContentItem}[]

---@class mcp.ContentPart what mcp.convert_content returns (see lua/mcp/content.lua)
---@field type "text"|"image"|"audio"|"resource"|"resource_link"
---@field text string|nil
---@field data string|nil raw bytes
---@field url string|nil
---@field media_type string|nil
---@field uri string|nil
---@field annotations table|nil
---@field meta table|nil

---@class mcp.AgentTool a converted tool (mcp.get_tools_for_agent)
---@field name string
---@field description string
---@field input_schema table
---@field execute fun(args: table|nil, opts: mcp.CallOptions|nil): mcp.ContentPart[]|nil, mcp.CallToolResult|mcp.Error

---@class mcp.ElicitationRequest
---@field message string
---@field requested_schema table|nil
---@field meta table|nil
---@field mode "form"|"url"
---@field url string|nil
---@field url_host string|nil URL mode: the URL's host as a browser reads the URL, to show next to it
---@field url_punycode boolean|nil URL mode: the host is an internationalized (xn-- or non-ASCII) name: warn
---@field elicitation_id string|nil
---@field server string|nil the asking server's title or name (serverInfo): a UI shows which server asks
---@field params table

-- ---- generated client methods --------------------------------------------------------------

---@class mcp.Client
local Client = {}

---@param cursor string|nil
---@param opts mcp.CallOptions|nil
---@return table|nil page {tools=, nextCursor=}, mcp.Error|nil err
function Client:list_tools_with_cursor(cursor, opts) end
---@param opts mcp.CallOptions|nil
---@return mcp.Tool[]|nil tools, mcp.Error|nil err
function Client:list_all_tools(opts) end
---@param cursor string|nil
---@param opts mcp.CallOptions|nil
---@return table|nil page {resources=, nextCursor=}, mcp.Error|nil err
function Client:list_resources_with_cursor(cursor, opts) end
---@param opts mcp.CallOptions|nil
---@return mcp.Resource[]|nil resources, mcp.Error|nil err
function Client:list_all_resources(opts) end
---@param cursor string|nil
---@param opts mcp.CallOptions|nil
---@return table|nil page {resourceTemplates=, nextCursor=}, mcp.Error|nil err
function Client:list_resource_templates_with_cursor(cursor, opts) end
---@param opts mcp.CallOptions|nil
---@return table[]|nil templates, mcp.Error|nil err
function Client:list_all_resource_templates(opts) end
---@param cursor string|nil
---@param opts mcp.CallOptions|nil
---@return table|nil page {prompts=, nextCursor=}, mcp.Error|nil err
function Client:list_prompts_with_cursor(cursor, opts) end
---@param opts mcp.CallOptions|nil
---@return mcp.Prompt[]|nil prompts, mcp.Error|nil err
function Client:list_all_prompts(opts) end
---@param fn fun(params: table) @notifications/tools/list_changed
function Client:on_tools_list_changed(fn) end
---@param fn fun(params: table)
function Client:on_resources_list_changed(fn) end
---@param fn fun(params: table)
function Client:on_prompts_list_changed(fn) end
---@param fn fun(params: table) @params.uri
function Client:on_resource_updated(fn) end
---@param fn fun(params: table) @params.level, params.logger, params.data
function Client:on_log_message(fn) end
---@param fn fun(params: table) @params.requestId, params.reason
function Client:on_cancelled(fn) end
---@param fn fun(params: table) @every notifications/progress
function Client:on_progress(fn) end

---@class mcp.core
---@field null lightuserdata
---@field array_mt table
---@field object_mt table
---@field built_for string
local core = {}
---@param timeout_ms number|nil negative: wait until something happens
---@param budget_ms number|nil bound of the work after the wait (a large message is decoded over several steps); nil: unbounded
---@return integer events, boolean alive
function core.step(timeout_ms, budget_ms) end
---@return integer|nil
function core.fd() end
---@return number ms until the next timer, -1 when none
function core.timeout() end
---@return integer unreaped server processes
function core.children() end
---@param ms number
---@param fn function
---@param weak boolean|nil true: the timer does not keep the loop alive (core.step(-1) with nothing
--- else alive returns at once, so mcp.run() and blocking waits do not wait for it; core.alive()
--- does not count it; core.timeout() does, so a host loop still fires it)
---@return userdata timer with :cancel()
function core.timer(ms, fn, weak) end
---@param cfg table command, args, env (complete, "K=V"), cwd, stderr, max_message_size, max_write_queue
---@return userdata
function core.stdio_transport(cfg) end
---@param transport userdata
---@param handler fun(kind: string, ...)
---@return userdata session
function core.session(transport, handler) end
---@param v any
---@return string
function core.json_encode(v) end
---@param s string
---@param key_order boolean|nil every object records its key order (metatable __keyorder)
---@return any value, string|nil err
function core.json_decode(s, key_order) end
