//! What the engine tests share: the tools over given connections, and a call as the model makes it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_db::{Db, DbSpec, PasswordSource, db_tools};
use cairn_toolkit::ToolSet;
use cairn_workspace::Workspace;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What the model sees of one call.
#[derive(Debug)]
pub struct Seen {
    pub is_error: bool,
    pub text: String,
    pub structured: Option<Value>,
}

pub fn spec(name: &str, url: &str, password: Option<&str>, timeout_secs: u64) -> DbSpec {
    DbSpec {
        name: name.into(),
        url: url.into(),
        password: password.map(str::to_owned),
        timeout: Duration::from_secs(timeout_secs),
    }
}

/// The tools over `specs`; the vault holds secrets `pg`, `my` and `redis` (for 127.0.0.1 only)
/// = `password`.
pub fn tools(specs: &[DbSpec], workspace: Option<&std::path::Path>, password: &str) -> ToolSet<Db> {
    let password = password.to_owned();
    let passwords: PasswordSource = Arc::new(move |name, host| match (name, host) {
        ("pg" | "my" | "redis", "127.0.0.1") => Ok(password.clone()),
        (name @ ("pg" | "my" | "redis"), other) => {
            Err(format!("secret `{name}` is not bound to {other}"))
        }
        (other, _) => Err(format!("no secret `{other}`")),
    });
    let ws = workspace.map(|w| Arc::new(Workspace::new(vec![w.to_path_buf()]).unwrap()));
    let (db, problems) = Db::new(specs, passwords, ws);
    assert!(problems.is_empty(), "{problems:?}");
    db_tools(db)
}

pub async fn call(tools: &ToolSet<Db>, name: &str, args: Value) -> Seen {
    call_with(tools, name, args, CancellationToken::new()).await
}

pub async fn call_with(
    tools: &ToolSet<Db>,
    name: &str,
    args: Value,
    cancel: CancellationToken,
) -> Seen {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let cx = CallContext {
        session_id: "s".into(),
        run_id: "r".into(),
        call_id: "c".into(),
        cancel,
    };
    let result = tokio::time::timeout(Duration::from_secs(60), tools.call(name, args, cx))
        .await
        .expect("the tool hung");
    Seen {
        is_error: result.is_error == Some(true),
        text: result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n"),
        structured: result.structured_content,
    }
}
