//! Secret handles end to end: `secret:NAME` in an MCP server's `headers` reaches a loopback
//! server only when the secret is bound to its host; in a stdio server's `env` it is bound to
//! `localhost`; and vault values and credential patterns never reach a log line or
//! `cairn mcp status`.

use std::process::{Output, Stdio};

use cairn_test_support::Format;

use crate::support::{HttpStub, Sandbox, StubReply, text, vault_set};

const VALUE: &str = "Bearer e2e-handle-value-7f3a9c";
const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";

/// A loopback HTTP listener that records the head of every request and answers 500.
fn recording_server() -> HttpStub {
    HttpStub::start(|_| StubReply::Status(500, vec![], String::new()))
}

fn status(sb: &Sandbox) -> Output {
    let ws = sb.ws();
    sb.command()
        .args(["mcp", "status", "-w", ws.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn http_config(port: u16) -> String {
    format!(
        "[mcp]\nhandshake_timeout_secs = 3\n[mcp.servers.remote]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"secret:tok\" }}\n"
    )
}

#[test]
fn a_header_handle_reaches_only_a_bound_host() {
    let server = recording_server();
    let port = server.port;
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    vault_set(&sb, "tok", "127.0.0.1", VALUE);
    sb.user_config(&http_config(port));
    let out = status(&sb);
    let requests = server.heads();
    assert!(!requests.is_empty(), "the server was not contacted");
    for r in &requests {
        let lower = r.to_ascii_lowercase();
        assert!(
            lower.contains(&format!("authorization: {}", VALUE.to_ascii_lowercase())),
            "{r}"
        );
        assert!(!r.contains("secret:tok"), "{r}");
    }
    for shown in [text(&out.stdout), text(&out.stderr)] {
        assert!(!shown.contains("e2e-handle-value"), "{shown}");
    }
}

#[test]
fn a_header_handle_for_another_host_is_refused_before_connecting() {
    let server = recording_server();
    let port = server.port;
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    vault_set(&sb, "tok", "mcp.example.com", VALUE);
    sb.user_config(&http_config(port));
    let out = status(&sb);
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("remote"), "{stdout}");
    assert!(stdout.contains("not started"), "{stdout}");
    assert!(stdout.contains("may not be sent to 127.0.0.1"), "{stdout}");
    assert!(
        stdout.contains("cairn vault set tok --host 127.0.0.1"),
        "{stdout}"
    );
    assert!(server.heads().is_empty(), "the server was contacted");
    for shown in [stdout, text(&out.stderr)] {
        assert!(!shown.contains("e2e-handle-value"), "{shown}");
    }
}

#[test]
fn a_missing_secret_names_the_command_that_adds_it() {
    let server = recording_server();
    let port = server.port;
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.user_config(&http_config(port));
    let out = status(&sb);
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("cairn vault set tok --host 127.0.0.1"),
        "{stdout}"
    );
    assert!(server.heads().is_empty(), "the server was contacted");
}

/// A stdio server gets a `localhost` secret in its env; it echoes it (and an AWS key id) to
/// stderr, which cairn logs: the log and the status show markers, never the values.
#[test]
fn env_handles_are_local_and_logs_are_redacted() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    vault_set(&sb, "tok", "localhost", VALUE);
    sb.user_config(&format!(
        "[mcp]\nhandshake_timeout_secs = 3\n[mcp.servers.leaky]\ncommand = \"sh\"\nargs = [\"-c\", \"echo \\\"got $TOKEN and {AWS_KEY_ID}\\\" >&2; sleep 1\"]\nenv = {{ TOKEN = \"secret:tok\" }}\n"
    ));
    let ws = sb.ws();
    let out = sb
        .command()
        .env("CAIRN_LOG", "cairn=debug,cairn_mcp=debug,warn")
        .args(["mcp", "status", "-w", ws.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert!(
        stderr.contains("got [REDACTED"),
        "the line was not logged: {stderr}"
    );
    for shown in [&stderr, &stdout] {
        assert!(!shown.contains("e2e-handle-value"), "{shown}");
        assert!(!shown.contains(AWS_KEY_ID), "{shown}");
        assert!(!shown.contains("secret:tok"), "{shown}");
    }

    // Bound elsewhere, the handle is refused and the process is not started with it.
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    vault_set(&sb, "tok", "api.example.com", VALUE);
    sb.user_config(
        "[mcp.servers.leaky]\ncommand = \"sh\"\nargs = [\"-c\", \"echo \\\"got $TOKEN\\\" >&2\"]\nenv = { TOKEN = \"secret:tok\" }\n",
    );
    let out = status(&sb);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("may not be sent to localhost"), "{stdout}");
    assert!(!text(&out.stderr).contains("got "), "{}", text(&out.stderr));
}

/// With no key in the environment, the provider key is the vault secret `openai`, sent only
/// to a host it is bound to.
#[test]
fn the_provider_key_comes_from_the_vault_for_its_host() {
    use cairn_test_support::Reply;

    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("hi"), Reply::text("hi")]);
    vault_set(&sb, "openai", "127.0.0.1", "sk-e2e-vault-provider-key");
    let ws = sb.ws();
    let chat = || {
        sb.command()
            .args(["chat", "-w", ws.to_str().unwrap(), "--yes", "hello"])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = chat();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = sb.model.requests();
    assert_eq!(
        requests[0].headers.get("authorization").map(String::as_str),
        Some("Bearer sk-e2e-vault-provider-key")
    );
    assert!(!text(&out.stderr).contains("sk-e2e-vault-provider-key"));

    // Bound elsewhere: loopback needs no key, and none is sent.
    vault_set(&sb, "openai", "api.openai.com", "sk-e2e-vault-provider-key");
    let out = chat();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].headers.get("authorization"), None);
}
