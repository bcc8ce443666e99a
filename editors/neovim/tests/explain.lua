-- The Explain code action on Neovim's own LSP UI (vim.lsp.buf.code_action through
-- vim.ui.select): the chat document is created, shown (window/showDocument) and streamed into;
-- then Send in that document sends what the user wrote under its last ## You.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  H.answer_select("Explain")
  vim.cmd("edit calc.py")
  local src = vim.api.nvim_get_current_buf()
  vim.wait(20000, function()
    return #vim.lsp.buf_get_clients(src) > 0 and vim.lsp.buf_get_clients(src)[1].initialized
  end, 20)
  -- Lines 2-3 selected (range_code_action is the 0.7 API; 0.9+ has code_action{range=...}).
  if vim.fn.has("nvim-0.9") == 1 then
    vim.lsp.buf.code_action({ range = { start = { 2, 0 }, ["end"] = { 3, 15 } } })
  else
    vim.lsp.buf.range_code_action(nil, { 2, 0 }, { 3, 15 })
  end
  local doc = nil
  local answered = vim.wait(20000, function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(buf):find("/.cairn/chats/", 1, true) then
        doc = buf
        for _, line in ipairs(H.lines(buf)) do
          if line:find("It adds two numbers.", 1, true) then
            -- The run ends with a fresh ## You heading.
            local all = H.lines(buf)
            for i = #all, 1, -1 do
              if all[i] == "## You" then
                return true
              end
              if all[i] ~= "" then
                break
              end
            end
          end
        end
      end
    end
    return false
  end, 20)
  -- Write under the last ## You of the chat document and run its Send code action.
  local sent = false
  if answered then
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_buf(win) == doc then
        vim.api.nvim_set_current_win(win)
      end
    end
    local n = vim.api.nvim_buf_line_count(doc)
    vim.api.nvim_buf_set_lines(doc, n - 1, n, false, { "and why?" })
    H.answer_select("Send")
    vim.api.nvim_win_set_cursor(0, { n, 0 })
    vim.lsp.buf.code_action()
    sent = vim.wait(20000, function()
      local all = H.lines(doc)
      local seen = false
      for _, line in ipairs(all) do
        if line == "Because it returns a + b." then
          seen = true
        end
      end
      return seen and all[#all - 1] == "## You"
    end, 20)
  end
  H.finish({
    sent = sent,
    answered = answered,
    doc = doc and H.lines(doc) or {},
    docName = doc and vim.api.nvim_buf_get_name(doc) or "",
    filetype = doc and vim.api.nvim_buf_get_option(doc, "filetype") or "",
  })
end)
