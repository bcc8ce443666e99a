-- Shared by the headless test scripts (driven by tests/e2e/neovim.rs): records what the user
-- sees (notifications, approval questions, buffers) and writes it as JSON for the Rust test.

local H = {}

H.notes = {}
H.asked = {}

local real_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(H.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  io.stderr:write("[notify] " .. tostring(msg) .. "\n")
  return real_notify(msg, level, opts)
end

--- Answers every vim.ui.select with the item labelled `label` (a trailing `*` matches any
--- rest), recording the question.
function H.answer_select(label)
  vim.ui.select = function(items, opts, on_choice)
    local labels = {}
    local pick = nil
    for _, item in ipairs(items) do
      local text = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(labels, text)
      if text == label or (label:sub(-1) == "*" and text:sub(1, #label - 1) == label:sub(1, -2)) then
        pick = item
      end
    end
    table.insert(H.asked, { prompt = opts.prompt, items = labels, kind = opts.kind })
    -- Answer later, as a picker does; the plugin must wait for it.
    vim.defer_fn(function()
      on_choice(pick)
    end, 50)
  end
end

function H.chat()
  return require("cairn.chat")
end

function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Waits until the chat's turn started and ended (or `ms` passed); false on timeout.
function H.wait_turn(ms)
  local chat = H.chat()
  vim.wait(ms or 20000, function()
    return chat.run_id ~= nil
  end, 20)
  return vim.wait(ms or 20000, function()
    return chat.run_id == nil
  end, 20)
end

function H.wait_note(pattern, ms)
  return vim.wait(ms or 20000, function()
    for _, n in ipairs(H.notes) do
      if n.msg:find(pattern, 1, true) then
        return true
      end
    end
    return false
  end, 20)
end

--- :checkhealth cairn, as lines.
function H.checkhealth()
  vim.cmd("checkhealth cairn")
  local out = H.lines(vim.api.nvim_get_current_buf())
  vim.cmd("bwipeout!")
  return out
end

--- Writes `result` (plus the notifications and questions) to $CAIRN_NVIM_OUT and quits.
function H.finish(result)
  result.notes = H.notes
  result.asked = H.asked
  local f = assert(io.open(os.getenv("CAIRN_NVIM_OUT"), "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

--- Runs `body`; any Lua error is written as the result so the Rust test shows it.
function H.run(body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.finish({ luaError = tostring(err) })
  end
end

return H
