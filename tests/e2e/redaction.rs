//! Redaction end to end: a vault value, its base64 form and a credential pattern in a workspace
//! file never reach the model; `[REDACTED:…]` markers do.

use std::io::Write;
use std::process::Stdio;

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{Sandbox, text};

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
    let mut child = sb
        .command()
        .args(["vault", "set", "deploy_token", "--host", "example.com"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{VALUE}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));

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
