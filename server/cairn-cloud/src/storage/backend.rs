//! The one interface the storage tools use, [`Store`]: what a bucket, a listing and an
//! object's metadata are, and one method per operation, each handed to the account's provider
//! (`backend_s3` for `aws` and `s3`, `backend_azure`, `backend_gcs`). Every request goes
//! through the web guard; a download streams through [`cairn_web::WebGuard::fetch_to`].

use std::time::Duration;

use cairn_agent::tools::CallContext;
use cairn_config::CloudKind;
use cairn_web::{Method, WebRequest};
use url::Url;

use super::{backend_azure as azure, backend_gcs as gcs, backend_s3 as s3};
use crate::Cloud;
use crate::account::Account;
use crate::request::{CloudError, CloudRequest, service_error};

/// Which provider's protocol an account speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    /// S3's REST API (AWS, or an S3-compatible store).
    S3,
    /// Azure Blob Storage.
    Azure,
    /// Google Cloud Storage's JSON API.
    Gcs,
}

/// A bucket (container).
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    pub name: String,
    pub created: Option<String>,
}

/// One object in a listing.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub key: String,
    pub size: Option<u64>,
    pub modified: Option<String>,
}

/// One page of a listing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    pub objects: Vec<Object>,
    /// The "folders": common prefixes up to the delimiter.
    pub folders: Vec<String>,
    /// Where the next page starts, passed back as `continuation`.
    pub next: Option<String>,
}

/// An object's metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct Head {
    pub size: Option<u64>,
    pub content_type: Option<String>,
    pub modified: Option<String>,
    pub etag: Option<String>,
    /// User metadata (`x-amz-meta-*`, `x-ms-meta-*`, Google's `metadata`).
    pub metadata: Vec<(String, String)>,
}

impl Head {
    /// What S3 and Azure say in a HEAD answer's headers; user metadata under `meta_prefix`.
    pub(crate) fn from_headers(h: &cairn_web::header::HeaderMap, meta_prefix: &str) -> Head {
        Head {
            size: header_text(h, "content-length").and_then(|s| s.parse().ok()),
            content_type: header_text(h, "content-type"),
            modified: header_text(h, "last-modified"),
            etag: header_text(h, "etag"),
            metadata: meta_headers(h, meta_prefix),
        }
    }
}

/// What a streamed download wrote.
#[derive(Debug, Clone)]
pub(crate) struct Downloaded {
    pub written: u64,
    pub truncated: bool,
}

/// One account's object storage, for one call.
pub(crate) struct Store<'a> {
    pub cloud: &'a Cloud,
    pub account: &'a Account,
    pub cx: &'a CallContext,
    pub provider: Provider,
}

impl<'a> Store<'a> {
    pub(crate) fn new(cloud: &'a Cloud, account: &'a Account, cx: &'a CallContext) -> Store<'a> {
        let provider = match account.kind {
            CloudKind::Aws | CloudKind::S3 => Provider::S3,
            CloudKind::Azure => Provider::Azure,
            CloudKind::Gcp => Provider::Gcs,
        };
        Store {
            cloud,
            account,
            cx,
            provider,
        }
    }

    /// What the provider calls a bucket.
    pub(crate) fn bucket_word(&self) -> &'static str {
        match self.provider {
            Provider::Azure => "container",
            Provider::S3 | Provider::Gcs => "bucket",
        }
    }

    /// The buckets whose names start with `prefix`, at most `max`, and whether there were
    /// more.
    pub(crate) async fn buckets(
        &self,
        prefix: &str,
        max: usize,
    ) -> Result<(Vec<Bucket>, bool), CloudError> {
        let mut all = match self.provider {
            Provider::S3 => s3::buckets(self, prefix).await?,
            Provider::Azure => azure::buckets(self, prefix).await?,
            Provider::Gcs => gcs::buckets(self, prefix).await?,
        };
        // Also here: a store that ignores the prefix (an older S3-compatible one) is filtered.
        all.retain(|b| b.name.starts_with(prefix));
        let more = all.len() > max;
        all.truncate(max);
        Ok((all, more))
    }

    /// One page of objects under `prefix`, at most `max`.
    pub(crate) async fn list(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: Option<&str>,
        continuation: Option<&str>,
        max: usize,
    ) -> Result<Listing, CloudError> {
        match self.provider {
            Provider::S3 => s3::list(self, bucket, prefix, delimiter, continuation, max).await,
            Provider::Azure => {
                azure::list(self, bucket, prefix, delimiter, continuation, max).await
            }
            Provider::Gcs => gcs::list(self, bucket, prefix, delimiter, continuation, max).await,
        }
    }

    /// An object's metadata; a missing object is an error that [`CloudError::is_not_found`].
    pub(crate) async fn head(&self, bucket: &str, key: &str) -> Result<Head, CloudError> {
        match self.provider {
            Provider::S3 => s3::head(self, bucket, key).await,
            Provider::Azure => azure::head(self, bucket, key).await,
            Provider::Gcs => gcs::head(self, bucket, key).await,
        }
    }

