-- The editor's diagnostics for the agent: vim.diagnostic's entries of the workspace's loaded
-- buffers, sent as `cairn/diagnostics` notifications (docs/lsp-extensions.md) once the server
-- is initialized and then whenever they change (the DiagnosticChanged autocmd, debounced).
-- Each notification is the file's whole list; an empty list clears what was sent before.

local M = {}

-- How long changes must settle before they are sent (ms).
M.delay = 300

-- The last list sent for each buffer while it was not empty (an empty list must clear it; the
-- same list is not sent twice), and the buffers waiting to be sent.
local reported = {}
local pending = {}
local timer_armed = false

local function cairn()
  return require("cairn")
end

--- Whether `buf` is a loaded file buffer under the workspace root.
local function in_workspace(buf)
  if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
    return false
  end
  if vim.api.nvim_buf_get_option(buf, "buftype") ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return false
  end
  local root = cairn().root
  local full = vim.fn.fnamemodify(name, ":p")
  return root ~= nil and full:sub(1, #root + 1) == root .. "/"
end

--- A byte column of `buf`'s line `lnum` (0-based) as a UTF-16 offset, LSP's default.
local function utf16(buf, lnum, col)
  local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1]
  if line == nil then
    return col
  end
  local ok, _, units = pcall(vim.str_utfindex, line, math.min(col, #line))
  if ok and units then
    return units
  end
  return col
end

--- One vim.diagnostic entry as an LSP Diagnostic (0-based lines; severities are LSP's 1-4).
function M.to_lsp(buf, d)
  local end_lnum = d.end_lnum or d.lnum
  local end_col = d.end_col or d.col
  local out = {
    range = {
      start = { line = d.lnum, character = utf16(buf, d.lnum, d.col or 0) },
      ["end"] = { line = end_lnum, character = utf16(buf, end_lnum, end_col or 0) },
    },
    severity = d.severity,
    message = tostring(d.message or ""),
  }
  if type(d.source) == "string" and d.source ~= "" then
    out.source = d.source
  end
  local code = d.code
  if code == nil and type(d.user_data) == "table" and type(d.user_data.lsp) == "table" then
    code = d.user_data.lsp.code
  end
  if type(code) == "string" or type(code) == "number" then
    out.code = code
  end
  return out
end

--- The namespace of cairn's own published diagnostics, if any.
local function own_namespace()
  local id = cairn().client_id
  if id == nil or vim.lsp.diagnostic == nil or vim.lsp.diagnostic.get_namespace == nil then
    return nil
  end
  local ok, namespace = pcall(vim.lsp.diagnostic.get_namespace, id)
  return ok and namespace or nil
end

--- `buf`'s diagnostics as sent: cairn's own left out (never echoed back).
function M.collect(buf)
  local own = own_namespace()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.namespace ~= own and tostring(d.source or ""):lower() ~= "cairn" then
      table.insert(out, M.to_lsp(buf, d))
    end
  end
  return out
end

local function send(buf)
  if not in_workspace(buf) then
    return
  end
  local list = M.collect(buf)
  -- vim.inspect sorts keys: the same list gives the same text.
  local key = #list > 0 and vim.inspect(list) or nil
  if key == reported[buf] then
    return
  end
  local client = cairn().client()
  if client == nil or not client.initialized then
    return
  end
  reported[buf] = key
  cairn().call(client, "notify", "cairn/diagnostics", { uri = vim.uri_from_bufnr(buf), diagnostics = list })
end

--- Sends what is pending now.
function M.flush()
  timer_armed = false
  local bufs = vim.tbl_keys(pending)
  pending = {}
  table.sort(bufs)
  for _, buf in ipairs(bufs) do
    send(buf)
  end
end

--- `buf`'s diagnostics changed: sent once they settle.
function M.changed(buf)
  pending[buf] = true
  if not timer_armed then
    timer_armed = true
    vim.defer_fn(M.flush, M.delay)
  end
end

--- After `initialized` (and after a restart): every loaded workspace buffer's diagnostics.
function M.send_all()
  reported = {}
  pending = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    send(buf)
  end
end

return M
