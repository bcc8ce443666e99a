//! Google Cloud Storage's JSON API (`storage/v1`), with the account's access token as a
//! Bearer credential attached by the guard (an emulator needs none).

use cairn_web::Method;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use url::Url;

use super::store::{Bucket, Head, Listing, Object, ObjectStore, Page, Store};
use crate::account::Account;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, url_of};

/// Google Cloud Storage's JSON API, for `gcp` accounts.
pub(crate) struct GcsStore;

/// The service name.
const STORAGE: &str = "storage";

fn base(store: &Store<'_>) -> Result<Url, CloudError> {
    store.account.base_url(STORAGE)
}

fn project<'a>(store: &Store<'a>) -> &'a str {
    store.account.project.as_deref().unwrap_or_default()
}

/// `storage/v1/b/{bucket}/o/{object}`: the object name is one segment, its slashes encoded.
fn object_path(bucket: &str, key: &str) -> String {
    format!("storage/v1/b/{}/o/{}", segment(bucket), segment(key))
}

async fn call(
    store: &Store<'_>,
    method: Method,
    url: Url,
    body: Option<&Value>,
) -> Result<Value, CloudError> {
    store
        .cloud
        .gcp(store.cx, store.account, STORAGE, method, url, body)
        .await
}

fn string(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// Sizes come as decimal strings in the JSON API.
fn size(v: &Value) -> Option<u64> {
    match v.get("size") {
        Some(Value::String(s)) => s.parse().ok(),
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    }
}

async fn buckets(store: &Store<'_>, prefix: &str) -> Result<Vec<Bucket>, CloudError> {
    let mut query = vec![("project", project(store)), ("maxResults", "500")];
    if !prefix.is_empty() {
        query.push(("prefix", prefix));
    }
    let url = url_of(&base(store)?, "storage/v1/b", &query)?;
    let answer = call(store, Method::GET, url, None).await?;
    Ok(items(&answer)
        .map(|b| Bucket {
            name: string(b, "name").unwrap_or_default(),
            created: string(b, "timeCreated"),
        })
        .collect())
}

fn items(answer: &Value) -> impl Iterator<Item = &Value> {
    answer
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

async fn list(
    store: &Store<'_>,
    bucket: &str,
    prefix: &str,
    delimiter: Option<&str>,
    continuation: Option<&str>,
    max: usize,
) -> Result<Listing, CloudError> {
    let max_results = max.to_string();
    let mut query = vec![("maxResults", max_results.as_str())];
    if !prefix.is_empty() {
        query.push(("prefix", prefix));
    }
    if let Some(d) = delimiter {
        query.push(("delimiter", d));
    }
    if let Some(token) = continuation {
        query.push(("pageToken", token));
    }
    let url = url_of(
        &base(store)?,
        &format!("storage/v1/b/{}/o", segment(bucket)),
        &query,
    )?;
    let answer = call(store, Method::GET, url, None).await?;
    let objects = items(&answer)
        .map(|o| Object {
            key: string(o, "name").unwrap_or_default(),
            size: size(o),
            modified: string(o, "updated"),
        })
        .collect();
    let folders = answer
        .get("prefixes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_owned))
        .collect();
    Ok(Listing {
        objects,
        folders,
        next: string(&answer, "nextPageToken"),
    })
}

async fn head(store: &Store<'_>, bucket: &str, key: &str) -> Result<Head, CloudError> {
    let url = url_of(&base(store)?, &object_path(bucket, key), &[])?;
    let answer = call(store, Method::GET, url, None).await?;
    let mut metadata: Vec<(String, String)> = answer
        .get("metadata")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
            )
        })
        .collect();
    metadata.sort();
    Ok(Head {
        size: size(&answer),
        content_type: string(&answer, "contentType"),
        modified: string(&answer, "updated"),
        etag: string(&answer, "etag"),
        metadata,
    })
}

fn get_request(store: &Store<'_>, bucket: &str, key: &str) -> Result<CloudRequest, CloudError> {
    let url = url_of(
        &base(store)?,
        &object_path(bucket, key),
        &[("alt", "media")],
    )?;
    Ok(CloudRequest::new(Method::GET, url))
}

async fn upload(
    store: &Store<'_>,
    bucket: &str,
    key: &str,
    body: Vec<u8>,
    content_type: &str,
) -> Result<(), CloudError> {
    let url = url_of(
        &base(store)?,
        &format!("upload/storage/v1/b/{}/o", segment(bucket)),
        &[("uploadType", "media"), ("name", key)],
    )?;
    let request = CloudRequest::new(Method::POST, url).body(body, content_type)?;
    store.send(STORAGE, request).await?;
    Ok(())
}

async fn copy(
    store: &Store<'_>,
    (from_bucket, from_key): (&str, &str),
    (to_bucket, to_key): (&str, &str),
) -> Result<(), CloudError> {
    let path = format!(
        "{}/copyTo/b/{}/o/{}",
        object_path(from_bucket, from_key),
        segment(to_bucket),
        segment(to_key)
    );
    let url = url_of(&base(store)?, &path, &[])?;
    call(store, Method::POST, url, Some(&json!({}))).await?;
    Ok(())
}

async fn delete(store: &Store<'_>, bucket: &str, key: &str) -> Result<(), CloudError> {
    let url = url_of(&base(store)?, &object_path(bucket, key), &[])?;
    call(store, Method::DELETE, url, None).await?;
    Ok(())
}

async fn create_bucket(store: &Store<'_>, name: &str) -> Result<(), CloudError> {
    let url = url_of(
        &base(store)?,
        "storage/v1/b",
        &[("project", project(store))],
    )?;
    call(store, Method::POST, url, Some(&json!({ "name": name }))).await?;
    Ok(())
}

impl ObjectStore for GcsStore {
    fn signing_name(&self) -> &'static str {
        STORAGE
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

    fn link_url(&self, _: &Account, _: &str, _: &str) -> Result<Url, CloudError> {
        Err(CloudError::Invalid(
            "Google Cloud Storage links are signed with a service-account key, which cairn does not hold (the gcp account signs with an access token, which a link would expose); share the object through IAM instead, or use an S3 or Azure account".into(),
        ))
    }
}
