//! `cairn/diagnostics`: the editor's diagnostics of one file replace those it sent before, in
//! the workspace's terms (1-based line and column, a severity, no LSP type), for the tools.
//!
//! Decisions: a URI that is not a file is ignored; a file keeps at most
//! [`MAX_PER_FILE`] diagnostics and each message at most [`MAX_MESSAGE_CHARS`] characters, so
//! the editor cannot grow the server without bound; a missing severity counts as an error (LSP
//! leaves it to the client, and editors show those as errors). Columns stay in the editor's
//! units, plus one.

use tower_lsp_server::ls_types::{DiagnosticSeverity, NumberOrString};

use crate::editor::{EditorDiagnostics, canonical_path};
use crate::protocol::DiagnosticsParams;

/// Diagnostics kept per file.
const MAX_PER_FILE: usize = 500;
/// Characters kept of one message.
const MAX_MESSAGE_CHARS: usize = 2000;

pub(crate) fn handle(store: &EditorDiagnostics, params: DiagnosticsParams) {
    let Some(path) = canonical_path(&params.uri) else {
        tracing::debug!(uri = %params.uri.as_str(), "cairn/diagnostics for a URI that is not a file");
        return;
    };
    let diagnostics = params
        .diagnostics
        .into_iter()
        .take(MAX_PER_FILE)
        .map(|d| cairn_workspace::Diagnostic {
            line: d.range.start.line.saturating_add(1),
            column: d.range.start.character.saturating_add(1),
            severity: match d.severity {
                Some(DiagnosticSeverity::WARNING) => cairn_workspace::Severity::Warning,
                Some(DiagnosticSeverity::INFORMATION) => cairn_workspace::Severity::Information,
                Some(DiagnosticSeverity::HINT) => cairn_workspace::Severity::Hint,
                _ => cairn_workspace::Severity::Error,
            },
            source: d.source,
            code: d.code.map(|c| match c {
                NumberOrString::Number(n) => n.to_string(),
                NumberOrString::String(s) => s,
            }),
            message: cut(d.message),
        })
        .collect();
    store.publish(path, diagnostics);
}

fn cut(message: String) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", message.get(..at).unwrap_or_default()),
        None => message,
    }
}
