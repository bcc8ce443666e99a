//! Runs driven through `cairn lsp` the way editors drive them.

use std::time::Duration;

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Editor, Sandbox, kinds, text_of, uri};

fn allow_once() -> Answer {
    Answer::Now(json!({"title": "Allow once"}))
}

/// The whole agent turn: unsaved text is read, the edit is approved through
/// `window/showMessageRequest` and lands in the buffer through `workspace/applyEdit`.
#[test]
fn agent_turn_reads_unsaved_text_asks_approval_and_edits_the_buffer() {
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
    let u = uri(&path);
    let mut ed = Editor::spawn(&sb, &[]);
    let init = ed.initialize(&sb, json!({}), false);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    let methods = init["capabilities"]["experimental"]["cairn"]["methods"]
        .as_array()
        .unwrap()
        .clone();
    for m in [
        "cairn/chat",
        "cairn/cancel",
        "cairn/sessions",
        "cairn/tools",
        "cairn/runEvent",
        "cairn/approve",
    ] {
        assert!(methods.contains(&json!(m)), "{m} is not advertised");
    }
    ed.open(&u, "fix teh typo\n");
    ed.responder = Box::new(|method, _| match method {
        "window/showMessageRequest" => allow_once(),
        _ => Answer::Now(Value::Null),
    });

    let (run, session) = ed.chat(json!({"message": "fix the typo in notes.txt", "mode": "agent"}));
    let events = ed.finish(&run);
    assert_eq!(
        kinds(&events),
        [
            "text",
            "toolCall",
            "toolResult",
            "toolCall",
            "approval",
            "approval",
            "edit",
            "toolResult",
            "text",
            "done"
        ],
        "{events:#?}"
    );
    assert_eq!(text_of(&events), "Let me look.Fixed the typo.");
    let done = events.last().unwrap().clone();
    let events: Vec<Value> = events.into_iter().filter(|e| e["kind"] != "text").collect();
    assert!(
        events[1]["content"]
            .as_str()
            .unwrap()
            .contains("fix teh typo"),
        "read_file sees the unsaved buffer"
    );
    assert_eq!(events[3]["state"], "asked");
    assert_eq!(events[4]["answer"], "allowOnce");
    assert_eq!(events[5]["uri"], u);
    assert_eq!(events[5]["applied"], true);
    assert_eq!(done["toolCalls"], 2);
    assert!(done["usage"]["inputTokens"].as_u64().unwrap() > 0);

    // The approval named the tool; the edit carried the buffer's version.
    let ask = ed
        .server_requests
        .iter()
        .find(|r| r["method"] == "window/showMessageRequest")
        .unwrap();
    assert!(
        ask["params"]["message"]
            .as_str()
            .unwrap()
            .contains("edit_file")
    );
    let titles: Vec<&str> = ask["params"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Allow once", "Allow for this session", "Deny"]);
    let edit = ed
        .server_requests
        .iter()
        .find(|r| r["method"] == "workspace/applyEdit")
        .unwrap();
    assert_eq!(
        edit["params"]["edit"]["documentChanges"][0]["textDocument"]["version"],
        1
    );
    assert_eq!(ed.buffers.docs[&u].0, "fix the typo\n");
    assert_eq!(
        sb.read("notes.txt"),
        "on disk\n",
        "an open document is edited in the editor, not on disk"
    );

    // The model got the tool results back, and the tools it was offered.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1].body.to_string();
    assert!(second.contains("fix teh typo"));
    let offered: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        offered.contains(&"edit_file".to_string()) && offered.contains(&"read_file".to_string())
    );

    // The session is stored and can be listed and loaded; the catalog marks what was offered.
    let sessions = ed.call("cairn/sessions", json!({}));
    assert_eq!(sessions["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(
        sessions["sessions"][0]["title"],
        "fix the typo in notes.txt"
    );
    let transcript = ed.call("cairn/sessions", json!({"sessionId": session}));
    let records = transcript["records"].as_array().unwrap();
    assert_eq!(records.first().unwrap()["type"], "run");
    assert_eq!(records.last().unwrap()["outcome"], "done");
    let tools = ed.call("cairn/tools", json!({"sessionId": session}));
    let entry = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(entry("read_file")["selected"], true);
    assert_eq!(entry("read_file")["policy"], "allow");
    assert_eq!(entry("edit_file")["policy"], "ask");
    ed.shutdown();
}

/// A denied edit never reaches the file, and a chat-mode run has no editing tools.
#[test]
fn denied_edit_leaves_the_file_unchanged() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
            ),
            Reply::text("ok"),
        ],
    );
    sb.write("a.txt", "one\n");
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Now(json!({"title": "Deny"})),
        _ => Answer::Now(Value::Null),
    });
    let (run, _) = ed.chat(json!({"message": "change it", "mode": "agent"}));
    let events = ed.finish(&run);
    let result = events.iter().find(|e| e["kind"] == "toolResult").unwrap();
    assert_eq!(
        (result["isError"].as_bool(), result["content"].as_str()),
        (Some(true), Some("the user denied this call"))
    );
    assert_eq!(sb.read("a.txt"), "one\n");
    assert!(
        !ed.server_requests
            .iter()
            .any(|r| r["method"] == "workspace/applyEdit")
    );
}

