//! `textDocument/didClose`: the file on disk is what the tools read again.

use std::sync::Mutex;

use tower_lsp_server::ls_types::DidCloseTextDocumentParams;

use crate::editor::Documents;

pub(crate) fn handle(documents: &Mutex<Documents>, params: DidCloseTextDocumentParams) {
    if let Ok(mut docs) = documents.lock() {
        docs.close(&params.text_document.uri);
    }
}
