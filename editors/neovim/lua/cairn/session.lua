-- :CairnRewind [turn] (restore the files the chosen turn and later ones changed), :CairnCompact
-- (summarise the session's older turns) and :CairnContext (the project rules, AGENTS.md and the
-- like, that a run in the current file's context gets). All act on the chat buffer's session.

local M = {}

local function cairn()
  return require("cairn")
end

local function chat()
  return require("cairn.chat")
end

local function failed(what, err)
  cairn().notify(what .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

local function thousands(n)
  local s = tostring(math.floor(tonumber(n) or 0))
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

local function session()
  local id = chat().session_id
  if id == nil then
    cairn().notify("the chat has no session yet: send a message first", vim.log.levels.WARN)
  end
  return id
end

local function files(n)
  return n == 1 and "1 file" or (tostring(n) .. " files")
end

--- A turn as the picker shows it.
function M.format_turn(t)
  local changed = #(t.files or {}) == 0 and "no files" or (files(#t.files) .. ": " .. table.concat(t.files, ", "))
  return string.format("Turn %d: %s (%s)", t.turn, tostring(t.message or ""), changed)
end

--- The report of a rewind: (info line, warning line or nil).
function M.rewind_report(turn, r)
  local restored = r.restored or {}
  local info
  if #restored > 0 then
    info = string.format("rewound to before turn %d; restored %s: %s", turn, files(#restored), table.concat(restored, ", "))
  else
    info = string.format("rewound to before turn %d; no file needed restoring", turn)
  end
  local problems = {}
  for _, c in ipairs(r.conflicts or {}) do
    table.insert(problems, string.format("%s (left as it is: %s)", c.path, c.reason))
  end
  for _, f in ipairs(r.failed or {}) do
    table.insert(problems, string.format("%s (not restored: %s)", f.path, f.reason))
  end
  local warning = nil
  if #problems > 0 then
    warning = string.format("%d not restored: %s", #problems, table.concat(problems, "; "))
  end
  return info, warning
end

local function rewind_to(id, turn)
  cairn().request("cairn/rewind", { sessionId = id, turn = turn }, function(err, result)
    if err then
      return failed("the rewind", err)
    end
    local info, warning = M.rewind_report(turn, result or {})
    -- Files restored on disk: reload the buffers that show them (unmodified ones).
    pcall(vim.cmd, "checktime")
    cairn().notify(info, vim.log.levels.INFO)
    if warning then
      cairn().notify(warning, vim.log.levels.WARN)
    end
    chat().note({ "> " .. info })
    if warning then
      chat().note({ "> " .. warning })
    end
  end)
end

--- :CairnRewind [turn]: without a turn, a picker over the session's turns (latest first).
function M.rewind(arg)
  local id = session()
  if id == nil then
    return
  end
  if chat().run_id ~= nil then
    cairn().notify("a turn is still running; :CairnCancel it first", vim.log.levels.WARN)
    return
  end
  local given = nil
  if arg ~= nil and arg ~= "" then
    given = tonumber(arg)
    if given == nil or given < 1 or given % 1 ~= 0 then
      cairn().notify("usage: :CairnRewind [turn], the turn a number from 1 (see :CairnRewind without one)", vim.log.levels.ERROR)
      return
    end
    return rewind_to(id, given)
  end
  cairn().request("cairn/checkpoints", { sessionId = id }, function(err, result)
    if err then
      return failed("cairn/checkpoints", err)
    end
    local turns = (result and result.turns) or {}
    if #turns == 0 then
      cairn().notify("this session has no turns to rewind", vim.log.levels.INFO)
      return
    end
    table.sort(turns, function(a, b)
      return a.turn > b.turn
    end)
    vim.ui.select(turns, {
      prompt = "cairn: rewind the files to before which turn?",
      kind = "cairn.turn",
      format_item = M.format_turn,
    }, function(choice)
      if choice ~= nil then
        rewind_to(id, choice.turn)
      end
    end)
  end)
end

--- :CairnCompact
function M.compact()
  local id = session()
  if id == nil then
    return
  end
  cairn().request("cairn/compact", { sessionId = id }, function(err, r)
    if err then
      return failed("cairn/compact", err)
    end
    if r and r.compacted then
      local turns = tonumber(r.turns) == 1 and "1 older turn" or (tostring(r.turns) .. " older turns")
      cairn().notify(
        string.format("summarised %s: %s → %s tokens", turns, thousands(r.tokensBefore), thousands(r.tokensAfter)),
        vim.log.levels.INFO
      )
    else
      local why = r and r.reason ~= nil and r.reason ~= vim.NIL and (": " .. tostring(r.reason)) or ""
      cairn().notify("nothing to compact" .. why, vim.log.levels.INFO)
    end
  end)
end

--- The lines :CairnContext shows.
function M.context_lines(r, name)
  local rules = r.rules or {}
  local used = 0
  for _, rule in ipairs(rules) do
    used = used + (tonumber(rule.included) or 0)
  end
  local out = {}
  if #rules == 0 then
    table.insert(out, "No project rules (AGENTS.md) apply to " .. name .. ".")
  else
    table.insert(
      out,
      string.format(
        "Project rules for %s: %d %s, %s of at most %s bytes",
        name,
        #rules,
        #rules == 1 and "file" or "files",
        thousands(used),
        thousands(r.maxBytes)
      )
    )
    table.insert(out, "")
    for _, rule in ipairs(rules) do
      local size = rule.truncated and string.format("%s of %s bytes (cut at the limit)", thousands(rule.included), thousands(rule.bytes))
        or string.format("%s bytes", thousands(rule.bytes))
      table.insert(out, string.format("%s  %s", rule.path, size))
    end
  end
  return out
end

--- :CairnContext: for the current file (or the workspace, from the chat buffer).
function M.context()
  local buf = vim.api.nvim_get_current_buf()
  local params = {}
  local name = "this workspace"
  if not chat().is_chat(buf) and vim.api.nvim_buf_get_name(buf) ~= "" and vim.api.nvim_buf_get_option(buf, "buftype") == "" then
    params.uri = vim.uri_from_bufnr(buf)
    name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":.")
  end
  cairn().request("cairn/context", params, function(err, r)
    if err then
      return failed("cairn/context", err)
    end
    require("cairn.lists").scratch("cairn://context", M.context_lines(r or {}, name))
  end)
end

return M
