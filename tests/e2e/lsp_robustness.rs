//! SECURITY.md E1, E2, E6: bad frames, bad parameters, panics, and the ways the editor goes away.

use std::process::Command;
use std::time::{Duration, Instant};

use cairn_test_support::Format;
use serde_json::{Value, json};

use crate::support::{Editor, Sandbox, uri, wait_exit};

fn error_code(response: &serde_json::Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"))
}

/// E2: before `initialize`, requests get ServerNotInitialized.
#[test]
fn e2_requests_before_initialize() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[]);
    assert_eq!(
        error_code(&ed.request("cairn/chat", json!({"message": "hi"}))),
        -32002
    );
}

/// E1: garbage frames get a parse error and the next valid message is served.
#[test]
fn e1_framing_garbage_then_a_valid_request() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), true);
    ed.write_raw(b"Content-Length: 9\r\n\r\n{not json");
    let parse_error = ed.pump_until(|ed| ed.null_id_responses.first().cloned(), "a parse error");
    assert_eq!(error_code(&parse_error), -32700);
    assert!(parse_error["id"].is_null());
    ed.write_raw(b"garbage before a header\r\n\r\n");
    ed.write_raw(b"Content-Length: abc\r\n\r\n");
    // The server still answers.
    let tools = ed.call("cairn/tools", json!({}));
    assert!(tools["tools"].is_array());
}

/// E1: no bad frame desynchronises the framer. After each kind of bad input (sent alone, then
/// a valid request) the server answers that request and the next, and the bad input cost at
/// most one error reply with a null id. A header ended by LF LF is accepted as a frame.
#[test]
fn e1_any_bad_frame_then_the_next_request_is_answered() {
    let tools = |id: i64| {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "cairn/tools", "params": {}}).to_string();
        (body.len(), body)
    };
    let (lf_len, lf_body) = tools(900);
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        (
            "a header ended by LF LF",
            format!("Content-Length: {lf_len}\n\n{lf_body}").into_bytes(),
            0,
        ),
        ("three stray bytes before a header", b"abc".to_vec(), 1),
        (
            "a header without Content-Length",
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n".to_vec(),
            1,
        ),
        (
            "a Content-Length larger than the data",
            b"Content-Length: 5000\r\n\r\n{\"jsonrpc\":\"2.0\",".to_vec(),
            1,
        ),
        ("garbage without a newline", vec![b'x'; 100_000], 1),
        ("a truncated header", b"Content-Length: 4".to_vec(), 1),
        (
            "a header without its empty line",
            b"Content-Length: 7\r\n".to_vec(),
            1,
        ),
        (
            "NUL bytes",
            b"\0\0\0Content-Length: 2\0\r\n\r\n\0{}".to_vec(),
            1,
        ),
        (
            "a huge header line",
            [b"X-Big: ".as_slice(), &[b'a'; 100_000], b"\r\n"].concat(),
            1,
        ),
    ];
    for (name, bad, errors) in cases {
        eprintln!("case: {name}");
        let sb = Sandbox::new(Format::OpenAi, vec![]);
        let mut ed = Editor::spawn(&sb, &[]);
        ed.initialize(&sb, json!({}), false);
        ed.write_raw(&bad);
        // The valid request right after the bad input, then one more.
        let answered = ed.request("cairn/tools", json!({}));
        assert!(answered["result"]["tools"].is_array(), "{name}: {answered}");
        assert!(
            ed.call("cairn/tools", json!({}))["tools"].is_array(),
            "{name}"
        );
        if errors == 0 {
            // Accepted as a frame: the LF-only request itself was answered.
            let r = ed.response(900);
            assert!(r["result"]["tools"].is_array(), "{name}: {r}");
        }
        assert_eq!(
            ed.null_id_responses.len(),
            errors,
            "{name}: {:?}",
            ed.null_id_responses
        );
        for reply in &ed.null_id_responses {
            assert_eq!(error_code(reply), -32700, "{name}: {reply}");
        }
        ed.shutdown();
    }
}