/// SECURITY.md G2: a `cairn/approve` answer for another run or call is a denial.
#[test]
fn g2_approval_answer_for_another_call_is_a_denial() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
            ),
            Reply::tool_call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "three"}),
            ),
            Reply::text("ok"),
        ],
    );
    sb.write("a.txt", "one\n");
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({"capabilities": {"approvals": true}}), false);
    let mut first = true;
    ed.responder = Box::new(move |method, params| {
        assert_eq!(
            method, "cairn/approve",
            "a client with its own approvals gets cairn/approve"
        );
        let mut answer = json!({
            "approvalId": params["approvalId"], "runId": params["runId"], "callId": params["callId"], "decision": "allowOnce"
        });
        if first {
            answer["runId"] = json!("some-other-run");
        } else {
            answer["approvalId"] = json!("replayed-approval");
        }
        first = false;
        Answer::Now(answer)
    });
    let (run, _) = ed.chat(json!({"message": "change it", "mode": "agent"}));
    let events = ed.finish(&run);
    let denials = events
        .iter()
        .filter(|e| e["kind"] == "toolResult" && e["content"] == "the user denied this call")
        .count();
    assert_eq!(denials, 2);
    assert_eq!(
        sb.read("a.txt"),
        "one\n",
        "no approval was granted, so nothing was written"
    );
    assert!(
        ed.server_requests
            .iter()
            .all(|r| r["method"] != "window/showMessageRequest")
    );
}

/// `cairn/cancel` stops a streaming answer and closes the model connection.
#[test]
fn cancel_mid_stream_stops_the_run_and_the_model_request() {
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::stall("I am thinking")]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "think"}));
    let r = run.clone();
    ed.pump_until(
        |ed| {
            ed.events(&r)
                .iter()
                .any(|e| e["kind"] == "text")
                .then_some(())
        },
        "the first text",
    );
    assert_eq!(
        ed.call("cairn/cancel", json!({"runId": run}))["cancelled"],
        true
    );
    let events = ed.finish(&run);
    assert_eq!(events.last().unwrap()["kind"], "done");
    assert_eq!(events.last().unwrap()["stopped"], "cancelled");
    sb.rt.block_on(async {
        for _ in 0..400 {
            if sb.model.dropped_responses() > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    assert_eq!(
        sb.model.dropped_responses(),
        1,
        "the model request was aborted"
    );
    assert_eq!(
        ed.call("cairn/cancel", json!({"runId": run}))["cancelled"],
        false,
        "a finished run is gone"
    );
}

/// SECURITY.md G1: a script of 26 tool calls stops at 25, and says so.
#[test]
fn g1_twenty_six_tool_calls_stop_at_twenty_five() {
    let mut script: Vec<Reply> = (0..26)
        .map(|_| Reply::tool_call("list_directory", json!({})))
        .collect();
    script[3] = Reply::tool_call("list_directory", json!({}))
        .with_text("The budget was reset, keep going.");
    script.push(Reply::text("never sent"));
    let sb = Sandbox::new(Format::OpenAi, script);
    sb.write("x.txt", "x");
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "list forever"}));
    let events = ed.finish(&run);
    let ok = events
        .iter()
        .filter(|e| e["kind"] == "toolResult" && e["isError"] == false)
        .count();
    assert_eq!(ok, 25);
    let refused = events
        .iter()
        .filter(|e| e["kind"] == "toolResult" && e["isError"] == true)
        .count();
    assert_eq!(refused, 1);
    let done = events.last().unwrap();
    assert_eq!(
        (
            done["kind"].as_str(),
            done["toolCalls"].as_u64(),
            done["stopped"].as_str()
        ),
        (Some("done"), Some(25), Some("toolBudget"))
    );
    assert!(events.iter().any(|e| {
        e["kind"] == "text"
            && e["delta"]
                .as_str()
                .unwrap()
                .contains("agent.max_tool_calls")
    }));
    assert_eq!(
        sb.model.requests().len(),
        26,
        "the model asked 26 times; the 26th call did not run"
    );
    assert!(
        sb.model.requests()[25].body["tools"]
            .as_array()
            .is_none_or(|t| t.is_empty()),
        "no tools once the budget is spent"
    );
}

