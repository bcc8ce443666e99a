//! The database tools through the real binary: `[db.NAME]` from the user's config, a password
//! from the vault bound to the database's host, a repository that may not declare databases,
//! and no password in anything the model receives.

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Sandbox, assert_absent, forms, text, vault_set};

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

/// The test databases `scripts/test-databases` starts.
struct Databases {
    pg: String,
    pg_password: String,
    my: String,
    redis: String,
}

/// The databases when `CAIRN_DB_TESTS=1`, or `None` with the skip logged.
fn databases() -> Option<Databases> {
    if !cairn_test_support::gate::gate(
        "CAIRN_DB_TESTS",
        "and the CAIRN_*_TEST_URL / _PASSWORD variables (eval \"$(scripts/test-databases)\")",
    ) {
        return None;
    }
    let var = |name: &str| {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: run scripts/test-databases"))
    };
    Some(Databases {
        pg: var("CAIRN_PG_TEST_URL"),
        pg_password: var("CAIRN_PG_TEST_PASSWORD"),
        my: var("CAIRN_MYSQL_TEST_URL"),
        redis: var("CAIRN_REDIS_TEST_URL"),
    })
}

/// PostgreSQL with the password in the vault, bound to the database's host: the tools connect,
/// and no model request of a whole run holds the password.
#[test]
fn postgres_with_a_vault_password_never_shows_it_to_the_model() {
    let Some(peers) = databases() else { return };
    let (url, password) = (peers.pg, peers.pg_password);
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
    let out = sb.chat_yes("who am I in the database?");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3);
    let sent: String = requests.iter().map(|r| r.body.to_string()).collect();
    assert!(sent.contains("| cairn |"), "the query ran: {sent}");
    assert!(!sent.contains(&password), "the password reached the model");
    assert_absent(&password, &sent, "a model request");
    assert_absent(&password, &text(&out.stdout), "the terminal");
    assert_absent(&password, &text(&out.stderr), "the log");
}

/// A wrong vault password on each engine: each tool says the login failed, and the password is
/// in no model request, no tool result, no line on the terminal and no log line, in any form.
#[test]
fn failed_logins_on_every_engine_never_show_the_password() {
    let Some(Databases { pg, my, redis, .. }) = databases() else {
        return;
    };
    // Characters every encoding changes: '/', '+', '=', '~' and a space.
    let wrong = [
        ("pg", "Wr0ng/pg+Pass=word~ 71"),
        ("my", "Wr0ng/my+Pass=word~ 72"),
        ("cache", "Wr0ng/rd+Pass=word~ 73"),
    ];
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_calls(vec![
                ("db_query", json!({"connection": "pg", "sql": "SELECT 1"})),
                ("db_query", json!({"connection": "my", "sql": "SELECT 1"})),
                ("redis_get", json!({"connection": "cache", "key": "k"})),
            ]),
            Reply::text("none of them let me in"),
        ],
    );
    for (name, password) in wrong {
        vault_set(&sb, name, "127.0.0.1", password);
    }
    sb.user_config(&format!(
        "[db.pg]\nurl = \"{pg}\"\npassword = \"secret:pg\"\n\
         [db.my]\nurl = \"{my}\"\npassword = \"secret:my\"\n\
         [db.cache]\nurl = \"{redis}\"\npassword = \"secret:cache\"\n"
    ));
    let out = sb.chat_yes("read the databases");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    let results = crate::support::tool_results(&requests[1].body);
    assert_eq!(results.len(), 3, "{results:?}");
    // What the user and the model are told: each login failed, by the server's own words.
    assert!(
        results[0].contains("password authentication failed"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("Access denied"), "{}", results[1]);
    assert!(
        results[2]
            .to_ascii_lowercase()
            .contains("password authentication failed"),
        "{}",
        results[2]
    );
    let sent: String = requests.iter().map(|r| r.body.to_string()).collect();
    for (_, password) in wrong {
        assert_absent(password, &sent, "a model request");
        for r in &results {
            assert_absent(password, r, "a tool result");
        }
        assert_absent(password, &text(&out.stdout), "the terminal");
        assert_absent(password, &text(&out.stderr), "the log");
    }
}

/// The real password stored in a table, as written and encoded (a row a careless app left):
/// the query's result reaches the model with markers in its place, an export writes markers
/// into the file, and neither the log nor the terminal shows it.
#[test]
fn a_password_stored_in_a_table_is_kept_out_of_results_and_exports() {
    let Some(peers) = databases() else { return };
    let (url, password) = (peers.pg, peers.pg_password);
    let table = format!("leaky_{}", std::process::id());
    let mut sql = format!("CREATE TABLE {table} (form text, value text);");
    for (form, shown) in forms(&password) {
        sql.push_str(&format!(
            "INSERT INTO {table} VALUES ('{form}', '{}');",
            shown.replace('\'', "''")
        ));
    }
    let psql = |sql: &str| {
        let out = std::process::Command::new("psql")
            .arg(&url)
            .args(["-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
            .env("PGPASSWORD", &password)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    psql(&sql);
    let select = format!("SELECT form, value FROM {table} ORDER BY form");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("db_query", json!({"connection": "pg", "sql": select})),
            Reply::tool_call(
                "db_export",
                json!({"connection": "pg", "sql": select, "path": "rows.csv", "format": "csv"}),
            ),
            Reply::tool_call(
                "db_export",
                json!({"connection": "pg", "sql": select, "path": "rows.json", "format": "json"}),
            ),
            Reply::text("exported"),
        ],
    );
    vault_set(&sb, "pg", "127.0.0.1", &password);
    sb.user_config(&format!(
        "[db.pg]\nurl = \"{url}\"\npassword = \"secret:pg\"\n"
    ));
    let out = sb.chat_yes("export the table");
    psql(&format!("DROP TABLE {table}"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 4);
    let shown = crate::support::tool_results(&requests[1].body).join("\n");
    // The rows arrived, with a marker for each form.
    for (form, _) in forms(&password) {
        assert!(shown.contains(form), "{shown}");
    }
    assert!(shown.contains("[REDACTED:pg]"), "{shown}");
    let sent: String = requests.iter().map(|r| r.body.to_string()).collect();
    assert_absent(&password, &sent, "a model request");
    assert_absent(&password, &text(&out.stdout), "the terminal");
    assert_absent(&password, &text(&out.stderr), "the log");
    for file in ["rows.csv", "rows.json"] {
        let written = sb.read(file);
        assert!(written.contains("basic"), "{file}: {written}");
        assert!(written.contains("[REDACTED:pg]"), "{file}: {written}");
        assert_absent(&password, &written, file);
    }
    // The export says it replaced them, so the user knows the file is not the raw rows.
    let said = crate::support::tool_results(&requests[3].body).join("\n");
    assert!(said.contains("vault"), "{said}");
}
