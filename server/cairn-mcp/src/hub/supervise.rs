//! Supervision: starting and stopping a server's slot, and the loop that keeps it connected.
//!
//! Supervision rule: a connection that fails (spawn, handshake, crash) counts one failure; the
//! server is restarted after `backoff_base * 2^(failures-1)`, capped at `backoff_max`; after
//! `max_restarts` consecutive failures it is `Failed` with the last reason. A connection that
//! stayed up for `stable_after` resets the count. Failures a restart cannot fix (missing
//! binary, bad configuration, unsupported protocol version) fail at once.
//!
//! A live connection is a [`Conn`]; when it ends, it says why (the child's exit status and last
//! line of stderr, an oversized line, a closed pipe).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::service::{Peer, QuitReason, RunningService, RunningServiceCancellationToken};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::catalog::{accept_tools, rebuild_catalog};
use super::client::HubClient;
use super::connect::{connect_checked, handshake_limit, transport_of, within_limit};
use super::{
    Hub, HubEvent, Kind, ServerState, ServerStatus, Shared, Slot, TransportKind, describe, lock,
};
use crate::error::{McpError, fmt_duration};
use crate::stdio::StdioChild;

impl Hub {
    pub(super) fn start_slot(&self, name: &str, kind: Kind, disabled: bool) {
        let generation = self.shared.generations.fetch_add(1, Ordering::Relaxed);
        let stop = CancellationToken::new();
        let transport = match &kind {
            Kind::External(cfg) => transport_of(cfg),
            Kind::InProcess { .. } => TransportKind::InProcess,
        };
        let state = if disabled {
            ServerState::Disabled
        } else {
            ServerState::Starting
        };
        let old = {
            let mut servers = lock(&self.shared.servers);
            let old = servers.insert(
                name.to_owned(),
                Slot {
                    kind,
                    transport,
                    state: state.clone(),
                    peer: None,
                    tools: Vec::new(),
                    generation,
                    stop: stop.clone(),
                    task: None,
                },
            );
            if !disabled {
                let shared = self.shared.clone();
                let server = name.to_owned();
                let task = tokio::spawn(async move {
                    let inner =
                        tokio::spawn(supervise(shared.clone(), server.clone(), generation, stop));
                    // A bug in the supervisor must not leave the server shown as running.
                    if let Err(e) = inner.await
                        && e.is_panic()
                    {
                        with_slot(&shared, &server, generation, |slot| {
                            slot.peer = None;
                            slot.tools.clear();
                        });
                        set_state(
                            &shared,
                            &server,
                            generation,
                            ServerState::Failed {
                                reason: "its supervisor panicked (a bug in cairn)".to_owned(),
                            },
                        );
                        rebuild_catalog(&shared);
                    }
                });
                if let Some(slot) = servers.get_mut(name) {
                    slot.task = Some(task);
                }
            }
            old
        };
        if let Some(old) = old {
            old.stop.cancel();
        }
        emit_state(&self.shared, name, transport, state);
        rebuild_catalog(&self.shared);
    }

    pub(super) fn remove_slot(&self, name: &str) {
        let old = lock(&self.shared.servers).remove(name);
        if let Some(old) = old {
            old.stop.cancel();
        }
        rebuild_catalog(&self.shared);
    }
}

pub(super) fn emit_state(
    shared: &Shared,
    name: &str,
    transport: TransportKind,
    state: ServerState,
) {
    let _ = shared.events.send(HubEvent::Server(ServerStatus {
        name: name.to_owned(),
        transport,
        state,
    }));
}

/// Updates a slot if `generation` still owns it; returns whether it did.
pub(super) fn with_slot(
    shared: &Shared,
    name: &str,
    generation: u64,
    f: impl FnOnce(&mut Slot),
) -> bool {
    let mut servers = lock(&shared.servers);
    match servers.get_mut(name) {
        Some(slot) if slot.generation == generation => {
            f(slot);
            true
        }
        _ => false,
    }
}

