//! A model that runs on this machine, as the editor sees it: the notice that the default local
//! model answers (once, as an information message), `$/progress` while it downloads and loads,
//! each answer's speed (tokens a second, time to the first token) as a `$/progress` that begins
//! and ends with it, and nothing else: a failure reaches the user as the run's error.

use std::sync::Arc;

use cairn_agent::model::ProviderStatus;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageType, ProgressToken};

use crate::factory::AgentFactory;

/// Reports the local model's state to the editor for the life of the server.
pub(crate) fn watch(client: Client, factory: Arc<dyn AgentFactory>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    factory.watch_model(Arc::new(move |status| {
        let _ = tx.send(status.clone());
    }));
    tokio::spawn(async move {
        let mut progress = None;
        let mut last_percent = None;
        while let Some(status) = rx.recv().await {
            match status {
                ProviderStatus::Notice { message } => {
                    client
                        .show_message(MessageType::INFO, format!("cairn: {message}"))
                        .await;
                }
                ProviderStatus::Downloading { .. } | ProviderStatus::Loading { .. } => {
                    if progress.is_none() {
                        let token = ProgressToken::String(format!(
                            "cairn-model-{}",
                            uuid::Uuid::new_v4().simple()
                        ));
                        if client
                            .create_work_done_progress(token.clone())
                            .await
                            .is_ok()
                        {
                            progress = Some(
                                client
                                    .progress(token, "cairn: preparing the local model")
                                    .with_percentage(0)
                                    .begin()
                                    .await,
                            );
                        }
                    }
                    let Some(p) = &progress else { continue };
                    match status {
                        ProviderStatus::Downloading { file, done, total } => {
                            let percent = (done * 100).checked_div(total).unwrap_or(0) as u32;
                            if last_percent != Some(percent) {
                                last_percent = Some(percent);
                                p.report_with_message(
                                    format!(
                                        "downloading {file}: {} of {} MB",
                                        done / 1_000_000,
                                        total / 1_000_000
                                    ),
                                    percent,
                                )
                                .await;
                            }
                        }
                        ProviderStatus::Loading { model } => {
                            p.report_with_message(format!("loading {model}"), 100).await;
                        }
                        _ => {}
                    }
                }
                speed @ ProviderStatus::Speed { .. } => {
                    let Some(line) = speed.speed_line() else {
                        continue;
                    };
                    let token = ProgressToken::String(format!(
                        "cairn-model-speed-{}",
                        uuid::Uuid::new_v4().simple()
                    ));
                    if client
                        .create_work_done_progress(token.clone())
                        .await
                        .is_ok()
                    {
                        client
                            .progress(token, "cairn: local model")
                            .with_message(line.clone())
                            .begin()
                            .await
                            .finish_with_message(line)
                            .await;
                    }
                }
                ProviderStatus::Ready { .. } | ProviderStatus::Failed { .. } => {
                    if let Some(p) = progress.take() {
                        p.finish().await;
                    }
                    last_percent = None;
                }
            }
        }
    });
}
