-- :CairnRewind, :CairnCompact and :CairnContext against canned answers (the server side of
-- these requests is tested in tests/e2e/rewind.rs and the like): the requests the plugin makes,
-- the turn picker (latest first), the report of what was restored and what was not, the
-- compaction's outcome and the rules shown for the current file.
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  H.answer_select("Turn 1: *")
  local cairn = require("cairn")
  local chat = H.chat()
  local requests = {}
  local answers = {
    ["cairn/checkpoints"] = { turns = {
      { turn = 1, runId = "r1", message = "Add a parser", files = { "src/a.rs", "b.txt" } },
      { turn = 2, runId = "r2", message = "Explain it", files = {} },
    } },
    ["cairn/rewind"] = {
      restored = { "src/a.rs", "b.txt" },
      conflicts = { { path = "c.txt", reason = "changed since cairn wrote it" } },
      failed = {},
    },
    ["cairn/compact"] = { compacted = true, turns = 12, tokensBefore = 30210, tokensAfter = 2150 },
    ["cairn/context"] = { rules = {
      { path = "/ws/AGENTS.md", bytes = 812, included = 812, truncated = false },
      { path = "/ws/src/AGENTS.md", bytes = 20000, included = 15572, truncated = true },
    }, maxBytes = 16384 },
  }
  cairn.request = function(method, params, handler)
    table.insert(requests, { method = method, params = params })
    vim.schedule(function()
      handler(nil, answers[method])
    end)
    return true
  end
  local function settle()
    vim.wait(300)
  end

  -- Without a session, the commands say to send a message first.
  vim.cmd("CairnRewind")
  settle()
  chat.get_buf()
  chat.session_id = "s1"
  vim.cmd("CairnRewind")
  vim.wait(5000, function()
    return #requests >= 2
  end, 20)
  settle()
  vim.cmd("CairnRewind 2")
  settle()
  -- An error notification is an error in a headless `vim.cmd`: the message is in H.notes.
  pcall(vim.cmd, "CairnRewind two")
  settle()
  vim.cmd("CairnCompact")
  settle()
  answers["cairn/compact"] = { compacted = false, reason = "only 1 turn so far" }
  vim.cmd("CairnCompact")
  settle()
  vim.cmd("edit src.txt")
  vim.cmd("CairnContext")
  vim.wait(5000, function()
    return vim.fn.bufnr("cairn://context") ~= -1
  end, 20)
  H.finish({
    requests = requests,
    chat = H.lines(chat.buf),
    context = H.lines(vim.fn.bufnr("cairn://context")),
  })
end)
