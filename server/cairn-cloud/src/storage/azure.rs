//! Azure Blob Storage: containers and block blobs, signed with the account's Shared Key (or
//! its SAS token) by the guard as `blob`.

use cairn_web::Method;
use futures::future::BoxFuture;
use url::Url;

use super::store::{Bucket, Head, Listing, Object, ObjectStore, Page, Store, header_text};
use crate::account::Account;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, text_of, xml, xml_text};

/// Azure Blob Storage, for `azure` accounts.
pub(crate) struct AzureStore;

/// The service (and signing) name.
const BLOB: &str = "blob";

fn key_path(key: &str) -> String {
    key.split('/').map(segment).collect::<Vec<_>>().join("/")
}

/// The address of `container` (and blob `key`, when not empty) with `query`.
fn blob_url(
    account: &Account,
    container: &str,
    key: &str,
    query: &[(&str, &str)],
) -> Result<Url, CloudError> {
    let mut url = account.base_url(BLOB)?;
    let base_path = url.path().to_owned();
    let path = if key.is_empty() {
        format!("{base_path}{}", segment(container))
    } else {
        format!("{base_path}{}/{}", segment(container), key_path(key))
    };
    url.set_path(&path);
    if !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in query {
            pairs.append_pair(k, v);
        }
    }
    Ok(url)
}

async fn send(
    store: &Store<'_>,
    request: CloudRequest,
) -> Result<cairn_web::WebResponse, CloudError> {
    store
        .cloud
        .azure(store.cx, store.account, BLOB, request)
        .await
}

async fn buckets(store: &Store<'_>, prefix: &str) -> Result<Vec<Bucket>, CloudError> {
    let mut out = Vec::new();
    let mut marker: Option<String> = None;
    // Pages of 500; the caller shows a few hundred at most, so two pages are plenty.
    for _ in 0..2 {
        let mut query = vec![("comp", "list"), ("maxresults", "500")];
        if let Some(m) = &marker {
            query.push(("marker", m.as_str()));
        }
        if !prefix.is_empty() {
            query.push(("prefix", prefix));
        }
        let mut url = store.account.base_url(BLOB)?;
        url.query_pairs_mut().extend_pairs(query);
        let response = send(store, CloudRequest::new(Method::GET, url)).await?;
        let text = text_of(BLOB, &response)?;
        let doc = xml(BLOB, &text)?;
        out.extend(
            doc.descendants()
                .filter(|n| n.has_tag_name("Container"))
                .map(|c| Bucket {
                    name: c
                        .children()
                        .find(|n| n.has_tag_name("Name"))
                        .and_then(|n| n.text())
                        .unwrap_or_default()
                        .to_owned(),
                    created: xml_text(c, "Last-Modified").map(str::to_owned),
                }),
        );
        marker = xml_text(doc.root_element(), "NextMarker")
            .filter(|m| !m.is_empty())
            .map(str::to_owned);
        if marker.is_none() {
            break;
        }
    }
    Ok(out)
}

async fn list(
    store: &Store<'_>,
    container: &str,
    prefix: &str,
    delimiter: Option<&str>,
    continuation: Option<&str>,
    max: usize,
) -> Result<Listing, CloudError> {
    let max_results = max.to_string();
    let mut query = vec![
        ("restype", "container"),
        ("comp", "list"),
        ("maxresults", max_results.as_str()),
    ];
    if !prefix.is_empty() {
        query.push(("prefix", prefix));
    }
    if let Some(d) = delimiter {
        query.push(("delimiter", d));
    }
    if let Some(m) = continuation {
        query.push(("marker", m));
    }
    let url = blob_url(store.account, container, "", &query)?;
    let response = send(store, CloudRequest::new(Method::GET, url)).await?;
    let text = text_of(BLOB, &response)?;
    let doc = xml(BLOB, &text)?;
    let name = |n: roxmltree::Node<'_, '_>| {
        n.children()
            .find(|c| c.has_tag_name("Name"))
            .and_then(|c| c.text())
            .unwrap_or_default()
            .to_owned()
    };
    let objects = doc
        .descendants()
        .filter(|n| n.has_tag_name("Blob"))
        .map(|b| Object {
            key: name(b),
            size: xml_text(b, "Content-Length").and_then(|s| s.parse().ok()),
            modified: xml_text(b, "Last-Modified").map(str::to_owned),
        })
        .collect();
    let folders = doc
        .descendants()
        .filter(|n| n.has_tag_name("BlobPrefix"))
        .map(name)
        .collect();
    let next = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("NextMarker"))
        .and_then(|n| n.text())
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    Ok(Listing {
        objects,
        folders,
        next,
    })
}

