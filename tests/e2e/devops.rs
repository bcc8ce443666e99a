//! The DevOps and system tools through the real binary: what reaches the engine and the host
//! only with the user's say, and what never leaves it.

use std::process::{Command, Output, Stdio};

use cairn_test_support::Format;
use serde_json::{Value, json};

use crate::support::Sandbox;

fn call(sb: &Sandbox, tool: &str, args: Value) -> Output {
    let ws = sb.ws();
    sb.command()
        .args(["tools", "call", "-w", ws.to_str().unwrap(), tool, "--yes", "--args"])
        .arg(args.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap()
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
    let image =
        std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".into());
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
