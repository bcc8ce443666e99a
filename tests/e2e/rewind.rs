//! Checkpoints and rewind through the real binary: files a turn changed (through the editor
//! and on disk) are put back, and a file someone changed since is reported and left alone.

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::acp::Raw;
use crate::support::{Answer, Editor, Responder, Sandbox, text, uri};

fn allow_all() -> Responder {
    Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Now(json!({"title": "Allow once"})),
        _ => Answer::Now(Value::Null),
    })
}

fn sorted(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// The test: a rewind restores three files changed over two turns and reports a file
/// changed since. Turn 1 edits `a.txt` (open in the editor) and creates `b.txt`; turn 2 edits
/// `c.txt` on disk and `a.txt` again; then someone else edits `c.txt`. Rewinding turn 1 puts
/// `a.txt`'s buffer back and deletes `b.txt`, and reports `c.txt` as changed since, unchanged.
/// A second rewind restores nothing again.
#[test]
fn rewind_restores_files_of_two_turns_and_reports_a_file_changed_since() {
    let edit = |path: &str, old: &str, new: &str| {
        Reply::tool_call(
            "edit_file",
            json!({"path": path, "old_string": old, "new_string": new}),
        )
    };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            edit("a.txt", "one", "two"),
            Reply::tool_call(
                "create_file",
                json!({"path": "b.txt", "content": "a new file\n"}),
            ),
            Reply::text("Turn one done."),
            edit("c.txt", "three", "four"),
            edit("a.txt", "two", "five"),
            Reply::text("Turn two done."),
        ],
    );
    // Not a git repository: checkpoints do not need one.
    assert!(!sb.ws().join(".git").exists());
    let a = sb.write("a.txt", "alpha one\n");
    sb.write("c.txt", "charlie three\n");
    let a_uri = uri(&a);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.open(&a_uri, "alpha one (unsaved)\n");
    ed.responder = allow_all();

    let (run1, session) = ed.chat(json!({"message": "first turn\nmore", "mode": "agent"}));
    ed.finish(&run1);
    let (run2, _) =
        ed.chat(json!({"message": "second turn", "mode": "agent", "sessionId": session}));
    ed.finish(&run2);
    assert_eq!(sb.read("b.txt"), "a new file\n");
    assert_eq!(sb.read("c.txt"), "charlie four\n");
    ed.wait_for_buffer(&a_uri, |t| t == "alpha five (unsaved)\n");

    let checkpoints = ed.call("cairn/checkpoints", json!({"sessionId": session}));
    let turns = checkpoints["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{checkpoints}");
    assert_eq!(turns[0]["turn"], 1);
    assert_eq!(turns[0]["runId"], run1.as_str());
    assert_eq!(turns[0]["message"], "first turn");
    assert_eq!(turns[0]["files"], json!(["a.txt", "b.txt"]));
    assert_eq!(turns[1]["turn"], 2);
    assert_eq!(turns[1]["files"], json!(["c.txt", "a.txt"]));

    // Someone else changes c.txt after cairn wrote it.
    sb.write("c.txt", "changed by hand\n");

    let report = ed.call("cairn/rewind", json!({"sessionId": session, "turn": 1}));
    assert_eq!(sorted(&report["restored"]), ["a.txt", "b.txt"], "{report}");
    assert_eq!(
        report["conflicts"],
        json!([{"path": "c.txt", "reason": "changed since cairn wrote it"}])
    );
    assert_eq!(report["failed"], json!([]));
    // a.txt's buffer is back to its unsaved text, through the editor; the disk never changed.
    ed.wait_for_buffer(&a_uri, |t| t == "alpha one (unsaved)\n");
    assert_eq!(sb.read("a.txt"), "alpha one\n");
    assert!(
        !sb.ws().join("b.txt").exists(),
        "the file turn 1 created is gone"
    );
    assert_eq!(sb.read("c.txt"), "changed by hand\n", "never overwritten");

    // The restored files no longer count; the conflict is still reported.
    let checkpoints = ed.call("cairn/checkpoints", json!({"sessionId": session}));
    assert_eq!(checkpoints["turns"][0]["files"], json!([]), "{checkpoints}");
    assert_eq!(checkpoints["turns"][1]["files"], json!(["c.txt"]));
    let again = ed.call("cairn/rewind", json!({"sessionId": session, "turn": 1}));
    assert_eq!(again["restored"], json!([]), "{again}");
    assert_eq!(again["conflicts"][0]["path"], "c.txt");
    assert_eq!(sb.read("c.txt"), "changed by hand\n");
    ed.wait_for_buffer(&a_uri, |t| t == "alpha one (unsaved)\n");

    // The command does the same for editors without custom requests; a bad turn is named.
    let via_command = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.rewind", "arguments": [session, 2]}),
    );
    assert_eq!(via_command["restored"], json!([]), "{via_command}");
    let bad = ed.request("cairn/rewind", json!({"sessionId": session, "turn": 3}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("turn"),
        "{bad}"
    );
    ed.shutdown();
}

