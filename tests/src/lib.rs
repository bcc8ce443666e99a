//! End-to-end tests of the real `cairn` binary live in `tests/`.
