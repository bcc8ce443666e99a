//! `textDocument/didOpen`: the editor's buffer becomes the document the tools read.

use std::sync::Mutex;

use tower_lsp_server::ls_types::DidOpenTextDocumentParams;

use crate::documents::Document;
use crate::editor::Documents;

pub(crate) fn handle(documents: &Mutex<Documents>, params: DidOpenTextDocumentParams) {
    let doc = Document::new(&params.text_document.text, params.text_document.version);
    if let Ok(mut docs) = documents.lock() {
        docs.open(params.text_document.uri, doc);
    }
}
