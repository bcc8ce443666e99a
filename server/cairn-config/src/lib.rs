//! cairn-config
