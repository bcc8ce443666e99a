//! The MCP hub under the real binary: real servers next to the built-in tools, servers that
//! misbehave, rug pulls, poisoned tools, and workspace servers that wait for trust.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{
    Answer, Editor, Responder, Sandbox, of_kind, peer_tests, server_state, test_support_bin, text,
};

fn allow_all() -> Responder {
    Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Now(json!({"title": "Allow for this session"})),
        _ => Answer::Now(Value::Null),
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server-everything over streamable HTTP, ended when dropped.
struct HttpPeer(Child);

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Five real servers (and server-everything once more over streamable HTTP) with the built-in
/// tools, in one cairn, in one turn with parallel calls.
#[test]
fn five_real_servers_and_the_builtins_in_one_turn() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_calls(vec![
                ("everything__echo", json!({"message": "hello hub"})),
                ("time__get_current_time", json!({"timezone": "UTC"})),
                ("memory__read_graph", json!({})),
                ("filesystem__list_directory", json!({"path": "."})),
                ("git__git_status", json!({"repo_path": "."})),
                ("web__echo", json!({"message": "over http"})),
                ("read_file", json!({"path": "notes.txt"})),
            ]),
            Reply::text("All seven answered."),
        ],
    );
    sb.write("notes.txt", "built-in works\n");
    let ws = sb.ws();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(git.success());
    let port = free_port();
    let mut http = Command::new("mcp-server-everything");
    http.arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _peer = HttpPeer(http.spawn().unwrap());
    let w = toml_str(ws.to_str().unwrap());
    sb.user_config(&format!(
        r#"
[mcp.servers.everything]
command = "mcp-server-everything"
args = ["stdio"]
[mcp.servers.filesystem]
command = "mcp-server-filesystem"
args = [{w}]
cwd = {w}
[mcp.servers.memory]
command = "mcp-server-memory"
[mcp.servers.git]
command = "mcp-server-git"
args = ["--repository", {w}]
cwd = {w}
[mcp.servers.time]
command = "mcp-server-time"
[mcp.servers.web]
url = "http://127.0.0.1:{port}/mcp"
"#
    ));
    // Selection off: this test checks that every server's tools reach the model's request,
    // which selection would narrow to the few a request needs (tests/e2e/selection.rs).
    let mut ed = Editor::spawn(&sb, &[("CAIRN_SELECTION__ENABLED", "false")]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = allow_all();
    let status = ed.wait_for_mcp_status(
        |s| {
            [
                "cairn-files",
                "everything",
                "filesystem",
                "memory",
                "git",
                "time",
                "web",
            ]
            .iter()
            .all(|n| server_state(s, n)["state"] == "running")
        },
        "every server running",
    );
    assert_eq!(server_state(&status, "web")["transport"], "http");
    let (run, _) = ed.chat(json!({"message": "use every server"}));
    let events = ed.finish(&run);
    let results = of_kind(&events, "toolResult");
    assert_eq!(results.len(), 7, "{events:#?}");
    // Parallel calls finish in any order; match them by call id.
    let content = |i: usize| {
        let r = results
            .iter()
            .find(|r| {
                r["callId"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with(&format!("_{i}"))
            })
            .unwrap_or_else(|| panic!("no result for call {i}: {events:#?}"));
        assert_eq!(r["isError"], false, "call {i}: {r:#}");
        r["content"].as_str().unwrap_or_default().to_string()
    };
    assert!(content(0).contains("hello hub"), "{}", content(0));
    assert!(content(1).contains("UTC"), "{}", content(1));
    assert!(content(2).contains("entities"), "{}", content(2));
    assert!(content(3).contains("notes.txt"), "{}", content(3));
    assert!(
        content(4).to_lowercase().contains("branch") || content(4).contains("No commits"),
        "{}",
        content(4)
    );
    assert!(content(5).contains("over http"), "{}", content(5));
    assert!(content(6).contains("built-in works"), "{}", content(6));
    // The model saw every server's tools next to the built-ins.
    let offered: Vec<String> = sb.model.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    for name in [
        "read_file",
        "everything__echo",
        "filesystem__read_text_file",
        "memory__create_entities",
        "git__git_log",
        "time__convert_time",
        "web__echo",
    ] {
        assert!(
            offered.iter().any(|o| o == name),
            "{name} not offered: {offered:?}"
        );
    }
    ed.shutdown();
}

/// SECURITY.md F1–F4: servers that are missing, exit, never answer, talk garbage, log on
/// stdout, send a 100 MB line, hang or crash mid-call hurt nothing else, and cairn's own stdout
/// stays a clean LSP channel (the test editor fails on any frame that is not JSON).
#[test]
fn f1_f4_misbehaving_servers_hurt_nothing_else() {
    let bad = test_support_bin("misbehaving-mcp");
    let b = toml_str(bad.to_str().unwrap());
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_calls(vec![
                ("ok__echo", json!({"message": "still here"})),
                ("garbage__echo", json!({"message": "through the noise"})),
                ("stdoutlog__echo", json!({"message": "logged"})),
                ("crash__echo", json!({"message": "boom"})),
                ("hang__echo", json!({"message": "wait"})),
                ("bigline__echo", json!({"message": "huge"})),
                ("read_file", json!({"path": "notes.txt"})),
                ("progress__echo", json!({"message": "forever"})),
            ]),
            Reply::text("done"),
        ],
    );
    sb.write("notes.txt", "built-in works\n");
    let mut config = String::from(
        "[mcp]\nhandshake_timeout_secs = 2\ncall_timeout_secs = 2\nmax_call_timeout_secs = 4\nmax_restarts = 1\nmax_line_bytes = 1048576\n[policy.categories]\n",
    );
    for name in [
        "ok",
        "garbage",
        "stdoutlog",
        "crash",
        "hang",
        "bigline",
        "progress",
    ] {
        config.push_str(&format!("\"mcp:{name}\" = \"allow\"\n"));
    }
    for (name, mode) in [
        ("ok", "ok"),
        ("garbage", "garbage"),
        ("stdoutlog", "stdoutlog"),
        ("crash", "crash"),
        ("hang", "hang"),
        ("bigline", "bigline"),
        ("progress", "progress"),
        ("exit", "exit"),
        ("noinit", "noinit"),
        ("badversion", "badversion"),
    ] {
        config.push_str(&format!(
            "[mcp.servers.{name}]\ncommand = {b}\nargs = [\"--mode\", \"{mode}\"]\n"
        ));
    }
    config.push_str("[mcp.servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n");
    sb.user_config(&config);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let status = ed.wait_for_mcp_status(
        |s| {
            [
                "ok",
                "garbage",
                "stdoutlog",
                "crash",
                "hang",
                "bigline",
                "progress",
            ]
            .iter()
            .all(|n| server_state(s, n)["state"] == "running")
                && server_state(s, "garbage")["state"] == "running"
                && ["exit", "noinit", "missing", "badversion"]
                    .iter()
                    .all(|n| server_state(s, n)["state"] == "failed")
        },
        "healthy servers running and broken ones failed",
    );
    let reason = |n: &str| {
        server_state(&status, n)["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        reason("missing").contains("/nonexistent/mcp-server"),
        "{}",
        reason("missing")
    );
    assert!(
        reason("noinit").contains("initialize"),
        "{}",
        reason("noinit")
    );
    assert!(reason("exit").contains("status 3"), "{}", reason("exit"));
    assert!(
        reason("badversion").contains("unsupported protocol version 1999-01-01"),
        "{}",
        reason("badversion")
    );

    let (run, _) = ed.chat(json!({"message": "call them all"}));
    let events = ed.finish(&run);
    let result = |call: &str| {
        events
            .iter()
            .find(|e| {
                e["kind"] == "toolResult"
                    && e["callId"].as_str().unwrap_or_default().ends_with(call)
            })
            .cloned()
            .unwrap_or(Value::Null)
    };
    let by_index: Vec<Value> = (0..8).map(|i| result(&format!("_{i}"))).collect();
    assert_eq!(by_index[0]["isError"], false, "{:#?}", by_index[0]);
    assert!(
        by_index[0]["content"]
            .as_str()
            .unwrap()
            .contains("still here")
    );
    assert_eq!(
        by_index[1]["isError"], false,
        "garbage lines are skipped: {:#?}",
        by_index[1]
    );
    assert_eq!(
        by_index[2]["isError"], false,
        "stdout logs are skipped: {:#?}",
        by_index[2]
    );
    for (i, needle) in [(3, "crash"), (4, "timed out"), (5, "limit")] {
        assert_eq!(by_index[i]["isError"], true, "{:#?}", by_index[i]);
        let text = by_index[i]["content"].as_str().unwrap().to_lowercase();
        assert!(text.contains(needle), "call {i}: {text}");
    }
    assert!(
        by_index[6]["content"]
            .as_str()
            .unwrap()
            .contains("built-in works")
    );
    // Progress extends a call's time, but not past mcp.max_call_timeout_secs.
    assert_eq!(by_index[7]["isError"], true, "{:#?}", by_index[7]);
    let progress = by_index[7]["content"].as_str().unwrap_or_default();
    assert!(progress.contains("timed out"), "{progress}");
    // The editor saw the servers start.
    assert!(
        ed.notifications.iter().any(|n| n["method"] == "$/progress"
            && n["params"]["value"]["title"] == "cairn: starting MCP servers"),
        "no $/progress while servers started"
    );
    assert_eq!(events.last().unwrap()["kind"], "done");
    // The server still answers.
    assert!(ed.call("cairn/tools", json!({}))["tools"].is_array());
    ed.shutdown();
}

