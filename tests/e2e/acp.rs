//! `cairn acp` driven by real ACP clients nobody here wrote: the official Python SDK's client side
//! (`tests/acp/client.py`) and the official TypeScript SDK's (`tests/acp/client.mjs`), with the
//! scripted model as the provider. Bad input is sent raw.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Sandbox, TIMEOUT, node22, peer_tests, python};

/// An official ACP SDK whose client side drives `cairn acp` in these tests.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    /// PyPI `agent-client-protocol`, in `tests/acp/client.py`.
    Python,
    /// npm `@agentclientprotocol/sdk`, in `tests/acp/client.mjs`.
    TypeScript,
}

impl Sdk {
    /// The interpreter and the client script.
    fn program(self) -> (String, PathBuf) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp");
        match self {
            Sdk::Python => (python(), dir.join("client.py")),
            Sdk::TypeScript => (node22(), dir.join("client.mjs")),
        }
    }
}

/// Runs one scenario of the Python client against the real binary, in the sandbox's clean
/// environment, and returns what it printed.
fn client(sb: &Sandbox, args: &[&str]) -> Value {
    client_env(sb, args, &[])
}

/// [`client`] with extra environment for the agent (configuration through `CAIRN_*`).
fn client_env(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Value {
    sdk_client(sb, Sdk::Python, args, env)
}

/// [`client_env`] with the client of the given SDK.
fn sdk_client(sb: &Sandbox, sdk: Sdk, args: &[&str], env: &[(&str, &str)]) -> Value {
    let (interpreter, script) = sdk.program();
    let agent = sb.command();
    let mut cmd = Command::new(interpreter);
    cmd.env_clear();
    for (k, v) in agent.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.arg(script)
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(sb.ws())
        .args(args)
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{sdk:?} client {args:?} failed:\n{stderr}"
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("client output: {e}\n{stderr}"))
}

fn updates_of<'a>(out: &'a Value, kind: &str) -> Vec<&'a Value> {
    out["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The tools the model was offered in its first request of the test.
fn offered(sb: &Sandbox) -> Vec<String> {
    let requests = sb.model.requests();
    requests[0].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (up to 20 s) for the scripted model to see its one streaming response dropped: the
/// agent stopped the model request.
fn assert_model_request_aborted(sb: &Sandbox) {
    sb.rt.block_on(async {
        for _ in 0..400 {
            if sb.model.dropped_responses() > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    });
    assert_eq!(
        sb.model.dropped_responses(),
        1,
        "the model request was aborted"
    );
}

fn text_of(out: &Value, kind: &str) -> String {
    updates_of(out, kind)
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

/// A whole turn: the answer streams as message chunks, the read as a tool call with its input
/// and its result, and the prompt ends the turn; the session can then be loaded again.
#[test]
fn acp_turn_with_a_tool_call_streams_updates_and_loads_again() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})).with_text("Let me look."),
            Reply::text("It says hello."),
        ],
    );
    sb.write("notes.txt", "hello from the notes\n");
    let out = client(&sb, &["turn"]);

    let init = &out["initialize"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["agentInfo"]["name"], "cairn");
    let session = &out["session"];
    let sid = session["sessionId"].as_str().unwrap().to_string();
    assert_eq!(session["modes"]["currentModeId"], "chat");
    let modes: Vec<&str> = session["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["chat", "agent"]);

    assert_eq!(out["prompt"]["stopReason"], "end_turn");
    assert_eq!(
        text_of(&out, "agent_message_chunk"),
        "Let me look.It says hello."
    );
    let calls = updates_of(&out, "tool_call");
    assert_eq!(calls.len(), 1, "{out}");
    let call = calls[0];
    assert_eq!(call["title"], "read_file");
    assert_eq!(call["kind"], "read");
    // ACP's default status; the SDK leaves it off the wire.
    assert!(
        call["status"].is_null() || call["status"] == "pending",
        "{call}"
    );
    assert_eq!(call["rawInput"], json!({"path": "notes.txt"}));
    let done = updates_of(&out, "tool_call_update");
    let last = done.last().unwrap();
    assert_eq!(last["toolCallId"], call["toolCallId"]);
    assert_eq!(last["status"], "completed");
    assert!(
        last["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("hello from the notes"),
        "{last}"
    );
    assert!(
        out["permissions"].as_array().unwrap().is_empty(),
        "a read is not asked about"
    );
    // Chat mode, the default, offers the reading tools and not the writing ones.
    let tools = offered(&sb);
    assert!(tools.iter().any(|t| t == "read_file"), "{tools:?}");
    assert!(!tools.iter().any(|t| t == "write_file"), "{tools:?}");

    // The stored session, loaded by a new connection, replays the conversation.
    let loaded = client(&sb, &["load", &sid]);
    assert_eq!(
        text_of(&loaded, "user_message_chunk"),
        "what is in notes.txt?"
    );
    assert_eq!(
        text_of(&loaded, "agent_message_chunk"),
        "Let me look.It says hello."
    );
    assert_eq!(loaded["load"]["modes"]["currentModeId"], "chat");
}

fn write_script() -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "write_file",
            json!({"path": "out.txt", "content": "written by cairn\n"}),
        ),
        Reply::text("Done."),
    ]
}

