-- cairn not on PATH: the message says what to do, :CairnChat keeps the message in the chat
-- buffer, and :checkhealth cairn reports the problem.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  -- The error message is raised as a Vim error inside vim.cmd, as when typed.
  pcall(vim.cmd, "CairnChat hello there")
  H.finish({
    chat = H.lines(H.chat().buf),
    health = H.checkhealth(),
  })
end)