/// A file over the per-file cap is not checkpointed: the deletion's result says so, and a rewind
/// reports it as not restored.
#[test]
fn a_file_too_big_to_keep_is_noted_and_not_restored() {
    let big = "x".repeat(9 * 1024 * 1024);
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("delete_file", json!({"path": "big.txt"})),
            Reply::text("done"),
        ],
    );
    sb.write("big.txt", &big);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = allow_all();
    let (run, session) = ed.chat(json!({"message": "delete it", "mode": "agent"}));
    let events = ed.finish(&run);
    let result = events
        .iter()
        .find(|e| e["kind"] == "toolResult")
        .unwrap_or_else(|| panic!("{events:#?}"));
    let content = result["content"].as_str().unwrap();
    assert!(
        content.contains(
            "big.txt was not checkpointed: 9.0 MiB is over the 8.0 MiB limit; a rewind cannot restore it"
        ),
        "{content}"
    );
    assert!(!sb.ws().join("big.txt").exists());
    let report = ed.call("cairn/rewind", json!({"sessionId": session, "turn": 1}));
    assert_eq!(report["restored"], json!([]), "{report}");
    assert_eq!(report["failed"][0]["path"], "big.txt");
    assert!(
        report["failed"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("was not checkpointed"),
        "{report}"
    );
    assert!(!sb.ws().join("big.txt").exists());
    ed.shutdown();
}

/// ACP: `/rewind TURN` is offered as a command, restores the files the turn changed, answers
/// with the report as text (not a model turn), and a turn the session lacks is an error.
#[test]
fn acp_rewind_command_restores_the_turns_files() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "rewritten\n"}),
            ),
            Reply::text("done"),
        ],
    );
    sb.user_config("[policy.tools]\nwrite_file = \"allow\"\n");
    sb.write("a.txt", "original\n");
    let mut raw = Raw::spawn(&sb);
    let ws = sb.ws().display().to_string();
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1}}));
    raw.reply(1);
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": ws, "mcpServers": []}}));
    let session = raw.reply(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let commands =
        raw.next(|v| v["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let listed = commands["params"]["update"]["availableCommands"].to_string();
    assert!(listed.contains("\"rewind\""), "{listed}");
    raw.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode",
        "params": {"sessionId": session, "modeId": "agent"}}),
    );
    raw.reply(3);
    let prompt = |raw: &mut Raw, id: i64, text: &str| {
        raw.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}}),
        );
    };
    prompt(&mut raw, 4, "rewrite a.txt");
    let answer = raw.reply(4);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(sb.read("a.txt"), "rewritten\n");

    prompt(&mut raw, 5, "/rewind 1");
    let chunk = raw.next(|v| v["params"]["update"]["sessionUpdate"] == "agent_message_chunk");
    assert_eq!(
        chunk["params"]["update"]["content"]["text"], "restored a.txt",
        "{chunk}"
    );
    let answer = raw.reply(5);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(sb.read("a.txt"), "original\n");
    assert_eq!(
        sb.model.requests().len(),
        2,
        "the rewind never reached the model"
    );

    prompt(&mut raw, 6, "/rewind 2");
    let bad = raw.reply(6);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(bad["error"].to_string().contains("turn"), "{bad}");
    raw.close();
}

/// The terminal: `cairn chat --rewind TURN --session ID` prints what it restored and what it
/// could not, and exits non-zero when a file was not restored.
#[test]
fn chat_rewind_prints_the_report_and_fails_on_a_conflict() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "a by cairn\n"}),
            ),
            Reply::tool_call(
                "create_file",
                json!({"path": "b.txt", "content": "b by cairn\n"}),
            ),
            Reply::text("done"),
        ],
    );
    sb.write("a.txt", "a before\n");
    let ws = sb.ws().display().to_string();
    let out = sb.run(
        &[
            "chat",
            "-w",
            &ws,
            "--agent",
            "--yes",
            "--session",
            "s1",
            "write them",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sb.read("a.txt"), "a by cairn\n");
    sb.write("b.txt", "b by hand\n");

    let out = sb.run(
        &["chat", "-w", &ws, "--session", "s1", "--rewind", "1"],
        &[],
    );
    assert!(!out.status.success(), "a conflict is a failure");
    assert_eq!(
        text(&out.stdout),
        "restored a.txt\nnot restored b.txt: changed since cairn wrote it\n"
    );
    assert_eq!(sb.read("a.txt"), "a before\n");
    assert_eq!(sb.read("b.txt"), "b by hand\n");

    let out = sb.run(&["chat", "-w", &ws, "--rewind", "1"], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--session"),
        "{}",
        text(&out.stderr)
    );
}