/// E2: wrong or missing fields name the field; unknown methods and commands are refused.
#[test]
fn e2_bad_parameters_are_named() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let check =
        |ed: &mut Editor, method: &str, params: serde_json::Value, code: i64, needle: &str| {
            let r = ed.request(method, params);
            assert_eq!(error_code(&r), code, "{r}");
            let message = r["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(needle),
                "{method}: `{message}` does not mention `{needle}`"
            );
        };
    check(&mut ed, "cairn/chat", json!({}), -32602, "message");
    check(
        &mut ed,
        "cairn/chat",
        json!({"message": 7}),
        -32602,
        "invalid type",
    );
    check(
        &mut ed,
        "cairn/chat",
        json!({"message": "hi", "colour": "red"}),
        -32602,
        "colour",
    );
    check(
        &mut ed,
        "cairn/chat",
        json!({"message": "hi", "mode": "yolo"}),
        -32602,
        "yolo",
    );
    check(
        &mut ed,
        "cairn/chat",
        json!({"message": "  "}),
        -32602,
        "message",
    );
    check(
        &mut ed,
        "cairn/chat",
        json!({"message": "hi", "sessionId": "../../etc"}),
        -32602,
        "sessionId",
    );
    check(
        &mut ed,
        "cairn/chat",
        json!({"message": "hi", "context": {"uri": "file:///nowhere.rs"}}),
        -32602,
        "not open",
    );
    check(&mut ed, "cairn/cancel", json!({}), -32602, "runId");
    check(
        &mut ed,
        "cairn/sessions",
        json!({"sessionId": "nope"}),
        -32602,
        "no session",
    );
    check(&mut ed, "cairn/nothing", json!({}), -32601, "");
    check(
        &mut ed,
        "workspace/executeCommand",
        json!({"command": "cairn.bogus"}),
        -32602,
        "cairn.bogus",
    );
    check(
        &mut ed,
        "workspace/executeCommand",
        json!({"command": "cairn.send", "arguments": [{"uri": "file:///tmp/x.md"}]}),
        -32602,
        "chat document",
    );
}

/// E2: positions out of range are clamped, never a panic; UTF-8 is used when offered.
#[test]
fn e2_positions_out_of_range_are_clamped() {
    let sb = Sandbox::new(Format::OpenAi, vec![cairn_test_support::Reply::text("ok")]);
    let path = sb.write("e.txt", "");
    let u = uri(&path);
    let mut ed = Editor::spawn(&sb, &[]);
    let init = ed.initialize(&sb, json!({}), true);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    ed.notify("textDocument/didOpen", json!({"textDocument": {"uri": u, "languageId": "text", "version": 1, "text": "a😀b\r\nline two\n"}}));
    for (range, text) in [
        (
            json!({"start": {"line": 0, "character": 99}, "end": {"line": 0, "character": 99}}),
            "!",
        ),
        (
            json!({"start": {"line": 50, "character": 0}, "end": {"line": 60, "character": 3}}),
            "END",
        ),
        (
            json!({"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 3}}),
            "",
        ),
    ] {
        ed.notify("textDocument/didChange", json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"range": range, "text": text}]}));
    }
    // The context of a chat shows the document as the server holds it.
    let (run, _) = ed.chat(json!({"message": "what is this", "context": {"uri": u, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}}));
    ed.finish(&run);
    let prompt = sb.model.requests()[0].body["messages"].to_string();
    // In UTF-8, character 2 is inside the emoji: the deletion clamps to its start and removes nothing.
    assert!(prompt.contains("a😀b!\\r\\nline two\\nEND"), "{prompt}");
}

/// E6: a panicking handler answers InternalError and the server keeps serving.
#[test]
fn e6_a_panicking_handler_answers_internal_error() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[("CAIRN_TEST_FAULTS", "1")]);
    ed.initialize(&sb, json!({}), false);
    let r = ed.request("cairn/debug/panic", json!({}));
    assert_eq!(error_code(&r), -32603);
    assert!(
        !r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("injected fault"),
        "the panic text stays out of the reply"
    );
    assert!(ed.call("cairn/tools", json!({}))["tools"].is_array());
    ed.shutdown();
}