/// In agent mode a write asks through `session/request_permission` (allow once, allow for the
/// session, reject), bound to the call; allowed, the file lands on disk.
#[test]
fn acp_permission_allowed_writes_the_file() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, write_script());
    let out = client(&sb, &["permission", "allow"]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn");
    let asked = out["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{out}");
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    assert!(
        offered(&sb).iter().any(|t| t == "write_file"),
        "agent mode offers the writing tools"
    );
    let call = &updates_of(&out, "tool_call")[0];
    assert_eq!(asked[0]["toolCall"]["toolCallId"], call["toolCallId"]);
    assert_eq!(
        asked[0]["toolCall"]["rawInput"]["path"], "out.txt",
        "the user sees the arguments"
    );
    assert_eq!(
        asked[0]["toolCall"]["_meta"]["cairn/argsHash"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    let statuses: Vec<&str> = updates_of(&out, "tool_call_update")
        .iter()
        .filter_map(|u| u["status"].as_str())
        .collect();
    assert_eq!(statuses, ["in_progress", "completed"]);
    assert_eq!(sb.read("out.txt"), "written by cairn\n");
}

/// Rejected, the call is not run: the file stays as it was and the call fails.
#[test]
fn acp_permission_rejected_leaves_the_file() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, write_script());
    sb.write("out.txt", "original\n");
    let out = client(&sb, &["permission", "reject"]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn");
    assert_eq!(out["permissions"].as_array().unwrap().len(), 1);
    let last = *updates_of(&out, "tool_call_update").last().unwrap();
    assert_eq!(last["status"], "failed", "{out}");
    assert_eq!(sb.read("out.txt"), "original\n");
}

fn files_script() -> Vec<Reply> {
    vec![
        Reply::tool_call("read_file", json!({"path": "notes.txt"})),
        Reply::tool_call(
            "edit_file",
            json!({"path": "notes.txt", "old_string": "unsaved", "new_string": "edited"}),
        ),
        Reply::tool_call("read_file", json!({"path": "../outside.txt"})),
        Reply::text("Done."),
    ]
}

/// The text results of the turn's tool calls, in order.
fn results_of(out: &Value) -> Vec<(String, String)> {
    updates_of(out, "tool_call_update")
        .iter()
        .filter(|u| u["status"] == "completed" || u["status"] == "failed")
        .map(|u| {
            let text = u["content"][0]["content"]["text"]
                .as_str()
                .unwrap_or_default();
            (u["status"].as_str().unwrap().to_string(), text.to_string())
        })
        .collect()
}

/// A client that offers `fs/*`: the agent reads the editor's unsaved text, its edit lands in
/// the editor's buffer through `fs/write_text_file` (the file on disk is left to the editor),
/// and a path outside the workspace is refused before the client is asked about it.
#[test]
fn acp_client_files_read_unsaved_text_and_take_the_edits() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, files_script());
    sb.write("notes.txt", "saved text on disk\n");
    let outside = sb.dir.path().join("outside.txt");
    std::fs::write(&outside, "not for the agent\n").unwrap();
    let out = client(&sb, &["files"]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    let notes = sb.ws().join("notes.txt").display().to_string();

    let results = results_of(&out);
    assert_eq!(results.len(), 3, "{out}");
    assert_eq!(results[0].0, "completed");
    assert!(
        results[0].1.contains("unsaved text in the editor"),
        "the read sees the editor's text: {}",
        results[0].1
    );
    assert_eq!(results[1].0, "completed", "{out}");
    assert!(
        results[1].1.contains("through the editor (saved)"),
        "{}",
        results[1].1
    );
    assert_eq!(
        out["writes"],
        json!([{
            "sessionId": out["session"]["sessionId"],
            "path": notes,
            "content": "edited text in the editor\n"
        }])
    );
    assert_eq!(out["buffers"][&notes], "edited text in the editor\n");
    assert_eq!(
        sb.read("notes.txt"),
        "saved text on disk\n",
        "the disk is the editor's"
    );

    assert_eq!(results[2].0, "failed", "{out}");
    let reads: Vec<&str> = out["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reads.iter().all(|r| *r == notes),
        "only notes.txt was asked for: {reads:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "not for the agent\n"
    );
    // The model saw the unsaved text too, and never the outside file.
    let sent: String = sb
        .model
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(sent.contains("unsaved text in the editor"));
    assert!(!sent.contains("not for the agent"));
}

