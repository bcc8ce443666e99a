//! The Neovim plugin (`editors/neovim`) driven headless by a real `nvim` (Debian's 0.7.2 in CI)
//! against the real `cairn lsp` and the scripted model. The Lua scripts under
//! `editors/neovim/tests/` run the commands a user types, answer `vim.ui.select` like a user,
//! and write what the user saw (the chat buffer, the edited buffer, messages, `:checkhealth`)
//! as JSON; these tests assert on it. They run when `CAIRN_NEOVIM_TESTS=1` (`.ci/run` sets it).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Sandbox, uri, wait_exit};

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_NEOVIM_TESTS",
        "with `nvim` (0.7 or later) on PATH (.ci/run does)",
    )
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn plugin() -> PathBuf {
    std::fs::canonicalize(repo().join("editors/neovim")).unwrap()
}

/// Runs `nvim --headless` in the sandbox's workspace with the plugin configured to start
/// `cmd`, sources `editors/neovim/tests/<script>`, and returns what the script recorded.
fn run_nvim(sb: &Sandbox, cmd: &str, script: &str) -> Value {
    run_nvim_with(sb, cmd, script, &[])
}

/// [`run_nvim`] with more environment for the script.
fn run_nvim_with(sb: &Sandbox, cmd: &str, script: &str, env: &[(&str, &std::ffi::OsStr)]) -> Value {
    let init = sb.dir.path().join("init.lua");
    let out = sb.dir.path().join("nvim-out.json");
    std::fs::write(
        &init,
        format!(
            "vim.opt.runtimepath:prepend({plugin:?})\n\
             vim.cmd('filetype plugin on')\n\
             vim.cmd('syntax on')\n\
             require('cairn').setup({{ cmd = {{ {cmd:?}, 'lsp' }} }})\n",
            plugin = plugin().display().to_string(),
        ),
    )
    .unwrap();
    // The environment the sandbox gives the binary (private home, scripted model), for nvim
    // and, through it, for the server it starts.
    let base = sb.command();
    let mut nvim = std::process::Command::new("nvim");
    nvim.env_clear();
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            nvim.env(k, v);
        }
    }
    nvim.envs(env.iter().copied());
    nvim.env("CAIRN_NVIM_TESTS", plugin().join("tests"))
        .env("CAIRN_NVIM_OUT", &out)
        .current_dir(sb.ws())
        .args(["--headless", "-u"])
        .arg(&init)
        .arg("-c")
        .arg(format!(
            "luafile {}",
            plugin().join("tests").join(script).display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = nvim
        .spawn()
        .expect("cannot run `nvim`; install Neovim 0.7 or later (apt-get install neovim)");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = wait_exit(&mut child, Duration::from_secs(120));
    if status.is_none() {
        let _ = child.kill();
    }
    let stderr = reader.join().unwrap();
    let text = std::fs::read_to_string(&out).unwrap_or_else(|_| {
        panic!("nvim wrote no result ({status:?}); its stderr:\n{stderr}");
    });
    let result: Value = serde_json::from_str(&text).unwrap();
    assert!(
        result.get("luaError").is_none(),
        "the test script failed: {}\nnvim stderr:\n{stderr}",
        result["luaError"]
    );
    result
}

fn lines(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list of lines: {value}"))
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

fn notes(result: &Value) -> Vec<String> {
    result["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["msg"].as_str().unwrap().to_string())
        .collect()
}

/// The index of the first line equal to `want` at or after `from`, panicking with the buffer.
fn find_from(buffer: &[String], from: usize, want: &str) -> usize {
    buffer[from..]
        .iter()
        .position(|l| l == want)
        .map(|i| i + from)
        .unwrap_or_else(|| {
            panic!(
                "no line {want:?} after line {from} in:\n{}",
                buffer.join("\n")
            )
        })
}

/// The whole turn a user makes: `:CairnAgent` with an unsaved buffer, a `read_file` call that
/// sees the unsaved text, an `edit_file` call approved with "Allow once" in `vim.ui.select`,
/// the edit in the buffer (not on disk), the answer streamed into the chat buffer.
#[test]
fn neovim_agent_turn_with_a_tool_call_an_approval_and_an_edit() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})).with_text("Let me look."),
            Reply::tool_call(
                "edit_file",
                json!({"path": "notes.txt", "old_string": "teh", "new_string": "the"}),
            ),
            Reply::text("Fixed the typo."),
        ],
    );
    let path = sb.write("notes.txt", "on disk\n");
    let result = run_nvim(&sb, env!("CARGO_BIN_EXE_cairn"), "turn.lua");
    assert_eq!(result["finished"], true, "{result:#}");
    let chat = lines(&result["chat"]);
    let text = chat.join("\n");

    // The conversation, in the order the user saw it.
    let you = find_from(&chat, 0, "## You");
    let asked = find_from(&chat, you, "fix the typo in notes.txt");
    let cairn = find_from(&chat, asked, "## cairn");
    let look = find_from(&chat, cairn, "Let me look.");
    let read = find_from(&chat, look, "```tool-call read_file");
    assert_eq!(chat[read + 1], r#"{"path":"notes.txt"}"#);
    let read_result = find_from(&chat, read, "```tool-result ok");
    assert!(
        chat[read_result + 1].contains("fix teh typo"),
        "read_file saw the unsaved buffer:\n{text}"
    );
    let edit = find_from(&chat, read_result, "```tool-call edit_file");
    let question = find_from(
        &chat,
        edit,
        "> cairn asks: allow `edit_file` writes files (policy.effects.write)?",
    );
    let allowed = find_from(&chat, question, "> allowed once");
    let edited = find_from(&chat, allowed, &format!("> edited {}", uri(&path)));
    let edit_result = find_from(&chat, edited, "```tool-result ok");
    assert!(chat[edit_result + 1].starts_with("edited notes.txt: replaced 1 occurrence"));
    let answer = find_from(&chat, edit_result, "Fixed the typo.");
    let next = find_from(&chat, answer, "## You");
    assert!(
        chat[next + 1..].iter().all(|l| l.is_empty()),
        "a fresh ## You section ends the chat:\n{text}"
    );

    // The approval question went through vim.ui.select with the three answers.
    let questions = result["asked"].as_array().unwrap();
    assert_eq!(questions.len(), 1, "{result:#}");
    assert_eq!(questions[0]["kind"], "cairn.approval");
    assert!(
        questions[0]["prompt"]
            .as_str()
            .unwrap()
            .contains("edit_file"),
        "{result:#}"
    );
    assert_eq!(
        questions[0]["items"],
        json!(["Allow once", "Allow for this session", "Deny"])
    );

    // The edit landed in the buffer, unsaved and undoable; the file on disk is untouched.
    assert_eq!(result["edited"], json!(["fix the typo"]));
    assert_eq!(result["modified"], true);
    assert_eq!(sb.read("notes.txt"), "on disk\n");
    assert_eq!(result["syntax"], "cairnchat");
    assert!(notes(&result).is_empty(), "no error was shown: {result:#}");

    // :checkhealth cairn with a running server.
    let health = lines(&result["health"]).join("\n");
    assert!(health.contains("OK: Neovim 0."), "{health}");
    assert!(health.contains("found at"), "{health}");
    assert!(health.contains("OK: server running"), "{health}");
    assert!(
        health.contains("OK: MCP server cairn-files (inProcess): running"),
        "{health}"
    );
    assert!(!health.contains("ERROR"), "{health}");

    // The model saw the unsaved text and was offered the editing tool.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body.to_string().contains("fix teh typo"));
}

