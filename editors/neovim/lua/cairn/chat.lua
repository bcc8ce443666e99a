-- The chat buffer: a Markdown chat document (docs/chat-documents.md) that streams the
-- cairn/runEvent notifications of its runs. It keeps the conversation whatever happens to the
-- server, and its session id, so a restarted server continues the same session.

local M = {}

M.buf = nil
M.session_id = nil
M.run_id = nil
M.mode = "chat"
M.early = {}
-- The running turn's plan (an extmark on its first line and its line count), re-rendered in
-- place when it changes, and its sub-agents (by the task call's id).
M.plan = nil
M.subs = {}

local YOU = "## You"
-- Lines under a sub-agent or a compaction start with this; the chat window folds them.
local NESTED = "  ↳ "
local ns = vim.api.nvim_create_namespace("cairn-chat")
local CAIRN = "## cairn"

local function cairn()
  return require("cairn")
end

function M.is_chat(buf)
  return M.buf ~= nil and buf == M.buf
end

local function valid()
  return M.buf ~= nil and vim.api.nvim_buf_is_valid(M.buf)
end

--- The chat buffer, created when missing.
function M.get_buf()
  if valid() then
    return M.buf
  end
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, "cairn://chat")
  vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
  vim.api.nvim_buf_set_option(buf, "bufhidden", "hide")
  vim.api.nvim_buf_set_option(buf, "swapfile", false)
  vim.api.nvim_buf_set_option(buf, "filetype", "cairnchat")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { YOU, "", "" })
  vim.api.nvim_buf_set_keymap(buf, "n", "<CR>", "<Cmd>lua require('cairn.chat').send(nil, '')<CR>", {
    noremap = true,
    silent = true,
    desc = "cairn: send the last ## You section",
  })
  vim.api.nvim_buf_set_keymap(buf, "n", "gp", "<Cmd>lua require('cairn.chat').open_picture()<CR>", {
    noremap = true,
    silent = true,
    desc = "cairn: open the picture whose path is on (or above) the cursor line",
  })
  M.buf = buf
  M.session_id = nil
  return buf
end

--- Shows the chat buffer in a window (reusing one that shows it).
function M.show()
  local buf = M.get_buf()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  local cur = vim.api.nvim_get_current_buf()
  local empty = vim.api.nvim_buf_get_name(cur) == "" and vim.api.nvim_buf_line_count(cur) <= 1
    and (vim.api.nvim_buf_get_lines(cur, 0, 1, false)[1] or "") == ""
  if empty then
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.cmd(cairn().opts.open or "botright vsplit")
    vim.api.nvim_win_set_buf(0, buf)
  end
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_option(win, "wrap", true)
  vim.api.nvim_win_set_option(win, "linebreak", true)
  -- A sub-agent's steps and a compaction's summary are folded (closed) under their first line.
  vim.api.nvim_win_set_option(win, "foldmethod", "expr")
  vim.api.nvim_win_set_option(win, "foldexpr", "getline(v:lnum)=~'^" .. NESTED .. "'?1:0")
  vim.api.nvim_win_set_option(win, "foldlevel", 0)
  vim.api.nvim_win_set_option(win, "foldenable", true)
  return win
end

local function lines()
  return vim.api.nvim_buf_get_lines(M.buf, 0, -1, false)
end

local function scroll()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == M.buf then
      vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(M.buf), 0 })
    end
  end
end

--- Appends text at the end of the buffer, continuing its last line.
local function append_text(text)
  if not valid() or text == nil or text == "" then
    return
  end
  local n = vim.api.nvim_buf_line_count(M.buf)
  local last = vim.api.nvim_buf_get_lines(M.buf, n - 1, n, false)[1] or ""
  local parts = vim.split(last .. text, "\n", { plain = true })
  vim.api.nvim_buf_set_lines(M.buf, n - 1, n, false, parts)
  scroll()
end

--- Appends whole lines as a block: a blank line before and after it, then an empty last line
--- where streamed text goes on.
local function append_block(block)
  if not valid() then
    return
  end
  local n = vim.api.nvim_buf_line_count(M.buf)
  local last = vim.api.nvim_buf_get_lines(M.buf, n - 1, n, false)[1] or ""
  local before = vim.api.nvim_buf_get_lines(M.buf, math.max(n - 2, 0), math.max(n - 1, 0), false)[1]
  local out = {}
  if last ~= "" then
    table.insert(out, last)
    table.insert(out, "")
  elseif before ~= nil and before ~= "" then
    table.insert(out, "")
  end
  vim.list_extend(out, block)
  table.insert(out, "")
  table.insert(out, "")
  vim.api.nvim_buf_set_lines(M.buf, n - 1, n, false, out)
  scroll()
