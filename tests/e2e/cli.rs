//! `cairn chat`, `cairn tools`, `cairn doctor` on the command line.

use std::process::{Output, Stdio};

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Sandbox, text};

fn run(sb: &Sandbox, args: &[&str]) -> Output {
    sb.run(args, &[])
}

/// `cairn chat` against a scripted model reads and edits a file in a temporary workspace.
#[test]
fn chat_reads_and_edits_a_file() {
    for format in [Format::OpenAi, Format::Anthropic] {
        let sb = Sandbox::new(
            format,
            vec![
                Reply::tool_call("read_file", json!({"path": "src/lib.rs"})),
                Reply::tool_call(
                    "edit_file",
                    json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"}),
                ),
                Reply::text("Fixed `add`."),
            ],
        );
        sb.write(
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
        );
        let ws = sb.ws();
        let out = run(
            &sb,
            &[
                "chat",
                "-w",
                ws.to_str().unwrap(),
                "--agent",
                "--yes",
                "fix add",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout).trim(), "Fixed `add`.");
        assert!(
            text(&out.stderr).contains("· read_file"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(
            sb.read("src/lib.rs"),
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
        );
        assert!(
            sb.model.requests()[1].body.to_string().contains("a - b"),
            "the model read the file"
        );
    }
}

/// Without a terminal and without `--yes`, what policy would ask is refused.
#[test]
fn chat_without_terminal_refuses_what_policy_would_ask() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
            ),
            Reply::text("could not"),
        ],
    );
    sb.write("a.txt", "x\n");
    let ws = sb.ws();
    let out = run(
        &sb,
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--agent",
            "--json",
            "edit",
        ],
    );
    assert!(out.status.success());
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = events.iter().find(|e| e["kind"] == "toolResult").unwrap();
    assert_eq!(result["content"], "the user denied this call");
    assert_eq!(sb.read("a.txt"), "x\n");
}