/// A chart a data tool drew: the chat buffer says a picture is there, and `gp` on its path opens
/// the file with `open_picture`.
#[test]
fn neovim_a_chart_is_named_and_opens_on_gp() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "chart_bar",
                json!({"file": "sales.csv", "x": "region", "y": ["units"], "aggregate": "sum", "output": "charts/units"}),
            ),
            Reply::text("EU sold the most."),
        ],
    );
    sb.write("sales.csv", "region,units\nEU,5\nUS,3\nEU,4\n");
    let result = run_nvim(&sb, env!("CARGO_BIN_EXE_cairn"), "picture.lua");
    assert_eq!(result["finished"], true, "{result:#}");
    let chat = lines(&result["chat"]);
    let call = find_from(&chat, 0, "```tool-call chart_bar");
    let done = find_from(&chat, call, "```tool-result ok");
    assert!(
        chat[done + 1].contains("written to charts/units.svg and charts/units.png"),
        "{chat:#?}"
    );
    find_from(&chat, done, "> 1 picture: press gp on its path to open it");
    let png = sb.ws().join("charts/units.png");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let opened = result["opened"][0].as_str().unwrap_or_default();
    assert_eq!(
        std::path::Path::new(opened).canonicalize().ok(),
        png.canonicalize().ok(),
        "{result:#}"
    );
}

