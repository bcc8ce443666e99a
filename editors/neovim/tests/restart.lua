-- The server crashes in the middle of a turn: the user is told what happened and what to do,
-- the chat stays (the partial answer marked interrupted), :CairnRestart starts a new server and
-- the next message continues the same session (the turns that were saved are its history).
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  vim.cmd("CairnChat remember the word cobalt")
  local first = H.wait_turn()
  local session = H.chat().session_id
  vim.cmd("CairnChat and the word amber")
  local streaming = vim.wait(20000, function()
    for _, line in ipairs(H.lines(H.chat().buf)) do
      if line:find("Thinking", 1, true) then
        return true
      end
    end
    return false
  end, 20)
  local client = require("cairn").client()
  vim.loop.kill(client.rpc.pid, 9)
  local told = H.wait_note("stopped unexpectedly")
  local after_crash = H.lines(H.chat().buf)
  vim.cmd("CairnRestart")
  vim.cmd("CairnChat which word?")
  local second = H.wait_turn()
  H.finish({
    first = first,
    streaming = streaming,
    told = told,
    second = second,
    sameSession = session ~= nil and session == H.chat().session_id,
    afterCrash = after_crash,
    chat = H.lines(H.chat().buf),
  })
end)
