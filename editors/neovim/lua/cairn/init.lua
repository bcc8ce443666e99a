-- cairn for Neovim: a thin client over `cairn lsp` (docs/lsp-extensions.md).
--
-- require("cairn").setup{} starts the server, attaches file buffers, and defines
-- :CairnChat, :CairnAgent, :CairnTools, :CairnCancel, :CairnSessions, :CairnRewind, :CairnCompact,
-- :CairnContext and :CairnRestart; sends the workspace's diagnostics to the server.
-- Works on Neovim 0.7 and later: it uses vim.lsp.start_client/buf_attach_client, which every
-- version since 0.5 has, and no API newer than 0.7.

local chat = require("cairn.chat")

local M = {}

M.defaults = {
  -- The command that starts the server; the first word must be an executable.
  cmd = { "cairn", "lsp" },
  -- The editor's configuration layer (same keys as config.toml); nil leaves it unset.
  config = nil,
  -- Markers of the workspace root, searched upward from the current directory.
  root_markers = { ".git", ".cairn" },
  -- Attach file buffers under the root, so tools read unsaved text and edits land in buffers.
  attach = true,
  -- Start the server at setup (otherwise at the first command).
  autostart = true,
  -- How the chat buffer opens: a command such as "botright vsplit", "split", "tabnew" or "enew".
  open = "botright vsplit",
  -- The command a picture's path is given to when you press gp on it in the chat buffer.
  open_picture = { "xdg-open" },
}

M.opts = vim.deepcopy(M.defaults)
M.client_id = nil
-- Set while we stop the client ourselves, so on_exit does not report a crash.
M.stopping = {}
-- The last problem, shown by :checkhealth cairn.
M.last_error = nil
M.setup_done = false

local INSTALL_HINT = "install it with `cargo install --path server/cairn --locked` from a clone of cairn "
  .. "(see its README), make sure ~/.cargo/bin is on PATH, or set `cmd` in require(\"cairn\").setup{}"

-- Client methods: called with a dot up to 0.10, as methods (client:request) from 0.11, where
-- the dot form is deprecated.
local METHOD_CALLS = vim.fn.has("nvim-0.11") == 1

--- Calls `client.<name>(...)` the way this Neovim expects.
function M.call(client, name, ...)
  if METHOD_CALLS then
    return client[name](client, ...)
  end
  return client[name](...)
end

function M.notify(msg, level)
  vim.notify("cairn: " .. msg, level or vim.log.levels.INFO)
end

function M.root_dir()
  local cwd = vim.fn.getcwd()
  for _, marker in ipairs(M.opts.root_markers) do
    local dir = vim.fn.finddir(marker, cwd .. ";")
    if dir ~= "" then
      return vim.fn.fnamemodify(dir, ":p:h:h")
    end
    local file = vim.fn.findfile(marker, cwd .. ";")
    if file ~= "" then
      return vim.fn.fnamemodify(file, ":p:h")
    end
  end
  return cwd
end

--- Whether the configured command can be run; returns (ok, message).
function M.check_cmd()
  local exe = M.opts.cmd[1]
  if exe == nil or vim.fn.executable(exe) ~= 1 then
    return false,
      string.format("`%s` is not installed or not on PATH: %s; then run :CairnRestart.", tostring(exe), INSTALL_HINT)
  end
  return true, nil
end

function M.client()
  if M.client_id == nil then
    return nil
  end
  local client = vim.lsp.get_client_by_id(M.client_id)
  if client == nil or (client.is_stopped and M.call(client, "is_stopped")) then
    return nil
  end
  return client
end

-- Requests made before the server answered `initialize`, sent from on_init.
M.pending = {}

local function flush_pending(client, err)
  local pending = M.pending
  M.pending = {}
  for _, p in ipairs(pending) do
    if client then
      M.call(client, "request", p.method, p.params, p.handler)
    else
      p.handler(err, nil)
    end
  end
end

