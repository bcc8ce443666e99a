//! The database tools through the real binary: `[db.NAME]` from the user's config, a password
//! from the vault bound to the database's host, a repository that may not declare databases,
//! and no password in anything the model receives.

use std::process::Stdio;

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Sandbox, text, vault_set};

fn call(sb: &Sandbox, tool: &str, args: Value) -> Value {
    let ws = sb.ws();
    let out = sb.run(
        &[
            "tools",
            "call",
            tool,
            "--args",
            &args.to_string(),
            "--json",
            "--yes",
            "-w",
            ws.to_str().unwrap(),
        ],
        &[],
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{tool}: {}", text(&out.stderr)))
}

fn said(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A SQLite file of the workspace, declared in the user's config: a CSV imported into a new
/// table, then queried.
#[test]
fn a_sqlite_database_from_the_user_config_is_served() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.user_config("[db.shop]\nurl = \"sqlite:shop.db\"\n");
    // An empty file is an empty SQLite database; cairn never creates one.
    sb.write("shop.db", "");
    sb.write("people.csv", "id,name\n1,Ada\n2,Grace\n");
    let listed = call(&sb, "db_connections", json!({}));
    assert_eq!(
        said(&listed),
        "- shop: SQLite at sqlite:shop.db (statements time out after 30 s)"
    );
    let imported = call(
        &sb,
        "db_import",
        json!({"connection": "shop", "path": "people.csv", "table": "people", "create": true}),
    );
    assert_eq!(
        said(&imported),
        "imported 2 rows from people.csv into `people` on `shop`"
    );
    let q = call(
        &sb,
        "db_query",
        json!({"connection": "shop", "sql": "SELECT name FROM people ORDER BY id DESC"}),
    );
    assert_eq!(q["isError"], false, "{q}");
    assert_eq!(q["structuredContent"]["rows"], json!([["Grace"], ["Ada"]]));
}

/// A repository's `.cairn/config.toml` may not declare a database: it would be opened with the
/// user's credentials. Nothing is served, and the refusal says why.
#[test]
fn a_repository_cannot_declare_databases() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write(
        ".cairn/config.toml",
        "[db.prod]\nurl = \"postgres://app@db.example/prod\"\npassword = \"secret:pg\"\n",
    );
    let ws = sb.ws();
    let out = sb.run(
        &[
            "tools",
            "call",
            "db_connections",
            "-w",
            ws.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("`db`") && err.contains("your own config"),
        "{err}"
    );
}

/// PostgreSQL with the password in the vault, bound to the database's host: the tools connect,
/// and no model request of a whole run holds the password.
#[test]
fn postgres_with_a_vault_password_never_shows_it_to_the_model() {
    if !cairn_test_support::gate::gate(
        "CAIRN_DB_TESTS",
        "and CAIRN_PG_TEST_URL / CAIRN_PG_TEST_PASSWORD (eval \"$(scripts/test-databases)\")",
    ) {
        return;
    }
    let url = std::env::var("CAIRN_PG_TEST_URL").unwrap();
    let password = std::env::var("CAIRN_PG_TEST_PASSWORD").unwrap();
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("db_connections", json!({})),
            Reply::tool_call(
                "db_query",
                json!({"connection": "pg", "sql": "SELECT current_user AS who"}),
            ),
            Reply::text("done"),
        ],
    );
    vault_set(&sb, "pg", "127.0.0.1", &password);
    sb.user_config(&format!(
        "[db.pg]\nurl = \"{url}\"\npassword = \"secret:pg\"\n"
    ));
    let ws = sb.ws();
    let out = sb
        .command()
        .args([
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "who am I in the database?",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3);
    let sent: String = requests.iter().map(|r| r.body.to_string()).collect();
    assert!(sent.contains("| cairn |"), "the query ran: {sent}");
    assert!(!sent.contains(&password), "the password reached the model");
    assert!(!text(&out.stdout).contains(&password));
    assert!(!text(&out.stderr).contains(&password));
}
