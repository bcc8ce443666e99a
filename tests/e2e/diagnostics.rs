//! The editor's diagnostics reach the model: `cairn/diagnostics` from the editor, the
//! `get_diagnostics` tool over them, and the new diagnostics of a file after the agent edits it;
//! an editor that does not send them is told so, and files the user may not read stay out.

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Editor, Sandbox, of_kind, tool_results, uri};

/// Every allowed tool on every request, so the scripted calls need no selection.
const ALL_TOOLS: &[(&str, &str)] = &[("CAIRN_SELECTION__ENABLED", "false")];

/// An LSP diagnostic at 0-based `line`:`character`.
fn diag(line: u32, character: u32, severity: u8, message: &str) -> Value {
    json!({
        "range": {"start": {"line": line, "character": character}, "end": {"line": line, "character": character + 1}},
        "severity": severity,
        "source": "rustc",
        "message": message,
    })
}

fn publish(ed: &Editor, path: &std::path::Path, diagnostics: Vec<Value>) {
    ed.notify(
        "cairn/diagnostics",
        json!({"uri": uri(path), "diagnostics": diagnostics}),
    );
}

/// The text of every tool result the model got, in order, from its last request.
fn results_seen(sb: &Sandbox) -> Vec<String> {
    let requests = sb.model.requests();
    tool_results(&requests.last().unwrap().body)
}

fn allow_once() -> crate::support::Responder {
    Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Now(json!({"title": "Allow once"})),
        _ => Answer::Now(Value::Null),
    })
}

/// The editor sends diagnostics for two files; the model asks for the workspace's and then for
/// one file's, and reads each with its path, 1-based line:column, severity, source and code;
/// information is left out unless asked for.
#[test]
fn get_diagnostics_shows_the_editors_errors_by_file_with_lines() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("get_diagnostics", json!({})),
            Reply::tool_call("get_diagnostics", json!({"path": "src/b.rs"})),
            Reply::tool_call(
                "get_diagnostics",
                json!({"path": "src/a.rs", "severity": "all"}),
            ),
            Reply::text("Two files have errors."),
        ],
    );
    let a = sb.write("src/a.rs", "fn main() {\n    let v = 1;\n    x\n}\n");
    let b = sb.write("src/b.rs", "pub fn f() -> u8 {\n    \"no\"\n}\n");
    let mut ed = Editor::spawn(&sb, ALL_TOOLS);
    ed.initialize(&sb, json!({"capabilities": {"diagnostics": true}}), false);
    let mut error = diag(2, 4, 1, "cannot find value `x` in this scope");
    error["code"] = json!("E0425");
    publish(
        &ed,
        &a,
        vec![
            error,
            diag(1, 8, 2, "unused variable: `v`"),
            diag(0, 0, 3, "this is a note"),
        ],
    );
    publish(&ed, &b, vec![diag(1, 4, 1, "mismatched types")]);

    let (run, _) = ed.chat(json!({"message": "what is broken?"}));
    let events = ed.finish(&run);
    assert_eq!(of_kind(&events, "toolResult").len(), 3, "{events:#?}");

    let results = results_seen(&sb);
    assert_eq!(
        results[0],
        "2 errors, 1 warning in 2 files:\n\
         src/a.rs:\n  2:9 warning: unused variable: `v` (rustc)\n  3:5 error: cannot find value `x` in this scope (rustc E0425)\n\
         src/b.rs:\n  2:5 error: mismatched types (rustc)"
    );
    assert_eq!(
        results[1],
        "1 error in 1 file:\nsrc/b.rs:\n  2:5 error: mismatched types (rustc)"
    );
    assert!(
        results[2].contains("1:1 info: this is a note (rustc)") && !results[2].contains("src/b.rs"),
        "{}",
        results[2]
    );
    ed.shutdown();
}