    /// Streams an object into `writer`, at most `max` bytes.
    pub(crate) async fn download<W>(
        &self,
        bucket: &str,
        key: &str,
        max: u64,
        writer: &mut W,
    ) -> Result<Downloaded, CloudError>
    where
        W: tokio::io::AsyncWrite + Unpin + Send,
    {
        let (request, sign_as) = match self.provider {
            Provider::S3 => (s3::get_request(self, bucket, key)?, "s3"),
            Provider::Azure => (azure::get_request(self, bucket, key)?, "blob"),
            Provider::Gcs => (gcs::get_request(self, bucket, key)?, "storage"),
        };
        self.stream(request, sign_as, max, writer).await
    }

    /// Stores `body` as `bucket/key`.
    pub(crate) async fn upload(
        &self,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<(), CloudError> {
        match self.provider {
            Provider::S3 => s3::upload(self, bucket, key, body, content_type).await,
            Provider::Azure => azure::upload(self, bucket, key, body, content_type).await,
            Provider::Gcs => gcs::upload(self, bucket, key, body, content_type).await,
        }
    }

    /// Copies an object server-side, within the account; returns a note on the copy's state
    /// when the provider has one (Azure's copy status).
    pub(crate) async fn copy(
        &self,
        from: (&str, &str),
        to: (&str, &str),
    ) -> Result<Option<String>, CloudError> {
        match self.provider {
            Provider::S3 => s3::copy(self, from, to).await.map(|()| None),
            Provider::Azure => azure::copy(self, from, to).await,
            Provider::Gcs => gcs::copy(self, from, to).await.map(|()| None),
        }
    }

    /// Deletes an object.
    pub(crate) async fn delete(&self, bucket: &str, key: &str) -> Result<(), CloudError> {
        match self.provider {
            Provider::S3 => s3::delete(self, bucket, key).await,
            Provider::Azure => azure::delete(self, bucket, key).await,
            Provider::Gcs => gcs::delete(self, bucket, key).await,
        }
    }

    /// Creates a bucket (container).
    pub(crate) async fn create_bucket(&self, name: &str) -> Result<(), CloudError> {
        match self.provider {
            Provider::S3 => s3::create_bucket(self, name).await,
            Provider::Azure => azure::create_bucket(self, name).await,
            Provider::Gcs => gcs::create_bucket(self, name).await,
        }
    }

    /// A link to GET or PUT `bucket/key` for `expires`, signed by the guard with the account's
    /// secret (refused for a host the secret is not bound to).
    pub(crate) fn presign(
        &self,
        method: &Method,
        bucket: &str,
        key: &str,
        expires: Duration,
    ) -> Result<Url, CloudError> {
        let (url, sign_as) = match self.provider {
            Provider::S3 => (s3::object_url(self.account, bucket, key, &[])?, "s3"),
            Provider::Azure => (azure::blob_url(self.account, bucket, key, &[])?, "blob"),
            Provider::Gcs => {
                return Err(CloudError::Invalid(
                    "Google Cloud Storage links are signed with a service-account key, which cairn does not hold (the gcp account signs with an access token, which a link would expose); share the object through IAM instead, or use an S3 or Azure account".into(),
                ));
            }
        };
        let guard = self.cloud.guard.as_ref().ok_or(CloudError::NoGuard)?;
        let credential = self.account.credential(sign_as).ok_or_else(|| {
            CloudError::Invalid(format!(
                "account `{}` has no secret (`secret` in its `[cloud.{}]`), so nothing can sign a link",
                self.account.name, self.account.name
            ))
        })?;
        Ok(guard.presign(&credential, method, url.as_str(), expires)?)
    }

    /// Sends `request` through the guard (signed as `sign_as`), cancellable.
    pub(crate) async fn send(
        &self,
        sign_as: &str,
        request: CloudRequest,
    ) -> Result<cairn_web::WebResponse, CloudError> {
        self.cloud
            .send_ok(self.cx, self.account, sign_as, request)
            .await
    }

    /// A GET streamed into `writer` through [`cairn_web::WebGuard::fetch_to`], cancellable.
    async fn stream<W>(
        &self,
        request: CloudRequest,
        sign_as: &str,
        max: u64,
        writer: &mut W,
    ) -> Result<Downloaded, CloudError>
    where
        W: tokio::io::AsyncWrite + Unpin + Send,
    {
        let guard = self.cloud.guard.as_ref().ok_or(CloudError::NoGuard)?;
        let mut web =
            WebRequest::new(request.method, request.url.as_str()).for_user(self.cloud.user.clone());
        web.headers = request.headers;
        if let Some(credential) = self.account.credential(sign_as) {
            web = web.with_credential(credential);
        }
        let response = tokio::select! {
            r = guard.fetch_to(web, max, writer) => r?,
            () = self.cx.cancel.cancelled() => return Err(CloudError::Cancelled),
        };
        if !response.status.is_success() {
            let as_web = cairn_web::WebResponse {
                status: response.status,
                final_url: response.final_url,
                headers: response.headers,
                body: response.body,
                truncated: response.truncated,
                redirects: response.redirects,
            };
            return Err(service_error(sign_as, &as_web));
        }
        Ok(Downloaded {
            written: response.written,
            truncated: response.truncated,
        })
    }
}

/// A header's value as text, if present and readable.
pub(crate) fn header_text(headers: &cairn_web::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// User metadata from headers starting with `prefix` (`x-amz-meta-`), sorted.
pub(crate) fn meta_headers(
    headers: &cairn_web::header::HeaderMap,
    prefix: &str,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(name, value)| {
            let name = name.as_str().strip_prefix(prefix)?;
            Some((
                name.to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ))
        })
        .collect();
    out.sort();
    out
}