/// SECURITY.md F7: a tool that changes after it was pinned is disabled, the user sees the
/// change, and approving it brings it back.
#[test]
fn f7_rug_pull_disables_the_tool_until_approved() {
    let bad = test_support_bin("misbehaving-mcp");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("pull__echo", json!({"message": "first"})),
            Reply::text("ok"),
            Reply::text("second turn"),
        ],
    );
    let state = sb.dir.path().join("pull-state");
    sb.user_config(&format!(
        "[policy.categories]\n\"mcp:pull\" = \"allow\"\n[mcp.servers.pull]\ncommand = {}\nargs = [\"--mode\", \"rugpull\", \"--state\", {}]\n",
        toml_str(bad.to_str().unwrap()),
        toml_str(state.to_str().unwrap())
    ));
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.wait_for_mcp_status(
        |s| server_state(s, "pull")["state"] == "running",
        "the server running",
    );
    let (run, _) = ed.chat(json!({"message": "echo"}));
    let events = ed.finish(&run);
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "toolResult" && e["isError"] == false)
    );
    // After the call the server rewrites `echo` and says so.
    let status = ed.wait_for_mcp_status(
        |s| !s["reviews"].as_array().unwrap().is_empty(),
        "the review of the changed tool",
    );
    let review = &status["reviews"][0];
    assert_eq!(
        (review["server"].as_str(), review["tool"].as_str()),
        (Some("pull"), Some("echo"))
    );
    assert_eq!(review["reason"]["kind"], "changed");
    assert!(
        review["reason"]["diff"].as_str().unwrap().contains("+")
            && review["reason"]["diff"]
                .as_str()
                .unwrap()
                .contains("IMPORTANT")
    );
    let tools = ed.call("cairn/tools", json!({}));
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "pull__echo"),
        "the changed tool is not offered"
    );
    let (run, _) = ed.chat(json!({"message": "again"}));
    ed.finish(&run);
    let offered = sb.model.requests().last().unwrap().body["tools"].to_string();
    assert!(!offered.contains("pull__echo"), "{offered}");

    // A restart does not forget: the pin is on disk and the server now starts changed.
    ed.shutdown();
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.wait_for_mcp_status(
        |s| {
            server_state(s, "pull")["state"] == "running"
                && !s["reviews"].as_array().unwrap().is_empty()
        },
        "the review after a restart",
    );
    let approved = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.approveTool", "arguments": [{"server": "pull", "tool": "echo"}]}),
    );
    assert_eq!(approved["approved"], true);
    let tools = ed.call("cairn/tools", json!({}));
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "pull__echo"),
        "approved again"
    );
    ed.shutdown();
}

