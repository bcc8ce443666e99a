//! Object storage on S3 (and S3-compatible stores), Azure Blob Storage and Google Cloud Storage
//! through one interface: buckets (containers), objects by prefix, head, download into the
//! workspace, upload from it, copy, delete, create a bucket, presigned URLs.