/// `cairn` not on PATH: the message names the install command and :CairnRestart, the typed
/// message stays in the chat buffer, and :checkhealth cairn reports the error.
#[test]
fn neovim_without_cairn_on_path_says_how_to_install_it() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let result = run_nvim(&sb, "cairn-not-installed-anywhere", "missing.lua");
    let shown = notes(&result);
    assert!(
        shown.iter().any(|m| m.contains(
            "`cairn-not-installed-anywhere` is not installed or not on PATH: install it with `cargo install --path server/cairn --locked`"
        ) && m.contains(":CairnRestart")),
        "{shown:#?}"
    );
    let chat = lines(&result["chat"]);
    find_from(&chat, 0, "hello there");
    let health = lines(&result["health"]).join("\n");
    assert!(
        health.contains("ERROR: `cairn-not-installed-anywhere` is not installed or not on PATH"),
        "{health}"
    );
    assert!(
        health.contains("cargo install --path server/cairn --locked"),
        "{health}"
    );
    assert!(sb.model.requests().is_empty());
}

/// The server dies in the middle of a turn: the user is told what happened and what to do,
/// the chat stays with the partial answer marked interrupted, :CairnRestart starts a new server
/// and the next message continues the session (the saved turn is its history).
#[test]
fn neovim_server_crash_keeps_the_chat_and_restart_continues_the_session() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::text("Noted: cobalt."),
            Reply::stall("Thinking about amber and more"),
            Reply::text("You said cobalt."),
        ],
    );
    let result = run_nvim(&sb, env!("CARGO_BIN_EXE_cairn"), "restart.lua");
    for key in ["first", "streaming", "told", "second", "sameSession"] {
        assert_eq!(result[key], true, "{key}: {result:#}");
    }
    let shown = notes(&result);
    assert!(
        shown
            .iter()
            .any(|m| m.contains("the server stopped unexpectedly")
                && m.contains("signal 9")
                && m.contains("run :CairnRestart")),
        "{shown:#?}"
    );
    let after_crash = lines(&result["afterCrash"]);
    let first = find_from(&after_crash, 0, "remember the word cobalt");
    let noted = find_from(&after_crash, first, "Noted: cobalt.");
    let second = find_from(&after_crash, noted, "and the word amber");
    let interrupted = after_crash[second..]
        .iter()
        .find(|l| l.starts_with("> interrupted: the server stopped (signal 9)"))
        .unwrap_or_else(|| panic!("{}", after_crash.join("\n")));
    assert!(
        interrupted.contains("the model will not remember it"),
        "{interrupted}"
    );
    assert!(
        after_crash[second..]
            .iter()
            .any(|l| l.starts_with("Thinking")),
        "the partial answer stays: {}",
        after_crash.join("\n")
    );
    let chat = lines(&result["chat"]);
    let third = find_from(&chat, second, "which word?");
    find_from(&chat, third, "You said cobalt.");
    // The new server sent the saved turn as history: the session continued.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3);
    let history = requests[2].body.to_string();
    assert!(
        history.contains("remember the word cobalt") && history.contains("Noted: cobalt."),
        "{history}"
    );
}

