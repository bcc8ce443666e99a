//! The DevOps and system tools through the real binary: what reaches the engine and the host
//! only with the user's say, and what never leaves it.

use std::process::{Command, Output, Stdio};

use cairn_test_support::Format;
use serde_json::{Value, json};

use crate::support::Sandbox;

fn call(sb: &Sandbox, tool: &str, args: Value) -> Output {
    sb.call_yes(tool, &args)
}

fn docker(args: &[&str]) -> Output {
    Command::new("docker").args(args).output().unwrap()
}

/// Removes the container when the test ends, however it ends.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.0]);
    }
}

/// `--yes` approves what the policy asks about, never the strict question: a container cairn did
/// not create is not removed, and it keeps running.
#[test]
fn a_container_cairn_did_not_create_is_not_removed_under_yes() {
    if !crate::sandbox::enabled() {
        return;
    }
    let image = std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".into());
    let name = format!("cairn-e2e-foreign-{}", std::process::id());
    let started = docker(&["run", "-d", "--name", &name, &image, "sleep", "300"]);
    assert!(started.status.success(), "{started:?}");
    let _guard = Container(name.clone());

    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let o = call(&sb, "docker_remove", json!({"name": name, "force": true}));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stdout}");
    assert!(stdout.contains("not created by cairn"), "{stdout}");
    assert!(stderr.contains("--yes does not approve"), "{stderr}");
    let state = docker(&["inspect", "-f", "{{.State.Running}}", &name]);
    assert_eq!(String::from_utf8_lossy(&state.stdout).trim(), "true");
}

/// The process that runs cairn (here, this test) is never signalled, even under `--yes`: the
/// refusal names why, and this test is still alive to read it.
#[test]
fn cairn_never_signals_its_own_parent() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let me = std::process::id();
    let o = call(&sb, "process_signal", json!({"pid": me, "signal": "KILL"}));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{stdout}");
    assert!(stdout.contains("is a parent of cairn"), "{stdout}");
    let o = call(&sb, "process_signal", json!({"pid": 1, "signal": "TERM"}));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("pid 1 is the init process"), "{stdout}");
}

/// An environment value is shown only when the user's config lists its name, and a secret-looking
/// one never, even when listed; a token on a process's command line comes back redacted.
#[test]
fn environment_values_and_command_lines_keep_their_secrets() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.user_config("[system]\nenv_values = [\"CAIRN_E2E_COLOR\", \"CAIRN_E2E_TOKEN\"]\n");
    let token = "ghp_e2eR3dactMe0123456789abcdefABCDEF0123";
    let ws = sb.ws();
    let o = sb
        .command()
        .args([
            "tools",
            "call",
            "-w",
            ws.to_str().unwrap(),
            "env_vars",
            "--args",
        ])
        .arg(json!({"filter": "CAIRN_E2E"}).to_string())
        .env("CAIRN_E2E_COLOR", "teal")
        .env("CAIRN_E2E_TOKEN", token)
        .env("CAIRN_E2E_OTHER", "unlisted-value")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(stdout.contains("teal"), "{stdout}");
    assert!(stdout.contains("CAIRN_E2E_TOKEN"), "{stdout}");
    assert!(!stdout.contains(token), "{stdout}");
    assert!(stdout.contains("CAIRN_E2E_OTHER"), "{stdout}");
    assert!(!stdout.contains("unlisted-value"), "{stdout}");

    // A child with the token on its command line: listed, the token redacted.
    // A shell whose `$0` is the token, as a process started with one in its argv.
    let child = Command::new("sh")
        .args(["-c", "sleep 30; :", &format!("--token={token}")])
        .spawn();
    let mut child = child.unwrap();
    let o = call(&sb, "process_details", json!({"pid": child.id()}));
    let _ = child.kill();
    let _ = child.wait();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(stdout.contains("--token="), "{stdout}");
    assert!(!stdout.contains(token), "{stdout}");
}
