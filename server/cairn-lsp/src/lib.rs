//! The language-server front of cairn.
//!
//! Architecture invariant: this is the only crate that knows LSP. A `cairn/chat` request (or a
//! command from Helix) answers at once and its run goes on in a task, so no handler slot is held
//! while the run waits on the model or on the editor; the server stays responsive however many
//! runs wait on approvals.

mod chatdoc;
mod documents;
mod editor;
mod factory;
mod handlers;
mod local_model;
mod mcp;
mod panic;
pub mod protocol;
mod runs;
mod selection;
mod server;
mod state;
mod transport;

pub use documents::{Document, Encoding};
pub use factory::{AgentFactory, McpHandle};
pub use server::{ServeOptions, serve};
