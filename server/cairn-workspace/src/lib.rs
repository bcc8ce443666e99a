//! Scoped access to workspace files.
//!
//! Architecture invariant: this is the only crate that opens, reads or writes workspace files.
//! Every path is resolved beneath a root, and nothing escapes it through `..`, absolute paths
//! or symlinks.

pub mod overlay;

pub use overlay::{ByteEdit, DocumentOverlay, OpenDocument, OverlayError};
