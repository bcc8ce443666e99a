//! Import of other clients' MCP server files, variable expansion, and TOML rendering.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use cairn_config::{
    Config, ImportError, McpJsonFormat, McpServerConfig, McpTransport, check_conflicts,
    detect_format, expand, expand_server, import_file, import_str, render_servers_toml,
};

const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"]
    },
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>" }
    },
    "remote": { "url": "https://mcp.example.com/mcp" }
  },
  "globalShortcut": "Ctrl+Space"
}"#;

const CURSOR: &str = r#"{
  "mcpServers": {
    "server-name": {
      "command": "npx",
      "args": ["-y", "mcp-server"],
      "env": { "API_KEY": "${env:API_KEY}" },
      "envFile": ".env"
    },
    "remote-server": {
      "url": "http://localhost:3000/mcp",
      "headers": { "API_KEY": "${env:MY_SERVICE_TOKEN}" }
    },
    "workspace-tool": {
      "command": "python",
      "args": ["${workspaceFolder}/tools/mcp_server.py"]
    }
  }
}"#;

const CLAUDE_CODE: &str = r#"{
  "mcpServers": {
    "api-server": {
      "type": "http",
      "url": "${API_BASE_URL:-https://api.example.com}/mcp",
      "headers": { "Authorization": "Bearer ${API_KEY}" }
    },
    "local": {
      "type": "stdio",
      "command": "/path/to/server",
      "args": [],
      "env": { "CACHE_DIR": "${CACHE_DIR:-/tmp}" }
    },
    "sentry": { "type": "sse", "url": "https://mcp.sentry.dev/sse" }
  }
}"#;

const VSCODE: &str = r#"{
  // Inputs are prompted on first server start, then stored by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    }
  ],
  "servers": {
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": { "PERPLEXITY_API_KEY": "${input:perplexity-key}" },
      "envFile": "${workspaceFolder}/.env"
    },
    /* Fetch runs with uvx. */
    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "cwd": "${workspaceFolder}" },
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" },
    "my-remote": {
      "type": "http",
      "url": "http://api.contoso.com/mcp",
      "headers": { "Authorization": "Bearer ${env:CONTOSO_TOKEN}" },
    },
  }
}"#;

fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> McpServerConfig {
    McpServerConfig {
        command: Some(command.into()),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

fn http(url: &str, transport: Option<McpTransport>, headers: &[(&str, &str)]) -> McpServerConfig {
    McpServerConfig {
        url: Some(url.into()),
        transport,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

struct Case {
    path: &'static str,
    text: &'static str,
    format: McpJsonFormat,
    servers: Vec<(&'static str, McpServerConfig)>,
    /// Each warning must contain these words.
    warnings: Vec<&'static str>,
}

#[test]
fn each_format_imports_as_written() {
    let cases = vec![
        Case {
            path: "/home/u/.config/Claude/claude_desktop_config.json",
            text: CLAUDE_DESKTOP,
            format: McpJsonFormat::ClaudeDesktop,
            servers: vec![
                (
                    "filesystem",
                    stdio(
                        "npx",
                        &[
                            "-y",
                            "@modelcontextprotocol/server-filesystem",
                            "/Users/username/Desktop",
                            "/Users/username/Downloads",
                        ],
                        &[],
                    ),
                ),
                (
                    "github",
                    stdio(
                        "npx",
                        &["-y", "@modelcontextprotocol/server-github"],
                        &[("GITHUB_PERSONAL_ACCESS_TOKEN", "<YOUR_TOKEN>")],
                    ),
                ),
                ("remote", http("https://mcp.example.com/mcp", None, &[])),
            ],
            warnings: vec!["`globalShortcut`"],
        },
        Case {
            path: "/ws/.cursor/mcp.json",
            text: CURSOR,
            format: McpJsonFormat::Cursor,
            servers: vec![
                (
                    "remote-server",
                    http(
                        "http://localhost:3000/mcp",
                        None,
                        &[("API_KEY", "${env:MY_SERVICE_TOKEN}")],
                    ),
                ),
                (
                    "server-name",
                    stdio(
                        "npx",
                        &["-y", "mcp-server"],
                        &[("API_KEY", "${env:API_KEY}")],
                    ),
                ),
                (
                    "workspace-tool",
                    stdio("python", &["${workspaceFolder}/tools/mcp_server.py"], &[]),
                ),
            ],
            warnings: vec!["server `server-name`, `envFile`"],
        },
        Case {
            path: "/ws/.mcp.json",
            text: CLAUDE_CODE,
            format: McpJsonFormat::ClaudeCode,
            servers: vec![
                (
                    "api-server",
                    http(
                        "${API_BASE_URL:-https://api.example.com}/mcp",
                        Some(McpTransport::Http),
                        &[("Authorization", "Bearer ${API_KEY}")],
                    ),
                ),
                (
                    "local",
                    McpServerConfig {
                        transport: Some(McpTransport::Stdio),
                        ..stdio(
                            "/path/to/server",
                            &[],
                            &[("CACHE_DIR", "${CACHE_DIR:-/tmp}")],
                        )
                    },
                ),
                (
                    "sentry",
                    http("https://mcp.sentry.dev/sse", Some(McpTransport::Sse), &[]),
                ),
            ],
            warnings: vec![],
        },
        Case {
            path: "/ws/.vscode/mcp.json",
            text: VSCODE,
            format: McpJsonFormat::VsCode,
            servers: vec![
                (
                    "Perplexity",
                    McpServerConfig {
                        transport: Some(McpTransport::Stdio),
                        ..stdio(
                            "npx",
                            &["-y", "server-perplexity-ask"],
                            &[("PERPLEXITY_API_KEY", "${input:perplexity-key}")],
                        )
                    },
                ),
                (
                    "fetch",
                    McpServerConfig {
                        transport: Some(McpTransport::Stdio),
                        cwd: Some("${workspaceFolder}".into()),
                        ..stdio("uvx", &["mcp-server-fetch"], &[])
                    },
                ),
                (
                    "github",
                    http(
                        "https://api.githubcopilot.com/mcp/",
                        Some(McpTransport::Http),
                        &[],
                    ),
                ),
                (
                    "my-remote",
                    http(
                        "http://api.contoso.com/mcp",
                        Some(McpTransport::Http),
                        &[("Authorization", "Bearer ${env:CONTOSO_TOKEN}")],
                    ),
                ),
            ],
            warnings: vec![
                "`inputs`: input `perplexity-key`",
                "server `Perplexity`, `envFile`",
                "server `Perplexity`, `env.PERPLEXITY_API_KEY`: refers to `${input:perplexity-key}`",
            ],
        },
    ];
    for case in cases {
        let imported = import_str(case.text, Path::new(case.path), None)
            .unwrap_or_else(|e| panic!("{}: {e}", case.path));
        assert_eq!(imported.format, case.format, "{}", case.path);
        let expected: BTreeMap<String, McpServerConfig> = case
            .servers
            .into_iter()
            .map(|(n, c)| (n.to_string(), c))
            .collect();
        assert_eq!(imported.servers, expected, "{}", case.path);
        let warnings: Vec<String> = imported.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(
            warnings.len(),
            case.warnings.len(),
            "{}: {warnings:#?}",
            case.path
        );
        for (warning, words) in warnings.iter().zip(&case.warnings) {
            assert!(
                warning.contains(words),
                "{}: {warning:?} lacks {words:?}",
                case.path
            );
        }
    }
}

#[test]
fn detection_by_name_then_contents() {
    let servers: serde_json::Value = serde_json::json!({"servers": {}});
    let mcp_servers: serde_json::Value = serde_json::json!({"mcpServers": {}});
    let settings: serde_json::Value = serde_json::json!({"mcp": {"servers": {}}});
    let other = serde_json::json!({"x": 1});
    let array = serde_json::json!([1]);
    let cases: Vec<(&str, &serde_json::Value, Option<McpJsonFormat>)> = vec![
        (
            "/a/claude_desktop_config.json",
            &mcp_servers,
            Some(McpJsonFormat::ClaudeDesktop),
        ),
        (
            "/a/.cursor/mcp.json",
            &mcp_servers,
            Some(McpJsonFormat::Cursor),
        ),
        (
            "/a/.mcp.json",
            &mcp_servers,
            Some(McpJsonFormat::ClaudeCode),
        ),
        ("/a/.vscode/mcp.json", &servers, Some(McpJsonFormat::VsCode)),
        (
            "/a/.vscode/settings.json",
            &settings,
            Some(McpJsonFormat::VsCode),
        ),
        ("/a/servers.json", &servers, Some(McpJsonFormat::VsCode)),
        (
            "/a/other.json",
            &mcp_servers,
            Some(McpJsonFormat::ClaudeCode),
        ),
        // The contents win over a misleading name.
        ("/a/.cursor/mcp.json", &servers, Some(McpJsonFormat::VsCode)),
        ("/a/other.json", &other, None),
        ("/a/other.json", &array, None),
    ];
    for (path, value, expected) in cases {
        assert_eq!(detect_format(Path::new(path), value), expected, "{path}");
    }
}

#[test]
fn vscode_settings_json_is_read_under_mcp() {
    let text = r#"{"editor.fontSize": 14, "mcp": {"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}}"#;
    let imported = import_str(text, Path::new("/u/.vscode/settings.json"), None).unwrap();
    assert_eq!(
        imported.servers["time"],
        stdio("uvx", &["mcp-server-time"], &[])
    );
}

#[track_caller]
fn check_import_error(path: &str, text: &str, expected: &str) {
    match import_str(text, Path::new(path), None) {
        Ok(i) => panic!("expected an error, got {i:?}"),
        Err(e) => assert_eq!(e.to_string(), expected),
    }
}

#[test]
fn bad_files_name_file_and_key() {
    let p = "/ws/.mcp.json";
    check_import_error(
        p,
        r#"{"mcpServers": {"a": {"args": ["x"]}}}"#,
        "/ws/.mcp.json: `mcpServers.a`: needs `command` (stdio) or `url` (HTTP)",
    );
    check_import_error(
        p,
        r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
        "/ws/.mcp.json: `mcpServers.a`: has both `command` and `url`; keep one",
    );
    check_import_error(
        p,
        r#"{"mcpServers": {"a": {"command": "x", "args": ["ok", 3]}}}"#,
        "/ws/.mcp.json: `mcpServers.a.args[1]`: expected a string",
    );
    check_import_error(
        p,
        r#"{"mcpServers": {"a": {"type": "websocket", "url": "ws://h"}}}"#,
        "/ws/.mcp.json: `mcpServers.a.type`: unknown transport `websocket`; expected `stdio`, `http` or `sse`",
    );
    check_import_error(
        p,
        r#"{"mcpServers": {"a": {"type": "http", "command": "x"}}}"#,
        "/ws/.mcp.json: `mcpServers.a.type`: an HTTP transport needs `url`",
    );
    check_import_error(
        p,
        r#"{"mcpServers": {"a": {"command": "x", "env": {"K": ["v"]}}}}"#,
        "/ws/.mcp.json: `mcpServers.a.env.K`: expected a string",
    );
    check_import_error(
        p,
        r#"{"mcpServers": []}"#,
        "/ws/.mcp.json: not an MCP server file: expected a top-level `mcpServers` (Claude Desktop, Cursor, Claude Code) or `servers` (VS Code) object",
    );
    check_import_error(
        "/ws/.vscode/mcp.json",
        r#"{"servers": {"a": {"command": "x"}}, "inputs": {}}"#,
        "/ws/.vscode/mcp.json: `inputs`: expected an array",
    );
    match import_str("{\"mcpServers\": {,}", Path::new(p), None) {
        Err(ImportError::Json { path, .. }) => assert_eq!(path, Path::new(p)),
        other => panic!("{other:?}"),
    }
    match import_file(Path::new("/nonexistent/.mcp.json")) {
        Err(e @ ImportError::Read { .. }) => {
            assert!(
                e.to_string()
                    .starts_with("cannot read /nonexistent/.mcp.json")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unsupported_fields_are_warned_about_by_name() {
    let text = r#"{"mcpServers": {"a": {"command": "x", "autoApprove": ["t"], "timeout": 30,
        "env": {"PORT": 3000, "DEBUG": true}}}}"#;
    let imported = import_str(text, Path::new("/c/.cursor/mcp.json"), None).unwrap();
    let warnings: Vec<String> = imported.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        vec![
            "server `a`, `autoApprove`: not imported: cairn asks for approval by its own `[policy]`",
            "server `a`, `env.DEBUG`: a boolean; kept as text",
            "server `a`, `env.PORT`: a number; kept as text",
            "server `a`, `timeout`: Cursor field not supported by cairn; not imported",
        ]
    );
    assert_eq!(imported.servers["a"].env["PORT"], "3000");
}

#[test]
fn claude_desktop_does_not_expand_so_a_reference_is_pointed_out() {
    let text =
        r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "${HOME}/k", "B": "${bad"}}}}"#;
    let imported = import_str(text, Path::new("/c/claude_desktop_config.json"), None).unwrap();
    let warnings: Vec<String> = imported.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        vec![
            "server `a`, `env.B`: will not expand when the server starts: a `${` is not closed by `}`",
            "server `a`, `env.K`: Claude Desktop passes `${...}` literally; cairn expands it when the server starts",
        ]
    );
}

fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn expansion() {
    let env = env_of(&[
        ("HOME", "/home/u"),
        ("API_KEY", "sk-1"),
        ("EMPTY", ""),
        ("_X1", "x"),
    ]);
    let ws = Some(Path::new("/work/proj"));
    let cases: Vec<(&str, Result<&str, &str>)> = vec![
        ("plain", Ok("plain")),
        ("$HOME and $ alone", Ok("$HOME and $ alone")),
        ("${env:API_KEY}", Ok("sk-1")),
        ("Bearer ${API_KEY}", Ok("Bearer sk-1")),
        ("${_X1}${_X1}", Ok("xx")),
        ("${MISSING:-fallback}", Ok("fallback")),
        ("${EMPTY:-fallback}", Ok("fallback")),
        ("${API_KEY:-fallback}", Ok("sk-1")),
        ("${MISSING:-}", Ok("")),
        ("${EMPTY}", Ok("")),
        ("${workspaceFolder}/src", Ok("/work/proj/src")),
        ("${workspaceFolderBasename}", Ok("proj")),
        ("${userHome}/.config", Ok("/home/u/.config")),
        ("a${/}b", Ok("a/b")),
        (
            "${MISSING}",
            Err("environment variable `MISSING` is not set"),
        ),
        (
            "${env:MISSING}",
            Err("environment variable `MISSING` is not set"),
        ),
        (
            "${input:perplexity-key}",
            Err(
                "`${input:perplexity-key}` is a value VS Code prompts for; cairn cannot prompt yet: replace it with `${env:VAR}` and set VAR",
            ),
        ),
        (
            "${config:editor.tabSize}",
            Err("unsupported variable `${config:editor.tabSize}`"),
        ),
        (
            "${command:pickFile}",
            Err("unsupported variable `${command:pickFile}`"),
        ),
        ("${1BAD}", Err("unsupported variable `${1BAD}`")),
        ("${}", Err("unsupported variable `${}`")),
        ("${API_KEY", Err("a `${` is not closed by `}`")),
    ];
    for (input, expected) in cases {
        let got = expand(input, &env, ws).map_err(|e| e.to_string());
        assert_eq!(got.as_deref().map_err(String::as_str), expected, "{input}");
    }
    assert_eq!(
        expand("${workspaceFolder}", &env, None)
            .unwrap_err()
            .to_string(),
        "`${workspaceFolder}` is used but no workspace folder is open"
    );
    assert_eq!(
        expand("${userHome}", &env_of(&[]), None)
            .unwrap_err()
            .to_string(),
        "environment variable `HOME` is not set"
    );
}