async fn head(store: &Store<'_>, container: &str, key: &str) -> Result<Head, CloudError> {
    let url = blob_url(store.account, container, key, &[])?;
    let response = send(store, CloudRequest::new(Method::HEAD, url)).await?;
    Ok(Head::from_headers(&response.headers, "x-ms-meta-"))
}

fn get_request(store: &Store<'_>, container: &str, key: &str) -> Result<CloudRequest, CloudError> {
    CloudRequest::new(Method::GET, blob_url(store.account, container, key, &[])?).azure_headers()
}

async fn upload(
    store: &Store<'_>,
    container: &str,
    key: &str,
    body: Vec<u8>,
    content_type: &str,
) -> Result<(), CloudError> {
    let request = CloudRequest::new(Method::PUT, blob_url(store.account, container, key, &[])?)
        .body(body, content_type)?
        .header("x-ms-blob-type", "BlockBlob")?;
    send(store, request).await?;
    Ok(())
}

async fn copy(
    store: &Store<'_>,
    (from_container, from_key): (&str, &str),
    (to_container, to_key): (&str, &str),
) -> Result<Option<String>, CloudError> {
    // Within one account the Shared Key of the request authorises reading the source.
    let source = blob_url(store.account, from_container, from_key, &[])?;
    let mut request = CloudRequest::new(
        Method::PUT,
        blob_url(store.account, to_container, to_key, &[])?,
    )
    .header("x-ms-copy-source", source.as_str())?;
    // An empty body, so the request says `Content-Length: 0` as Azure wants for a PUT.
    request.body = Some(Vec::new());
    let response = send(store, request).await?;
    Ok(
        match header_text(&response.headers, "x-ms-copy-status").as_deref() {
            None | Some("success") => None,
            Some(status) => Some(format!(
                "Azure reports the copy as {status}: it finishes in the background; check it with storage_head"
            )),
        },
    )
}

async fn delete(store: &Store<'_>, container: &str, key: &str) -> Result<(), CloudError> {
    let url = blob_url(store.account, container, key, &[])?;
    send(store, CloudRequest::new(Method::DELETE, url)).await?;
    Ok(())
}

async fn create_bucket(store: &Store<'_>, name: &str) -> Result<(), CloudError> {
    let url = blob_url(store.account, name, "", &[("restype", "container")])?;
    let mut request = CloudRequest::new(Method::PUT, url);
    request.body = Some(Vec::new());
    send(store, request).await?;
    Ok(())
}

impl ObjectStore for AzureStore {
    fn signing_name(&self) -> &'static str {
        BLOB
    }

    fn bucket_word(&self) -> &'static str {
        "container"
    }

    fn bucket_date(&self) -> &'static str {
        // Azure lists a container's last change, not its creation.
        "modified"
    }

    fn buckets<'a>(
        &'a self,
        store: &'a Store<'a>,
        prefix: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Bucket>, CloudError>> {
        Box::pin(buckets(store, prefix))
    }

    fn list<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        page: Page<'a>,
    ) -> BoxFuture<'a, Result<Listing, CloudError>> {
        Box::pin(list(
            store,
            bucket,
            page.prefix,
            page.delimiter,
            page.continuation,
            page.max,
        ))
    }

    fn head<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Head, CloudError>> {
        Box::pin(head(store, bucket, key))
    }

    fn get_request(
        &self,
        store: &Store<'_>,
        bucket: &str,
        key: &str,
    ) -> Result<CloudRequest, CloudError> {
        get_request(store, bucket, key)
    }

    fn upload<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        key: &'a str,
        body: Vec<u8>,
        content_type: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(upload(store, bucket, key, body, content_type))
    }

    fn copy<'a>(
        &'a self,
        store: &'a Store<'a>,
        from: (&'a str, &'a str),
        to: (&'a str, &'a str),
    ) -> BoxFuture<'a, Result<Option<String>, CloudError>> {
        Box::pin(copy(store, from, to))
    }

    fn delete<'a>(
        &'a self,
        store: &'a Store<'a>,
        bucket: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(delete(store, bucket, key))
    }

    fn create_bucket<'a>(
        &'a self,
        store: &'a Store<'a>,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(create_bucket(store, name))
    }

    fn link_url(&self, account: &Account, bucket: &str, key: &str) -> Result<Url, CloudError> {
        blob_url(account, bucket, key, &[])
    }
}