/// SECURITY.md F5, F6, F8: poisoned tools are quarantined; names that could shadow a built-in
/// or break providers are namespaced or refused.
#[test]
fn f5_f6_f8_poisoned_and_shadowing_tools() {
    let bad = test_support_bin("misbehaving-mcp");
    let b = toml_str(bad.to_str().unwrap());
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("poison__add", json!({"a": 1, "b": 2, "sidenote": "x"})),
            Reply::text("ok"),
        ],
    );
    sb.user_config(&format!(
        "[mcp.servers.poison]\ncommand = {b}\nargs = [\"--mode\", \"poisoned\"]\n[mcp.servers.shadow]\ncommand = {b}\nargs = [\"--mode\", \"shadow\"]\n"
    ));
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let status = ed.wait_for_mcp_status(
        |s| {
            server_state(s, "poison")["state"] == "running"
                && server_state(s, "shadow")["state"] == "running"
                && s["reviews"].as_array().is_some_and(|r| r.len() >= 3)
        },
        "the poisoned tools under review",
    );
    let flagged: Vec<String> = status["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["reason"]["kind"] == "flagged")
        .map(|r| r["publicName"].as_str().unwrap().to_string())
        .collect();
    for name in ["poison__add", "poison__multiply", "shadow__daily_fact"] {
        assert!(
            flagged.contains(&name.to_string()),
            "{name} not flagged: {flagged:?}"
        );
    }
    let tools = ed.call("cairn/tools", json!({}));
    let names: Vec<String> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with("poison__")),
        "{names:?}"
    );
    // The built-in keeps its name and its own tool; the look-alikes are namespaced or refused.
    let read_files = names.iter().filter(|n| *n == "read_file").count();
    assert_eq!(read_files, 1, "{names:?}");
    let read = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(read["category"], "file");
    assert!(
        names.contains(&"shadow__read_file".to_string()),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.contains("read file") || n.contains('\u{0430}')),
        "{names:?}"
    );

    // Once the user approves the flagged tool anyway, every call still asks, and the question
    // shows the tool's whole description, hidden instructions included.
    let approved = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.approveTool", "arguments": [{"server": "poison", "tool": "add"}]}),
    );
    assert_eq!(approved["approved"], true);
    ed.responder = Box::new(|_, _| Answer::Now(json!({"title": "Deny"})));
    let (run, _) = ed.chat(json!({"message": "add"}));
    let events = ed.finish(&run);
    let ask = ed
        .server_requests
        .iter()
        .find(|r| r["method"] == "window/showMessageRequest")
        .cloned()
        .unwrap_or_else(|| panic!("no approval asked: {events:#?}"));
    let message = ask["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("<IMPORTANT>") && message.contains("~/.ssh/id_rsa"),
        "{message}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "toolResult" && e["content"] == "the user denied this call")
    );
}