#[test]
fn import_keeps_references_and_the_hub_expands_at_start() {
    let imported = import_str(CURSOR, Path::new("/ws/.cursor/mcp.json"), None).unwrap();
    let server = &imported.servers["server-name"];
    // Nothing secret is resolved at import: the reference is what gets written to cairn's config.
    assert_eq!(server.env["API_KEY"], "${env:API_KEY}");
    let started = expand_server(server, &env_of(&[("API_KEY", "sk-live")]), None).unwrap();
    assert_eq!(started.env["API_KEY"], "sk-live");
    assert_eq!(started.command.as_deref(), Some("npx"));

    let err = expand_server(&imported.servers["remote-server"], &env_of(&[]), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`headers.API_KEY`: environment variable `MY_SERVICE_TOKEN` is not set"
    );
    let tool = expand_server(
        &imported.servers["workspace-tool"],
        &env_of(&[]),
        Some(Path::new("/ws")),
    )
    .unwrap();
    assert_eq!(tool.args, vec!["/ws/tools/mcp_server.py"]);
}

#[test]
fn rendered_toml_loads_back_into_the_same_servers() {
    for (path, text) in [
        ("/c/claude_desktop_config.json", CLAUDE_DESKTOP),
        ("/ws/.cursor/mcp.json", CURSOR),
        ("/ws/.mcp.json", CLAUDE_CODE),
        ("/ws/.vscode/mcp.json", VSCODE),
    ] {
        let imported = import_str(text, Path::new(path), None).unwrap();
        let rendered = render_servers_toml(&imported.servers).unwrap();
        let existing = "[agent]\nmax_tool_calls = 10\n\n[mcp]\ncall_timeout_secs = 30\n";
        check_conflicts(existing, &imported.servers).unwrap();
        let combined = format!("{existing}\n{rendered}");
        let config: Config =
            toml::from_str(&combined).unwrap_or_else(|e| panic!("{path}: {e}\n{combined}"));
        assert_eq!(config.mcp.servers, imported.servers, "{path}\n{rendered}");
        assert_eq!(config.mcp.call_timeout_secs, 30);
    }
}

