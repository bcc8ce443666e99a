//! cairn-tools