/// A turn cancelled half way and a provider error: each is shown in the chat and as a message
/// that says what to do, and the chat so far stays.
#[test]
fn neovim_cancel_and_provider_error_are_reported_and_the_chat_stays() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::stall("I am thinking"),
            Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
        ],
    );
    let result = run_nvim(&sb, env!("CARGO_BIN_EXE_cairn"), "faults.lua");
    assert_eq!(result["cancelled"], true, "{result:#}");
    assert_eq!(result["errored"], true, "{result:#}");
    let after_cancel = lines(&result["afterCancel"]);
    let asked = find_from(&after_cancel, 0, "think hard");
    let cancelled = find_from(&after_cancel, asked, "> cancelled");
    assert!(
        after_cancel[asked..cancelled]
            .iter()
            .any(|l| l.starts_with("I am")),
        "the partial answer stays:\n{}",
        after_cancel.join("\n")
    );
    find_from(&after_cancel, cancelled, "## You");
    let chat = lines(&result["chat"]);
    let again = find_from(&chat, cancelled, "try again");
    let error = chat[again..]
        .iter()
        .find(|l| l.starts_with("> error: "))
        .unwrap_or_else(|| panic!("no error line:\n{}", chat.join("\n")));
    assert!(
        error.contains("authentication failed (HTTP 401)") && error.contains("OPENAI_API_KEY"),
        "{error}"
    );
    let shown = notes(&result);
    assert!(
        shown.iter().any(|m| m.contains("the turn was cancelled")),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|m| m.contains("the model request failed")
            && m.contains("OPENAI_API_KEY")
            && m.contains("the chat is kept")),
        "{shown:#?}"
    );
}

/// A selection as context (`:2,3CairnChat`), `<CR>` in the chat buffer to send what the user
/// typed (same session), `:CairnTools`, and `:CairnSessions` reopening the stored session.
#[test]
fn neovim_selection_enter_tools_and_sessions() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::text("It adds two numbers."),
            Reply::text("Then it returns the sum."),
        ],
    );
    sb.write(
        "calc.py",
        "import sys\ndef add(a, b):\n    return a + b\nprint(add(1, 2))\n",
    );
    let result = run_nvim(&sb, env!("CARGO_BIN_EXE_cairn"), "more.lua");
    assert_eq!(result["first"], true, "{result:#}");
    assert_eq!(result["second"], true, "{result:#}");
    assert_eq!(result["sameSession"], true, "{result:#}");

    // The selected lines (and only they) reached the model with the question.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body.to_string();
    assert!(
        first.contains("what does this do?") && first.contains("def add(a, b):"),
        "{first}"
    );
    assert!(
        !first.contains("import sys"),
        "only lines 2-3 are sent: {first}"
    );
    // <CR> sent the typed line, with the first exchange as history.
    let second = requests[1].body.to_string();
    assert!(
        second.contains("and then?") && second.contains("It adds two numbers."),
        "{second}"
    );
    let typed = lines(&result["typed"]);
    let q = find_from(&typed, 0, "what does this do?");
    let a = find_from(&typed, q, "It adds two numbers.");
    let t = find_from(&typed, a, "and then?");
    find_from(&typed, t, "Then it returns the sum.");

    // The tool catalog, one tool a line with its effect and policy.
    let tools = lines(&result["tools"]);
    assert!(
        tools[0].ends_with("tools (name, effect, policy; * agent mode only)"),
        "{tools:#?}"
    );
    let edit = tools
        .iter()
        .find(|l| l.starts_with("edit_file "))
        .unwrap_or_else(|| panic!("{tools:#?}"));
    assert!(
        edit.contains("write") && edit.contains("ask") && edit.contains('*'),
        "{edit}"
    );
    assert!(
        tools.iter().any(|l| l.starts_with("read_file ")),
        "{tools:#?}"
    );

    // The session, reopened from the store after its buffer was wiped.
    let reopened = lines(&result["reopened"]);
    let q = find_from(&reopened, 0, "what does this do?");
    let a = find_from(&reopened, q, "It adds two numbers.");
    let t = find_from(&reopened, a, "and then?");
    let last = find_from(&reopened, t, "Then it returns the sum.");
    find_from(&reopened, last, "## You");
}

