//! cairn-lsp
