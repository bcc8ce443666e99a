//! Object storage on S3 (and S3-compatible stores), Azure Blob Storage and Google Cloud Storage
//! through one interface: buckets (containers), objects by prefix, head, download into the
//! workspace, upload from it, copy, delete, create a bucket, presigned URLs.
//!
//! The tools are provider-agnostic: they name a bucket and a key, and the account's
//! [`store::ObjectStore`] (`s3.rs`, `azure.rs`, `gcs.rs`) turns that into the provider's
//! requests, through a [`store::Store`] that `open.rs` builds for the account (the one place
//! that looks at the account's kind). Keys and bucket names are checked in `names.rs` before
//! any request is built, so a key cannot step into another bucket's address (`..` segments).

mod azure;
mod gcs;
mod names;
mod open;
mod s3;
mod store;

pub(crate) mod buckets;
pub(crate) mod copy;
pub(crate) mod create_bucket;
pub(crate) mod delete;
pub(crate) mod download;
pub(crate) mod head;
pub(crate) mod list;
pub(crate) mod presign;
pub(crate) mod upload;