local function on_exit(code, signal, client_id)
  vim.schedule(function()
    if M.client_id == client_id then
      flush_pending(nil, { message = "the server stopped before it was ready (exit code " .. tostring(code) .. ")" })
    end
    if M.stopping[client_id] then
      M.stopping[client_id] = nil
      return
    end
    if M.client_id == client_id then
      M.client_id = nil
    end
    local msg = string.format(
      "the server stopped unexpectedly (exit code %s, signal %s). The chat so far is kept in its buffer; "
        .. "run :CairnRestart to start the server again (the session continues). Its log: %s",
      tostring(code),
      tostring(signal),
      vim.lsp.get_log_path()
    )
    M.last_error = msg
    local how = (signal ~= nil and signal ~= 0) and ("signal " .. tostring(signal)) or ("exit code " .. tostring(code))
    chat.server_gone("the server stopped (" .. how .. ")")
    M.notify(msg, vim.log.levels.ERROR)
  end)
end

--- Starts the server unless it runs; returns the client or nil (after saying why).
function M.start()
  local client = M.client()
  if client then
    return client
  end
  local ok, msg = M.check_cmd()
  if not ok then
    M.last_error = msg
    M.notify(msg, vim.log.levels.ERROR)
    return nil
  end
  local root = M.root_dir()
  local init_options = { capabilities = { approvals = true, diagnostics = true } }
  if type(M.opts.config) == "table" and not vim.tbl_isempty(M.opts.config) then
    init_options.config = M.opts.config
  end
  local id = vim.lsp.start_client({
    name = "cairn",
    cmd = M.opts.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = init_options,
    handlers = {
      ["cairn/runEvent"] = function(_, params)
        chat.on_event(params)
      end,
      ["cairn/approve"] = function(_, params)
        return require("cairn.approve").ask(params)
      end,
      -- Kept for :checkhealth cairn.
      ["cairn/mcpStatus"] = function(_, params)
        M.mcp_status = params
      end,
      ["workspace/applyEdit"] = function(err, params, ctx, config)
        return require("cairn.edits").apply(err, params, ctx, config)
      end,
      -- Neovim 0.7 has no handler for it; Explain, Fix and Ask cairn show their chat document
      -- with it, and an OAuth sign-in its address.
      ["window/showDocument"] = function(_, params)
        return M.show_document(params)
      end,
    },
    on_init = function(client)
      vim.schedule(function()
        if M.client_id == client.id then
          flush_pending(client, nil)
          require("cairn.diagnostics").send_all()
        end
      end)
    end,
    on_exit = on_exit,
  })
  if id == nil then
    M.last_error = "the server could not be started with " .. table.concat(M.opts.cmd, " ")
    M.notify(M.last_error .. "; check `cmd` in require(\"cairn\").setup{} and run :CairnRestart", vim.log.levels.ERROR)
    return nil
  end
  M.client_id = id
  M.root = root
  M.last_error = nil
  if M.opts.attach then
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      M.attach(buf)
    end
  end
  return vim.lsp.get_client_by_id(id)
end

--- window/showDocument: opens a file in a window (attached, so the server sees it open), or
--- an external address in the browser.
function M.show_document(params)
  if params == nil or type(params.uri) ~= "string" then
    return { success = false }
  end
  if params.external then
    M.notify("open this address in your browser: " .. params.uri, vim.log.levels.WARN)
    if vim.fn.executable("xdg-open") == 1 then
      vim.fn.jobstart({ "xdg-open", params.uri }, { detach = true })
    end
    return { success = true }
  end
  if params.uri:sub(1, 7) ~= "file://" then
    return { success = false }
  end
  local path = vim.uri_to_fname(params.uri)
  local shown = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.api.nvim_buf_get_name(buf) == path and vim.api.nvim_buf_is_loaded(buf) then
      vim.api.nvim_set_current_win(win)
      shown = true
    end
  end
  if not shown then
    if chat.is_chat(vim.api.nvim_get_current_buf()) then
      vim.cmd("wincmd p")
    end
    local ok, err = pcall(vim.cmd, "split " .. vim.fn.fnameescape(path))
    if not ok then
      M.notify("could not open " .. path .. ": " .. tostring(err), vim.log.levels.ERROR)
      return { success = false }
    end
  end
  M.attach(vim.api.nvim_get_current_buf())
  if params.selection and params.selection.start then
    pcall(vim.api.nvim_win_set_cursor, 0, { params.selection.start.line + 1, params.selection.start.character })
  end
  return { success = true }
