//! Code execution in Docker sandboxes with hard limits.
//!
//! Architecture invariant: this is the only crate that talks to a container engine (bollard).
//! Every container is made by [`engine`] from the user's configuration: the image from
//! `sandbox.images`, the limits from `[sandbox]`; the model's arguments reach a container only
//! as the code or command it runs, never as an option of the container.
//!
//! Every container is labelled, removed after use (also when the run is cancelled or its
//! future dropped), and containers left by a crashed cairn are reaped at the next start.

pub mod engine;
mod error;
pub mod exec;
pub mod runtimes;
mod service;
mod session;
mod tls;
pub mod tools;

pub use engine::{Engine, Identity, Limits, RunAs, WorkspaceMount};
pub use error::SandboxError;
pub use exec::{Ending, RunReport};
pub use service::{RunOptions, Sandbox};
