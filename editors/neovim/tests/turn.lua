-- A whole agent turn: read_file sees the unsaved buffer, edit_file is approved through
-- vim.ui.select ("Allow once") and lands in the buffer; then :checkhealth cairn.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  H.answer_select("Allow once")
  vim.cmd("edit notes.txt")
  local notes = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(notes, 0, -1, false, { "fix teh typo" })
  vim.cmd("CairnAgent fix the typo in notes.txt")
  local finished = H.wait_turn()
  H.finish({
    finished = finished,
    chat = H.lines(H.chat().buf),
    edited = H.lines(notes),
    modified = vim.api.nvim_buf_get_option(notes, "modified"),
    syntax = vim.api.nvim_buf_get_option(H.chat().buf, "syntax"),
    health = H.checkhealth(),
  })
end)
