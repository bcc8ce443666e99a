//! The turn loop of cairn: it calls the model, routes the tool calls it asks for through the
//! approval policy to a [`tools::ToolHost`], feeds results back, and stops at the tool-call budget.
//!
//! Architecture invariant: this crate opens no network connection and touches no workspace file;
//! the model and the tools reach it through the traits in [`model`] and [`tools`]. Its only IO is
//! the session store (JSON Lines under the user's data directory).

pub mod builtin;
mod call;
pub mod compact;
pub mod context;
pub mod events;
pub mod gate;
pub mod hooks;
pub mod model;
pub mod output;
pub mod policy;
pub mod redact;
pub mod run;
pub mod select;
pub mod sessions;
mod stream;
mod subagent;
pub mod tools;
mod turn;

pub use events::{RunEvent, StopReason};
pub use gate::Gate;
pub use run::{Agent, Limits, Mode, RunInput, RunOutcome};
