//! What `docker_start`, `docker_stop` and `docker_restart` share: find the container, act, and
//! say the state it ended in.

use std::time::Duration;

use bollard::query_parameters::{RestartContainerOptions, StopContainerOptions};
use cairn_toolkit::CallContext;

use super::{docker, engine_error, find_container, short_id};
use crate::DevOps;

/// What to do to a container.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Action {
    Start,
    /// Stop, killing after this many seconds.
    Stop(u32),
    /// Restart, killing after this many seconds.
    Restart(u32),
}

/// The longest grace period a stop may ask for.
pub(crate) const MAX_STOP_SECS: u32 = 300;

/// Acts on `name` and says what state it is in afterwards.
pub(crate) async fn act(
    host: &DevOps,
    cx: &CallContext,
    name: &str,
    action: Action,
) -> Result<String, String> {
    let docker = docker(host).await?;
    let before = find_container(&docker, cx, name).await?;
    let id = before.id.clone().unwrap_or_default();
    let shown = format!(
        "{} ({})",
        before
            .name
            .as_deref()
            .unwrap_or_default()
            .trim_start_matches('/'),
        short_id(&id)
    );
    let running = before.state.as_ref().and_then(|s| s.running) == Some(true);
    let (verb, grace) = match action {
        Action::Start if running => return Ok(format!("container {shown} is already running")),
        Action::Stop(_) if !running => {
            return Ok(format!("container {shown} is not running; nothing to stop"));
        }
        Action::Start => ("starting", 0),
        Action::Stop(t) => ("stopping", t.min(MAX_STOP_SECS)),
        Action::Restart(t) => ("restarting", t.min(MAX_STOP_SECS)),
    };
    // The engine waits out the grace period before it answers; allow for it.
    let limit = Duration::from_secs(u64::from(grace) + 30);
    let request = async {
        match action {
            Action::Start => docker.start_container(&id, None).await,
            Action::Stop(_) => {
                let options = StopContainerOptions {
                    t: Some(i32::try_from(grace).unwrap_or(i32::MAX)),
                    signal: None,
                };
                docker.stop_container(&id, Some(options)).await
            }
            Action::Restart(_) => {
                let options = RestartContainerOptions {
                    t: Some(i32::try_from(grace).unwrap_or(i32::MAX)),
                    signal: None,
                };
                docker.restart_container(&id, Some(options)).await
            }
        }
    };
    tokio::select! {
        () = cx.cancel.cancelled() => return Err(format!("{verb} {shown}: cancelled; the engine may still finish it")),
        r = tokio::time::timeout(limit, request) => match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("{verb} container {shown} failed: {}", engine_error(&e))),
            Err(_) => return Err(format!("{verb} container {shown}: no answer within {} s", limit.as_secs())),
        },
    }
    let after = find_container(&docker, cx, &id).await?;
    let state = after.state.as_ref();
    let status = state
        .and_then(|s| s.status)
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut out = format!("container {shown}: {status}");
    if let Some(code) = state.and_then(|s| s.exit_code)
        && state.and_then(|s| s.running) != Some(true)
    {
        out.push_str(&format!(" (exit code {code})"));
    }
    Ok(out)
}