/// The Explain code action through Neovim's own LSP client (`range_code_action` and
/// `vim.ui.select` on 0.7): the chat document is created under `.cairn/chats/`, shown
/// (`window/showDocument`, which 0.7 lacks and the plugin answers), and the streamed answer
/// reads as one line although it arrives in pieces; then Send in that document.
#[test]
fn neovim_explain_code_action_streams_into_a_chat_document() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::text("It adds two numbers."),
            Reply::text("Because it returns a + b."),
        ],
    );
    sb.write(
        "calc.py",
        "import sys\ndef add(a, b):\n    return a + b\nprint(add(1, 2))\n",
    );
    let result = run_nvim(&sb, env!("CARGO_BIN_EXE_cairn"), "explain.lua");
    assert_eq!(result["answered"], true, "{result:#}");
    assert_eq!(
        result["asked"][0]["items"],
        json!(["Ask cairn", "Explain", "Fix"])
    );
    let name = result["docName"].as_str().unwrap();
    assert!(
        name.contains("/.cairn/chats/chat-") && name.ends_with(".md"),
        "{name}"
    );
    assert_eq!(result["filetype"], "cairnchat");
    let doc = lines(&result["doc"]);
    let q = find_from(&doc, 0, "Explain this code.");
    let code = find_from(&doc, q, "def add(a, b):");
    let heading = find_from(&doc, code, "## cairn");
    let answer = find_from(&doc, heading, "It adds two numbers.");
    let you = find_from(&doc, answer, "## You");
    assert!(
        !doc.iter().any(|l| l == "import sys"),
        "only lines 2-3: {doc:#?}"
    );
    // Send, offered first in the chat document, sent the typed line with the document as history.
    assert_eq!(result["sent"], true, "{result:#}");
    assert_eq!(
        result["asked"][1]["items"],
        json!(["Send", "Ask cairn", "Explain", "Fix"])
    );
    let why = find_from(&doc, you, "and why?");
    let answer = find_from(&doc, why, "Because it returns a + b.");
    find_from(&doc, answer, "## You");
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body.to_string();
    assert!(
        second.contains("and why?") && second.contains("It adds two numbers."),
        "{second}"
    );
}

/// The plugin ships the chat-document syntax of `grammars/vim` unchanged.
#[test]
fn neovim_plugin_ships_the_vim_grammar_unchanged() {
    for file in ["syntax/cairnchat.vim", "ftdetect/cairnchat.vim"] {
        let grammar = std::fs::read_to_string(repo().join("grammars/vim").join(file)).unwrap();
        let shipped = std::fs::read_to_string(repo().join("editors/neovim").join(file)).unwrap();
        assert_eq!(
            grammar, shipped,
            "editors/neovim/{file} differs from grammars/vim/{file}; copy it over"
        );
    }
}