/// SECURITY.md E4 (tcl-lsp#1354): six runs wait on slow approvals while the server keeps
/// answering; then all six finish.
#[test]
fn e4_six_concurrent_runs_with_slow_approvals_all_finish() {
    let keyed: Vec<(String, Vec<Reply>)> = (0..6)
        .map(|i| {
            (
                format!("job{i}"),
                vec![
                    Reply::tool_call("read_file", json!({"path": format!("f{i}.txt")})),
                    Reply::text(format!("done {i}")),
                ],
            )
        })
        .collect();
    let sb = Sandbox::keyed(Format::OpenAi, keyed);
    for i in 0..6 {
        sb.write(&format!("f{i}.txt"), &format!("file {i}"));
    }
    let mut ed = Editor::spawn(&sb, &[]);
    // Reads need approval here, so every run waits on the editor.
    ed.initialize(
        &sb,
        json!({"config": {"policy": {"effects": {"read": "ask"}}}}),
        false,
    );
    ed.responder = Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Hold,
        _ => Answer::Now(Value::Null),
    });
    let runs: Vec<String> = (0..6)
        .map(|i| ed.chat(json!({"message": format!("job{i}: read it")})).0)
        .collect();
    ed.pump_until(
        |ed| (ed.held.len() == 6).then_some(()),
        "six approval requests",
    );
    // All six runs hold an approval open; the server still answers requests.
    let sessions = ed.call("cairn/sessions", json!({}));
    assert!(sessions["sessions"].is_array());
    let tools = ed.call("cairn/tools", json!({}));
    assert!(!tools["tools"].as_array().unwrap().is_empty());
    assert_eq!(
        ed.held.len(),
        6,
        "answered while all six approvals were still open"
    );
    let held = std::mem::take(&mut ed.held);
    for request in &held {
        ed.respond(request, json!({"title": "Allow once"}));
    }
    for (i, run) in runs.iter().enumerate() {
        let events = ed.finish(run);
        assert_eq!(events.last().unwrap()["kind"], "done", "{events:#?}");
        let result = events.iter().find(|e| e["kind"] == "toolResult").unwrap();
        assert!(
            result["content"]
                .as_str()
                .unwrap()
                .contains(&format!("file {i}"))
        );
    }
}

/// Helix drives everything through code actions: `Send` in a chat document appends the answer
/// to the document through `workspace/applyEdit` as it streams.
#[test]
fn chat_document_driven_only_through_code_actions() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text("It says hello.").with_delay_ms(5),
        ],
    );
    sb.write("notes.txt", "hello\n");
    let doc = sb.write(".cairn/chats/first.md", "");
    let u = uri(&doc);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.open(&u, "## You\n\nWhat is in notes.txt?\n");
    let actions = ed.call(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": u},
            "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}},
            "context": {"diagnostics": []}
        }),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Send", "Ask cairn", "Explain", "Fix"]);
    let send = actions[0]["command"].clone();
    let started = ed.call(
        "workspace/executeCommand",
        json!({"command": send["command"], "arguments": send["arguments"]}),
    );
    let run = started["runId"].as_str().unwrap().to_string();
    ed.finish(&run);
    // The last append lands after the done event; wait for the new `## You` heading.
    let text = ed.wait_for_buffer(&u, |t| t.trim_end().ends_with("## You"));
    assert!(
        text.starts_with("## You\n\nWhat is in notes.txt?\n\n## cairn\n\n"),
        "{text}"
    );
    assert!(
        text.contains("```tool-call read_file\n{\"path\":\"notes.txt\"}\n```"),
        "{text}"
    );
    assert!(text.contains("```tool-result ok\n"), "{text}");
    assert!(text.contains("It says hello."), "{text}");
    assert!(
        ed.server_requests
            .iter()
            .filter(|r| r["method"] == "workspace/applyEdit")
            .count()
            >= 2,
        "the answer streamed in more than one edit"
    );

    // A second turn sees the first one as history.
    let follow_up = format!("{text}and now?\n");
    let v = ed.buffers.docs[&u].1 + 1;
    ed.buffers.docs.insert(u.clone(), (follow_up.clone(), v));
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": v}, "contentChanges": [{"text": follow_up}]}),
    );
    let started = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.send", "arguments": [{"uri": u}]}),
    );
    let events = ed.finish(started["runId"].as_str().unwrap());
    assert_eq!(
        events.last().unwrap()["kind"],
        "error",
        "the script is exhausted: {events:#?}"
    );
    let last = sb.model.requests().last().unwrap().body.clone();
    let messages = last["messages"].as_array().unwrap();
    let texts: Vec<String> = messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        texts.iter().any(|t| t == "What is in notes.txt?"),
        "{texts:?}"
    );
    assert_eq!(texts.last().unwrap(), "and now?");
}

