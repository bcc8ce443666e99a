-- A turn cancelled half way (the model stalls, :CairnCancel), then a provider error: both are
-- reported in the chat and as messages, and the chat so far stays.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  vim.cmd("CairnChat think hard")
  vim.wait(20000, function()
    for _, line in ipairs(H.lines(H.chat().buf)) do
      if line:find("I am", 1, true) then
        return true
      end
    end
    return false
  end, 20)
  vim.cmd("CairnCancel")
  local cancelled = H.wait_turn()
  local after_cancel = H.lines(H.chat().buf)
  vim.cmd("CairnChat try again")
  local errored = H.wait_turn()
  H.finish({
    cancelled = cancelled,
    errored = errored,
    afterCancel = after_cancel,
    chat = H.lines(H.chat().buf),
  })
end)
