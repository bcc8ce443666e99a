//! Repository checks.