/// SECURITY.md F10: a server the workspace declares does not start until the user trusts the
/// workspace, and an edited entry needs trust again.
#[test]
fn f10_workspace_servers_wait_for_trust() {
    let bad = test_support_bin("misbehaving-mcp");
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    // The server would run in this directory: a process there means it started.
    let marker = std::fs::canonicalize(sb.dir.path())
        .unwrap()
        .join("repo-server");
    std::fs::create_dir_all(&marker).unwrap();
    let entry = |mode: &str| {
        format!(
            "[mcp.servers.repo]\ncommand = {}\nargs = [\"--mode\", \"{mode}\"]\ncwd = {}\n",
            toml_str(bad.to_str().unwrap()),
            toml_str(marker.to_str().unwrap())
        )
    };
    sb.write(".cairn/config.toml", &entry("ok"));
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let status = ed.wait_for_mcp_status(
        |s| s["waitingForTrust"] == json!(["repo"]),
        "the server waiting for trust",
    );
    assert_eq!(server_state(&status, "repo"), Value::Null, "not started");
    assert_eq!(
        processes_in(&marker),
        Vec::<String>::new(),
        "no process was started"
    );
    let trusted = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.trustWorkspace"}),
    );
    assert_eq!(trusted["trusted"], json!(["repo"]));
    ed.wait_for_mcp_status(
        |s| server_state(s, "repo")["state"] == "running",
        "the trusted server running",
    );
    assert_eq!(processes_in(&marker).len(), 1, "the trusted server runs");
    ed.shutdown();

    // The repository edits the entry: it waits again.
    sb.write(".cairn/config.toml", &entry("env"));
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let status = ed.wait_for_mcp_status(
        |s| s["waitingForTrust"] == json!(["repo"]),
        "the edited server waiting again",
    );
    assert_eq!(server_state(&status, "repo"), Value::Null);
    assert_eq!(
        processes_in(&marker),
        Vec::<String>::new(),
        "the edited entry did not start"
    );
}

/// SECURITY.md D6: a server gets only its declared environment, never cairn's secrets.
#[test]
fn d6_servers_get_only_their_declared_environment() {
    let bad = test_support_bin("misbehaving-mcp");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![Reply::tool_call("envy__env", json!({})), Reply::text("ok")],
    );
    sb.user_config(&format!(
        "[policy.categories]\n\"mcp:envy\" = \"allow\"\n[mcp.servers.envy]\ncommand = {}\nargs = [\"--mode\", \"env\"]\nenv = {{ DECLARED = \"yes\" }}\n",
        toml_str(bad.to_str().unwrap())
    ));
    let mut ed = Editor::spawn(
        &sb,
        &[
            ("OPENAI_API_KEY", "sk-cairn-secret"),
            ("GITHUB_TOKEN", "ghp-secret"),
        ],
    );
    ed.initialize(&sb, json!({}), false);
    ed.wait_for_mcp_status(
        |s| server_state(s, "envy")["state"] == "running",
        "the server running",
    );
    let (run, _) = ed.chat(json!({"message": "env"}));
    let events = ed.finish(&run);
    let result = events.iter().find(|e| e["kind"] == "toolResult").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("DECLARED") && result.contains("PATH"),
        "{result}"
    );
    for secret in ["OPENAI_API_KEY", "GITHUB_TOKEN", "CAIRN_", "XDG_"] {
        assert!(!result.contains(secret), "{secret} leaked: {result}");
    }
}

