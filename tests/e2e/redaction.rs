//! Redaction end to end: a vault value, its base64 form and a credential pattern in a workspace
//! file never reach the model; `[REDACTED:…]` markers do.

use std::process::Stdio;

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{Sandbox, text, vault_set};

const VALUE: &str = "Tr0ub4dor-e2e-vault-value";
const VALUE_BASE64: &str = "VHIwdWI0ZG9yLWUyZS12YXVsdC12YWx1ZQ==";
const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";

#[test]
fn vault_values_and_credential_patterns_do_not_reach_the_model() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text("The notes hold credentials."),
        ],
    );
    vault_set(&sb, "deploy_token", "example.com", VALUE);

    sb.write(
        "notes.txt",
        &format!("deploy with {VALUE}\nbackup copy {VALUE_BASE64}\naws id {AWS_KEY_ID}\n"),
    );
    let ws = sb.ws();
    let out = sb
        .command()
        .args([
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "what is in notes.txt?",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "The notes hold credentials.");

    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2, "one request per step");
    for r in &requests {
        let body = r.body.to_string();
        for leak in [
            VALUE,
            VALUE_BASE64,
            VALUE_BASE64.trim_end_matches('='),
            AWS_KEY_ID,
        ] {
            assert!(!body.contains(leak), "{leak} reached the model: {body}");
        }
    }
    let after_read = requests[1].body.to_string();
    assert!(
        after_read.contains("deploy with [REDACTED:deploy_token]")
            && after_read.contains("backup copy [REDACTED:deploy_token]")
            && after_read.contains("aws id [REDACTED:aws-access-key-id]"),
        "{after_read}"
    );
}

/// SECURITY.md D2 in the editor: a tool result carrying a vault value and a model answer
/// carrying a credential pattern reach the editor redacted; no message the server sends (run
/// events, status, questions) holds either.
#[test]
fn the_editor_is_shown_redacted_results_and_answers() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text(format!("The key id is {AWS_KEY_ID}.")),
        ],
    );
    vault_set(&sb, "deploy_token", "example.com", VALUE);
    sb.write("notes.txt", &format!("deploy with {VALUE}\n"));
    let mut ed = crate::support::Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "what is in notes.txt?"}));
    let events = ed.finish(&run);
    let result = events
        .iter()
        .find(|e| e["kind"] == "toolResult")
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(
        result.contains("deploy with [REDACTED:deploy_token]"),
        "{result}"
    );
    let answer: String = events
        .iter()
        .filter(|e| e["kind"] == "text")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(answer, "The key id is [REDACTED:aws-access-key-id].");
    let everything = serde_json::to_string(&ed.all).unwrap();
    for leak in [VALUE, VALUE_BASE64, AWS_KEY_ID] {
        assert!(!everything.contains(leak), "{leak} reached the editor");
    }
}