/// A client whose `fs/write_text_file` fails: the edit fails with the client's reason, nothing
/// is written anywhere, and the turn goes on to its end.
#[test]
fn acp_client_write_failure_fails_the_edit_only() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, files_script());
    sb.write("notes.txt", "saved text on disk\n");
    let out = client(&sb, &["files", "fail"]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    assert_eq!(text_of(&out, "agent_message_chunk"), "Done.");
    let results = results_of(&out);
    assert_eq!(results[1].0, "failed", "{out}");
    assert!(
        results[1].1.contains("fs/write_text_file failed"),
        "the model reads why: {}",
        results[1].1
    );
    assert_eq!(out["writes"].as_array().unwrap().len(), 1, "{out}");
    let notes = sb.ws().join("notes.txt").display().to_string();
    assert_eq!(out["buffers"][&notes], "unsaved text in the editor\n");
    assert_eq!(sb.read("notes.txt"), "saved text on disk\n");
}

/// The user types in the buffer between the agent's read and its edit: the edit is refused as
/// stale and nothing is written, so the user's typing is never overwritten.
#[test]
fn acp_client_edit_on_stale_text_is_refused() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, files_script());
    sb.write("notes.txt", "saved text on disk\n");
    let out = client(&sb, &["files", "stale"]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    let results = results_of(&out);
    assert_eq!(results[1].0, "failed", "{out}");
    assert!(
        results[1].1.contains("changed in the editor"),
        "the model is told to read again: {}",
        results[1].1
    );
    assert_eq!(out["writes"], json!([]), "nothing was written");
    assert_eq!(sb.read("notes.txt"), "saved text on disk\n");
}

/// A provider's refusal ends the prompt with the `refusal` stop reason, after what it said.
#[test]
fn acp_refusal_ends_with_the_refusal_stop_reason() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![Reply::refusal("I can't help with that.")],
    );
    let out = client(&sb, &["turn"]);
    assert_eq!(out["prompt"]["stopReason"], "refusal", "{out}");
    assert_eq!(
        text_of(&out, "agent_message_chunk"),
        "I can't help with that."
    );
}

