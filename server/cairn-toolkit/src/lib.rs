//! The tool kit: everything about a built-in tool in one type, and tool sets derived from lists
//! of those types.
//!
//! A tool implements [`Tool`]: its name, title and description, its [`Category`] (exactly one of
//! the twelve), its [`Effect`], whether it is agent-only, its `Args` struct (`Deserialize` +
//! `JsonSchema` with `deny_unknown_fields`; the schema the model sees is derived from it, field
//! docs becoming descriptions), the paths it touches ([`Tool::paths`], required, so a tool that
//! touches files cannot compile without saying which), and [`Tool::call`].
//!
//! A tool set is a `&'static [Entry<H>]` of [`Entry::of`] lines over one [`Host`] (the state the
//! set's tools share: a workspace, the web guard, the sandbox service). [`ToolSet`] derives the
//! names, the catalog entries and the dispatch from it, and runs the one pipeline every call
//! takes: the arguments are parsed against `Args` (a bad field is named, before `call` runs),
//! the declared paths are checked against the workspace's protected paths (a refusal carries
//! them for the agent's approval question), then the tool runs, cancellable by the run (a tool
//! that writes runs inside its host's [`Host::around_write`], which may add to its result).
//!
//! Results go through [`reply`]: text, structured content, errors, edit reports. A call that
//! fails says why with a [`ToolError`]; no library crate fails with a bare `String`.

#![deny(missing_docs)]

pub mod cells;
mod error;
mod host;
pub mod html;
mod paths;
pub mod reply;
mod schema;
mod set;
pub mod table;
mod tool;

pub use cairn_agent::tools::{CallContext, Category, Effect};
pub use schemars::JsonSchema;

pub use crate::error::ToolError;
pub use crate::host::Host;
pub use crate::paths::Paths;
pub use crate::schema::input_schema;
pub use crate::set::{Entry, ToolSet};
pub use crate::tool::Tool;
