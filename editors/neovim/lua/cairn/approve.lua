-- Approvals: answers the server's cairn/approve request (docs/lsp-extensions.md) with a choice
-- made through vim.ui.select, so any picker the user configured asks the question.

local M = {}

local LABELS = {
  allowOnce = "Allow once",
  allowSession = "Allow for this session",
  deny = "Deny",
}

local function args_text(arguments)
  if type(arguments) == "string" then
    return arguments
  end
  local ok, text = pcall(vim.json.encode, arguments)
  if not ok or text == "[]" then
    return "{}"
  end
  if #text > 400 then
    text = text:sub(1, 400) .. " …"
  end
  return text
end

--- The question for one approval request, as shown to the user.
function M.prompt(params)
  local prompt = string.format("cairn: allow %s? %s", tostring(params.reason or params.tool), args_text(params.arguments))
  if type(params.protectedPaths) == "table" and #params.protectedPaths > 0 then
    prompt = prompt .. " (protected: " .. table.concat(params.protectedPaths, ", ") .. ")"
  end
  return prompt
end

--- Asks the user and returns the answer object. vim.ui.select may answer later (a picker):
--- the request waits for it, with the editor responsive meanwhile; a dismissed picker denies.
function M.ask(params)
  local options = params.options
  if type(options) ~= "table" or #options == 0 then
    options = { "allowOnce", "allowSession", "deny" }
  end
  local answered, decision = false, "deny"
  local ok, err = pcall(vim.ui.select, options, {
    prompt = M.prompt(params),
    kind = "cairn.approval",
    format_item = function(item)
      return LABELS[item] or item
    end,
  }, function(choice)
    if choice ~= nil and LABELS[choice] then
      decision = choice
    end
    answered = true
  end)
  if not ok then
    vim.notify("cairn: could not ask for approval (" .. tostring(err) .. "); the call is denied", vim.log.levels.ERROR)
    answered = true
  end
  if not answered then
    vim.wait(24 * 3600 * 1000, function()
      return answered
    end, 50)
  end
  return {
    approvalId = params.approvalId,
    runId = params.runId,
    callId = params.callId,
    decision = decision,
  }
end

return M