/// Issue 23's run events in the chat buffer, from the recorded run the VS Code tests replay:
/// the compaction notice (its summary folded), the plan as `[x]`/`[~]`/`[ ]` lines that the
/// next plan replaces in place, the sub-agent's steps folded under `> sub-agent: DESCRIPTION`,
/// a hook's denial with its reason, and a failed hook also as a warning.
#[test]
fn neovim_plan_sub_agent_hooks_and_compaction_in_the_chat_buffer() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let result = run_nvim(&sb, "cairn-not-installed-anywhere", "agent_features.lua");
    let first = lines(&result["afterFirstPlan"]);
    let at = find_from(&first, 0, "> plan (0/3 done):");
    assert_eq!(
        first[at + 1..at + 4],
        [
            "> - [~] Read the parser",
            "> - [ ] Fix the bug",
            "> - [ ] Run the tests"
        ],
        "{first:#?}"
    );
    let chat = lines(&result["chat"]);
    let compacted = find_from(
        &chat,
        0,
        "> compacted: 12 older turns summarised, 30,210 → 2,150 tokens",
    );
    assert!(chat[compacted + 1].starts_with("  ↳ The user asked to fix the **parser**"));
    // One plan, updated where it was first shown.
    let plans: Vec<&String> = chat.iter().filter(|l| l.starts_with("> plan (")).collect();
    assert_eq!(plans, ["> plan (1/3 done):"], "{chat:#?}");
    let plan = find_from(&chat, 0, "> plan (1/3 done):");
    assert_eq!(
        chat[plan + 1..plan + 4],
        [
            "> - [x] Read the parser",
            "> - [~] Fix the bug",
            "> - [ ] Run the tests"
        ]
    );
    assert!(plan < find_from(&chat, 0, "```tool-call task"), "{chat:#?}");
    // The sub-agent's steps, under the task call, before its result.
    let task = find_from(&chat, 0, "```tool-call task");
    let sub = find_from(&chat, task, "> sub-agent: Find where tokens are parsed");
    assert_eq!(
        chat[sub + 1..sub + 4],
        [
            "  ↳ Looking at the sources.",
            "  ↳ grep {\"pattern\":\"fn tokenize\"}",
            "  ↳ done"
        ]
    );
    let answer = find_from(&chat, sub, "```tool-result ok");
    assert_eq!(
        chat[answer + 1],
        "Tokens are parsed in src/lexer.rs, fn tokenize."
    );
    // Folded (closed) in the chat window: the sub-agent's steps.
    assert_eq!(lines(&result["folded"]), chat[sub + 1..sub + 4]);
    find_from(
        &chat,
        0,
        "> hook denied (before the call): ./check.sh: src/lexer.rs is frozen until the release",
    );
    let failed =
        "hook failed (at the end of the turn): ./lint.sh: exit status 127: ./lint.sh: not found";
    find_from(&chat, 0, &format!("> {failed}"));
    assert!(
        result["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["msg"] == format!("cairn: {failed}") && n["level"] == 3),
        "a failed hook is a warning: {result:#}"
    );
    assert_eq!(chat.last().map(String::as_str), Some(""));
    find_from(&chat, answer, "## You");
    assert_eq!(result["running"], false);
    // The syntax gives each new kind of line its group.
    let groups = &result["groups"];
    for (line, group) in [
        ("> plan (1/3 done):", "cairnChatPlan"),
        ("> - [x] Read the parser", "cairnChatStepDone"),
        ("> - [~] Fix the bug", "cairnChatStepNow"),
        ("> - [ ] Run the tests", "cairnChatStepTodo"),
        ("> sub-agent: Find where tokens are parsed", "cairnChatSub"),
        ("  ↳ done", "cairnChatNested"),
        (
            "> compacted: 12 older turns summarised, 30,210 → 2,150 tokens",
            "cairnChatCompacted",
        ),
        (&format!("> {failed}"), "cairnChatHookBad"),
    ] {
        assert_eq!(groups[line], group, "{line}: {groups:#}");
    }
}

