//! Tool selection for cairn: choosing, for a request, the few tools of a large catalog worth
//! showing the model.
//!
//! - [`embed`]: the local sentence embedder, which turns tool descriptions and requests into
//!   vectors on the CPU, without sending them anywhere;
//! - [`catalog`]: catalogs and labelled queries in the benchmark format, and the capped text a
//!   tool is retrieved by;
//! - [`bm25`]: a lexical index, for requests that name things literally;
//! - [`rank`]: dense, lexical and hybrid (reciprocal rank fusion) ranking;
//! - [`cache`]: the on-disk cache of tool embeddings, one append-only file per model;
//! - [`selector`]: the long-lived engine that ranks a changing catalog on every agent step;
//! - [`bench`]: the measurements behind `cairn bench select`.

pub mod bench;
pub mod bm25;
pub mod cache;
pub mod catalog;
pub mod embed;
pub mod hub;
pub mod rank;
pub mod selector;
