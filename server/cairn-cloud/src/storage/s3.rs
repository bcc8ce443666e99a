//! S3's REST API (AWS and S3-compatible stores): path-style addresses
//! (`endpoint/bucket/key`) when the account has its own endpoint, virtual-host style
//! (`bucket.s3.region.amazonaws.com/key`) otherwise; every request signed with SigV4 as `s3`.

use cairn_web::Method;
use futures::future::BoxFuture;
use url::Url;

use super::store::{Bucket, Head, Listing, Object, ObjectStore, Page, Store};
use crate::account::Account;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, text_of, xml, xml_text};

/// S3's REST API, for `aws` and `s3` accounts.
pub(crate) struct S3Store;

/// The signing name.
const S3: &str = "s3";

/// A key as a URL path: each `/`-separated part percent-encoded, the slashes kept (S3 signs
/// and stores the key as this path).
fn key_path(key: &str) -> String {
    key.split('/').map(segment).collect::<Vec<_>>().join("/")
}

/// The address of `bucket` (and `key`, when not empty) with `query`.
fn url(
    account: &Account,
    bucket: &str,
    key: &str,
    query: &[(&str, &str)],
) -> Result<Url, CloudError> {
    let mut url = account.base_url(S3)?;
    let base_path = url.path().to_owned();
    if account.has_custom_endpoint(S3) {
        let path = if key.is_empty() {
            format!("{base_path}{}", segment(bucket))
        } else {
            format!("{base_path}{}/{}", segment(bucket), key_path(key))
        };
        url.set_path(&path);
    } else {
        let host = format!("{bucket}.{}", url.host_str().unwrap_or_default());
        url.set_host(Some(&host))
            .map_err(|e| CloudError::Invalid(format!("bucket {bucket:?}: {e}")))?;
        url.set_path(&format!("{base_path}{}", key_path(key)));
    }
    if !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in query {
            pairs.append_pair(k, v);
        }
    }
    Ok(url)
}

/// The address of an object (for presigning too).
fn object_url(
    account: &Account,
    bucket: &str,
    key: &str,
    query: &[(&str, &str)],
) -> Result<Url, CloudError> {
    url(account, bucket, key, query)
}

async fn buckets(store: &Store<'_>, prefix: &str) -> Result<Vec<Bucket>, CloudError> {
    let mut url = store.account.base_url(S3)?;
    if !prefix.is_empty() {
        url.query_pairs_mut().append_pair("prefix", prefix);
    }
    let request = CloudRequest::new(Method::GET, url);
    let response = store.send(S3, request).await?;
    let text = text_of(S3, &response)?;
    let doc = xml(S3, &text)?;
    Ok(doc
        .descendants()
        .filter(|n| n.has_tag_name("Bucket"))
        .map(|b| Bucket {
            name: xml_text(b, "Name").unwrap_or_default().to_owned(),
            created: xml_text(b, "CreationDate").map(str::to_owned),
        })
        .collect())
}

async fn list(
    store: &Store<'_>,
    bucket: &str,
    prefix: &str,
    delimiter: Option<&str>,
    continuation: Option<&str>,
    max: usize,
) -> Result<Listing, CloudError> {
    let max_keys = max.to_string();
    let mut query = vec![("list-type", "2"), ("max-keys", max_keys.as_str())];
    if !prefix.is_empty() {
        query.push(("prefix", prefix));
    }
    if let Some(d) = delimiter {
        query.push(("delimiter", d));
    }
    if let Some(token) = continuation {
        query.push(("continuation-token", token));
    }
    let request = CloudRequest::new(Method::GET, url(store.account, bucket, "", &query)?);
    let response = store.send(S3, request).await?;
    let text = text_of(S3, &response)?;
    let doc = xml(S3, &text)?;
    let root = doc.root_element();
    let objects = root
        .children()
        .filter(|n| n.has_tag_name("Contents"))
        .map(|c| Object {
            key: xml_text(c, "Key").unwrap_or_default().to_owned(),
            size: xml_text(c, "Size").and_then(|s| s.parse().ok()),
            modified: xml_text(c, "LastModified").map(str::to_owned),
        })
        .collect();
    let folders = root
        .children()
        .filter(|n| n.has_tag_name("CommonPrefixes"))
        .filter_map(|p| xml_text(p, "Prefix").map(str::to_owned))
        .collect();
    let truncated = root
        .children()
        .find(|n| n.has_tag_name("IsTruncated"))
        .and_then(|n| n.text())
        == Some("true");
    let next = root
        .children()
        .find(|n| n.has_tag_name("NextContinuationToken"))
        .and_then(|n| n.text())
        .filter(|_| truncated)
        .map(str::to_owned);
    Ok(Listing {
        objects,
        folders,
        next,
    })
}