fn set_state(shared: &Shared, name: &str, generation: u64, state: ServerState) {
    let mut transport = TransportKind::Stdio;
    let owned = with_slot(shared, name, generation, |slot| {
        slot.state = state.clone();
        transport = slot.transport;
    });
    if owned {
        match &state {
            ServerState::Failed { reason } | ServerState::Restarting { reason, .. } => {
                tracing::warn!(server = %name, "MCP server: {}", describe(&state));
                let _ = reason;
            }
            _ => tracing::info!(server = %name, "MCP server: {state:?}"),
        }
        emit_state(shared, name, transport, state);
    }
}

/// A live connection.
pub(super) struct Conn {
    pub(super) peer: Peer<RoleClient>,
    /// What the server answered `initialize` with.
    pub(super) protocol_version: Option<rmcp::model::ProtocolVersion>,
    quit: JoinHandle<Result<QuitReason, tokio::task::JoinError>>,
    /// A finished `JoinHandle` panics when polled again, so its end is remembered.
    quit_done: bool,
    cancel: Option<RunningServiceCancellationToken>,
    child: Option<StdioChild>,
    max_line_bytes: usize,
    /// The OAuth authorization of an HTTP server, whose sign-ins do not count against the
    /// handshake limit.
    pub(super) auth: Option<Arc<crate::oauth::Authorizer>>,
}

impl Conn {
    pub(super) fn new(
        service: RunningService<RoleClient, HubClient>,
        child: Option<StdioChild>,
        max_line_bytes: usize,
    ) -> Conn {
        let peer = service.peer().clone();
        let protocol_version = service
            .peer_info()
            .map(|info| info.protocol_version.clone());
        let cancel = Some(service.cancellation_token());
        let quit = tokio::spawn(service.waiting());
        Conn {
            peer,
            protocol_version,
            quit,
            quit_done: false,
            cancel,
            child,
            max_line_bytes,
            auth: None,
        }
    }

    /// Waits until the connection ends (the reason) or `stop` fires (`None`).
    async fn wait_end(&mut self, stop: &CancellationToken) -> Option<String> {
        enum End {
            Quit,
            Exit(std::io::Result<std::process::ExitStatus>),
            Stop,
        }
        let end = match self.child.as_mut() {
            Some(child) => tokio::select! {
                _ = &mut self.quit => End::Quit,
                status = child.child.wait() => End::Exit(status),
                _ = stop.cancelled() => End::Stop,
            },
            None => tokio::select! {
                _ = &mut self.quit => End::Quit,
                _ = stop.cancelled() => End::Stop,
            },
        };
        if matches!(end, End::Quit) {
            self.quit_done = true;
        }
        match end {
            End::Stop => None,
            // An oversized line makes the child fail its writes and exit: that line is the cause.
            End::Exit(_)
                if self
                    .child
                    .as_ref()
                    .is_some_and(|c| c.oversized.load(Ordering::Relaxed)) =>
            {
                Some(oversized_reason(self.max_line_bytes))
            }
            End::Exit(status) => Some(self.exit_reason(status, "while running").await),
            End::Quit => {
                let Some(child) = self.child.as_mut() else {
                    return Some("the connection closed".to_owned());
                };
                if child.oversized.load(Ordering::Relaxed) {
                    return Some(oversized_reason(self.max_line_bytes));
                }
                // The pipe usually closes because the child exited; give it a moment to say how.
                match tokio::time::timeout(Duration::from_secs(1), child.child.wait()).await {
                    Ok(status) => Some(self.exit_reason(status, "while running").await),
                    Err(_) => Some("closed its stdout".to_owned()),
                }
            }
        }
    }

    async fn exit_reason(
        &mut self,
        status: std::io::Result<std::process::ExitStatus>,
        during: &'static str,
    ) -> String {
        let stderr = match self.child.as_mut() {
            Some(child) => child.stderr.last_line().await,
            None => None,
        };
        McpError::Exited {
            status: status_text(status),
            during,
            stderr,
        }
        .to_string()
    }