/// A sandbox run over a writable workspace: the files the program changed and created are
/// checkpointed, and a rewind puts them back (gated by `CAIRN_DOCKER_TESTS=1`).
#[test]
fn a_sandbox_runs_writes_are_rewound() {
    if !crate::sandbox::enabled() {
        return;
    }
    let _serial = crate::sandbox::SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "run_bash",
                json!({
                    "code": "echo changed > /workspace/data.txt; echo new > /workspace/made.txt",
                    "workspace_write": true
                }),
            ),
            Reply::text("Done."),
        ],
    );
    crate::sandbox::configure(&sb);
    sb.write("data.txt", "original\n");
    // The user's own workspace (the tests run as root; a sandbox never does).
    crate::sandbox::chown(&sb.ws(), "4242:4242");
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = allow_all();
    let (run, session) = ed.chat(json!({"message": "change it"}));
    let events = ed.finish(&run);
    assert_eq!(sb.read("data.txt"), "changed\n", "{events:#?}");
    assert_eq!(sb.read("made.txt"), "new\n");
    let checkpoints = ed.call("cairn/checkpoints", json!({"sessionId": session}));
    assert_eq!(
        checkpoints["turns"][0]["files"],
        json!(["data.txt", "made.txt"]),
        "{checkpoints}"
    );
    let report = ed.call("cairn/rewind", json!({"sessionId": session, "turn": 1}));
    assert_eq!(
        sorted(&report["restored"]),
        ["data.txt", "made.txt"],
        "{report}"
    );
    assert_eq!(sb.read("data.txt"), "original\n");
    assert!(!sb.ws().join("made.txt").exists());
    ed.shutdown();
}

/// After a turn, its files are swapped for symlinks to outside the workspace whose targets hold
/// exactly what cairn wrote (so a check that followed them would pass): `a.txt` to a file, `sub`
/// to a directory, and `c.txt` (a file the turn created, which a rewind deletes) to a file. The
/// rewind writes and deletes nothing outside, and reports each as not restored.
#[test]
fn a_rewind_over_files_turned_into_symlinks_leaves_outside_alone() {
    use std::os::unix::fs::symlink;
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "a by cairn\n"}),
            ),
            Reply::tool_call(
                "write_file",
                json!({"path": "sub/b.txt", "content": "b by cairn\n"}),
            ),
            Reply::tool_call(
                "create_file",
                json!({"path": "c.txt", "content": "c by cairn\n"}),
            ),
            Reply::text("done"),
        ],
    );
    sb.write("a.txt", "a before\n");
    sb.write("sub/b.txt", "b before\n");
    let ws = sb.ws().display().to_string();
    let out = sb.run(
        &[
            "chat",
            "-w",
            &ws,
            "--agent",
            "--yes",
            "--session",
            "s1",
            "write them",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sb.read("sub/b.txt"), "b by cairn\n");
    assert_eq!(sb.read("c.txt"), "c by cairn\n");

    // Outside the workspace, the same contents cairn wrote; inside, symlinks to them.
    let outside = sb.dir.path().join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    let files = [
        ("a.txt", "a by cairn\n"),
        ("sub/b.txt", "b by cairn\n"),
        ("c.txt", "c by cairn\n"),
    ];
    for (rel, content) in files {
        std::fs::write(outside.join(rel), content).unwrap();
    }
    std::fs::remove_file(sb.ws().join("a.txt")).unwrap();
    symlink(outside.join("a.txt"), sb.ws().join("a.txt")).unwrap();
    std::fs::remove_dir_all(sb.ws().join("sub")).unwrap();
    symlink(outside.join("sub"), sb.ws().join("sub")).unwrap();
    std::fs::remove_file(sb.ws().join("c.txt")).unwrap();
    symlink(outside.join("c.txt"), sb.ws().join("c.txt")).unwrap();

    let out = sb.run(
        &["chat", "-w", &ws, "--session", "s1", "--rewind", "1"],
        &[],
    );
    let report = text(&out.stdout);
    // Nothing outside was written or deleted.
    for (rel, content) in files {
        assert_eq!(
            std::fs::read_to_string(outside.join(rel)).unwrap(),
            content,
            "the rewind wrote through the symlink to outside/{rel}: {report}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        3,
        "the rewind created or removed a file outside: {report}"
    );
    // Each file is reported as refused, naming the symlink, and the failure is the command's;
    // the symlinks are still there (nothing replaced them either).
    assert!(!out.status.success(), "{report}");
    for rel in ["a.txt", "sub/b.txt", "c.txt"] {
        let line = report
            .lines()
            .find(|l| l.contains(&format!("/ws/{rel}")))
            .unwrap_or_else(|| panic!("{rel} not reported: {report}"));
        assert!(line.starts_with("failed "), "{line}");
        assert!(
            line.contains("a symlink on it leads to") && line.ends_with("outside the workspace"),
            "{line}"
        );
    }
    for rel in ["a.txt", "sub", "c.txt"] {
        let meta = std::fs::symlink_metadata(sb.ws().join(rel)).unwrap();
        assert!(meta.file_type().is_symlink(), "{rel} was replaced");
    }
}
