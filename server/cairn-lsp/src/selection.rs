//! The tool-selection model as the editor sees it: `$/progress` while it loads, and a warning
//! when it cannot load, saying what is missing and how to get it. Chat keeps working either way
//! (selection falls back to keywords), so this never blocks anything.

use std::sync::Arc;

use cairn_agent::select::RankerStatus;
use tower_lsp_server::ls_types::{MessageType, ProgressToken};

use tower_lsp_server::Client;

use crate::factory::AgentFactory;

/// Reports the selection model's state to the editor for the life of the server.
pub(crate) fn watch(client: Client, factory: Arc<dyn AgentFactory>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    factory.watch_selection(Arc::new(move |status| {
        let _ = tx.send(status);
    }));
    tokio::spawn(async move {
        let token =
            ProgressToken::String(format!("cairn-selection-{}", uuid::Uuid::new_v4().simple()));
        let mut progress = None;
        let mut warned: Option<String> = None;
        while let Some(status) = rx.recv().await {
            match status {
                RankerStatus::Loading(message) => {
                    if progress.is_none()
                        && client
                            .create_work_done_progress(token.clone())
                            .await
                            .is_ok()
                    {
                        progress = Some(
                            client
                                .progress(token.clone(), "cairn: loading the tool-selection model")
                                .begin()
                                .await,
                        );
                    }
                    if let (Some(p), Some(message)) = (&progress, message) {
                        p.report(message).await;
                    }
                }
                RankerStatus::Ready => {
                    if let Some(p) = progress.take() {
                        p.finish().await;
                    }
                }
                RankerStatus::Unavailable(message) => {
                    if let Some(p) = progress.take() {
                        p.finish().await;
                    }
                    if warned.as_deref() != Some(message.as_str()) {
                        client
                            .show_message(
                                MessageType::WARNING,
                                format!(
                                    "cairn: tools are chosen by keywords only, because the \
                                     embedding model is unavailable: {message}"
                                ),
                            )
                            .await;
                        warned = Some(message);
                    }
                }
            }
        }
    });
}