/// A read, then a write that asks: the script of the TypeScript client's turns.
fn read_then_write_script() -> Vec<Reply> {
    let mut script =
        vec![Reply::tool_call("read_file", json!({"path": "notes.txt"})).with_text("Let me look.")];
    script.extend(write_script());
    script
}

/// The last `tool_call_update` for the call with this id.
fn last_update_of<'a>(out: &'a Value, call: &Value) -> &'a Value {
    updates_of(out, "tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == call["toolCallId"])
        .unwrap_or_else(|| panic!("no update for {call}"))
}

/// The official TypeScript SDK's client, in agent mode: the read streams as a tool call with its
/// input and its result, the write asks and, allowed, lands on disk, and the turn ends.
#[test]
fn acp_typescript_client_reads_then_writes_when_allowed() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, read_then_write_script());
    sb.write("notes.txt", "hello from the notes\n");
    let out = sdk_client(&sb, Sdk::TypeScript, &["permission", "allow"], &[]);

    assert_eq!(out["initialize"]["agentInfo"]["name"], "cairn", "{out}");
    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    assert_eq!(text_of(&out, "agent_message_chunk"), "Let me look.Done.");
    let calls = updates_of(&out, "tool_call");
    assert_eq!(calls.len(), 2, "{out}");
    let (read, write) = (calls[0], calls[1]);
    assert_eq!(read["title"], "read_file");
    assert_eq!(read["kind"], "read");
    assert_eq!(read["rawInput"], json!({"path": "notes.txt"}));
    let read_done = last_update_of(&out, read);
    assert_eq!(read_done["status"], "completed", "{out}");
    assert!(
        read_done["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("hello from the notes"),
        "{read_done}"
    );
    assert_eq!(write["title"], "write_file");
    assert_eq!(
        write["rawInput"],
        json!({"path": "out.txt", "content": "written by cairn\n"})
    );
    let write_done = last_update_of(&out, write);
    assert_eq!(write_done["status"], "completed", "{out}");
    assert!(
        write_done["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("out.txt"),
        "{write_done}"
    );

    let asked = out["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "only the write asks: {out}");
    assert_eq!(asked[0]["sessionId"], out["session"]["sessionId"]);
    assert_eq!(asked[0]["toolCall"]["toolCallId"], write["toolCallId"]);
    assert_eq!(sb.read("out.txt"), "written by cairn\n");
}

/// The TypeScript client rejects the write: the call fails, the file is as it was, and the turn
/// still ends normally.
#[test]
fn acp_typescript_client_rejected_write_leaves_the_file() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, read_then_write_script());
    sb.write("notes.txt", "hello from the notes\n");
    sb.write("out.txt", "original\n");
    let out = sdk_client(&sb, Sdk::TypeScript, &["permission", "reject"], &[]);

    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    assert_eq!(out["permissions"].as_array().unwrap().len(), 1, "{out}");
    let calls = updates_of(&out, "tool_call");
    assert_eq!(calls.len(), 2, "{out}");
    assert_eq!(last_update_of(&out, calls[0])["status"], "completed");
    assert_eq!(last_update_of(&out, calls[1])["status"], "failed", "{out}");
    assert_eq!(sb.read("out.txt"), "original\n");
}

/// `session/cancel` stops the streaming answer and the prompt returns `cancelled`.
#[test]
fn acp_cancel_stops_the_turn() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::stall("I am thinking")]);
    let out = client(&sb, &["cancel"]);
    assert_eq!(out["prompt"]["stopReason"], "cancelled");
    // The client cancels at the first chunk; words stream one at a time, so only the first
    // is sure to have been sent.
    let streamed = text_of(&out, "agent_message_chunk");
    assert!(streamed.starts_with("I "), "{streamed}");
    assert_model_request_aborted(&sb);
}

