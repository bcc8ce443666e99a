-- Issue 23's run events in the chat buffer, from the recorded run the VS Code tests use too
-- (editors/vscode/test/fixtures/agent-features-run.json): the compaction notice with its summary
-- folded, the plan as [x]/[~]/[ ] lines re-rendered in place, the sub-agent's steps folded under
-- `> sub-agent: DESCRIPTION`, hooks (a failed one also a warning).
local H = dofile(os.getenv("CAIRN_NVIM_TESTS") .. "/helper.lua")
H.run(function()
  local path = os.getenv("CAIRN_NVIM_TESTS") .. "/../../vscode/test/fixtures/agent-features-run.json"
  local f = assert(io.open(path, "r"))
  local events = vim.json.decode(f:read("*a"))
  f:close()
  local chat = H.chat()
  chat.get_buf()
  local win = chat.show()
  chat.run_id = "r1"
  local after_first_plan
  local after_sub_agent
  for i, ev in ipairs(events) do
    chat.on_event(ev)
    if i == 3 then
      after_first_plan = H.lines(chat.buf)
    end
    if i == 10 then
      after_sub_agent = H.lines(chat.buf)
    end
  end
  local lines = H.lines(chat.buf)
  -- Which lines the chat window folds, and whether the folds are closed.
  local folded = {}
  vim.api.nvim_win_call(win, function()
    for lnum = 1, #lines do
      if vim.fn.foldclosed(lnum) ~= -1 then
        table.insert(folded, lines[lnum])
      end
    end
  end)
  local groups = {}
  vim.api.nvim_win_call(win, function()
    for lnum, line in ipairs(lines) do
      if line:match("^> ") or line:match("^  ↳ ") then
        groups[line] = vim.fn.synIDattr(vim.fn.synID(lnum, 3, 1), "name")
      end
    end
  end)
  H.finish({
    afterFirstPlan = after_first_plan,
    afterSubAgent = after_sub_agent,
    chat = lines,
    folded = folded,
    groups = groups,
    running = chat.run_id ~= nil,
  })
end)