/// `Explain` on a selection opens a new chat document and streams the answer into it.
#[test]
fn explain_code_action_creates_and_fills_a_chat_document() {
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("It adds two numbers.")]);
    let src = sb.write(
        "src/add.rs",
        "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    let u = uri(&src);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.open(&u, "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n");
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 1}});
    let started = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.explain", "arguments": [{"uri": u, "range": range}]}),
    );
    ed.finish(started["runId"].as_str().unwrap());
    let show = ed
        .server_requests
        .iter()
        .find(|r| r["method"] == "window/showDocument")
        .unwrap();
    let doc_uri = show["params"]["uri"].as_str().unwrap().to_string();
    assert!(doc_uri.contains("/.cairn/chats/chat-"), "{doc_uri}");
    let text = ed.wait_for_buffer(&doc_uri, |t| t.contains("It adds two numbers."));
    assert!(
        text.starts_with(
            "## You\n\nExplain this code.\n\nContext: `src/add.rs` (lines 1-3):\n```\nfn add"
        ),
        "{text}"
    );
    let prompt = sb.model.requests()[0].body["messages"].to_string();
    assert!(prompt.contains("a + b"));
}

/// Provider failures end the run with an `error` event that names the provider and the cause.
#[test]
fn provider_failures_end_runs_with_an_error_event() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
            Reply::garbage(),
            Reply::close_mid_stream("half an ans"),
            Reply::status(
                404,
                r#"{"error":{"message":"The model `scripted` does not exist","code":"model_not_found"}}"#,
            ),
        ],
    );
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let mut errors = Vec::new();
    for _ in 0..4 {
        let (run, _) = ed.chat(json!({"message": "hi"}));
        let events = ed.finish(&run);
        let last = events.last().unwrap();
        assert_eq!(last["kind"], "error", "{events:#?}");
        errors.push(last["message"].as_str().unwrap().to_string());
    }
    assert!(
        errors[0].starts_with("openai-compatible") && errors[0].contains("OPENAI_API_KEY"),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("malformed"), "{}", errors[1]);
    assert!(
        errors[2].contains("ended before the answer was complete"),
        "{}",
        errors[2]
    );
    assert!(
        errors[3].contains("`scripted` was not found") && errors[3].contains("CAIRN_MODEL"),
        "{}",
        errors[3]
    );
}

/// A stalled provider ends the run, never a hang.
#[test]
fn a_stalled_provider_ends_the_run() {
    let sb = Sandbox::new(Format::Anthropic, vec![Reply::stall("wait for it")]);
    let mut ed = Editor::spawn(&sb, &[("CAIRN_PROVIDER__IDLE_TIMEOUT_SECS", "1")]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "hi"}));
    let events = ed.finish(&run);
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "error");
    assert!(
        last["message"].as_str().unwrap().starts_with("anthropic")
            && last["message"].as_str().unwrap().contains("stalled"),
        "{last}"
    );
}

/// `Fix` runs the agent on a selection: the edit goes to the source buffer, the story to a chat
/// document; a later `cairn/chat` in the same session sees the conversation so far.
#[test]
fn fix_code_action_edits_the_buffer_and_sessions_continue() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "src/add.rs", "old_string": "a - b", "new_string": "a + b"}),
            ),
            Reply::text("Changed `-` to `+`."),
            Reply::text("first answer"),
            Reply::text("second answer"),
        ],
    );
    let src = sb.write(
        "src/add.rs",
        "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    let u = uri(&src);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.open(&u, "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n");
    ed.responder = Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Now(json!({"title": "Allow for this session"})),
        _ => Answer::Now(Value::Null),
    });
    let range = json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 9}});
    let started = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.fix", "arguments": [{"uri": u, "range": range}]}),
    );
    let events = ed.finish(started["runId"].as_str().unwrap());
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "edit" && e["applied"] == true),
        "{events:#?}"
    );
    assert_eq!(
        ed.buffers.docs[&u].0,
        "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );
    assert_eq!(
        sb.read("src/add.rs"),
        "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n"
    );

    let (run, session) = ed.chat(json!({"message": "remember the number 42"}));
    ed.finish(&run);
    let (run, same) = ed.chat(json!({"message": "which number?", "sessionId": session}));
    assert_eq!(same, session);
    ed.finish(&run);
    let last = sb.model.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("remember the number 42") && last.contains("first answer"),
        "{last}"
    );
}

