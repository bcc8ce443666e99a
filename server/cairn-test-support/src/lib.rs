//! Test doubles for cairn's end-to-end and provider tests.
//!
//! [`ScriptedModel`] is a model provider on loopback: it speaks the OpenAI chat-completions
//! or the Anthropic messages wire format, replays a script of [`Reply`] values, and records
//! every request it receives so tests can assert on what the client sent.
//! It is a double for the LLM provider only; nothing else in cairn is faked here.
//! [`tools`] calls a built-in tool set as the hub does, for the tool crates' tests.
//! [`hf_hub`] stands in for the Hugging Face Hub and its dataset viewer.

pub mod fuzz;
pub mod gate;
pub mod hf_hub;
pub mod memory;
pub mod recorder;
mod render;
mod script;
mod server;
pub mod tools;

pub use gate::{gate, peer, skip};
pub use script::{Fault, Reply, ScriptedToolCall, ScriptedUsage};
pub use server::{Format, Options, RecordedRequest, ScriptedModel};
