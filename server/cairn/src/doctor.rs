//! `cairn doctor`: what cairn would use, and whether it works.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_agent::tools::ToolHost;

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
    match compose::provider(&config, env) {
        Ok(compose::Provider::Http(settings)) => {
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
        }
        Ok(compose::Provider::Local { settings, default }) => {
            let why = if default {
                "; nothing else is configured (set OPENAI_API_KEY, ANTHROPIC_API_KEY or provider.* for another)"
            } else {
                ""
            };
            line(
                true,
                "provider",
                format!("local model {}{why}", settings.source.short()),
            );
            let (good, detail) = local_model(&settings).await;
            line(good, "local model", detail);
        }
        Err(e) => line(false, "provider", e),
    }
    let dir = compose::sessions_dir(&config, env);
    match std::fs::create_dir_all(&dir) {
        Ok(()) => line(true, "session store", dir.display().to_string()),
        Err(e) => line(false, "session store", format!("{}: {e}", dir.display())),
    }
    // No vault yet is a note; a vault whose key cannot be had is a failure.
    match crate::vault_cmd::doctor(env) {
        (Some(good), detail) => line(good, "vault", detail),
        (None, note) => println!("note vault: {note}"),
    }
    // Cloud accounts and message services: checked without the network; an account that does
    // not check out is a failure (its tools leave it out), a secret not in the vault a note.
    let stored: Vec<(String, Vec<String>)> = crate::secrets::open_default(env)
        .ok()
        .flatten()
        .map(|v| v.list())
        .unwrap_or_default();
    let secret_note = |secret: &str| match stored.iter().find(|(n, _)| n == secret) {
        Some((_, hosts)) => format!("secret `{secret}` in the vault for {}", hosts.join(", ")),
        None => format!(
            "secret `{secret}` is not in the vault yet: `cairn vault set {secret} --host HOST`"
        ),
    };
    for (name, account) in &config.cloud {
        match cairn_cloud::Account::from_config(name, account) {
            Ok(a) => {
                let kind = cairn_cloud::account::kind_name(a.kind);
                let signing = a
                    .secret_name()
                    .map_or_else(|| "unsigned (no secret)".to_owned(), &secret_note);
                line(
                    true,
                    &format!("cloud account {name}"),
                    format!("{kind}; {signing}"),
                );
            }
            Err(e) => line(false, &format!("cloud account {name}"), e.to_string()),
        }
    }
    let comms = &config.comms;
    let services: Vec<(&str, &str)> = [
        comms
            .email
            .as_ref()
            .map(|e| ("email", e.password_secret.as_str())),
        comms
            .matrix
            .as_ref()
            .map(|m| ("matrix", m.token_secret.as_str())),
        comms
            .slack
            .as_ref()
            .map(|s| ("slack", s.token_secret.as_str())),
        comms
            .twilio
            .as_ref()
            .map(|t| ("twilio", t.token_secret.as_str())),
        comms
            .caldav
            .as_ref()
            .map(|c| ("caldav", c.password_secret.as_str())),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (service, secret) in services {
        println!("note messages {service}: {}", secret_note(secret));
    }
    // Code tools are optional: the default engine missing, or an image, is a note; an engine the
    // user configured that does not answer is a failure.
    let sandbox = cairn_sandbox::Sandbox::new(config.sandbox.clone());
    let configured = config.sandbox.engine.is_some() || !config.sandbox.engines.is_empty();
    for (slot, (name, address)) in sandbox.engines().into_iter().enumerate() {
        let what = format!("sandbox engine {name}");
        let engine = match sandbox.engine_at(slot).await {
            Ok(engine) => engine,
            Err(e) if configured => {
                line(false, &what, e.to_string());
                continue;
            }
            Err(e) => {
                println!("note {what}: {e}");
                continue;
            }
        };
        let version = match engine.docker().version().await {
            Ok(v) => format!(
                "Docker {} (API {})",
                v.version.unwrap_or_default(),
                v.api_version.unwrap_or_default()
            ),
            Err(e) => format!("version unknown ({e})"),
        };
        let rtt = engine.round_trip().await;
        let mut present = Vec::new();
        let mut missing = Vec::new();
        for (runtime, image) in &config.sandbox.images {
            match engine.check_image(runtime, image).await {
                Ok(()) => present.push(runtime.as_str()),
                Err(_) => missing.push(format!("{runtime} ({image})")),
            }
        }
        let delivery = if engine.is_local()
            && config.sandbox.workspace != cairn_config::WorkspaceDelivery::Archive
        {
            "workspace mounted"
        } else {
            "workspace sent as an archive"
        };
        line(
            true,
            &what,
            format!(
                "{address} answers; {version}; round trip {}; {delivery}; images present for: {}",
                rtt.map_or_else(
                    |e| format!("unknown ({e})"),
                    |d| format!("{:.1} ms", d.as_secs_f64() * 1e3)
                ),
                if present.is_empty() {
                    "none".to_owned()
                } else {
                    present.join(", ")
                }
            ),
        );
        if !missing.is_empty() {
            println!(
                "note sandbox images on {name}: missing {}; `docker pull` them there, or build one offline with scripts/sandbox-images (and copy it with `docker save | docker load`) and set sandbox.images",
                missing.join(", ")
            );
        }
    }
    // Tool selection without its model still works on keywords: a note, not a failure.
    let selection = &config.selection;
    if selection.enabled {
        let spec = cairn_select::embed::ModelSpec {
            repo: selection.model.clone(),
            revision: selection.revision.clone(),
        };
        let loaded =
            tokio::task::spawn_blocking(move || cairn_select::embed::Embedder::load(spec)).await?;
        match loaded {
            Ok(embedder) => line(
                true,
                "tool selection",
                format!(
                    "model {} at {} loads ({} dimensions); embeddings cached in {}",
                    selection.model,
                    selection.revision,
                    embedder.dim(),
                    selection
                        .cache_dir
                        .clone()
                        .or_else(cairn_select::cache::EmbeddingCache::default_dir)
                        .map_or_else(|| "memory only".to_owned(), |d| d.display().to_string())
                ),
            ),
            Err(e) => println!(
                "note tool selection: {e}; until then tools are chosen by keywords, and chat works"
            ),
        }
    } else {
        println!(
            "note tool selection: off (selection.enabled = false); every allowed tool is offered"
        );
    }
    if let Some(root) = root {
        let layers = compose::load_layers(env, Some(&root))?;
        match compose::terminal_hub(&config, &layers, env, &root, None).await {
            Ok(mcp) => {
                line(
                    true,
                    "workspace",
                    format!("{} ({} tools)", root.display(), mcp.hub.list().len()),
                );
                for s in mcp.hub.status() {
                    let (good, detail) = crate::mcp_cmd::describe(&s);
                    line(good, &format!("MCP server `{}`", s.name), detail);
                }
                for name in &mcp.waiting_for_trust {
                    line(
                        false,
                        &format!("MCP server `{name}`"),
                        "declared by the workspace, waiting for trust: `cairn mcp trust -w DIR`"
                            .into(),
                    );
                }
                for (name, problem) in &mcp.problems {
                    line(false, &format!("MCP server `{name}`"), problem.clone());
                }
                mcp.hub.shutdown().await;
            }
            Err(e) => line(false, "workspace", e),
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Whether the local model can run: loaded from the cache (which checks the whole file), or,
/// when it is not there yet, whether it can be downloaded on first use.
async fn local_model(settings: &cairn_local::LocalSettings) -> (bool, String) {
    if let cairn_local::ModelSource::Hub {
        repo,
        file,
        revision,
    } = &settings.source
    {
        let (found, cache) = cairn_select::hub::cached_model_file(repo, revision, file);
        if found.is_none() {
            return if cairn_select::hub::offline_from_env() {
                (
                    false,
                    format!(
                        "`{file}` of {repo} at revision {revision} is not in the Hugging Face cache at {} and HF_HUB_OFFLINE is set; unset it to download the model on first use, or set provider.model to a .gguf file",
                        cache.display()
                    ),
                )
            } else {
                (
                    true,
                    format!(
                        "`{file}` of {repo} at revision {revision} will be downloaded into {} on first use, with progress",
                        cache.display()
                    ),
                )
            };
        }
    }
    let model = cairn_local::LocalModel::new(settings.clone(), None);
    // Loaded, then a 32-token speed test, so the user sees what an answer will cost.
    let loaded = tokio::task::spawn_blocking(move || {
        let info = model.load_blocking()?;
        let speed = model.bench_blocking(32, 32)?;
        Ok::<_, cairn_local::LocalError>((info, speed))
    });
    match loaded.await {
        Ok(Ok((info, speed))) => (
            true,
            format!(
                "{} loads on {} with {} threads: {}, {}, {:.0} M parameters, {} MB, {} tokens of context ({}); 32-token test: prompt {:.0} tokens/s, generation {:.1} tokens/s",
                info.name,
                cairn_local::ENGINE,
                info.threads,
                info.arch,
                info.quantisation,
                info.parameters as f64 / 1e6,
                info.file_bytes / 1_000_000,
                info.context,
                info.path.display(),
                speed.prompt_rate(),
                speed.gen_rate()
            ),
        ),
        Ok(Err(e)) => (false, e.to_string()),
        Err(e) => (false, format!("loading stopped: {e}")),
    }
}
