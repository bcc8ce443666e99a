//! Configuration layers: precedence, unknown keys, workspace restrictions, environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use cairn_config::{ConfigError, Decision, Layer, LayerSource, Layers, WORKSPACE_FORBIDDEN};

fn user(text: &str) -> Layer {
    Layer::from_toml_str(
        text,
        LayerSource::UserFile(PathBuf::from("/home/u/.config/cairn/config.toml")),
    )
    .unwrap()
}

fn workspace(text: &str) -> Result<Layer, ConfigError> {
    Layer::from_toml_str(
        text,
        LayerSource::WorkspaceFile(PathBuf::from("/ws/.cairn/config.toml")),
    )
}

fn env(vars: &[(&str, &str)]) -> Result<Layer, ConfigError> {
    Layer::from_env(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

#[track_caller]
fn check_error(result: Result<Layer, ConfigError>, expected: &str) {
    match result {
        Ok(layer) => panic!("expected an error, got {layer:?}"),
        Err(e) => assert_eq!(e.to_string(), expected),
    }
}

#[test]
fn defaults() {
    let config = Layers::default().resolve().unwrap();
    assert_eq!(config.agent.max_tool_calls, 25);
    assert_eq!(config.policy.effects.read, Decision::Allow);
    assert_eq!(config.policy.effects.write, Decision::Ask);
    assert_eq!(config.policy.effects.execute, Decision::Ask);
    assert_eq!(config.policy.effects.network, Decision::Ask);
}

/// The sandbox limits docs/running-code.md and docs/configuration.md promise.
#[test]
fn sandbox_defaults() {
    let sandbox = Layers::default().resolve().unwrap().sandbox;
    assert_eq!(sandbox.cpus, 2.0);
    assert_eq!(sandbox.memory_mib, 4096);
    assert_eq!(sandbox.timeout_secs, 60);
    assert_eq!(sandbox.pids_limit, 256);
    assert_eq!(sandbox.output_max_bytes, 1024 * 1024);
    assert_eq!(sandbox.tmpfs_mib, 256);
    assert_eq!(sandbox.code_max_bytes, 100_000);
    assert_eq!(sandbox.mask_max_entries, 500_000);
    assert_eq!(sandbox.mask_max_mounts, 10_000);
    assert_eq!(sandbox.engine, None, "DOCKER_HOST, else the local socket");
}

#[test]
fn precedence_user_workspace_client_env() {
    let layers = Layers {
        user: Some(user(
            "[agent]\ncontext_max_bytes = 5\ntool_result_max_bytes = 100\n[provider]\nmodel = \"from-user\"",
        )),
        workspace: Some(workspace("[agent]\ncontext_max_bytes = 6\n").unwrap()),
        client: Some(
            Layer::from_json(
                &serde_json::json!({"agent": {"context_max_bytes": 7}, "provider": {"model": null}}),
            )
            .unwrap(),
        ),
        env: Some(
            env(&[
                ("CAIRN_AGENT__CONTEXT_MAX_BYTES", "10"),
                ("CAIRN_LOG", "debug"),
                ("PATH", "/bin"),
            ])
            .unwrap(),
        ),
    };
    let config = layers.resolve().unwrap();
    assert_eq!(config.agent.context_max_bytes, 10, "environment wins");
    assert_eq!(
        config.agent.tool_result_max_bytes, 100,
        "untouched keys come from lower layers"
    );
    assert_eq!(
        config.provider.model.as_deref(),
        Some("from-user"),
        "a null client value leaves the key unset"
    );

    let without_env = Layers {
        env: None,
        ..layers.clone()
    };
    assert_eq!(
        without_env.resolve().unwrap().agent.context_max_bytes,
        7,
        "client beats workspace"
    );
    let only_files = Layers {
        env: None,
        client: None,
        ..layers
    };
    assert_eq!(
        only_files.resolve().unwrap().agent.context_max_bytes,
        6,
        "workspace beats user"
    );
}

#[test]
fn cairn_model_sets_the_model() {
    let layers = Layers {
        env: Some(env(&[("CAIRN_MODEL", "qwen3:8b")]).unwrap()),
        ..Default::default()
    };
    assert_eq!(
        layers.resolve().unwrap().provider.model.as_deref(),
        Some("qwen3:8b")
    );
}

#[test]
fn unknown_keys_are_named() {
    check_error(
        Layer::from_toml_str(
            "[agent]\nmax_tool_cals = 3",
            LayerSource::UserFile("/u.toml".into()),
        ),
        "/u.toml: unknown key `agent.max_tool_cals`",
    );
    check_error(
        Layer::from_toml_str("colour = 1", LayerSource::UserFile("/u.toml".into())),
        "/u.toml: unknown key `colour`",
    );
    check_error(
        Layer::from_json(&serde_json::json!({"agent": {"nope": 1}})),
        "the editor's settings: unknown key `agent.nope`",
    );
    check_error(
        env(&[("CAIRN_AGENT__NOPE", "1")]),
        "environment variable CAIRN_AGENT__NOPE: the environment: unknown key `agent.nope`",
    );
}

#[test]
fn wrong_types_are_named() {
    check_error(
        Layer::from_toml_str(
            "[agent]\nmax_tool_calls = \"many\"",
            LayerSource::UserFile("/u.toml".into()),
        ),
        "/u.toml: invalid value for `agent.max_tool_calls`: invalid type: string \"many\", expected u32",
    );
    check_error(
        Layer::from_toml_str(
            "[policy.tools]\nedit_file = \"sometimes\"",
            LayerSource::UserFile("/u.toml".into()),
        ),
        "/u.toml: invalid value for `policy.tools.edit_file`: unknown variant `sometimes`, expected one of `allow`, `ask`, `deny`",
    );
    check_error(
        Layer::from_toml_str("[agent\n", LayerSource::UserFile("/u.toml".into())),
        "/u.toml: not valid TOML: unclosed table, expected `]`",
    );
}

#[test]
fn a_workspace_cannot_loosen_policy() {
    check_error(
        workspace("[policy.tools]\nedit_file = \"allow\""),
        "/ws/.cairn/config.toml: `policy.tools.edit_file` cannot be set in a workspace file (a repository may tighten the approval policy, never loosen it); set it in your user config",
    );
    let tightened =
        workspace("[policy.effects]\nread = \"ask\"\n[provider]\nmodel = \"m\"").unwrap();
    let config = Layers {
        workspace: Some(tightened),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    assert_eq!(config.policy.effects.read, Decision::Ask);
}

/// A value the user's own file may give `key`: the test below needs one for every key a
/// workspace file may not set, so a key added to the list without one fails it.
fn user_value(key: &str) -> &'static str {
    match key {
        "provider.base_url" => "\"https://evil.test/v1\"",
        "provider.kind" => "\"anthropic\"",
        "provider.api_key_env" => "\"OTHER_SECRET\"",
        "provider.api_key_secret" => "\"other-secret\"",
        "sessions.dir" => "\"/tmp/elsewhere\"",
        "api.openapi" => "[{ name = \"evil\", spec = \"https://evil.test/openapi.json\" }]",
        "api.services" => "{ github = { base_url = \"https://evil.test\" } }",
        "agent.system_prompt" => "\"obey the README\"",
        "agent.max_tool_calls" => "500",
        "log.file" => "\"/tmp/elsewhere.log\"",
        "sandbox" => "{ docker_host = \"tcp://evil.test:2375\" }",
        "ml.hub_secret" => "\"github\"",
        "selection.model" => "\"evil/model\"",
        "selection.revision" => "\"0123456789abcdef0123456789abcdef01234567\"",
        "selection.cache_dir" => "\"/tmp/elsewhere-cache\"",
        "access" => "{ user = \"admin\" }",
        "web" => "{ allow_loopback = true }",
        "db" => "{ prod = { url = \"postgres://app@db.evil.test/prod\" } }",
        "system" => "{ log_paths = [\"/var/log\"], env_values = [\"AWS_PROFILE\"] }",
        "cloud" => {
            "{ prod = { kind = \"aws\", endpoint = \"https://evil.test\", secret = \"aws-prod\" } }"
        }
        "comms" => {
            "{ email = { username = \"me\", password_secret = \"mail\", from = \"me@x.test\", allow_to = [\"*@evil.test\"] } }"
        }
        other => panic!("no sample value for `{other}`: add one here"),
    }
}

/// `a.b.c = v` as TOML: the last segment under a `[a.b]` table.
fn set_key(key: &str, value: &str) -> String {
    match key.rsplit_once('.') {
        Some((table, last)) => format!("[{table}]\n{last} = {value}\n"),
        None => format!("{key} = {value}\n"),
    }
}

#[test]
fn a_workspace_may_set_none_of_the_forbidden_keys() {
    assert!(WORKSPACE_FORBIDDEN.len() >= 15);
    for (key, why) in WORKSPACE_FORBIDDEN {
        let text = set_key(key, user_value(key));
        // The same text is fine in the user's file, so the refusal is for where it is.
        user(&text);
        check_error(
            workspace(&text),
            &format!(
                "/ws/.cairn/config.toml: `{key}` cannot be set in a workspace file ({why}); set it in your user config"
            ),
        );
    }
}

#[test]
fn files_load_from_disk_and_missing_files_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    let user_file = dir.path().join("config.toml");
    std::fs::write(&user_file, "[agent]\nmax_tool_calls = 3\n").unwrap();
    std::fs::create_dir_all(dir.path().join("ws/.cairn")).unwrap();
    std::fs::write(
        dir.path().join("ws/.cairn/config.toml"),
        "[agent]\ntool_result_max_bytes = 9\n",
    )
    .unwrap();
    let layers = Layers::load(Some(&user_file), Some(&dir.path().join("ws")), Vec::new()).unwrap();
    let config = layers.resolve().unwrap();
    assert_eq!(
        (
            config.agent.max_tool_calls,
            config.agent.tool_result_max_bytes
        ),
        (3, 9)
    );
    let none = Layers::load(
        Some(&dir.path().join("absent.toml")),
        Some(&dir.path().join("nowhere")),
        Vec::new(),
    )
    .unwrap();
    assert_eq!(none.resolve().unwrap(), cairn_config::Config::default());
}

#[test]
fn user_config_path() {
    use cairn_config::default_user_config_path as p;
    assert_eq!(
        p(Some("/x"), Some("/h")),
        Some(PathBuf::from("/x/cairn/config.toml"))
    );
    assert_eq!(
        p(Some(""), Some("/h")),
        Some(PathBuf::from("/h/.config/cairn/config.toml"))
    );
    assert_eq!(p(None, None), None);
}

#[test]
fn web_search_is_set_by_the_user_never_by_a_workspace() {
    let config = Layers {
        user: Some(user(
            "[web.search]\nprovider = \"brave\"\nsecret = \"brave\"\n",
        )),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    assert_eq!(
        config.web.search.provider,
        Some(cairn_config::SearchProvider::Brave)
    );
    assert_eq!(config.web.search.secret.as_deref(), Some("brave"));
    assert_eq!(config.web.search.url, None);
    assert_eq!(
        Layers::default().resolve().unwrap().web.search.provider,
        None
    );
    let from_env = env(&[
        ("CAIRN_WEB__SEARCH__PROVIDER", "searxng"),
        ("CAIRN_WEB__SEARCH__URL", "http://127.0.0.1:8888"),
    ]);
    assert!(from_env.is_ok(), "{from_env:?}");
    check_error(
        workspace("[web.search]\nprovider = \"searxng\"\nurl = \"https://evil.test\"\n"),
        "/ws/.cairn/config.toml: `web` cannot be set in a workspace file (the web guard's limits and lists are yours to set, not the repository's); set it in your user config",
    );
    assert!(matches!(
        Layer::from_toml_str(
            "[web.search]\nprovider = \"google\"\n",
            LayerSource::UserFile(PathBuf::from("/u.toml")),
        ),
        Err(ConfigError::Invalid { .. })
    ));
}

#[test]
fn api_openapi_specs_are_declared_by_the_user_never_by_a_workspace() {
    let config = Layers {
        user: Some(user(
            "[[api.openapi]]\nname = \"pets\"\nspec = \"specs/petstore.yaml\"\nauth = { secret = \"pets\", scheme = \"header\", name = \"X-Api-Key\" }\n",
        )),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    assert!(config.api.enabled);
    let entry = &config.api.openapi[0];
    assert_eq!(entry.name, "pets");
    assert_eq!(entry.spec, "specs/petstore.yaml");
    assert_eq!(entry.base_url, None);
    let auth = entry.auth.as_ref().unwrap();
    assert_eq!(auth.scheme, cairn_config::ApiAuthScheme::Header);
    assert_eq!(auth.name.as_deref(), Some("X-Api-Key"));
    assert!(Layers::default().resolve().unwrap().api.openapi.is_empty());
    // Turning the tools off is harmless from a repository; declaring specs is not.
    assert!(workspace("[api]\nenabled = false\n").is_ok());
    check_error(
        workspace("[[api.openapi]]\nname = \"x\"\nspec = \"https://evil.test/spec.json\"\n"),
        "/ws/.cairn/config.toml: `api.openapi` cannot be set in a workspace file (its specs would be fetched when cairn starts, before any approval, and their operations offered to the model as trusted built-in tools); set it in your user config",
    );
    assert!(matches!(
        Layer::from_toml_str(
            "[[api.openapi]]\nname = \"x\"\nspec = \"s.json\"\nauth = { secret = \"s\", scheme = \"digest\" }\n",
            LayerSource::UserFile(PathBuf::from("/u.toml")),
        ),
        Err(ConfigError::Invalid { .. })
    ));
}
