//! The code tools as the model and the agent see them, without a container engine: the set,
//! the refusal of arguments the schema does not allow, and the protected paths a call is asked
//! about before it runs. (`attacks.rs` runs them against a real engine.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use cairn_agent::tools::{ToolHost, protected_of};
use cairn_config::SandboxConfig;
use cairn_config::access::AccessRules;
use cairn_sandbox::Sandbox;
use cairn_sandbox::runtimes::RUNTIMES;
use cairn_sandbox::tools::{CODE_TOOLS, Code, code_tools};
use cairn_test_support::tools::text_of as text;
use cairn_toolkit::{Entry, ToolSet};
use cairn_workspace::{ExactApprovals, Operation, Workspace};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// A service whose engine never answers: a call that reached it would say so.
fn no_engine() -> Arc<Sandbox> {
    Sandbox::new(SandboxConfig {
        engine: Some("unix:///nonexistent/docker.sock".into()),
        ..SandboxConfig::default()
    })
}

async fn call(tools: &ToolSet<Code>, name: &str, args: Value) -> CallToolResult {
    cairn_test_support::tools::call(tools, name, args)
        .await
        .result
}

#[test]
fn every_runtime_has_its_tool_and_every_run_may_ask_for_the_two_powers() {
    let tools = code_tools(no_engine(), None);
    let names: Vec<&str> = CODE_TOOLS.iter().map(Entry::name).collect();
    for rt in RUNTIMES {
        assert!(
            names.contains(&format!("run_{}", rt.name).as_str()),
            "{}",
            rt.name
        );
    }
    for info in tools.list() {
        let name = info.tool.name.to_string();
        assert_eq!(info.category, "code", "{name}");
        assert!(!info.agent_only, "{name}");
        let schema = Value::Object(info.tool.input_schema.as_ref().clone());
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
        if name.starts_with("run_") {
            for power in ["network", "workspace_write"] {
                assert_eq!(
                    schema["properties"][power]["type"], "boolean",
                    "{name}: {schema}"
                );
            }
        }
    }
}

#[tokio::test]
async fn knobs_the_model_invents_are_refused_by_every_tool_naming_them() {
    let tools = code_tools(no_engine(), None);
    for name in tools.names() {
        for (knob, value) in [
            ("image", json!("docker:dind")),
            ("privileged", json!(true)),
            ("binds", json!(["/:/host"])),
            ("network_mode", json!("host")),
            ("env", json!({"A": "1"})),
            ("user", json!("root")),
        ] {
            let r = call(&tools, name, json!({ knob: value })).await;
            let shown = text(&r);
            assert_eq!(r.is_error, Some(true), "{name} {knob}: {shown}");
            assert!(
                shown.contains(&format!("unknown field `{knob}`")),
                "{name} {knob}: {shown}"
            );
        }
    }
}

/// A workspace with the default access rules at `dir`, holding `files`.
fn workspace(dir: &Path, files: &[(&str, &str)], approvals: Arc<ExactApprovals>) -> Arc<Workspace> {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    Arc::new(
        Workspace::new(vec![dir.to_path_buf()])
            .unwrap()
            .with_access(
                |_| AccessRules::new("ada@example.com", None, None),
                approvals,
            ),
    )
}

#[tokio::test]
async fn protected_files_are_asked_about_before_the_call_runs() {
    let dir = tempfile::tempdir().unwrap();
    let approvals = ExactApprovals::new();
    let ws = workspace(
        dir.path(),
        &[
            ("scripts/.env.sh", "echo SECRET-in-env-sh\n"),
            (".env", "TOKEN=SECRET\n"),
        ],
        approvals.clone(),
    );
    let tools = code_tools(no_engine(), Some(ws));
    for (name, args, path, operation) in [
        (
            "run_file",
            json!({"path": "scripts/.env.sh"}),
            "scripts/.env.sh",
            "read",
        ),
        ("copy_into_sandbox", json!({"path": ".env"}), ".env", "read"),
        (
            "copy_out_of_sandbox",
            json!({"from": "/tmp/out.txt", "path": ".env.local"}),
            ".env.local",
            "write",
        ),
        (
            "copy_out_of_sandbox",
            json!({"from": "/tmp/hook", "path": ".githooks/pre-commit"}),
            ".githooks/pre-commit",
            "write",
        ),
    ] {
        let r = call(&tools, name, args).await;
        let shown = text(&r);
        assert_eq!(r.is_error, Some(true), "{name}: {shown}");
        assert!(
            shown.starts_with(&format!("refused to {operation} `{path}`: it is protected")),
            "{name}: {shown}"
        );
        // The agent asks the user about exactly this path, and nothing reached the engine.
        let asked = protected_of(&r);
        assert_eq!(asked.len(), 1, "{name}: {asked:?}");
        assert_eq!(asked[0].path, path, "{name}");
        assert_eq!(asked[0].operation, operation, "{name}");
        assert!(!shown.contains("container engine"), "{name}: {shown}");
    }

    // Approved (the gate holds the approval while the call runs), the call goes on, and only
    // the engine stops it here.
    let key = std::fs::canonicalize(dir.path().join("scripts/.env.sh")).unwrap();
    approvals.hold(&key, Operation::Read);
    let r = call(&tools, "run_file", json!({"path": "scripts/.env.sh"})).await;
    let shown = text(&r);
    assert!(protected_of(&r).is_empty(), "{shown}");
    assert!(shown.contains("no container engine answers"), "{shown}");
    approvals.release(&key, Operation::Read);

    // Code the model writes is not refused: the mount hides the protected files instead.
    let r = call(&tools, "run_bash", json!({"code": "cat /workspace/.env"})).await;
    assert!(protected_of(&r).is_empty(), "{}", text(&r));
    assert!(
        text(&r).contains("no container engine answers"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn the_workspace_tools_say_when_no_folder_is_open() {
    let tools = code_tools(no_engine(), None);
    for (name, args) in [
        ("run_file", json!({"path": "a.py"})),
        ("copy_into_sandbox", json!({"path": "a.txt"})),
        (
            "copy_out_of_sandbox",
            json!({"from": "/tmp/a", "path": "a.txt"}),
        ),
    ] {
        let r = call(&tools, name, args).await;
        assert_eq!(r.is_error, Some(true));
        assert!(
            text(&r).contains("no workspace is open"),
            "{name}: {}",
            text(&r)
        );
    }
    let r = call(&tools, "run_tests", json!({})).await;
    assert!(
        text(&r).contains("no workspace folder is open"),
        "{}",
        text(&r)
    );
}
