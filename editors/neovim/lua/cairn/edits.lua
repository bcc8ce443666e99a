-- workspace/applyEdit for appends at the end of a buffer (how cairn streams into chat
-- documents). Neovim's buffers always end with a newline ('eol'), so an LSP insertion "at the
-- end" lands after that newline, and Neovim's own handler starts a new line for every streamed
-- piece ("It adds " / "two numbers."). This handler appends to the last line when the buffer's
-- final newline is only the implied one, so the text reads as the server wrote it. Every other
-- edit goes to Neovim's handler.

local M = {}

-- Buffers whose last line was left open by an append: buf -> changedtick after that append.
local open_end = {}

local function encode_len(line, encoding)
  if encoding == "utf-8" then
    return #line
  end
  local ok, u32, u16 = pcall(vim.str_utfindex, line)
  if not ok then
    return #line
  end
  if encoding == "utf-32" then
    return u32
  end
  return u16
end

local function same(a, b)
  return a.line == b.line and a.character == b.character
end

--- The buffer of an end-of-buffer insertion described by `change`, or nil.
local function eof_insert(change, encoding)
  if change.kind ~= nil or type(change.edits) ~= "table" or #change.edits ~= 1 then
    return nil
  end
  local edit = change.edits[1]
  if edit.annotationId ~= nil or not same(edit.range.start, edit.range["end"]) then
    return nil
  end
  local uri = change.textDocument and change.textDocument.uri
  if type(uri) ~= "string" then
    return nil
  end
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  local n = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, n - 1, n, false)[1] or ""
  local pos = edit.range.start
  local at_end = (pos.line == n and pos.character == 0)
    or (pos.line == n - 1 and pos.character == encode_len(last, encoding) and not vim.api.nvim_buf_get_option(bufnr, "eol"))
    or (n == 1 and last == "" and pos.line == 0 and pos.character == 0)
  if not at_end then
    return nil
  end
  return bufnr
end

--- Appends `text` as the server meant it: after the buffer's real end.
local function append(bufnr, text)
  local n = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, n - 1, n, false)[1] or ""
  local continues = open_end[bufnr] == vim.api.nvim_buf_get_changedtick(bufnr)
  local empty = n == 1 and last == ""
  local parts, first
  if continues then
    parts = vim.split(last .. text, "\n", { plain = true })
    first = n - 1
  elseif empty then
    parts = vim.split(text, "\n", { plain = true })
    first = 0
  else
    parts = vim.split(text, "\n", { plain = true })
    first = n
  end
  local closed = text:sub(-1) == "\n"
  if closed then
    table.remove(parts)
  end
  if #parts > 0 then
    vim.api.nvim_buf_set_lines(bufnr, first, -1, false, parts)
  elseif first < n then
    vim.api.nvim_buf_set_lines(bufnr, first, -1, false, {})
  end
  if closed then
    open_end[bufnr] = nil
  else
    open_end[bufnr] = vim.api.nvim_buf_get_changedtick(bufnr)
  end
end

--- The handler: end-of-buffer appends here, everything else to Neovim's own.
function M.apply(err, params, ctx, config)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or "utf-16"
  local changes = params and params.edit and params.edit.documentChanges
  local targets = {}
  if type(changes) == "table" and #changes > 0 then
    for i, change in ipairs(changes) do
      local bufnr = eof_insert(change, encoding)
      if bufnr == nil then
        targets = nil
        break
      end
      targets[i] = bufnr
    end
  else
    targets = nil
  end
  if targets == nil then
    return vim.lsp.handlers["workspace/applyEdit"](err, params, ctx, config)
  end
  for i, change in ipairs(changes) do
    local version = change.textDocument.version
    local have = vim.lsp.util.buf_versions[targets[i]]
    if version ~= nil and version ~= vim.NIL and have ~= nil and have ~= version then
      return { applied = false, failureReason = "the buffer changed (version " .. tostring(have) .. ", not " .. tostring(version) .. ")" }
    end
  end
  for i, change in ipairs(changes) do
    append(targets[i], change.edits[1].newText)
  end
  return { applied = true }
end

return M