end

--- Attaches a file buffer under the workspace root to the server.
function M.attach(buf)
  if M.client_id == nil or not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  if vim.api.nvim_buf_get_option(buf, "buftype") ~= "" then
    return
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return
  end
  local full = vim.fn.fnamemodify(name, ":p")
  if M.root and full:sub(1, #M.root + 1) ~= M.root .. "/" then
    return
  end
  vim.lsp.buf_attach_client(buf, M.client_id)
end

--- Stops the server (if any) and starts it again; the chat buffer and its session stay.
function M.restart()
  local client = M.client()
  if client then
    M.stopping[client.id] = true
    M.call(client, "stop", true)
  end
  M.client_id = nil
  chat.server_gone("the server was restarted")
  local started = M.start()
  if started then
    M.notify("server restarted; the chat continues its session", vim.log.levels.INFO)
  end
  return started
end

--- The running client, started if needed; nil after saying why not.
function M.ensure()
  return M.client() or M.start()
end

--- Sends a request once the server is initialized (starting it if needed). Returns false
--- (after saying why) when there is no server; `handler(err, result)` gets the answer.
function M.request(method, params, handler)
  local client = M.ensure()
  if client == nil then
    return false
  end
  if client.initialized then
    M.call(client, "request", method, params, handler)
  else
    table.insert(M.pending, { method = method, params = params, handler = handler })
  end
  return true
end


local function range_context(opts)
  if opts.range == nil or opts.range == 0 then
    return nil
  end
  local buf = vim.api.nvim_get_current_buf()
  if chat.is_chat(buf) then
    return nil
  end
  M.attach(buf)
  local last = vim.api.nvim_buf_get_lines(buf, opts.line2 - 1, opts.line2, false)[1] or ""
  return {
    uri = vim.uri_from_bufnr(buf),
    range = {
      start = { line = opts.line1 - 1, character = 0 },
      ["end"] = { line = opts.line2 - 1, character = #last },
    },
  }
end

local function define_commands()
  local function send(mode)
    return function(opts)
      local context = range_context(opts)
      chat.send(mode, opts.args, context)
    end
  end
  local cmd = vim.api.nvim_create_user_command
  cmd("CairnChat", send("chat"), { nargs = "*", range = true, desc = "cairn: chat (no editing tools)" })
  cmd("CairnAgent", send("agent"), { nargs = "*", range = true, desc = "cairn: agent mode (may edit files)" })
  cmd("CairnCancel", function()
    chat.cancel()
  end, { desc = "cairn: cancel the running turn" })
  cmd("CairnTools", function()
    require("cairn.lists").tools()
  end, { desc = "cairn: the tool catalog" })
  cmd("CairnSessions", function()
    require("cairn.lists").sessions()
  end, { desc = "cairn: open a stored session" })
  cmd("CairnRewind", function(opts)
    require("cairn.session").rewind(opts.args)
  end, { nargs = "?", desc = "cairn: restore the files a turn and later ones changed" })
  cmd("CairnCompact", function()
    require("cairn.session").compact()
  end, { desc = "cairn: summarise the chat's older turns" })
  cmd("CairnContext", function()
    require("cairn.session").context()
  end, { desc = "cairn: the project rules (AGENTS.md) a run here gets" })
  cmd("CairnRestart", function()
    M.restart()
  end, { desc = "cairn: restart the server" })
end

function M.setup(opts)
  M.opts = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  M.setup_done = true
  define_commands()
  local group = vim.api.nvim_create_augroup("cairn", { clear = true })
  vim.api.nvim_create_autocmd("BufReadPost", {
    group = group,
    callback = function(args)
      if M.opts.attach then
        M.attach(args.buf)
      end
    end,
  })
  -- The diagnostics the agent can ask for (get_diagnostics), sent as they change.
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(args)
      if M.client_id ~= nil then
        require("cairn.diagnostics").changed(args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      local client = M.client()
      if client then
        M.stopping[client.id] = true
      end
    end,
  })
  if M.opts.autostart then
    local ok, msg = M.check_cmd()
    if ok then
      M.start()
    else
      M.last_error = msg
      M.notify(msg, vim.log.levels.WARN)
    end
  end
end

return M