/// A protected path is asked about by name with "allow once" and "reject" only; allowed, that
/// call reads it.
#[test]
fn acp_protected_path_is_offered_allow_once_only() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": ".env"})),
            Reply::text("Read it."),
        ],
    );
    sb.write(".env", "TOKEN=visible-after-approval\n");
    let out = client(&sb, &["turn", "allow"]);
    let asked = out["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{out}");
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "reject_once"]);
    assert!(
        asked[0]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains(".env"),
        "{asked:?}"
    );
    let last = *updates_of(&out, "tool_call_update").last().unwrap();
    assert_eq!(last["status"], "completed", "{out}");
    assert!(last.to_string().contains("visible-after-approval"));
}

/// At the tool-call cap the turn ends with `max_turn_requests`.
#[test]
fn acp_tool_call_cap_ends_with_max_turn_requests() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("list_directory", json!({})),
            Reply::tool_call("list_directory", json!({})),
            Reply::tool_call("list_directory", json!({})),
            Reply::text("never sent"),
        ],
    );
    let out = client_env(&sb, &["turn"], &[("CAIRN_AGENT__MAX_TOOL_CALLS", "2")]);
    assert_eq!(out["prompt"]["stopReason"], "max_turn_requests", "{out}");
    let completed = updates_of(&out, "tool_call_update")
        .iter()
        .filter(|u| u["status"] == "completed")
        .count();
    assert_eq!(completed, 2);
}

/// A client that never answers a permission request holds only that turn: another session is
/// made meanwhile, and a cancel ends the turn with the write not run.
#[test]
fn acp_unanswered_permission_waits_without_blocking_and_cancel_ends_it() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, write_script());
    let out = client(&sb, &["hold"]);
    assert!(out["other"]["sessionId"].is_string(), "{out}");
    assert_ne!(out["other"]["sessionId"], out["session"]["sessionId"]);
    assert_eq!(out["prompt"]["stopReason"], "cancelled", "{out}");
    assert!(!sb.ws().join("out.txt").exists());
}

/// The MCP servers a client gives `session/new` join that session's tools: a real PyPI server
/// (mcp-server-time) is started and its tool is called under the same policy.
#[test]
fn acp_client_mcp_server_serves_the_session() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("time__get_current_time", json!({"timezone": "UTC"})),
            Reply::text("It is now."),
        ],
    );
    let out = client(&sb, &["mcp"]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    let call = updates_of(&out, "tool_call")[0];
    assert_eq!(call["title"], "time__get_current_time");
    let last = *updates_of(&out, "tool_call_update").last().unwrap();
    assert_eq!(last["status"], "completed", "{out}");
    let text = last["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("UTC") && text.contains("datetime"), "{text}");
}

/// The MCP prompts of a client's server (server-everything, from npm) are the session's
/// commands: listed after `session/new` and `session/load` with their arguments as the hint,
/// and a `/args-prompt city=Paris` prompt reaches the model as the prompt's text; an unknown
/// command and a missing argument end the prompt with an error naming them.
#[test]
fn acp_mcp_prompts_are_commands_expanded_before_the_turn() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("Sunny.")]);
    let out = client(&sb, &["commands"]);

    // After session/new (again if the server came up after the first list, on a loaded
    // machine) and after session/load.
    let lists = updates_of(&out, "available_commands_update");
    assert!(
        lists.len() >= 2,
        "after session/new and session/load: {out}"
    );
    let has_prompts = |l: &Value| {
        l["availableCommands"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "args-prompt"))
    };
    let first = lists
        .iter()
        .position(|l| has_prompts(l))
        .unwrap_or_else(|| panic!("no list has the server's prompts: {out}"));
    let commands = lists[first]["availableCommands"].as_array().unwrap();
    let args = commands
        .iter()
        .find(|c| c["name"] == "args-prompt")
        .unwrap_or_else(|| panic!("{commands:?}"));
    assert!(
        args["description"]
            .as_str()
            .unwrap()
            .contains("A prompt with two arguments"),
        "{args}"
    );
    assert_eq!(args["input"]["hint"], "city=… [state=…]");
    let simple = commands.iter().find(|c| c["name"] == "simple-prompt");
    assert!(
        simple.is_some_and(|c| c.get("input").is_none()),
        "{commands:?}"
    );
    assert_eq!(
        lists[lists.len() - 1]["availableCommands"],
        lists[first]["availableCommands"],
        "the loaded session lists the same commands"
    );

    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    // The answer, then its replay when the session is loaded; the stored message is the
    // prompt's text, as the model saw it.
    assert_eq!(text_of(&out, "agent_message_chunk"), "Sunny.Sunny.");
    assert_eq!(
        text_of(&out, "user_message_chunk"),
        "What's weather in Paris?"
    );
    let requests = sb.model.requests();
    assert_eq!(
        requests.len(),
        1,
        "the refused prompts never reach the model"
    );
    let sent = requests[0].body["messages"].to_string();
    assert!(sent.contains("What's weather in Paris?"), "{sent}");
    assert!(!sent.contains("/args-prompt"), "{sent}");

    let errors = out["errors"].as_array().unwrap();
    assert_eq!(errors[0]["code"], -32602, "{errors:?}");
    assert!(
        errors[0]["data"]
            .as_str()
            .unwrap()
            .starts_with("no prompt `/nope`"),
        "{errors:?}"
    );
    assert_eq!(errors[1]["code"], -32602, "{errors:?}");
    assert!(
        errors[1]["data"]
            .as_str()
            .unwrap()
            .contains("needs the argument `city`"),
        "{errors:?}"
    );
}