/// `cairn mcp import`, `status` and `trust` on the command line.
#[test]
fn mcp_cli_import_status_and_trust() {
    let bad = test_support_bin("misbehaving-mcp");
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let w = ws.to_str().unwrap();
    let vscode = sb.write(
        ".vscode/mcp.json",
        &serde_json::to_string_pretty(&json!({
            "servers": {
                "good": {"type": "stdio", "command": bad, "args": ["--mode", "ok"], "env": {"TOKEN": "${env:MY_TOKEN}"}},
                "broken": {"type": "stdio", "command": bad, "args": ["--mode", "exit"]}
            }
        }))
        .unwrap(),
    );
    let out = sb
        .command()
        .args(["mcp", "import", vscode.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config =
        std::fs::read_to_string(sb.dir.path().join("home/config/cairn/config.toml")).unwrap();
    assert!(
        config.contains("[mcp.servers.good]") && config.contains("${env:MY_TOKEN}"),
        "the reference is kept, not the value: {config}"
    );

    let out = sb
        .command()
        .env("MY_TOKEN", "t")
        .args(["mcp", "status", "--json", "-w", w])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        server_state(&status, "good")["state"],
        "running",
        "{status:#}"
    );
    let broken = server_state(&status, "broken")["state"].clone();
    assert!(broken == "failed" || broken == "restarting", "{status:#}");
    assert!(!out.status.success(), "a failed server makes status fail");

    // Without the variable the entry cannot start, and status says why.
    let out = sb
        .command()
        .env_remove("MY_TOKEN")
        .args(["mcp", "status", "--json", "-w", w])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        status["problems"].to_string().contains("MY_TOKEN"),
        "{status:#}"
    );

    // A workspace server waits for trust on the command line too.
    sb.write(
        ".cairn/config.toml",
        &format!(
            "[mcp.servers.repo]\ncommand = {}\nargs = [\"--mode\", \"ok\"]\n",
            toml_str(bad.to_str().unwrap())
        ),
    );
    let out = sb
        .command()
        .env("MY_TOKEN", "t")
        .args(["mcp", "status", "--json", "-w", w])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["waitingForTrust"], json!(["repo"]));
    let out = sb
        .command()
        .args(["mcp", "trust", "-w", w])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = sb
        .command()
        .env("MY_TOKEN", "t")
        .args(["mcp", "status", "--json", "-w", w])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        server_state(&status, "repo")["state"],
        "running",
        "{status:#}"
    );
}

/// `cairn chat` expands a slash command as the editor does: `/everything:args-prompt
/// city=Paris` reaches the model as the prompt's text, and an unknown command is refused,
/// naming it, before any model request.
#[test]
fn chat_expands_slash_commands() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("Sunny.")]);
    sb.user_config(
        "[mcp.servers.everything]\ncommand = \"mcp-server-everything\"\nargs = [\"stdio\"]\n",
    );
    let ws = sb.ws();
    let w = ws.to_str().unwrap();
    let out = sb.run(
        &["chat", "-w", w, "/everything:args-prompt city=Paris"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Sunny.");
    let sent = sb.model.requests()[0].body["messages"].to_string();
    assert!(sent.contains("What's weather in Paris?"), "{sent}");

    let out = sb.run(&["chat", "-w", w, "/nope x=1"], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no prompt `/nope`"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(sb.model.requests().len(), 1, "the model was not asked");
}

/// More than tools, against server-everything: resources (listed, attached, read by the model),
/// prompts as slash commands, roots, sampling through cairn's model with the user's approval,
/// and elicitation through `cairn/elicit`.
#[test]
fn resources_prompts_roots_sampling_and_elicitation() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            // 1: a chat with an attached resource and a slash prompt.
            Reply::text("seen"),
            // 2: the model reads a resource, lists the roots, triggers sampling and elicitation.
            Reply::tool_calls(vec![
                (
                    "read_resource",
                    json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
                ),
                ("everything__get-roots-list", json!({})),
            ]),
            Reply::tool_call(
                "everything__trigger-sampling-request",
                json!({"prompt": "say hi", "maxTokens": 20}),
            ),
            // The server's sampling request reaches cairn's model:
            Reply::text("sampled hello"),
            Reply::tool_call("everything__trigger-elicitation-request", json!({})),
            Reply::text("all done"),
        ],
    );
    sb.user_config(
        "[policy.categories]\n\"mcp:everything\" = \"allow\"\n[mcp.servers.everything]\ncommand = \"mcp-server-everything\"\nargs = [\"stdio\"]\n",
    );
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({"capabilities": {"elicitation": true}}), false);
    ed.responder = Box::new(|method, params| match method {
        "window/showMessageRequest" => {
            assert!(
                params["message"]
                    .as_str()
                    .unwrap()
                    .contains("asks to use your model"),
                "{params}"
            );
            Answer::Now(json!({"title": "Allow"}))
        }
        "cairn/elicit" => {
            assert_eq!(params["server"], "everything");
            Answer::Now(
                json!({"action": "accept", "content": {"name": "Ada", "check": true, "email": "ada@example.com", "integer": 7, "number": 2.5, "enum": "ok"}}),
            )
        }
        _ => Answer::Now(Value::Null),
    });
    ed.wait_for_mcp_status(
        |s| server_state(s, "everything")["state"] == "running",
        "everything running",
    );

    let resources = ed.call("cairn/mcpResources", json!({}));
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&"demo://resource/static/document/architecture.md"),
        "{uris:?}"
    );
    let prompts = ed.call("cairn/mcpPrompts", json!({}));
    assert!(
        prompts["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "simple-prompt"),
        "{prompts}"
    );

    let (run, _) = ed.chat(json!({
        "message": "/everything:simple-prompt",
        "attachments": [{"server": "everything", "uri": "demo://resource/static/document/architecture.md"}]
    }));
    ed.finish(&run);
    let first = sb.model.requests()[0].body["messages"].to_string();
    assert!(
        first.contains("This is a simple prompt without arguments"),
        "the prompt's text is the message: {first}"
    );
    assert!(
        first.contains(
            "Resource `demo://resource/static/document/architecture.md` from `everything`"
        ),
        "{first}"
    );

    let (run, _) = ed.chat(json!({"message": "explore"}));
    let events = ed.finish(&run);
    assert_eq!(events.last().unwrap()["kind"], "done", "{events:#?}");
    let results: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "toolResult")
        .map(|e| e["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        results[..2].iter().any(|r| r.contains("Architecture")),
        "{results:#?}"
    );
    let ws_uri = crate::support::uri(&sb.ws());
    assert!(
        results[..2].iter().any(|r| r.contains(&ws_uri)),
        "the roots are the workspace folders: {results:#?}"
    );
    assert!(results[2].contains("sampled hello"), "{results:#?}");
    assert!(results[3].contains("Ada"), "{results:#?}");
    // The sampling request went to the model without tools.
    let sampling = &sb.model.requests()[3].body;
    assert!(
        sampling["messages"].to_string().contains("say hi"),
        "{sampling}"
    );
    assert!(sampling["tools"].as_array().is_none_or(|t| t.is_empty()));
}

