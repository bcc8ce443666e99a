//! Supervision: starting and stopping a server's slot, and the loop that keeps it connected.
//!
//! Supervision rule: a connection that fails (spawn, handshake, crash) counts one failure; the
//! server is restarted after `backoff_base * 2^(failures-1)`, capped at `backoff_max`; after
//! `max_restarts` consecutive failures it is `Failed` with the last reason. A connection that
//! stayed up for `stable_after` resets the count. Failures a restart cannot fix (missing
//! binary, bad configuration, unsupported protocol version) fail at once.
//!
//! A live connection is a [`Conn`] (`conn.rs`); when it ends, it says why.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::Hub;
use super::catalog::accept_tools;
use super::connect::{connect_checked, handshake_limit, transport_of, within_limit};
use super::shared::{Shared, emit_state, lock, rebuild_catalog, set_state, with_slot};
use super::slot::{Kind, Slot};
use super::types::{ServerState, TransportKind};
use crate::error::fmt_duration;

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
