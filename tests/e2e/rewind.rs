//! Checkpoints and rewind through the real binary: files a turn changed (through the editor
//! and on disk) are put back, and a file someone changed since is reported and left alone.

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Editor, Sandbox, uri};

fn allow_all() -> Box<dyn FnMut(&str, &Value) -> Answer + Send> {
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
    let (run2, _) = ed.chat(json!({"message": "second turn", "mode": "agent", "sessionId": session}));
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
    assert!(!sb.ws().join("b.txt").exists(), "the file turn 1 created is gone");
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
