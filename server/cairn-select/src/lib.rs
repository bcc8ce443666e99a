//! Tool selection for cairn.
//!
//! For now this holds only its first piece, the local sentence embedder ([`embed`]): it turns tool
//! descriptions and requests into vectors on the CPU, without sending them anywhere.
//! The index, the retrieval and the LLM filter over the catalog come later.

pub mod embed;
