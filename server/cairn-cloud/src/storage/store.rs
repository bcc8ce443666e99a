//! The one interface the storage tools use. [`ObjectStore`] is what a provider implements
//! (`s3.rs` for `aws` and `s3` accounts, `azure.rs`, `gcs.rs`): one method per operation, in
//! the provider's protocol. [`Store`] is one account's storage for one call, the only thing
//! the tools hold: it hands each operation to the account's [`ObjectStore`] and does what is
//! the same for all of them (filtering bucket listings, streaming a download through
//! [`cairn_web::WebGuard::fetch_to`], signing a link). Every request goes through the web
//! guard.

use std::time::Duration;

use cairn_agent::tools::CallContext;
use cairn_web::{Method, WebRequest};
use futures::future::BoxFuture;
use url::Url;

use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, service_error};

/// A provider's object storage. Methods return boxed futures so that the tools can hold a
/// `&dyn ObjectStore` picked at run time from the account's kind.
pub(crate) trait ObjectStore: Send + Sync {
    /// The service name requests are signed as (the credential's use): `s3`, `blob`, `storage`.
    fn signing_name(&self) -> &'static str;

    /// What the provider calls a bucket.
    fn bucket_word(&self) -> &'static str {
        "bucket"
    }

    /// What the date a bucket listing shows is: most providers list a bucket's creation.
    fn bucket_date(&self) -> &'static str {
        "created"
    }

    /// The buckets whose names start with `prefix` (a provider may ignore the prefix).
    fn buckets<'a>(
        &'a self,
        store: &'a Store<'a>,
        prefix: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Bucket>, CloudError>>;

    /// One page of objects under `prefix`, at most `max`.
    fn list<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        page: Page<'a>,
    ) -> BoxFuture<'a, Result<Listing, CloudError>>;

    /// An object's metadata; a missing object is an error that [`CloudError::is_not_found`].
    fn head<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Head, CloudError>>;

    /// The GET of an object's content, for [`Store::download`] to stream.
    fn get_request(
        &self,
        store: &Store<'_>,
        bucket: &str,
        key: &str,
    ) -> Result<CloudRequest, CloudError>;

    /// Stores `body` as `bucket/key`.
    fn upload<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        key: &'a str,
        body: Vec<u8>,
        content_type: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// Copies an object server-side, within the account; returns a note on the copy's state
    /// when the provider has one (Azure's copy status).
    fn copy<'a>(
        &'a self,
        store: &'a Store<'a>,
        from: (&'a str, &'a str),
        to: (&'a str, &'a str),
    ) -> BoxFuture<'a, Result<Option<String>, CloudError>>;

    /// Deletes an object.
    fn delete<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// Creates a bucket (container).
    fn create_bucket<'a>(
        &'a self,
        store: &'a Store<'a>,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// The unsigned address a link to `bucket/key` signs; an error when the provider's links
    /// cannot be signed with what the account holds.
    fn link_url(&self, account: &Account, bucket: &str, key: &str) -> Result<Url, CloudError>;
}

/// Which page of a listing to fetch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Page<'a> {
    pub prefix: &'a str,
    pub delimiter: Option<&'a str>,
    /// Where the page starts: the previous page's [`Listing::next`].
    pub continuation: Option<&'a str>,
    pub max: usize,
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
    /// The account's provider.
    pub backend: &'static dyn ObjectStore,
}

impl<'a> Store<'a> {
    pub(crate) fn new(
        cloud: &'a Cloud,
        account: &'a Account,
        cx: &'a CallContext,
        backend: &'static dyn ObjectStore,
    ) -> Store<'a> {
        Store {
            cloud,
            account,
            cx,
            backend,
        }
    }

    /// What the provider calls a bucket.
    pub(crate) fn bucket_word(&self) -> &'static str {
        self.backend.bucket_word()
    }

    /// The buckets whose names start with `prefix`, at most `max`, and whether there were
    /// more.
    pub(crate) async fn buckets(
        &self,
        prefix: &str,
        max: usize,
    ) -> Result<(Vec<Bucket>, bool), CloudError> {
        let mut all = self.backend.buckets(self, prefix).await?;
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
        let page = Page {
            prefix,
            delimiter,
            continuation,
            max,
        };
        self.backend.list(self, bucket, page).await
    }

    /// An object's metadata; a missing object is an error that [`CloudError::is_not_found`].
    pub(crate) async fn head(&self, bucket: &str, key: &str) -> Result<Head, CloudError> {
        self.backend.head(self, bucket, key).await
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
        let request = self.backend.get_request(self, bucket, key)?;
        self.stream(request, self.backend.signing_name(), max, writer)
            .await
    }

    /// Stores `body` as `bucket/key`.
    pub(crate) async fn upload(
        &self,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<(), CloudError> {
        self.backend
            .upload(self, bucket, key, body, content_type)
            .await
    }

    /// Copies an object server-side, within the account; returns a note on the copy's state
    /// when the provider has one (Azure's copy status).
    pub(crate) async fn copy(
        &self,
        from: (&str, &str),
        to: (&str, &str),
    ) -> Result<Option<String>, CloudError> {
        self.backend.copy(self, from, to).await
    }

    /// Deletes an object.
    pub(crate) async fn delete(&self, bucket: &str, key: &str) -> Result<(), CloudError> {
        self.backend.delete(self, bucket, key).await
    }

    /// Creates a bucket (container).
    pub(crate) async fn create_bucket(&self, name: &str) -> Result<(), CloudError> {
        self.backend.create_bucket(self, name).await
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
        let url = self.backend.link_url(self.account, bucket, key)?;
        let sign_as = self.backend.signing_name();
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
