//! The cloud tools (placeholder while the crate is laid out).