/// Raw frames: a request before `initialize`, a line that is not JSON, an unknown method and
/// wrong params each get a JSON-RPC error (the params one naming the field), and the agent keeps
/// serving.
#[test]
fn acp_bad_input_gets_errors_and_the_agent_keeps_serving() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let mut raw = Raw::spawn(&sb);
    let ws = sb.ws().display().to_string();

    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
        "params": {"cwd": ws, "mcpServers": []}}));
    let early = raw.reply(1);
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(early["error"].to_string().contains("initializ"), "{early}");

    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {"protocolVersion": 1}}));
    assert_eq!(raw.reply(2)["result"]["protocolVersion"], 1);

    // A line that is not JSON costs one parse error, nothing more.
    raw.send_line("{this is not json");
    let parse = raw.next(|v| v["id"].is_null());
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/frobnicate", "params": {}}));
    assert_eq!(raw.reply(3)["error"]["code"], -32601);

    raw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "session/new",
        "params": {"mcpServers": []}}));
    let missing = raw.reply(4);
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(missing["error"].to_string().contains("cwd"), "{missing}");

    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "session/new",
        "params": {"cwd": "relative/dir", "mcpServers": []}}));
    let relative = raw.reply(5);
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    assert!(relative["error"].to_string().contains("cwd"), "{relative}");

    raw.send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "session/prompt",
        "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}}),
    );
    let unknown = raw.reply(6);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"].to_string().contains("sessionId"),
        "{unknown}"
    );

    raw.send(json!({"jsonrpc": "2.0", "id": 7, "method": "session/new",
        "params": {"cwd": ws, "mcpServers": []}}));
    let made = raw.reply(7);
    assert!(made["result"]["sessionId"].is_string(), "{made}");

    let status = raw.close();
    assert!(
        status.is_some_and(|s| s.success()),
        "the agent exits when the client closes stdin"
    );
}

/// `cairn acp` spoken to in raw newline-delimited JSON-RPC frames.
pub(crate) struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    rx: std::sync::mpsc::Receiver<Value>,
}

