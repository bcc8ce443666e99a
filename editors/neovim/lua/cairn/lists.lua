-- :CairnTools (the tool catalog in a scratch buffer) and :CairnSessions (pick a stored
-- session with vim.ui.select and continue it in the chat buffer).

local M = {}

function M.scratch(name, text_lines)
  local existing = vim.fn.bufnr(name)
  local buf = existing
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text_lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
  vim.cmd("split")
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

local function failed(what, err)
  vim.notify("cairn: " .. what .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

function M.tools()
  local params = {}
  local session = require("cairn.chat").session_id
  if session then
    params.sessionId = session
  end
  require("cairn").request("cairn/tools", params, function(err, result)
    if err then
      return failed("cairn/tools", err)
    end
    local tools = (result and result.tools) or {}
    local out = { string.format("%d tools (name, effect, policy; * agent mode only)", #tools), "" }
    for _, t in ipairs(tools) do
      local desc = tostring(t.description or ""):gsub("\n.*", "")
      if #desc > 80 then
        desc = desc:sub(1, 79) .. "…"
      end
      table.insert(
        out,
        string.format("%-24s %-8s %-6s%s %s", t.name, t.effect or "", t.policy or "", t.agentOnly and "*" or " ", desc)
      )
    end
    if #tools == 0 then
      table.insert(out, "(no tools: cairn offers tools only with a workspace folder)")
    end
    M.scratch("cairn://tools", out)
  end)
end

function M.sessions()
  require("cairn").request("cairn/sessions", {}, function(err, result)
    if err then
      return failed("cairn/sessions", err)
    end
    local sessions = (result and result.sessions) or {}
    if #sessions == 0 then
      vim.notify("cairn: no stored sessions yet", vim.log.levels.INFO)
      return
    end
    vim.ui.select(sessions, {
      prompt = "cairn: open a session",
      kind = "cairn.session",
      format_item = function(s)
        return string.format("%s  (%d runs, %s)", s.title or s.sessionId, s.runs or 0, os.date("%Y-%m-%d %H:%M", s.updated or 0))
      end,
    }, function(choice)
      if choice == nil then
        return
      end
      require("cairn").request("cairn/sessions", { sessionId = choice.sessionId }, function(err2, transcript)
        if err2 then
          return failed("loading the session", err2)
        end
        require("cairn.chat").load_session(choice.sessionId, transcript.records)
      end)
    end)
  end)
end

return M