#[test]
fn rendered_toml_reads_like_a_hand_written_entry() {
    let mut servers = BTreeMap::new();
    servers.insert(
        "server-name".to_string(),
        stdio(
            "npx",
            &["-y", "mcp-server"],
            &[("API_KEY", "${env:API_KEY}")],
        ),
    );
    servers.insert(
        "My Server".to_string(),
        http("https://h/mcp", Some(McpTransport::Sse), &[]),
    );
    let rendered = render_servers_toml(&servers).unwrap();
    assert_eq!(
        rendered,
        concat!(
            "[mcp.servers.\"My Server\"]\n",
            "transport = \"sse\"\n",
            "url = \"https://h/mcp\"\n",
            "\n",
            "[mcp.servers.server-name]\n",
            "args = [\"-y\", \"mcp-server\"]\n",
            "command = \"npx\"\n",
            "\n",
            "[mcp.servers.server-name.env]\n",
            "API_KEY = \"${env:API_KEY}\"\n",
        )
    );
}

#[test]
fn conflicts_name_the_server() {
    let mut servers = BTreeMap::new();
    servers.insert("git".to_string(), stdio("uvx", &["mcp-server-git"], &[]));
    let existing = "[mcp.servers.git]\ncommand = \"other\"\n";
    assert_eq!(
        check_conflicts(existing, &servers).unwrap_err().to_string(),
        "server `git` is already configured (`[mcp.servers.git]`)"
    );
    assert!(matches!(
        check_conflicts("[mcp", &servers),
        Err(ImportError::ExistingToml(_))
    ));
}

#[test]
fn import_file_reads_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let vscode = dir.path().join(".vscode");
    std::fs::create_dir(&vscode).unwrap();
    let path = vscode.join("mcp.json");
    std::fs::write(&path, VSCODE).unwrap();
    let imported = import_file(&path).unwrap();
    assert_eq!(imported.format, McpJsonFormat::VsCode);
    assert_eq!(imported.servers.len(), 4);
}