impl Raw {
    pub(crate) fn spawn(sb: &Sandbox) -> Raw {
        let mut child = sb
            .command()
            .arg("acp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        Raw { child, stdin, rx }
    }

    pub(crate) fn send(&mut self, v: Value) {
        self.send_line(&v.to_string());
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message that satisfies `want`, skipping others.
    pub(crate) fn next(&self, want: impl Fn(&Value) -> bool) -> Value {
        loop {
            let v = self
                .rx
                .recv_timeout(TIMEOUT)
                .expect("a message from the agent");
            if want(&v) {
                return v;
            }
        }
    }

    pub(crate) fn reply(&self, id: i64) -> Value {
        self.next(|v| v["id"] == id && v.get("method").is_none())
    }

    /// Closes the agent's stdin, as a client that goes away does, and waits for it to exit.
    pub(crate) fn close(&mut self) -> Option<std::process::ExitStatus> {
        self.stdin = None;
        crate::support::wait_exit(&mut self.child, TIMEOUT)
    }
}

/// A client that goes away mid-turn: the agent stops the turn (the model request is dropped)
/// and exits.
#[test]
fn acp_client_gone_mid_turn_ends_the_agent() {
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::stall("I am thinking")]);
    let mut raw = Raw::spawn(&sb);
    let ws = sb.ws().display().to_string();
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1}}));
    raw.reply(1);
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": ws, "mcpServers": []}}));
    let sid = raw.reply(2)["result"]["sessionId"].clone();
    raw.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "think"}]}}),
    );
    // The session's commands (`/rewind`) come first; then the answer starts.
    let update = raw.next(|v| {
        v["method"] == "session/update"
            && v["params"]["update"]["sessionUpdate"] != "available_commands_update"
    });
    assert_eq!(
        update["params"]["update"]["sessionUpdate"],
        "agent_message_chunk"
    );
    let status = raw.close();
    assert!(status.is_some_and(|s| s.success()), "the agent exits");
    assert_model_request_aborted(&sb);
}

/// The plan the model keeps arrives as ACP `plan` updates, and a sub-agent's calls as tool calls
/// of their own under the task's id.
#[test]
fn acp_shows_the_plan_and_a_sub_agents_calls() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "plan",
                json!({"steps": [{"title": "Read the notes", "state": "inProgress"}, {"title": "Answer", "state": "pending"}]}),
            ),
            Reply::tool_call(
                "task",
                json!({"description": "read", "prompt": "Read notes.txt and quote it.", "tools": ["read_file"]}),
            )
            .with_call_id("task1"),
            Reply::tool_call("read_file", json!({"path": "notes.txt"})).with_call_id("r1"),
            Reply::text("It says hello."),
            Reply::text("The notes say hello."),
        ],
    );
    sb.write("notes.txt", "hello\n");
    let out = client(&sb, &["turn"]);
    let plans = updates_of(&out, "plan");
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0]["entries"][0]["content"], "Read the notes");
    assert_eq!(plans[0]["entries"][0]["status"], "in_progress");
    assert_eq!(plans[0]["entries"][1]["status"], "pending");
    let calls: Vec<(&str, &str)> = updates_of(&out, "tool_call")
        .iter()
        .map(|u| {
            (
                u["toolCallId"].as_str().unwrap(),
                u["title"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        calls.contains(&("task1/r1", "task: read_file")),
        "{calls:?}"
    );
    assert!(text_of(&out, "agent_message_chunk").contains("The notes say hello."));
    assert!(
        !text_of(&out, "agent_message_chunk").contains("It says hello."),
        "the sub-agent's text stays inside it"
    );
}

/// An ACP client cannot send its diagnostics: `get_diagnostics` says so, and the turn goes on.
#[test]
fn acp_get_diagnostics_says_the_client_does_not_send_them() {
    if !peer_tests() {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("get_diagnostics", json!({})),
            Reply::text("No diagnostics here."),
        ],
    );
    sb.write("notes.txt", "saved text on disk\n");
    let out = client_env(&sb, &["files"], &[("CAIRN_SELECTION__ENABLED", "false")]);
    assert_eq!(out["prompt"]["stopReason"], "end_turn", "{out}");
    let results = results_of(&out);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].0, "failed", "{out}");
    assert!(
        results[0]
            .1
            .contains("this editor does not send its diagnostics to cairn"),
        "{}",
        results[0].1
    );
    assert!(
        tool_results_of_last_request(&sb)[0].contains("this editor does not send"),
        "the model read it"
    );
}

