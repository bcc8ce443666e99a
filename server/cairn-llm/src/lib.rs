//! cairn-llm