/// The model edits a file open in the editor; the editor publishes the file's new diagnostics
/// after applying the edit, and the edit's result the model reads carries them (the old error
/// gone). A file the editor says nothing about after an edit is shown as not yet updated.
#[test]
fn an_edit_result_carries_the_files_new_diagnostics() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "src/a.rs", "old_string": "= y;", "new_string": "= 1;"}),
            ),
            Reply::tool_call(
                "write_file",
                json!({"path": "src/c.rs", "content": "pub fn c() {}\n"}),
            ),
            Reply::text("Fixed."),
        ],
    );
    let a = sb.write("src/a.rs", "fn main() {\n    let x = y;\n}\n");
    let u = uri(&a);
    let mut ed = Editor::spawn(&sb, ALL_TOOLS);
    ed.initialize(&sb, json!({"capabilities": {"diagnostics": true}}), false);
    ed.open(&u, "fn main() {\n    let x = y;\n}\n");
    publish(
        &ed,
        &a,
        vec![diag(1, 12, 1, "cannot find value `y` in this scope")],
    );
    ed.responder = allow_once();

    let (run, _) = ed.chat(json!({"message": "fix src/a.rs", "mode": "agent"}));
    // As an editor's language server does: new diagnostics once the edit is in the buffer.
    ed.pump_until(
        |ed| {
            ed.server_requests
                .iter()
                .any(|r| r["method"] == "workspace/applyEdit")
                .then_some(())
        },
        "the edit",
    );
    publish(&ed, &a, vec![diag(1, 8, 2, "unused variable: `x`")]);
    let events = ed.finish(&run);
    assert_eq!(ed.buffers.docs[&u].0, "fn main() {\n    let x = 1;\n}\n");

    let results = results_seen(&sb);
    assert_eq!(
        results[0],
        "edited src/a.rs: replaced 1 occurrence (first at line 2), in the editor (not saved yet)\n\
         diagnostics now for src/a.rs:\n  2:9 warning: unused variable: `x` (rustc)"
    );
    assert!(results[1].starts_with("created src/c.rs"), "{}", results[1]);
    assert!(
        results[1].ends_with(
            "\nno errors or warnings now in src/c.rs (the editor has not updated them since the edit yet)"
        ),
        "{}",
        results[1]
    );
    // The editor's chat shows the same result.
    let shown: Vec<&str> = of_kind(&events, "toolResult")
        .iter()
        .map(|e| e["content"].as_str().unwrap_or_default())
        .collect();
    assert!(shown[0].contains("unused variable"), "{shown:?}");
    ed.shutdown();
}

/// An editor that does not announce `capabilities.diagnostics` (Helix): the tool says the
/// editor does not send them, even if something arrives, and edits carry no diagnostics.
#[test]
fn without_the_capability_the_tool_says_the_editor_does_not_send_them() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("get_diagnostics", json!({})),
            Reply::tool_call(
                "write_file",
                json!({"path": "notes.txt", "content": "new\n"}),
            ),
            Reply::text("I cannot see the editor's errors."),
        ],
    );
    let notes = sb.write("notes.txt", "old\n");
    let mut ed = Editor::spawn(&sb, ALL_TOOLS);
    ed.initialize(&sb, json!({}), false);
    publish(&ed, &notes, vec![diag(0, 0, 1, "a stray error")]);
    ed.responder = allow_once();
    let (run, _) = ed.chat(json!({"message": "any errors?", "mode": "agent"}));
    let events = ed.finish(&run);
    assert_eq!(of_kind(&events, "toolResult").len(), 2, "{events:#?}");

    let results = results_seen(&sb);
    assert!(
        results[0].starts_with("Error: this editor does not send its diagnostics to cairn"),
        "{}",
        results[0]
    );
    assert!(!results[1].contains("errors or warnings"), "{}", results[1]);
    assert!(!results[1].contains("diagnostics"), "{}", results[1]);
    assert_eq!(sb.read("notes.txt"), "new\n");
    let sent: String = sb
        .model
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(!sent.contains("a stray error"));
    ed.shutdown();
}

/// Diagnostics of a file outside the workspace and of a protected one (`.env`) never reach the
/// model, from the workspace's list or when asked for by path; the workspace's own are shown.
#[test]
fn diagnostics_of_files_the_user_may_not_read_are_left_out() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("get_diagnostics", json!({})),
            Reply::tool_call("get_diagnostics", json!({"path": "../outside.rs"})),
            Reply::text("Done."),
        ],
    );
    let a = sb.write("src/a.rs", "fn main() {}\n");
    let env = sb.write(".env", "TOKEN=abc\n");
    let outside = sb.dir.path().join("outside.rs");
    std::fs::write(&outside, "fn hidden() {}\n").unwrap();
    let mut ed = Editor::spawn(&sb, ALL_TOOLS);
    ed.initialize(&sb, json!({"capabilities": {"diagnostics": true}}), false);
    publish(
        &ed,
        &a,
        vec![diag(0, 3, 2, "function `main` is never used")],
    );
    publish(&ed, &env, vec![diag(0, 0, 1, "TOKEN=abc is not valid")]);
    publish(&ed, &outside, vec![diag(0, 3, 1, "secret outside error")]);

    let (run, _) = ed.chat(json!({"message": "what is broken?"}));
    ed.finish(&run);

    let results = results_seen(&sb);
    assert_eq!(
        results[0],
        "1 warning in 1 file:\nsrc/a.rs:\n  1:4 warning: function `main` is never used (rustc)"
    );
    assert!(
        results[1].contains("outside"),
        "the path is refused: {}",
        results[1]
    );
    let sent: String = sb
        .model
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(!sent.contains("is not valid"), "the .env diagnostic leaked");
    assert!(
        !sent.contains("secret outside error"),
        "the outside one leaked"
    );
    ed.shutdown();
}
