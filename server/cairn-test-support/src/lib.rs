//! cairn-test-support