/// Workspace folders added later are where tools work.
#[test]
fn workspace_folders_can_change() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "only-here.txt"})),
            Reply::text("ok"),
        ],
    );
    let other = sb.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("only-here.txt"), "found me").unwrap();
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let ws_uri = uri(&sb.ws());
    let other_uri = uri(&std::fs::canonicalize(&other).unwrap());
    ed.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {
            "added": [{"uri": other_uri, "name": "other"}],
            "removed": [{"uri": ws_uri, "name": "ws"}]
        }}),
    );
    let (run, _) = ed.chat(json!({"message": "read it"}));
    let events = ed.finish(&run);
    let result = events.iter().find(|e| e["kind"] == "toolResult").unwrap();
    assert!(
        result["content"].as_str().unwrap().contains("found me"),
        "{result}"
    );
}

/// Helix has no `window/showMessageRequest`: the approval is answered with a code action, and
/// the editor sees the tool call before the question.
#[test]
fn approval_by_code_action_when_the_editor_cannot_ask() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text("It says hi."),
        ],
    );
    sb.write("notes.txt", "hi\n");
    let doc = sb.write(".cairn/chats/helix.md", "");
    let u = uri(&doc);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(
        &sb,
        json!({"config": {"policy": {"effects": {"read": "ask"}}}}),
        false,
    );
    ed.responder = Box::new(|method, _| match method {
        "window/showMessageRequest" => Answer::Fail(-32601, "Method not found"),
        _ => Answer::Now(Value::Null),
    });
    ed.open(&u, "## You\n\nWhat does notes.txt say?\n");
    let started = ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.send", "arguments": [{"uri": u}]}),
    );
    let run = started["runId"].as_str().unwrap().to_string();
    let warning = ed.pump_until(
        |ed| {
            ed.notifications
                .iter()
                .find(|n| {
                    n["method"] == "window/showMessage"
                        && n["params"]["message"]
                            .as_str()
                            .unwrap_or_default()
                            .contains("cairn.allowOnce")
                })
                .cloned()
        },
        "the question as a message",
    );
    assert!(
        warning["params"]["message"]
            .as_str()
            .unwrap()
            .contains("read_file")
    );
    // The tool call was reported before the question.
    let position = |pred: &dyn Fn(&Value) -> bool| ed.all.iter().position(pred).unwrap();
    let call_at =
        position(&|m| m["method"] == "cairn/runEvent" && m["params"]["kind"] == "toolCall");
    let ask_at = position(&|m| m["method"] == "window/showMessageRequest");
    assert!(
        call_at < ask_at,
        "toolCall at {call_at}, question at {ask_at}"
    );
    assert!(
        ed.events(&run).iter().all(|e| e["kind"] != "toolResult"),
        "nothing ran before the answer"
    );

    let actions = ed.call(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": u},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []}
        }),
    );
    let allow = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "cairn: Allow once `read_file`")
        .cloned()
        .unwrap();
    let answered = ed.call(
        "workspace/executeCommand",
        json!({"command": allow["command"]["command"], "arguments": allow["command"]["arguments"]}),
    );
    assert_eq!(answered["answered"], true);
    let events = ed.finish(&run);
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "toolResult" && e["content"].as_str().unwrap().contains("hi"))
    );
    // The same approval cannot be used twice.
    let again = ed.request(
        "workspace/executeCommand",
        json!({"command": allow["command"]["command"], "arguments": allow["command"]["arguments"]}),
    );
    assert_eq!(again["error"]["code"], -32602);
    let text = ed.wait_for_buffer(&u, |t| t.trim_end().ends_with("## You"));
    assert!(
        text.contains("> cairn asks: allow `read_file` reads (policy.effects.read)?"),
        "{text}"
    );
    assert!(text.contains("> allowed once"), "{text}");
}

/// A provider that cannot be set up (a remote URL and no key) fails runs with a message that
/// names the setting; the catalog still works.
#[test]
fn missing_key_for_a_remote_provider_is_named() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut ed = Editor::spawn(
        &sb,
        &[("OPENAI_BASE_URL", "https://api.example.invalid/v1")],
    );
    ed.initialize(&sb, json!({}), false);
    assert!(
        !ed.call("cairn/tools", json!({}))["tools"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let (run, _) = ed.chat(json!({"message": "hi"}));
    let events = ed.finish(&run);
    let message = events.last().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("OPENAI_API_KEY"), "{message}");
    assert!(sb.model.requests().is_empty());
}
