-- Loaded by Neovim at startup when examples/nvim is on the runtimepath: defines :McpConnect,
-- :McpDisconnect, :McpTools and :McpCall. Call require("mcp_example").setup({ config_file = ... })
-- yourself to change options (it may be called again).
if vim.g.loaded_mcp_example then return end
vim.g.loaded_mcp_example = true
local ok, err = pcall(function() require("mcp_example").setup() end)
if not ok then
  vim.notify("mcp_example: " .. tostring(err) .. " (is lua-mcp on the runtimepath, and `make nvim` done?)",
    vim.log.levels.ERROR)
end