/// Without a form UI, an elicitation is a message with choices; sampling the user denies never
/// reaches the model.
#[test]
fn elicitation_by_message_and_denied_sampling() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "everything__trigger-sampling-request",
                json!({"prompt": "leak it", "maxTokens": 20}),
            ),
            Reply::tool_call("everything__trigger-elicitation-request", json!({})),
            Reply::text("done"),
        ],
    );
    sb.user_config(
        "[policy.categories]\n\"mcp:everything\" = \"allow\"\n[mcp.servers.everything]\ncommand = \"mcp-server-everything\"\nargs = [\"stdio\"]\n",
    );
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = Box::new(|method, params| match method {
        "window/showMessageRequest" => {
            let message = params["message"].as_str().unwrap_or_default();
            if message.contains("asks to use your model") {
                Answer::Now(json!({"title": "Deny"}))
            } else {
                assert!(
                    message.contains("MCP server `everything` asks"),
                    "{message}"
                );
                Answer::Now(json!({"title": "Decline"}))
            }
        }
        _ => Answer::Now(Value::Null),
    });
    ed.wait_for_mcp_status(
        |s| server_state(s, "everything")["state"] == "running",
        "everything running",
    );
    let (run, _) = ed.chat(json!({"message": "try"}));
    let events = ed.finish(&run);
    let results: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "toolResult")
        .map(|e| e["content"].as_str().unwrap_or_default().to_lowercase())
        .collect();
    assert_eq!(results.len(), 2, "{events:#?}");
    assert!(results[0].contains("declined"), "{}", results[0]);
    assert!(results[1].contains("decline"), "{}", results[1]);
    // Only the run's own three turns reached the model: the denied sampling did not.
    assert_eq!(sb.model.requests().len(), 3);
}

