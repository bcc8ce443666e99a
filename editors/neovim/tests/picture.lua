-- A chart drawn by chart_bar (approved through vim.ui.select): the chat says a picture is there,
-- and gp on its path gives the file to `open_picture` (here a script that records its argument).
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  local opened = os.getenv("CAIRN_NVIM_OUT") .. ".opened"
  require("cairn").opts.open_picture = { "sh", "-c", 'printf %s "$1" > "$0"', opened }
  H.answer_select("Allow once")
  vim.cmd("CairnAgent plot units by region")
  local finished = H.wait_turn()
  local chat = H.chat()
  local lines = H.lines(chat.buf)
  -- The user moves to the line naming the PNG and presses gp.
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == chat.buf then
      vim.api.nvim_set_current_win(win)
    end
  end
  for i, line in ipairs(lines) do
    if line:find("charts/units.png", 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      break
    end
  end
  vim.cmd("normal gp")
  vim.wait(10000, function()
    return vim.fn.filereadable(opened) == 1 and #vim.fn.readfile(opened) > 0
  end, 20)
  local got = vim.fn.filereadable(opened) == 1 and vim.fn.readfile(opened) or {}
  H.finish({ finished = finished, chat = lines, opened = got })
end)
