-- The server crashes after a turn: the user is told, the chat stays, :CairnRestart starts a new
-- server and the next message continues the same session.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  vim.cmd("CairnChat remember the word cobalt")
  local first = H.wait_turn()
  local session = H.chat().session_id
  local client = require("cairn").client()
  vim.loop.kill(client.rpc.pid, 9)
  local told = H.wait_note("stopped unexpectedly")
  local after_crash = H.lines(H.chat().buf)
  vim.cmd("CairnRestart")
  vim.cmd("CairnChat which word?")
  local second = H.wait_turn()
  H.finish({
    first = first,
    told = told,
    second = second,
    sameSession = session ~= nil and session == H.chat().session_id,
    afterCrash = after_crash,
    chat = H.lines(H.chat().buf),
  })
end)
