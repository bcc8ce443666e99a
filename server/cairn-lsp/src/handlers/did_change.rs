//! `textDocument/didChange`: incremental edits applied to the open document.

use std::sync::Mutex;

use tower_lsp_server::ls_types::DidChangeTextDocumentParams;

use crate::documents::Encoding;
use crate::editor::Documents;

pub(crate) fn handle(
    documents: &Mutex<Documents>,
    encoding: Encoding,
    params: DidChangeTextDocumentParams,
) {
    if let Ok(mut docs) = documents.lock()
        && let Some(doc) = docs.by_uri.get_mut(&params.text_document.uri)
    {
        for change in &params.content_changes {
            doc.apply_change(change, encoding);
        }
        doc.version = params.text_document.version;
    }
}