    /// Closes the connection and ends the child, bounded.
    pub(super) async fn close(mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        if !self.quit_done {
            let _ = tokio::time::timeout(Duration::from_secs(1), &mut self.quit).await;
        }
        self.quit.abort();
        if let Some(mut child) = self.child.take() {
            child.kill(Duration::from_secs(2)).await;
        }
    }
}

pub(super) fn oversized_reason(max: usize) -> String {
    format!("sent a line longer than the {max}-byte limit (mcp.max_line_bytes)")
}

pub(super) fn status_text(status: std::io::Result<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("status {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "an unknown status".to_owned(),
        },
        Err(e) => format!("an unknown status ({e})"),
    }
}

async fn supervise(shared: Arc<Shared>, name: String, generation: u64, stop: CancellationToken) {
    let mut failures: u32 = 0;
    loop {
        if stop.is_cancelled() {
            return;
        }
        let kind = {
            let servers = lock(&shared.servers);
            match servers.get(&name) {
                Some(slot) if slot.generation == generation => slot.kind.clone(),
                _ => return,
            }
        };
        let builtin = matches!(kind, Kind::InProcess { .. });
        let config = lock(&shared.config).clone();
        let started = Instant::now();
        let attempt = tokio::select! {
            r = connect_checked(&shared, &name, generation, &kind, &config) => r,
            _ = stop.cancelled() => return,
        };
        let reason = match attempt {
            Err(e) => {
                if e.is_permanent() && !builtin {
                    set_state(
                        &shared,
                        &name,
                        generation,
                        ServerState::Failed {
                            reason: e.to_string(),
                        },
                    );
                    return;
                }
                e.to_string()
            }
            Ok(mut conn) => {
                let handshake = handshake_limit(&config, builtin);
                let listed = tokio::select! {
                    r = within_limit(handshake, conn.auth.as_ref(), conn.peer.list_all_tools()) => Some(r.ok_or(())),
                    _ = stop.cancelled() => None,
                };
                match listed {
                    None => {
                        conn.close().await;
                        return;
                    }
                    Some(Err(_)) => {
                        conn.close().await;
                        format!(
                            "did not answer tools/list within {}",
                            fmt_duration(handshake)
                        )
                    }
                    Some(Ok(Err(e))) => {
                        conn.close().await;
                        match crate::error::auth_failure(&e) {
                            Some(auth) if auth.is_permanent() && !builtin => {
                                set_state(
                                    &shared,
                                    &name,
                                    generation,
                                    ServerState::Failed {
                                        reason: auth.to_string(),
                                    },
                                );
                                return;
                            }
                            Some(auth) => auth.to_string(),
                            None => format!("tools/list failed: {e}"),
                        }
                    }
                    Some(Ok(Ok(tools))) => {
                        let tools = accept_tools(&name, tools);
                        let count = tools.len();
                        let peer = conn.peer.clone();
                        with_slot(&shared, &name, generation, |slot| {
                            slot.tools = tools;
                            slot.peer = Some(peer);
                        });
                        // The catalog first: whoever sees `Running` must find the tools.
                        rebuild_catalog(&shared);
                        set_state(
                            &shared,
                            &name,
                            generation,
                            ServerState::Running { tools: count },
                        );
                        let end = conn.wait_end(&stop).await;
                        with_slot(&shared, &name, generation, |slot| {
                            slot.tools.clear();
                            slot.peer = None;
                        });
                        rebuild_catalog(&shared);
                        conn.close().await;
                        match end {
                            None => return,
                            Some(reason) => {
                                if started.elapsed() >= shared.options.stable_after {
                                    failures = 0;
                                }
                                reason
                            }
                        }
                    }
                }
            }
        };
        failures = failures.saturating_add(1);
        if failures > config.max_restarts && !builtin {
            set_state(&shared, &name, generation, ServerState::Failed { reason });
            return;
        }
        set_state(
            &shared,
            &name,
            generation,
            ServerState::Restarting {
                attempt: failures,
                reason,
            },
        );
        let exp = failures.saturating_sub(1).min(16);
        let delay = shared
            .options
            .backoff_base
            .saturating_mul(1u32 << exp)
            .min(shared.options.backoff_max);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stop.cancelled() => return,
        }
    }
}