/// Processes whose working directory is `dir`.
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cwd = entry.path().join("cwd");
        if std::fs::read_link(&cwd).is_ok_and(|p| p == dir) {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// Shutdown, a closed stdin and a dead editor all end every MCP server child.
#[test]
fn exit_leaves_no_mcp_child_behind() {
    let bad = test_support_bin("misbehaving-mcp");
    for how in ["exit", "stdin", "parent"] {
        let sb = Sandbox::new(Format::OpenAi, vec![]);
        let marker = std::fs::canonicalize(sb.dir.path())
            .unwrap()
            .join(format!("child-{how}"));
        std::fs::create_dir_all(&marker).unwrap();
        sb.user_config(&format!(
            // `b` outlives its server: a shell that sleeps after the server ends, as a
            // careless wrapper script would. Only killing the process group ends it.
            "[mcp.servers.a]\ncommand = {}\nargs = [\"--mode\", \"ok\"]\ncwd = {}\n[mcp.servers.b]\ncommand = \"sh\"\nargs = [\"-c\", {}]\ncwd = {}\n",
            toml_str(bad.to_str().unwrap()),
            toml_str(marker.to_str().unwrap()),
            toml_str(&format!("{} --mode ok; sleep 30", bad.display())),
            toml_str(marker.to_str().unwrap()),
        ));
        let mut parent = Command::new("sleep").arg("60").spawn().unwrap();
        let mut ed = Editor::spawn(&sb, &[]);
        let pid = if how == "parent" {
            json!(parent.id())
        } else {
            Value::Null
        };
        ed.call(
            "initialize",
            json!({"processId": pid, "capabilities": {}, "rootUri": crate::support::uri(&sb.ws())}),
        );
        ed.notify("initialized", json!({}));
        ed.wait_for_mcp_status(
            |s| {
                server_state(s, "a")["state"] == "running"
                    && server_state(s, "b")["state"] == "running"
            },
            "both servers running",
        );
        assert!(processes_in(&marker).len() >= 2, "{how}: the children run");
        match how {
            "exit" => {
                ed.call("shutdown", Value::Null);
                ed.notify("exit", Value::Null);
            }
            "stdin" => ed.close_stdin(),
            _ => {
                // Reaped at once, as init would: a zombie still counts as alive.
                parent.kill().unwrap();
                parent.wait().unwrap();
            }
        }
        let status = crate::support::wait_exit(&mut ed.child, std::time::Duration::from_secs(5));
        assert!(status.is_some(), "{how}: cairn did not exit");
        let _ = parent.kill();
        let _ = parent.wait();
        // Children are reaped asynchronously; give them a moment, then none may remain.
        for _ in 0..50 {
            if processes_in(&marker).is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(
            processes_in(&marker),
            Vec::<String>::new(),
            "{how}: children left behind"
        );
    }
}

/// Progress from a real server keeps a long call alive past the per-call timeout.
#[test]
fn progress_extends_a_long_call() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "everything__trigger-long-running-operation",
                json!({"duration": 3, "steps": 6}),
            ),
            Reply::text("done"),
        ],
    );
    sb.user_config(
        "[mcp]\ncall_timeout_secs = 1\nmax_call_timeout_secs = 20\n[policy.categories]\n\"mcp:everything\" = \"allow\"\n[mcp.servers.everything]\ncommand = \"mcp-server-everything\"\nargs = [\"stdio\"]\n",
    );
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.wait_for_mcp_status(
        |s| server_state(s, "everything")["state"] == "running",
        "everything running",
    );
    let (run, _) = ed.chat(json!({"message": "long"}));
    let events = ed.finish(&run);
    let result = events
        .iter()
        .find(|e| e["kind"] == "toolResult")
        .cloned()
        .unwrap();
    assert_eq!(result["isError"], false, "{result:#}");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("Long running operation completed"),
        "{result:#}"
    );
}

