//! `cairn doctor`: what cairn would use, and whether it works.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::compose::{self, Env};

#[allow(clippy::print_stdout)]
pub async fn run(env: &Env, root: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let mut ok = true;
    let mut line = |good: bool, what: &str, detail: String| {
        ok &= good;
        println!("{} {what}: {detail}", if good { "ok  " } else { "FAIL" });
    };
    let user = cairn_config::default_user_config_path(env.get("XDG_CONFIG_HOME"), env.get("HOME"));
    let config = match compose::load_layers(env, root.as_deref()).and_then(|l| Ok(l.resolve()?)) {
        Ok(c) => {
            let shown = user
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "none".into());
            line(true, "configuration", format!("user file {shown}"));
            c
        }
        Err(e) => {
            line(false, "configuration", e.to_string());
            return Ok(ExitCode::FAILURE);
        }
    };
    let settings = compose::provider_settings(&config, env, env);
    let key = if settings.api_key.is_some() {
        "set"
    } else {
        "not set"
    };
    line(
        true,
        "provider",
        format!(
            "{} model `{}` at {} (key {}: {key})",
            settings.kind.name(),
            settings.model,
            settings.base_url,
            settings.api_key_setting
        ),
    );
    match cairn_llm::probe(&settings).await {
        Ok(summary) => line(true, "provider reachable", summary),
        Err(e) => line(false, "provider reachable", e.to_string()),
    }
    let dir = compose::sessions_dir(&config, env);
    match std::fs::create_dir_all(&dir) {
        Ok(()) => line(true, "session store", dir.display().to_string()),
        Err(e) => line(false, "session store", format!("{}: {e}", dir.display())),
    }
    if let Some(root) = root {
        match compose::tools(std::slice::from_ref(&root), None) {
            Ok(tools) => line(
                true,
                "workspace",
                format!("{} ({} tools)", root.display(), tools.list().len()),
            ),
            Err(e) => line(false, "workspace", e),
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