#[test]
fn tools_list_and_call() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write("a.txt", "one\ntwo\n");
    let ws = sb.ws();
    let w = ws.to_str().unwrap();

    let out = run(&sb, &["tools", "list", "--json", "-w", w]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Which tools are listed is the registry's business (`catalog.rs`); here, that it parses.
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(tools.as_array().is_some_and(|t| !t.is_empty()));

    let out = run(
        &sb,
        &[
            "tools",
            "call",
            "read_file",
            "--args",
            r#"{"path":"a.txt"}"#,
            "--json",
            "-w",
            w,
        ],
    );
    assert!(out.status.success());
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("two")
    );
    assert_ne!(result["isError"], true);

    // A write asks; with no terminal and no --yes it is refused and the file stays.
    let out = run(
        &sb,
        &[
            "tools",
            "call",
            "edit_file",
            "--args",
            r#"{"path":"a.txt","old_string":"one","new_string":"1"}"#,
            "--json",
            "-w",
            w,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            result["isError"].as_bool(),
            result["content"][0]["text"].as_str()
        ),
        (Some(true), Some("the user denied this call"))
    );
    assert_eq!(sb.read("a.txt"), "one\ntwo\n");

    // --yes accepts what policy would ask.
    let out = run(
        &sb,
        &[
            "tools",
            "call",
            "edit_file",
            "--args",
            r#"{"path":"a.txt","old_string":"one","new_string":"1"}"#,
            "--yes",
            "-w",
            w,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert_eq!(sb.read("a.txt"), "1\ntwo\n");

    // `deny` stays denied, even with --yes.
    let out = sb
        .command()
        .env("CAIRN_POLICY__TOOLS__EDIT_FILE", "deny")
        .args([
            "tools",
            "call",
            "edit_file",
            "--args",
            r#"{"path":"a.txt","old_string":"1","new_string":"one"}"#,
            "--yes",
            "-w",
            w,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("policy.tools.edit_file"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(sb.read("a.txt"), "1\ntwo\n");

    // Paths outside the workspace are refused: the file exists, so only the scope can stop it.
    let outside = sb.dir.path().join("home/x");
    std::fs::write(&outside, "OUTSIDE-SENTINEL\n").unwrap();
    for path in ["../home/x", outside.to_str().unwrap()] {
        let args = serde_json::json!({ "path": path }).to_string();
        let out = run(
            &sb,
            &["tools", "call", "read_file", "--args", &args, "-w", w],
        );
        assert_eq!(out.status.code(), Some(1), "{path}");
        let shown = text(&out.stdout);
        assert!(!shown.contains("OUTSIDE-SENTINEL"), "{shown}");
        assert!(
            shown.contains(&format!("refused path `{path}`"))
                && shown.contains("which is outside the workspace"),
            "{path}: {shown}"
        );
        let args = serde_json::json!({ "path": path, "content": "changed" }).to_string();
        let out = run(
            &sb,
            &[
                "tools",
                "call",
                "write_file",
                "--args",
                &args,
                "--yes",
                "-w",
                w,
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{path}");
        let shown = text(&out.stdout);
        assert!(
            shown.contains(&format!("refused path `{path}`"))
                && shown.contains("which is outside the workspace"),
            "{path}: {shown}"
        );
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "OUTSIDE-SENTINEL\n"
        );
    }
}

#[test]
fn unknown_config_key_is_named_and_doctor_reports() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let w = ws.to_str().unwrap();
    let out = sb
        .command()
        .env("CAIRN_AGENT__MAX_TOOL_CALS", "3")
        .args(["tools", "list", "-w", w])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("unknown key `agent.max_tool_cals`"),
        "{}",
        text(&out.stderr)
    );

    let out = run(&sb, &["doctor", "-w", w]);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("ok   provider reachable"), "{report}");
    assert!(report.contains("model `scripted`"), "{report}");
}

/// `cairn doctor` checks the cloud accounts without the network: a good one with its secret in
/// the vault, one whose secret is not there yet (what to run), and one that does not check out
/// (a failure naming the missing setting).
#[test]
fn doctor_checks_cloud_accounts_and_their_secrets() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.user_config(
        "[cloud.prod]\nkind = \"aws\"\naccess_key_id = \"AKIDDOCTOR\"\nsecret = \"aws-prod\"\n\n\
         [cloud.files]\nkind = \"azure\"\naccount = \"files\"\nsecret = \"azure-files\"\n\n\
         [cloud.broken]\nkind = \"gcp\"\n",
    );
    crate::support::vault_set(&sb, "aws-prod", "*.amazonaws.com", "doctor-secret-value");
    let ws = sb.ws();
    let out = run(&sb, &["doctor", "-w", ws.to_str().unwrap()]);
    let report = text(&out.stdout);
    assert!(!out.status.success(), "{report}");
    assert!(
        report.contains(
            "ok   cloud account prod: aws; secret `aws-prod` in the vault for *.amazonaws.com"
        ),
        "{report}"
    );
    assert!(
        report.contains("cloud account files: azure; secret `azure-files` is not in the vault yet: `cairn vault set azure-files --host HOST`"),
        "{report}"
    );
    assert!(
        report.contains("FAIL cloud account broken: `[cloud.broken]` (gcp) needs `project`"),
        "{report}"
    );
    assert!(!report.contains("doctor-secret-value"), "{report}");
}

/// `--session` continues a conversation: the model sees the earlier turn.
#[test]
fn chat_sessions_continue() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![Reply::text("noted"), Reply::text("it was 7")],
    );
    let ws = sb.ws();
    let w = ws.to_str().unwrap();
    let out = run(
        &sb,
        &["chat", "-w", w, "--session", "s1", "the number is 7"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--session s1"));
    let out = run(
        &sb,
        &["chat", "-w", w, "--session", "s1", "what was the number?"],
    );
    assert!(out.status.success());
    let body = sb.model.requests()[1].body.to_string();
    assert!(
        body.contains("the number is 7") && body.contains("noted"),
        "{body}"
    );
}

/// On a terminal, `cairn chat` asks; "s" allows the tool for the rest of the session, so the
/// second call runs without a question.
#[test]
fn chat_asks_on_the_terminal() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
            ),
            Reply::tool_call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "two", "new_string": "three"}),
            ),
            Reply::text("done"),
        ],
    );
    sb.write("a.txt", "one\n");
    let ws = sb.ws();
    let cairn = env!("CARGO_BIN_EXE_cairn");
    // `script` gives the command a terminal; its stdin feeds that terminal.
    let inner = format!("{cairn} chat -w {} --agent edit", ws.display());
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qefc", &inner, "/dev/null"]);
    for (k, v) in sb.command().get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let mut proc = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let stdin = proc.stdin.as_mut().unwrap();
        stdin.write_all(b"s\n").unwrap();
    }
    let out = proc.wait_with_output().unwrap();
    let transcript = text(&out.stdout);
    assert!(out.status.success(), "{transcript}");
    assert_eq!(
        transcript.matches("[o]nce, [s]ession, [d]eny").count(),
        1,
        "{transcript}"
    );
    assert_eq!(sb.read("a.txt"), "three\n");
}

/// The version-control tools answer through the same path as every tool.
#[test]
fn git_tools_through_tools_call() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(init.success());
    sb.write("new.txt", "hello\n");
    let out = run(
        &sb,
        &[
            "tools",
            "call",
            "git_status",
            "--json",
            "-w",
            ws.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("new.txt"),
        "{result:#}"
    );
    // Changing the repository asks, like any write; without a terminal it is refused.
    let out = run(
        &sb,
        &[
            "tools",
            "call",
            "git_stage",
            "--args",
            r#"{"paths":["new.txt"]}"#,
            "-w",
            ws.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let status = run(
        &sb,
        &["tools", "call", "git_status", "-w", ws.to_str().unwrap()],
    );
    assert!(
        text(&status.stdout).contains("?? new.txt"),
        "{}",
        text(&status.stdout)
    );
    assert!(
        !text(&status.stdout).contains("A  new.txt"),
        "{}",
        text(&status.stdout)
    );
}
