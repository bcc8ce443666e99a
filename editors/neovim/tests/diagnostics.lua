-- The editor's diagnostics reach the server: vim.diagnostic.set on a workspace buffer sends
-- `cairn/diagnostics` (LSP shapes: 0-based lines, UTF-16 columns, severity 1-4, source and code),
-- clearing sends an empty list, a restart sends what is there again, and neither cairn's own
-- diagnostics nor a file outside the workspace are sent. The notifications are recorded where
-- the plugin hands them to the client (require("cairn").call), on their way to the real server.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  local cairn = require("cairn")
  local sent = {}
  local real_call = cairn.call
  cairn.call = function(client, name, method, params, ...)
    if name == "notify" and method == "cairn/diagnostics" then
      table.insert(sent, vim.deepcopy(params))
    end
    return real_call(client, name, method, params, ...)
  end
  local function ready()
    return vim.wait(20000, function()
      local c = cairn.client()
      return c ~= nil and c.initialized
    end, 20)
  end
  local function wait_sent(n)
    return vim.wait(20000, function()
      return #sent >= n
    end, 20)
  end
  local started = ready()
  vim.cmd("edit main.txt")
  local buf = vim.api.nvim_get_current_buf()
  local ns = vim.api.nvim_create_namespace("test-linter")
  vim.diagnostic.set(ns, buf, {
    { lnum = 1, col = 14, end_lnum = 1, end_col = 17, severity = vim.diagnostic.severity.ERROR, message = "undefined: foo", source = "test-linter", code = "E1" },
    { lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = "a hint" },
  })
  local first = wait_sent(1)
  vim.diagnostic.reset(ns, buf)
  local cleared = wait_sent(2)

  -- cairn's own diagnostics (its client's namespace) and a file outside the workspace: not sent.
  local own = vim.lsp.diagnostic.get_namespace(cairn.client_id)
  vim.diagnostic.set(own, buf, { { lnum = 0, col = 0, severity = 1, message = "published by cairn" } })
  vim.cmd("edit " .. os.getenv("CAIRN_NVIM_OUTSIDE"))
  local outside = vim.api.nvim_get_current_buf()
  vim.diagnostic.set(ns, outside, { { lnum = 0, col = 0, severity = 1, message = "outside the workspace" } })
  vim.wait(1000)
  local quiet = #sent

  -- After a restart, the server gets what is there now.
  vim.diagnostic.set(ns, buf, { { lnum = 2, col = 0, severity = vim.diagnostic.severity.WARN, message = "unused" } })
  wait_sent(quiet + 1)
  local before_restart = #sent
  cairn.restart()
  ready()
  local resent = wait_sent(before_restart + 1)
  H.finish({
    started = started,
    first = first,
    cleared = cleared,
    quiet = quiet,
    resent = resent,
    uri = vim.uri_from_bufnr(buf),
    sent = sent,
  })
end)