async fn head(store: &Store<'_>, bucket: &str, key: &str) -> Result<Head, CloudError> {
    let request = CloudRequest::new(Method::HEAD, url(store.account, bucket, key, &[])?);
    let response = store.send(S3, request).await?;
    Ok(Head::from_headers(&response.headers, "x-amz-meta-"))
}

fn get_request(store: &Store<'_>, bucket: &str, key: &str) -> Result<CloudRequest, CloudError> {
    Ok(CloudRequest::new(
        Method::GET,
        url(store.account, bucket, key, &[])?,
    ))
}

async fn upload(
    store: &Store<'_>,
    bucket: &str,
    key: &str,
    body: Vec<u8>,
    content_type: &str,
) -> Result<(), CloudError> {
    let request = CloudRequest::new(Method::PUT, url(store.account, bucket, key, &[])?)
        .body(body, content_type)?;
    store.send(S3, request).await?;
    Ok(())
}

async fn copy(
    store: &Store<'_>,
    (from_bucket, from_key): (&str, &str),
    (to_bucket, to_key): (&str, &str),
) -> Result<(), CloudError> {
    let source = format!("/{}/{}", segment(from_bucket), key_path(from_key));
    let request = CloudRequest::new(Method::PUT, url(store.account, to_bucket, to_key, &[])?)
        .header("x-amz-copy-source", &source)?;
    let response = store.send(S3, request).await?;
    // S3 may answer 200 and put the error in the body (a copy that failed on the way).
    let text = text_of(S3, &response)?;
    if let Ok(doc) = roxmltree::Document::parse(&text)
        && doc.root_element().has_tag_name("Error")
    {
        let root = doc.root_element();
        return Err(CloudError::Service {
            service: S3.into(),
            status: 200,
            code: xml_text(root, "Code").unwrap_or_default().to_owned(),
            message: xml_text(root, "Message")
                .unwrap_or("the copy failed")
                .to_owned(),
        });
    }
    Ok(())
}

async fn delete(store: &Store<'_>, bucket: &str, key: &str) -> Result<(), CloudError> {
    let request = CloudRequest::new(Method::DELETE, url(store.account, bucket, key, &[])?);
    store.send(S3, request).await?;
    Ok(())
}

async fn create_bucket(store: &Store<'_>, name: &str) -> Result<(), CloudError> {
    let mut request = CloudRequest::new(Method::PUT, url(store.account, name, "", &[])?);
    // Outside us-east-1 S3 wants the region said in the body.
    let region = &store.account.region;
    if region != "us-east-1" {
        let body = format!(
            "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>{region}</LocationConstraint></CreateBucketConfiguration>"
        );
        request = request.body(body.into_bytes(), "application/xml")?;
    }
    store.send(S3, request).await?;
    Ok(())
}

impl ObjectStore for S3Store {
    fn signing_name(&self) -> &'static str {
        S3
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
        Box::pin(async move { copy(store, from, to).await.map(|()| None) })
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
        object_url(account, bucket, key, &[])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use cairn_config::{CloudAccountConfig, CloudKind};

    use super::*;

    fn account(endpoint: Option<&str>) -> Account {
        let config = CloudAccountConfig {
            kind: if endpoint.is_some() {
                CloudKind::S3
            } else {
                CloudKind::Aws
            },
            region: Some("eu-west-1".into()),
            endpoint: endpoint.map(str::to_owned),
            endpoints: BTreeMap::new(),
            access_key_id: None,
            account: None,
            project: None,
            secret: None,
            auth: None,
        };
        Account::from_config("a", &config).unwrap()
    }

    #[test]
    fn aws_uses_virtual_hosts_and_a_custom_endpoint_uses_paths() {
        let aws = account(None);
        assert_eq!(
            object_url(&aws, "my-bucket", "dir/a b?.txt", &[])
                .unwrap()
                .as_str(),
            "https://my-bucket.s3.eu-west-1.amazonaws.com/dir/a%20b%3F.txt"
        );
        assert_eq!(
            url(&aws, "my-bucket", "", &[("list-type", "2")])
                .unwrap()
                .as_str(),
            "https://my-bucket.s3.eu-west-1.amazonaws.com/?list-type=2"
        );
        let minio = account(Some("http://127.0.0.1:9000/base"));
        assert_eq!(
            object_url(&minio, "b", "x/y#z", &[]).unwrap().as_str(),
            "http://127.0.0.1:9000/base/b/x/y%23z"
        );
        assert_eq!(
            url(&minio, "b", "", &[]).unwrap().as_str(),
            "http://127.0.0.1:9000/base/b"
        );
    }
}
