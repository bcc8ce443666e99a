-- The rest of the commands: :2,3CairnChat sends the selected lines as context, <CR> in the chat
-- buffer sends what the user typed under ## You (same session), :CairnTools lists the catalog,
-- and :CairnSessions reopens the stored session in a new chat buffer.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  H.answer_select("what does this do?*")
  vim.cmd("edit calc.py")
  vim.cmd("2,3CairnChat what does this do?")
  local first = H.wait_turn()
  local chat = H.chat()
  -- The user types under the last ## You and presses <CR> in the chat window.
  vim.cmd("wincmd p")
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == chat.buf then
      vim.api.nvim_set_current_win(win)
    end
  end
  local n = vim.api.nvim_buf_line_count(chat.buf)
  vim.api.nvim_buf_set_lines(chat.buf, n - 1, n, false, { "and then?" })
  vim.cmd('execute "normal \\<CR>"')
  local second = H.wait_turn()
  local session = chat.session_id
  local typed = H.lines(chat.buf)

  vim.cmd("CairnTools")
  vim.wait(20000, function()
    return vim.fn.bufnr("cairn://tools") ~= -1
  end, 20)
  local tools = H.lines(vim.fn.bufnr("cairn://tools"))

  vim.cmd("bwipeout! " .. chat.buf)
  vim.cmd("CairnSessions")
  vim.wait(20000, function()
    return chat.buf ~= nil and vim.api.nvim_buf_is_valid(chat.buf) and chat.session_id == session
  end, 20)
  local reopened = H.lines(chat.buf)
  H.finish({
    first = first,
    second = second,
    typed = typed,
    tools = tools,
    reopened = reopened,
    sameSession = session ~= nil and chat.session_id == session,
  })
end)