/// The tool messages of the last model request, joined.
fn last_tool_results(sb: &Sandbox) -> String {
    let requests = sb.model.requests();
    requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Issue 14, class 3: servers `a` (tool `b__c`) and `a__b` (tool `c`) both make `a__b__c`. An
/// allow rule the user wrote for `a`'s tool must not run `a__b`'s while `a` is down: the name
/// belongs to neither, whatever is running, and the refusal says which tools collide and how to
/// fix it.
#[test]
fn an_allow_rule_never_passes_to_another_server_whose_tool_takes_the_name() {
    let bad = test_support_bin("misbehaving-mcp");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![Reply::tool_call("a__b__c", json!({})), Reply::text("done")],
    );
    let ab_marks = sb.dir.path().join("a__b-ran");
    // `a` is down: it exits at once, every time.
    sb.user_config(&format!(
        "[policy.tools]\n\"a__b__c\" = \"allow\"\n\
         [mcp.servers.a]\ncommand = {b}\nargs = [\"--mode\", \"exit\"]\n\
         [mcp.servers.a__b]\ncommand = {b}\nargs = [\"--mode\", \"named\", \"--tool\", \"c\", \"--touch\", {t}]\n",
        b = toml_str(bad.to_str().unwrap()),
        t = toml_str(ab_marks.to_str().unwrap()),
    ));
    let ws = sb.ws();
    let out = sb.run(&["chat", "-w", ws.to_str().unwrap(), "call it"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = last_tool_results(&sb);
    for words in [
        "`a__b__c`",
        "tool `c` of MCP server `a__b`",
        "a tool that MCP server `a` may list",
        "rename one of the MCP servers `a__b`, `a`",
    ] {
        assert!(result.contains(words), "{words:?} missing from: {result}");
    }
    assert!(
        !ab_marks.exists(),
        "a__b's tool ran under a rule written for a: {:?}",
        std::fs::read_to_string(&ab_marks)
    );
    // Never offered either.
    let offered = sb.model.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("a__b__c"), "{offered}");
    // The log says it once, and `cairn mcp status` shows it and fails.
    assert!(
        text(&out.stderr).contains("MCP tool names: the name `a__b__c` is claimed by"),
        "{}",
        text(&out.stderr)
    );
    let status = sb.run(&["mcp", "status", "-w", ws.to_str().unwrap()], &[]);
    assert!(!status.status.success());
    let shown = text(&status.stdout);
    assert!(
        shown.contains("tool a__b__c") && shown.contains("unusable") && shown.contains("rename"),
        "{shown}"
    );
}

/// Issue 14, class 3, with an approval: "allow for this session" given to `a__b`'s tool
/// `a__b__c` while `a` is down must not run `a`'s `b__c` once `a` starts and would take the
/// name. Neither server's tool may run under a name that two tools can carry.
#[test]
fn a_session_grant_never_passes_to_a_server_that_starts_later() {
    let bad = test_support_bin("misbehaving-mcp");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("a__b__c", json!({})),
            Reply::text("first"),
            Reply::tool_call("a__b__c", json!({})),
            Reply::text("second"),
        ],
    );
    let a_marks = sb.dir.path().join("a-ran");
    let ab_marks = sb.dir.path().join("a__b-ran");
    let up = sb.dir.path().join("a-may-start");
    // `a` fails until the file `up` exists, then serves its tool `b__c`.
    let script = format!(
        "[ -f {up} ] || exit 1; exec {bad} --mode named --tool b__c --touch {marks}",
        up = shell_quote(up.to_str().unwrap()),
        bad = shell_quote(bad.to_str().unwrap()),
        marks = shell_quote(a_marks.to_str().unwrap()),
    );
    sb.user_config(&format!(
        "[mcp]\nmax_restarts = 1000\n\
         [mcp.servers.a]\ncommand = \"sh\"\nargs = [\"-c\", {s}]\n\
         [mcp.servers.a__b]\ncommand = {b}\nargs = [\"--mode\", \"named\", \"--tool\", \"c\", \"--touch\", {t}]\n",
        s = toml_str(&script),
        b = toml_str(bad.to_str().unwrap()),
        t = toml_str(ab_marks.to_str().unwrap()),
    ));
    let mut ed = Editor::spawn(&sb, &[]);
    ed.responder = allow_all();
    ed.initialize(&sb, json!({}), false);
    ed.wait_for_mcp_status(
        |s| server_state(s, "a__b")["state"] == "running",
        "a__b running",
    );
    let (run, session) = ed.chat(json!({"message": "call it"}));
    let events = ed.finish(&run);
    let first = tool_result(&events);
    std::fs::write(&up, "").unwrap();
    ed.wait_for_mcp_status(|s| server_state(s, "a")["state"] == "running", "a running");
    let (run, _) = ed.chat(json!({"message": "again", "sessionId": session}));
    let events = ed.finish(&run);
    let second = tool_result(&events);
    assert!(
        !a_marks.exists(),
        "a's tool ran under a grant given for a__b's: {first} / {second}"
    );
    assert!(
        !ab_marks.exists(),
        "a name that a configured server could also carry ran: {first} / {second}"
    );
    for result in [&first, &second] {
        assert!(
            result.contains("`a__b__c`") && result.contains("rename one of the MCP servers"),
            "{result}"
        );
    }
    assert!(second.contains("tool `b__c` of MCP server `a`"), "{second}");
    assert!(second.contains("tool `c` of MCP server `a__b`"), "{second}");
    ed.shutdown();
}

/// The text of the (one) tool result among a run's events.
fn tool_result(events: &[Value]) -> String {
    let results = of_kind(events, "toolResult");
    assert_eq!(results.len(), 1, "{events:?}");
    results[0]["content"].as_str().unwrap().to_owned()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A tool result's picture reaches the editor: server-everything's `get-tiny-image` gives a
/// PNG, which `cairn/runEvent` carries as `images` (the model reads the text, where the
/// picture is named).
#[test]
fn a_result_picture_reaches_the_editor() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("everything__get-tiny-image", json!({})),
            Reply::text("a tiny picture"),
        ],
    );
    sb.user_config(
        "[policy.categories]\n\"mcp:everything\" = \"allow\"\n[mcp.servers.everything]\ncommand = \"mcp-server-everything\"\nargs = [\"stdio\"]\n",
    );
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.wait_for_mcp_status(
        |s| server_state(s, "everything")["state"] == "running",
        "everything running",
    );
    let (run, _) = ed.chat(json!({"message": "show me a picture"}));
    let events = ed.finish(&run);
    let result = events
        .iter()
        .find(|e| e["kind"] == "toolResult")
        .expect("a tool result");
    assert_eq!(result["isError"], false, "{result}");
    let images = result["images"].as_array().expect("images");
    assert_eq!(images.len(), 1, "{result}");
    assert_eq!(images[0]["mimeType"], "image/png");
    let data = images[0]["data"].as_str().unwrap();
    assert!(data.starts_with("iVBORw0KGgo"), "a PNG in base64: {data}");
    let sent = sb.model.requests()[1].body["messages"].to_string();
    assert!(sent.contains("[image image/png omitted]"), "{sent}");
    assert!(
        !sent.contains(data),
        "the picture's bytes are not sent to the model"
    );
}