/// The plugin sends the editor's diagnostics as `cairn/diagnostics` (it announces
/// `capabilities.diagnostics`): a linter's entries in LSP shapes (UTF-16 columns), an empty
/// list when they clear, all of them again after a restart; never cairn's own, never a file
/// outside the workspace.
#[test]
fn neovim_sends_the_workspace_diagnostics_to_the_server() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write("main.txt", "first line\nhéllo wörld foo\nthird\n");
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("elsewhere.txt");
    std::fs::write(&outside_file, "x\n").unwrap();
    let result = run_nvim_with(
        &sb,
        env!("CARGO_BIN_EXE_cairn"),
        "diagnostics.lua",
        &[("CAIRN_NVIM_OUTSIDE", outside_file.as_os_str())],
    );
    for step in ["started", "first", "cleared", "resent"] {
        assert_eq!(result[step], true, "{step}: {result:#}");
    }
    let uri = result["uri"].as_str().unwrap();
    assert!(
        uri.starts_with("file:///") && uri.ends_with("/main.txt"),
        "{uri}"
    );
    let sent = result["sent"].as_array().unwrap();
    assert_eq!(
        sent[0],
        json!({"uri": uri, "diagnostics": [
            {"range": {"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 15}},
             "severity": 1, "message": "undefined: foo", "source": "test-linter", "code": "E1"},
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
             "severity": 4, "message": "a hint"},
        ]}),
        "{result:#}"
    );
    assert_eq!(sent[1], json!({"uri": uri, "diagnostics": []}));
    let quiet = result["quiet"].as_u64().unwrap() as usize;
    assert_eq!(
        quiet, 2,
        "cairn's own and outside diagnostics are not sent: {result:#}"
    );
    let last = sent.last().unwrap();
    assert_eq!(last["uri"], uri);
    assert_eq!(last["diagnostics"][0]["message"], "unused");
    assert_eq!(last["diagnostics"][0]["severity"], 2);
    for s in sent {
        let text = s.to_string();
        assert!(
            !text.contains("published by cairn") && !text.contains("outside the workspace"),
            "{text}"
        );
    }
}

/// `:CairnRewind`, `:CairnCompact` and `:CairnContext` against canned answers: the requests
/// they make for the chat's session, the turn picker (latest first, with the files each turn
/// changed), the rewind's report (restored files, and a warning for what was left as it was)
/// above the next `## You`, the compaction's outcome, the rules for the current file.
#[test]
fn neovim_rewind_compact_and_context_commands() {
    if !enabled() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write("src.txt", "x\n");
    let result = run_nvim(&sb, "cairn-not-installed-anywhere", "session.lua");
    let requests: Vec<(String, Value)> = result["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap().to_string(),
                r["params"].clone(),
            )
        })
        .collect();
    let context_uri = requests.last().unwrap().1["uri"].clone();
    assert!(
        context_uri
            .as_str()
            .unwrap_or_default()
            .ends_with("/src.txt"),
        "{requests:#?}"
    );
    assert_eq!(
        requests,
        [
            ("cairn/checkpoints".into(), json!({"sessionId": "s1"})),
            ("cairn/rewind".into(), json!({"sessionId": "s1", "turn": 1})),
            ("cairn/rewind".into(), json!({"sessionId": "s1", "turn": 2})),
            ("cairn/compact".into(), json!({"sessionId": "s1"})),
            ("cairn/compact".into(), json!({"sessionId": "s1"})),
            ("cairn/context".into(), json!({"uri": context_uri})),
        ]
    );
    assert_eq!(
        result["asked"][0]["items"],
        json!([
            "Turn 2: Explain it (no files)",
            "Turn 1: Add a parser (2 files: src/a.rs, b.txt)"
        ])
    );
    let shown = notes(&result);
    for note in [
        "cairn: the chat has no session yet: send a message first",
        "cairn: rewound to before turn 1; restored 2 files: src/a.rs, b.txt",
        "cairn: 1 not restored: c.txt (left as it is: changed since cairn wrote it)",
        "cairn: usage: :CairnRewind [turn], the turn a number from 1 (see :CairnRewind without one)",
        "cairn: summarised 12 older turns: 30,210 → 2,150 tokens",
        "cairn: nothing to compact: only 1 turn so far",
    ] {
        assert!(shown.iter().any(|n| n == note), "{note}: {shown:#?}");
    }
    let chat = lines(&result["chat"]);
    let report = find_from(
        &chat,
        0,
        "> rewound to before turn 1; restored 2 files: src/a.rs, b.txt",
    );
    let you = find_from(&chat, report, "## You");
    assert!(
        chat[you + 1..].iter().all(|l| l.is_empty()),
        "the next message is still empty: {chat:#?}"
    );
    assert_eq!(
        lines(&result["context"]),
        [
            "Project rules for src.txt: 2 files, 16,384 of at most 16,384 bytes",
            "",
            "/ws/AGENTS.md  812 bytes",
            "/ws/src/AGENTS.md  15,572 of 20,000 bytes (cut at the limit)",
        ]
    );
}
