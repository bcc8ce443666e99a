-- :checkhealth cairn. Uses vim.health.start/ok/... (0.10+) or the report_* names (0.7-0.9).

local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  start("cairn")
  if vim.fn.has("nvim-0.7") == 1 then
    ok("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch) .. " (0.7 or later)")
  else
    error("Neovim 0.7 or later is needed")
  end
  local cairn = require("cairn")
  if not cairn.setup_done then
    warn("require(\"cairn\").setup{} has not been called", { "add require(\"cairn\").setup{} to your init.lua" })
  end
  local exe = cairn.opts.cmd[1]
  local found, msg = cairn.check_cmd()
  if found then
    local version = vim.fn.system({ exe, "--version" })
    ok(string.format("`%s` found at %s: %s", exe, vim.fn.exepath(exe), (version:gsub("%s+$", ""))))
  else
    error(msg, { "install: cargo install --path server/cairn --locked (from a clone of cairn)", "or set cmd = { \"/path/to/cairn\", \"lsp\" } in setup{}" })
  end
  local client = cairn.client()
  if client then
    ok(string.format("server running (client %d, root %s)", client.id, tostring(cairn.root)))
  elseif found then
    warn("the server is not running", { "run :CairnRestart" })
  end
  local status = cairn.mcp_status
  if client and type(status) == "table" then
    for _, server in ipairs(status.servers or {}) do
      local line = string.format("MCP server %s (%s): %s", tostring(server.name), tostring(server.transport), tostring(server.state))
      if server.tools then
        line = line .. string.format(", %d tools", server.tools)
      end
      if server.reason then
        line = line .. ": " .. tostring(server.reason)
      end
      if server.state == "failed" or server.state == "restarting" then
        warn(line)
      else
        ok(line)
      end
    end
    for _, name in ipairs(status.waitingForTrust or {}) do
      warn("MCP server " .. name .. " waits until you trust the workspace", { "run `cairn mcp trust` in the workspace" })
    end
    for _, problem in ipairs(status.problems or {}) do
      warn("MCP server " .. tostring(problem.server) .. ": " .. tostring(problem.message))
    end
  end
  if cairn.last_error and cairn.last_error ~= msg then
    warn("last problem: " .. cairn.last_error)
  elseif found then
    info("no problem reported")
  end
end

return M