/// E6: the server exits promptly when stdin closes.
#[test]
fn e6_exits_when_stdin_closes() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    // Half a message, then EOF.
    ed.write_raw(b"Content-Length: 999999999999\r\n\r\n{\"jsonrpc\"");
    let started = Instant::now();
    ed.close_stdin();
    let status = wait_exit(&mut ed.child, Duration::from_secs(5));
    eprintln!("exit after stdin EOF took {:?}", started.elapsed());
    assert!(
        status.is_some(),
        "the server did not exit after stdin closed"
    );
}

/// E6: the server exits when the editor process (`processId`) dies.
#[test]
fn e6_exits_when_the_parent_process_dies() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut parent = Command::new("sleep").arg("60").spawn().unwrap();
    let mut ed = Editor::spawn(&sb, &[]);
    ed.call(
        "initialize",
        json!({"processId": parent.id(), "capabilities": {}, "rootUri": null}),
    );
    ed.notify("initialized", json!({}));
    assert!(ed.call("cairn/tools", json!({}))["tools"].is_array());
    parent.kill().unwrap();
    parent.wait().unwrap();
    let started = Instant::now();
    let status = wait_exit(&mut ed.child, Duration::from_secs(5));
    eprintln!("exit after parent death took {:?}", started.elapsed());
    assert!(status.is_some(), "the server outlived its editor");
}

/// Configuration errors from the editor are shown, and the server keeps the last good one.
#[test]
fn unknown_setting_is_reported_by_name() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(
        &sb,
        json!({"config": {"agent": {"max_tool_cals": 3}}}),
        false,
    );
    let shown = ed.pump_until(
        |ed| {
            ed.notifications
                .iter()
                .find(|n| is_setting_message(n))
                .cloned()
        },
        "a message about the setting",
    );
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown key `agent.max_tool_cals`"),
        "{shown}"
    );
    ed.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"cairn": {"policy": {"tools": {"read_file": "sometimes"}}}}}),
    );
    let shown = ed.pump_until(
        |ed| {
            ed.notifications
                .iter()
                .filter(|n| is_setting_message(n))
                .nth(1)
                .cloned()
        },
        "a second message",
    );
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("policy.tools.read_file"),
        "{shown}"
    );
    ed.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"cairn": {"policy": {"tools": {"read_file": "deny"}}}}}),
    );
    let tools = ed.call("cairn/tools", json!({}));
    let read = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .cloned()
        .unwrap();
    assert_eq!(read["policy"], "deny");
}

/// E2: after `shutdown`, requests are refused as invalid.
#[test]
fn e2_requests_after_shutdown_are_refused() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.call("shutdown", serde_json::Value::Null);
    assert_eq!(error_code(&ed.request("cairn/tools", json!({}))), -32600);
}

/// E5: a frame over the size cap is refused without taking the server down, and editor context
/// is cut to its budget with a note.
#[test]
fn e5_huge_inputs_are_capped() {
    let sb = Sandbox::new(Format::OpenAi, vec![cairn_test_support::Reply::text("ok")]);
    let path = sb.write("big.txt", "");
    let u = uri(&path);
    let mut ed = Editor::spawn(&sb, &[("CAIRN_AGENT__CONTEXT_MAX_BYTES", "1000")]);
    ed.initialize(&sb, json!({}), false);
    let huge = "x".repeat(40 * 1024 * 1024);
    ed.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "text", "version": 1, "text": huge}}),
    );
    let refused = ed.pump_until(
        |ed| ed.null_id_responses.first().cloned(),
        "the refusal of the huge frame",
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the limit"),
        "{refused}"
    );
    assert!(
        ed.call("cairn/tools", json!({}))["tools"].is_array(),
        "the server still answers"
    );

    ed.open(&u, &"y".repeat(5000));
    let (run, _) = ed.chat(json!({"message": "summarise", "context": {"uri": u}}));
    ed.finish(&run);
    let prompt = sb.model.requests()[0].body["messages"].to_string();
    assert!(
        prompt.contains("[context cut from 5000 to 1000 bytes (agent.context_max_bytes)]"),
        "{prompt}"
    );
    assert!(!prompt.contains(&"y".repeat(1001)));
}

/// A `window/showMessage` other than the one about the tool-selection model, which this
/// test's home does not have.
fn is_setting_message(n: &Value) -> bool {
    n["method"] == "window/showMessage"
        && !n["params"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("embedding model")
}