fn tool_results_of_last_request(sb: &Sandbox) -> Vec<String> {
    let requests = sb.model.requests();
    crate::support::tool_results(&requests.last().unwrap().body)
}

/// A client that offers `fs/*` is never sent `fs/write_text_file` (nor `fs/read_text_file`) for
/// a path outside the workspace, whether named with `..` or through a symlink inside, nor for a
/// protected path the user did not approve. Writes are allowed by the policy, and an edit of a
/// workspace file does reach the client, so only the checks stand in the way; the model reads
/// why each call failed.
#[test]
fn acp_client_is_never_asked_to_write_outside_or_a_protected_path() {
    let edit = |path: &str| {
        Reply::tool_call(
            "edit_file",
            json!({"path": path, "old_string": "old", "new_string": "new"}),
        )
    };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            edit("notes.txt"),
            edit("../outside.txt"),
            Reply::tool_call(
                "write_file",
                json!({"path": "../outside.txt", "content": "new\n"}),
            ),
            edit("link.txt"),
            edit(".env"),
            Reply::text("Done."),
        ],
    );
    sb.user_config("[policy.effects]\nwrite = \"allow\"\n");
    sb.write("notes.txt", "old notes\n");
    sb.write(".env", "TOKEN=old\n");
    let outside = sb.dir.path().join("outside.txt");
    std::fs::write(&outside, "old outside\n").unwrap();
    std::os::unix::fs::symlink(&outside, sb.ws().join("link.txt")).unwrap();

    let mut raw = Raw::spawn(&sb);
    let ws = sb.ws().display().to_string();
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities":
            {"fs": {"readTextFile": true, "writeTextFile": true}}}}));
    raw.reply(1);
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": ws, "mcpServers": []}}));
    let session = raw.reply(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    raw.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode",
        "params": {"sessionId": session, "modeId": "agent"}}),
    );
    raw.reply(3);
    raw.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "edit them"}]}}),
    );

    // Play the client: files from disk, writes recorded (not applied), permissions rejected.
    let (mut reads, mut writes, mut asked) = (Vec::new(), Vec::new(), Vec::new());
    let answer = loop {
        let v = raw.next(|_| true);
        let id = v["id"].clone();
        match v["method"].as_str() {
            Some("fs/read_text_file") => {
                let path = v["params"]["path"].as_str().unwrap().to_string();
                let content = std::fs::read_to_string(&path).unwrap();
                reads.push(path);
                raw.send(json!({"jsonrpc": "2.0", "id": id, "result": {"content": content}}));
            }
            Some("fs/write_text_file") => {
                writes.push(v["params"]["path"].as_str().unwrap().to_string());
                raw.send(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
            }
            Some("session/request_permission") => {
                asked.push(v["params"]["toolCall"]["title"].to_string());
                raw.send(json!({"jsonrpc": "2.0", "id": id, "result":
                    {"outcome": {"outcome": "selected", "optionId": "reject"}}}));
            }
            Some(_) => {}
            None if id == 4 => break v,
            None => {}
        }
    };
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let notes = sb.ws().join("notes.txt").display().to_string();
    // Only the workspace file reached the client; nothing outside or protected was even read.
    assert_eq!(writes, std::slice::from_ref(&notes), "{writes:?}");
    assert!(reads.iter().all(|r| *r == notes), "{reads:?}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains(".env"), "{asked:?}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "old outside\n");
    assert_eq!(sb.read(".env"), "TOKEN=old\n");
    // The model read why each refused call failed.
    let results = tool_results_of_last_request(&sb);
    assert_eq!(results.len(), 5, "{results:?}");
    for refused in &results[1..4] {
        assert!(refused.contains("outside the workspace"), "{results:?}");
    }
    assert!(
        results[4].contains("refused to write `.env`: it is protected"),
        "{results:?}"
    );
    raw.close();
}