end

local function fence_safe(text)
  return (text:gsub("```", "ˋˋˋ"))
end

local function split_lines(text)
  local out = vim.split(text, "\n", { plain = true })
  if #out > 1 and out[#out] == "" then
    table.remove(out)
  end
  return out
end

local function shorten(text, max)
  local all = split_lines(text)
  if #all <= max then
    return all
  end
  local shown = vim.list_slice(all, 1, max)
  table.insert(shown, string.format("… (%d more lines)", #all - max))
  return shown
end

local function args_text(arguments)
  if type(arguments) == "string" then
    return arguments
  end
  if arguments == nil or arguments == vim.NIL then
    return "{}"
  end
  local ok, text = pcall(vim.json.encode, arguments)
  if ok then
    if text == "[]" then
      return "{}"
    end
    return text
  end
  return vim.inspect(arguments)
end

local function tool_call_block(name, arguments)
  local block = { "```tool-call " .. tostring(name) }
  vim.list_extend(block, split_lines(fence_safe(args_text(arguments))))
  table.insert(block, "```")
  return block
end

local function tool_result_block(is_error, content)
  local block = { "```tool-result " .. (is_error and "error" or "ok") }
  vim.list_extend(block, shorten(fence_safe(content or ""), 20))
  table.insert(block, "```")
  return block
end

local ANSWERS = {
  allowOnce = "> allowed once",
  allowSession = "> allowed for this session",
  deny = "> denied",
}

local function one_line(text)
  text = tostring(text or ""):gsub("^%s+", ""):gsub("%s+$", "")
  local first, rest = text:match("^([^\n]*)\n(.*)$")
  if first then
    return first:gsub("%s+$", "") .. " …"
  end
  return text
end

--- `30210` as `30,210`.
local function thousands(n)
  local s = tostring(math.floor(tonumber(n) or 0))
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

local BOXES = { done = "[x]", inProgress = "[~]", pending = "[ ]" }

--- `> plan (1/3 done):` and a `> - [x] step` line per step (`[~]` in progress, `[ ]` pending).
local function plan_lines(steps)
  local done = 0
  local out = {}
  for _, step in ipairs(steps or {}) do
    if step.state == "done" then
      done = done + 1
    end
    table.insert(out, "> - " .. (BOXES[step.state] or "[ ]") .. " " .. one_line(step.title))
  end
  table.insert(out, 1, string.format("> plan (%d/%d done):", done, #out))
  return out
end

local STAGES = { preTool = "before the call", postTool = "after the call", turnEnd = "at the end of the turn" }

local function hook_line(ev)
  local line = string.format(
    "hook %s (%s): %s",
    tostring(ev.outcome),
    STAGES[ev.stage] or tostring(ev.stage),
    one_line(ev.command)
  )
  local msg = ev.message ~= vim.NIL and one_line(ev.message) or ""
  if msg ~= "" then
    line = line .. ": " .. msg
  end
  return line
end

--- Shows the running turn's plan: the first list as a block, later lists in its place.
local function show_plan(steps)
  local block = plan_lines(steps)
  if M.plan then
    local mark = vim.api.nvim_buf_get_extmark_by_id(M.buf, ns, M.plan.mark, {})
    local row = mark and mark[1]
    local first = row and vim.api.nvim_buf_get_lines(M.buf, row, row + 1, false)[1]
    if first and first:match("^> plan %(") then
      vim.api.nvim_buf_set_lines(M.buf, row, row + M.plan.count, false, block)
      M.plan.count = #block
      return
    end
  end
  append_block(block)
  local n = vim.api.nvim_buf_line_count(M.buf)
  -- append_block leaves a blank line and the empty last line after the block.
  local row = n - 2 - #block
  M.plan = { mark = vim.api.nvim_buf_set_extmark(M.buf, ns, row, 0, {}), count = #block }
end

--- The lines a sub-agent's event adds under its task call (text is kept until the next event).
local function sub_lines(sub, ev)
  local out = {}
  local function text_done()
    if sub.text ~= "" then
      for _, l in ipairs(split_lines(sub.text)) do
        table.insert(out, l)
      end
      sub.text = ""
    end
  end
  local kind = ev.kind
  if kind == "text" then
    sub.text = sub.text .. tostring(ev.delta or "")
    return out
  end
  text_done()
  if kind == "toolCall" then
    local args = args_text(ev.arguments)
    if #args > 80 then
      args = args:sub(1, 79) .. "…"
    end
    table.insert(out, tostring(ev.name) .. " " .. args)
  elseif kind == "toolResult" then
    if ev.isError then
      table.insert(out, "a call failed: " .. one_line(ev.content))
    end
  elseif kind == "approval" then
    if ev.state == "asked" then
      table.insert(out, "cairn asks: allow " .. one_line(ev.reason) .. "?")
    else
      table.insert(out, (ANSWERS[ev.answer] or "> denied"):sub(3))
    end
  elseif kind == "edit" then
    if ev.applied then
      table.insert(out, "edited " .. tostring(ev.uri))
    else
      table.insert(out, "edit of " .. tostring(ev.uri) .. " rejected")
    end
  elseif kind == "plan" then
    local lines = plan_lines(ev.steps)
    local head = table.remove(lines, 1):sub(3)
    for i, l in ipairs(lines) do
      lines[i] = l:sub(5)
    end
    table.insert(out, head .. " " .. table.concat(lines, " · "))
  elseif kind == "hook" then
    table.insert(out, hook_line(ev))
  elseif kind == "subAgent" then
    table.insert(out, "sub-agent: " .. tostring(ev.event and ev.event.kind or "?"))
  elseif kind == "done" then
    table.insert(out, ev.stopped and ev.stopped ~= vim.NIL and ("stopped: " .. tostring(ev.stopped)) or "done")
  elseif kind == "error" then
    table.insert(out, "error: " .. one_line(ev.message))
  end
  return out
end

--- Appends nested lines (folded) right after the last line with text.
local function append_nested(lines)
  if #lines == 0 then
    return
  end
  local n = vim.api.nvim_buf_line_count(M.buf)
  local last = vim.api.nvim_buf_get_lines(M.buf, n - 1, n, false)[1] or ""
  local out = {}
  for _, l in ipairs(lines) do
    table.insert(out, NESTED .. l)
  end
  if last ~= "" then
    append_block(out)
    return
  end
  -- Keep the nested lines together under their heading: write over the blank lines after it.
  local row = n - 1
  while row > 0 and (vim.api.nvim_buf_get_lines(M.buf, row - 1, row, false)[1] or "") == "" do
    row = row - 1
  end
  table.insert(out, "")
  table.insert(out, "")
  vim.api.nvim_buf_set_lines(M.buf, row, n, false, out)
  scroll()
end

--- A sub-agent's event: a `> sub-agent: DESCRIPTION` line, its steps folded under it.
local function on_sub_agent(ev)
  local inner = ev.event
  if type(inner) ~= "table" then
    return
  end
  local sub = M.subs[ev.callId]
  if sub == nil then
    sub = { text = "" }
    M.subs[ev.callId] = sub
    local title = M.task_titles[ev.callId] or "a sub-agent"
    append_block({ "> sub-agent: " .. title })
  end
  append_nested(sub_lines(sub, inner))
end

M.task_titles = {}

--- The end of a run: a fresh ## You section to write the next message in.
local function end_run(note)
  M.run_id = nil
  M.plan = nil
  M.subs = {}
  M.task_titles = {}
  if note then
    append_block({ note })
  end
  append_block({ YOU })
end

local PICTURE = "[%w%._%-/~]+%.[%a][%a][%a][%a]?"
local PICTURE_EXT = { png = true, svg = true, jpg = true, jpeg = true, gif = true, webp = true }

--- The first picture path on `line`, if any.
local function picture_in(line)
  for path in line:gmatch(PICTURE) do
    local ext = path:match("%.(%a+)$")
    if ext and PICTURE_EXT[ext:lower()] then
      return path
    end
  end
  return nil
end

--- gp in the chat buffer: the picture path on the cursor line (or the nearest one above it),
--- relative to the workspace root, is given to `open_picture` (xdg-open by default).
function M.open_picture()
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local all = vim.api.nvim_buf_get_lines(0, 0, row, false)
  local path
  for i = #all, 1, -1 do
    path = picture_in(all[i])
    if path then
      break
    end
  end
  if not path then
    cairn().notify("no picture path (.png, .svg, .jpg, .gif, .webp) on or above this line")
    return nil
  end
  local abs = path
  if not vim.startswith(path, "/") then
    abs = (cairn().root_dir() or vim.fn.getcwd()) .. "/" .. path
  end
  if vim.fn.filereadable(abs) ~= 1 then
    cairn().notify(abs .. " does not exist (yet)", vim.log.levels.WARN)
    return nil
  end
  local cmd = vim.deepcopy(cairn().opts.open_picture)
  table.insert(cmd, abs)
  local ok, job = pcall(vim.fn.jobstart, cmd, { detach = true })
  if not ok or job <= 0 then
    cairn().notify("could not run " .. tostring(cmd[1]) .. " to open " .. abs .. "; set `open_picture` in require(\"cairn\").setup{}", vim.log.levels.ERROR)
    return nil
  end
  return abs
end


--- Handles one cairn/runEvent notification.
function M.on_event(ev)
  if not valid() or ev == nil then
    return
  end
  if M.run_id == false then
    -- The answer to cairn/chat has not arrived yet: keep events until it names the run.
    table.insert(M.early, ev)
    return
  end
  if ev.runId ~= M.run_id then
    return
  end
  local kind = ev.kind
  if kind == "text" then
    append_text(ev.delta)
  elseif kind == "toolCall" then
    append_block(tool_call_block(ev.name, ev.arguments))
    if ev.name == "task" and type(ev.arguments) == "table" and type(ev.arguments.description) == "string" then
      M.task_titles[ev.callId] = one_line(ev.arguments.description)
    end
  elseif kind == "plan" then
    show_plan(ev.steps)
  elseif kind == "subAgent" then
    on_sub_agent(ev)
  elseif kind == "hook" then
    append_block({ "> " .. hook_line(ev) })
    if ev.outcome == "failed" then
      -- A hook that failed is never silent.
      cairn().notify(hook_line(ev), vim.log.levels.WARN)
    end
  elseif kind == "compacted" then
    local turns = tonumber(ev.turns) == 1 and "1 older turn" or (tostring(ev.turns) .. " older turns")
    append_block({
      string.format(
        "> compacted: %s summarised, %s → %s tokens",
        turns,
        thousands(ev.tokensBefore),
        thousands(ev.tokensAfter)
      ),
    })
    if type(ev.summary) == "string" and ev.summary ~= "" then
      append_nested(shorten(ev.summary, 40))
    end
  elseif kind == "toolResult" then
    local sub = M.subs[ev.callId]
    if sub and sub.text ~= "" then
      append_nested(split_lines(sub.text))
      sub.text = ""
    end
    append_block(tool_result_block(ev.isError, ev.content))
    local images = type(ev.images) == "table" and #ev.images or 0
    if images > 0 then
      -- A buffer cannot show a picture: say it is there, and how to open the file it names.
      append_block({ string.format("> %d picture%s: press gp on its path to open it", images, images == 1 and "" or "s") })
    end
  elseif kind == "approval" then
    if ev.state == "asked" then
      append_block({ "> cairn asks: allow " .. tostring(ev.reason) .. "?" })
    else
      append_block({ ANSWERS[ev.answer] or "> denied" })
    end
  elseif kind == "edit" then
    if ev.applied then
      append_block({ "> edited " .. tostring(ev.uri) })
    elseif ev.reason ~= nil and ev.reason ~= vim.NIL then
      append_block({ "> edit of " .. tostring(ev.uri) .. " rejected: " .. tostring(ev.reason) })
    else
      append_block({ "> edit of " .. tostring(ev.uri) .. " rejected" })
    end
  elseif kind == "done" then
    if ev.stopped == "cancelled" then
      end_run("> cancelled")
      cairn().notify("the turn was cancelled; what it did so far is in the chat. Write under ## You to go on.")
    else
      end_run(nil)
    end
  elseif kind == "error" then
    local msg = tostring(ev.message)
    end_run("> error: " .. msg)
    cairn().last_error = msg
    cairn().notify(
      "the model request failed: " .. msg .. ". Fix the setting it names (provider.* in ~/.config/cairn/config.toml, "
        .. "`config` in require(\"cairn\").setup{}, or the environment), then :CairnRestart and send again; the chat is kept.",
      vim.log.levels.ERROR
    )
  end
end

--- The server went away (crash or restart): a running turn is over, the text stays.
function M.server_gone(why)
  if valid() and M.run_id ~= nil then
    end_run(
      "> interrupted: "
        .. why
        .. " before this turn was saved, so the model will not remember it; "
        .. ":CairnRestart if needed, then send it again (earlier turns are kept)"
    )
  end
  M.run_id = nil
end

--- The text under the last ## You heading (outside fences), and the heading's line (1-based).
local function last_you()
  local all = lines()
  local in_fence = false
  local heading = nil
  for i, line in ipairs(all) do
    if line:match("^```") or line:match("^~~~") then
      in_fence = not in_fence
    elseif not in_fence then
      local trimmed = line:gsub("%s+$", "")
      if trimmed == YOU then
        heading = i
      elseif trimmed == CAIRN then
        heading = nil
      end
    end
  end
  if heading == nil then
    return nil, nil
  end
  local body = vim.list_slice(all, heading + 1, #all)
  local text = table.concat(body, "\n"):gsub("^%s+", ""):gsub("%s+$", "")
  return text, heading
end

--- Adds event lines to the chat buffer between turns (a rewind's report), above the last
--- ## You heading, so what is written under it stays the next message.
function M.note(block)
  if not valid() or M.run_id ~= nil then
    return
  end
  local _, heading = last_you()
  if heading == nil then
    append_block(block)
    append_block({ YOU })
    return
  end
  local out = vim.deepcopy(block)
  table.insert(out, "")
  local above = vim.api.nvim_buf_get_lines(M.buf, math.max(heading - 2, 0), heading - 1, false)[1]
  if heading > 1 and above ~= "" then
    table.insert(out, 1, "")
  end
  vim.api.nvim_buf_set_lines(M.buf, heading - 1, heading - 1, false, out)
end

--- Sends a message: `args` when given (written under the last ## You), else what the user
--- wrote there. `mode` is "chat" or "agent" (nil keeps the buffer's last mode).
function M.send(mode, args, context)
  if mode then
    M.mode = mode
  end
  M.get_buf()
  M.show()
  if M.run_id ~= nil then
    cairn().notify("a turn is still running; wait for it or stop it with :CairnCancel", vim.log.levels.WARN)
    return
  end
  local text, heading = last_you()
  if args ~= nil and args ~= "" then
    if heading == nil or (text ~= nil and text ~= "") then
      append_block({ YOU })
    end
    append_block({ args })
    text, heading = last_you()
  end
  if text == nil or text == "" then
    -- Nothing to send yet: leave the cursor where the message goes.
    local win = M.show()
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(M.buf), 0 })
    if args == "" and heading ~= nil and context == nil and mode == nil then
      cairn().notify("nothing to send: write your message under the last ## You heading", vim.log.levels.WARN)
    end
    return
  end
  if cairn().ensure() == nil then
    return
  end
  local params = { message = text, mode = M.mode }
  if M.session_id then
    params.sessionId = M.session_id
  end
  if context then
    params.context = context
  end
  append_block({ CAIRN })
  M.run_id = false -- pending: a second send waits
  M.early = {}
  cairn().request("cairn/chat", params, function(err, result)
    if err then
      M.run_id = nil
      local msg = err.message or vim.inspect(err)
      end_run("> error: " .. msg)
      cairn().last_error = msg
      cairn().notify(
        "could not start the turn: " .. msg .. ". Fix the setting it names, then :CairnRestart and send again; the chat is kept.",
        vim.log.levels.ERROR
      )
      return
    end
    M.run_id = result.runId
    M.session_id = result.sessionId
    local early = M.early
    M.early = {}
    for _, ev in ipairs(early) do
      M.on_event(ev)
    end
  end)
end

--- Cancels the running turn.
function M.cancel()
  local client = cairn().client()
  if M.run_id == nil or M.run_id == false or client == nil then
    cairn().notify("no turn is running", vim.log.levels.INFO)
    return
  end
  cairn().call(client, "request", "cairn/cancel", { runId = M.run_id }, function(err)
    if err then
      cairn().notify("cancel failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end)
end

--- Replaces the buffer with a stored session's transcript and continues that session.
function M.load_session(session_id, records)
  local buf = M.get_buf()
  if M.run_id ~= nil then
    cairn().notify("a turn is still running; :CairnCancel it first", vim.log.levels.WARN)
    return
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "" })
  local role = nil
  for _, record in ipairs(records or {}) do
    local msg = record.type == "message" and record.message or nil
    if msg then
      if msg.role == "user" then
        append_block({ YOU })
        append_block(split_lines(msg.text or ""))
        role = "user"
      elseif msg.role == "assistant" then
        if role ~= "assistant" then
          append_block({ CAIRN })
        end
        role = "assistant"
        if msg.text and msg.text ~= "" then
          append_block(split_lines(msg.text))
        end
        for _, call in ipairs(msg.toolCalls or {}) do
          append_block(tool_call_block(call.name, call.arguments))
        end
      elseif msg.role == "tool" then
        append_block(tool_result_block(msg.isError, msg.content))
      end
    end
  end
  append_block({ YOU })
  -- Drop the leading blank line left by the reset.
  if (vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] or "") == "" then
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, {})
  end
  M.session_id = session_id
  M.show()
end

return M
