//! Request signatures computed from a vault secret at the last moment, inside the guard's
//! credential step: AWS Signature Version 4 (headers, and query-string presigning) and Azure
//! Storage Shared Key (blobs and queues; tables sign a shorter string) and service SAS for a
//! blob. The key never leaves this module: what goes on the wire is a signature over this one
//! request, which is worthless for any other.
//!
//! The functions are pure (the time is an argument) so the published test vectors check them.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest, Sha256};
use url::Url;

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => return Vec::new(),
    };
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// The lower-case hex SHA-256 of `data` (SigV4's payload hash).
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// RFC 3986's unreserved characters stay; everything else is percent-encoded (SigV4's rule).
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn aws_encode(text: &str) -> String {
    utf8_percent_encode(text, UNRESERVED).to_string()
}

/// SigV4's canonical URI: each segment decoded and encoded again (S3), or encoded twice
/// (every other service).
fn canonical_uri(url: &Url, service: &str) -> String {
    let path = url.path();
    let once: Vec<String> = path
        .split('/')
        .map(|seg| aws_encode(&percent_decode_str(seg).decode_utf8_lossy()))
        .collect();
    let once = once.join("/");
    let once = if once.is_empty() {
        "/".to_owned()
    } else {
        once
    };
    if service == "s3" {
        once
    } else {
        once.split('/')
            .map(aws_encode)
            .collect::<Vec<_>>()
            .join("/")
    }
}

fn canonical_query(url: &Url) -> String {
    let mut pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (aws_encode(&k), aws_encode(&v)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The `Host` header value as sent: the host, with the port when it is not the scheme's.
pub fn host_header(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// What SigV4 signs with: the key, the scope and the time.
pub struct AwsKey<'a> {
    pub access_key_id: &'a str,
    pub secret: &'a str,
    pub region: &'a str,
    pub service: &'a str,
}

impl AwsKey<'_> {
    fn scope(&self, date: &str) -> String {
        format!("{date}/{}/{}/aws4_request", self.region, self.service)
    }

    fn signing_key(&self, date: &str) -> Vec<u8> {
        let k = hmac(format!("AWS4{}", self.secret).as_bytes(), date.as_bytes());
        let k = hmac(&k, self.region.as_bytes());
        let k = hmac(&k, self.service.as_bytes());
        hmac(&k, b"aws4_request")
    }

    fn signature(&self, date: &str, amz_date: &str, canonical_request: &str) -> String {
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{}\n{}",
            self.scope(date),
            sha256_hex(canonical_request.as_bytes())
        );
        hex::encode(hmac(&self.signing_key(date), to_sign.as_bytes()))
    }

    /// The `Authorization` header for a request with `headers` (names any case; `host` and
    /// `x-amz-date` must be among them) and a payload whose hash is `payload_hash`.
    pub fn authorization(
        &self,
        method: &str,
        url: &Url,
        headers: &[(String, String)],
        payload_hash: &str,
        at: DateTime<Utc>,
    ) -> String {
        let mut canon: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| {
                let value = v.split_whitespace().collect::<Vec<_>>().join(" ");
                (k.to_ascii_lowercase(), value)
            })
            .collect();
        canon.sort();
        let signed = canon
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(";");
        let header_lines: String = canon.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
        let canonical_request = format!(
            "{method}\n{}\n{}\n{header_lines}\n{signed}\n{payload_hash}",
            canonical_uri(url, self.service),
            canonical_query(url),
        );
        let date = at.format("%Y%m%d").to_string();
        let amz_date = at.format("%Y%m%dT%H%M%SZ").to_string();
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={signed}, Signature={}",
            self.access_key_id,
            self.scope(&date),
            self.signature(&date, &amz_date, &canonical_request)
        )
    }

    /// `url` presigned for `method` for `expires_secs` seconds from `at` (query-string
    /// authentication; only `host` is signed, the payload is unsigned).
    pub fn presign(&self, method: &str, url: &Url, expires_secs: u64, at: DateTime<Utc>) -> Url {
        let date = at.format("%Y%m%d").to_string();
        let amz_date = at.format("%Y%m%dT%H%M%SZ").to_string();
        let mut out = url.clone();
        out.query_pairs_mut()
            .append_pair("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
            .append_pair(
                "X-Amz-Credential",
                &format!("{}/{}", self.access_key_id, self.scope(&date)),
            )
            .append_pair("X-Amz-Date", &amz_date)
            .append_pair("X-Amz-Expires", &expires_secs.to_string())
            .append_pair("X-Amz-SignedHeaders", "host");
        let canonical_request = format!(
            "{method}\n{}\n{}\nhost:{}\n\nhost\nUNSIGNED-PAYLOAD",
            canonical_uri(&out, self.service),
            canonical_query(&out),
            host_header(&out),
        );
        let signature = self.signature(&date, &amz_date, &canonical_request);
        out.query_pairs_mut()
            .append_pair("X-Amz-Signature", &signature);
        out
    }
}

/// An Azure account key that is not base64, so nothing can be signed with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the account key is not base64")]
pub struct KeyNotBase64;

/// What Azure's Shared Key signs with.
pub struct AzureKey<'a> {
    pub account: &'a str,
    /// The account key, base64 as the portal shows it.
    pub key_base64: &'a str,
}

impl AzureKey<'_> {
    fn key(&self) -> Result<Vec<u8>, KeyNotBase64> {
        base64::engine::general_purpose::STANDARD
            .decode(self.key_base64.trim())
            .map_err(|_| KeyNotBase64)
    }

    /// `/account/path` plus, for blobs and queues, each query parameter on its own line.
    fn canonical_resource(&self, url: &Url, with_query: bool) -> String {
        let mut out = format!("/{}{}", self.account, url.path());
        let mut params: Vec<(String, Vec<String>)> = Vec::new();
        for (k, v) in url.query_pairs() {
            let k = k.to_ascii_lowercase();
            match params.iter_mut().find(|(name, _)| *name == k) {
                Some((_, values)) => values.push(v.into_owned()),
                None => params.push((k, vec![v.into_owned()])),
            }
        }
        params.sort();
        if with_query {
            for (k, mut values) in params {
                values.sort();
                out.push_str(&format!("\n{k}:{}", values.join(",")));
            }
        } else if let Some((_, values)) = params.iter().find(|(k, _)| k == "comp") {
            out.push_str(&format!("?comp={}", values.join(",")));
        }
        out
    }

    /// The `Authorization` header for a Blob or Queue request (`headers`: every header sent,
    /// any case, `x-ms-date` among them), or a Table request when `table`.
    pub fn authorization(
        &self,
        method: &str,
        url: &Url,
        headers: &[(String, String)],
        content_length: usize,
        table: bool,
    ) -> Result<String, KeyNotBase64> {
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_owned())
                .unwrap_or_default()
        };
        let to_sign = if table {
            format!(
                "{method}\n{}\n{}\n{}\n{}",
                get("content-md5"),
                get("content-type"),
                get("x-ms-date"),
                self.canonical_resource(url, false)
            )
        } else {
            let mut ms: Vec<(String, String)> = headers
                .iter()
                .filter(|(k, _)| k.to_ascii_lowercase().starts_with("x-ms-"))
                .map(|(k, v)| {
                    let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
                    (k.to_ascii_lowercase(), v)
                })
                .collect();
            ms.sort();
            let ms: String = ms.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
            let length = if content_length == 0 {
                String::new()
            } else {
                content_length.to_string()
            };
            format!(
                "{method}\n{}\n{}\n{length}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{ms}{}",
                get("content-encoding"),
                get("content-language"),
                get("content-md5"),
                get("content-type"),
                get("date"),
                get("if-modified-since"),
                get("if-match"),
                get("if-none-match"),
                get("if-unmodified-since"),
                get("range"),
                self.canonical_resource(url, true)
            )
        };
        let signature = base64::engine::general_purpose::STANDARD
            .encode(hmac(&self.key()?, to_sign.as_bytes()));
        Ok(format!("SharedKey {}:{signature}", self.account))
    }

    /// A read-only (or `permissions`) service SAS for the blob at `url`, valid until `expiry`:
    /// the query to append. `url`'s path is `/container/blob`, or `/account/container/blob` on
    /// an emulator's path-style address (`path_style`).
    pub fn blob_sas(
        &self,
        url: &Url,
        path_style: bool,
        permissions: &str,
        expiry: DateTime<Utc>,
        version: &str,
    ) -> Result<String, KeyNotBase64> {
        let mut path = url.path().to_owned();
        if path_style {
            let prefix = format!("/{}", self.account);
            if let Some(rest) = path.strip_prefix(&prefix) {
                path = rest.to_owned();
            }
        }
        let path = percent_decode_str(&path).decode_utf8_lossy().into_owned();
        let expiry = expiry.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        let resource = format!("/blob/{}{path}", self.account);
        // Version 2020-12-06 and later: permissions, start, expiry, resource, identifier, IP,
        // protocol, version, resource type, snapshot time, encryption scope, five overrides.
        let to_sign =
            format!("{permissions}\n\n{expiry}\n{resource}\n\n\n\n{version}\nb\n\n\n\n\n\n\n");
        let signature = base64::engine::general_purpose::STANDARD
            .encode(hmac(&self.key()?, to_sign.as_bytes()));
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("sv", version)
            .append_pair("se", &expiry)
            .append_pair("sr", "b")
            .append_pair("sp", permissions)
            .append_pair("sig", &signature);
        Ok(query.finish())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    // AWS's S3 documentation, "Example: GET Object" (header-based auth).
    #[test]
    fn sigv4_matches_the_published_s3_get_object_example() {
        let key = AwsKey {
            access_key_id: "AKIAIOSFODNN7EXAMPLE",
            secret: SECRET,
            region: "us-east-1",
            service: "s3",
        };
        let url = Url::parse("https://examplebucket.s3.amazonaws.com/test.txt").unwrap();
        let empty = sha256_hex(b"");
        let headers = vec![
            (
                "Host".to_owned(),
                "examplebucket.s3.amazonaws.com".to_owned(),
            ),
            ("Range".to_owned(), "bytes=0-9".to_owned()),
            ("x-amz-content-sha256".to_owned(), empty.clone()),
            ("x-amz-date".to_owned(), "20130524T000000Z".to_owned()),
        ];
        let auth = key.authorization("GET", &url, &headers, &empty, at("2013-05-24T00:00:00Z"));
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    // AWS's S3 documentation, "Example: Presigned URL".
    #[test]
    fn presigning_matches_the_published_s3_example() {
        let key = AwsKey {
            access_key_id: "AKIAIOSFODNN7EXAMPLE",
            secret: SECRET,
            region: "us-east-1",
            service: "s3",
        };
        let url = Url::parse("https://examplebucket.s3.amazonaws.com/test.txt").unwrap();
        let signed = key.presign("GET", &url, 86400, at("2013-05-24T00:00:00Z"));
        assert!(
            signed.as_str().ends_with(
                "X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
            ),
            "{signed}"
        );
        assert!(!signed.as_str().contains(SECRET));
    }

    #[test]
    fn the_signature_changes_with_every_part_of_the_request() {
        let key = AwsKey {
            access_key_id: "AKID",
            secret: "s",
            region: "eu-west-1",
            service: "sqs",
        };
        let url = Url::parse("https://sqs.eu-west-1.amazonaws.com/").unwrap();
        let h = |d: &str| {
            vec![
                ("host".to_owned(), "sqs.eu-west-1.amazonaws.com".to_owned()),
                ("x-amz-date".to_owned(), d.to_owned()),
            ]
        };
        let t = at("2026-01-01T00:00:00Z");
        let a = key.authorization("POST", &url, &h("20260101T000000Z"), &sha256_hex(b"a"), t);
        let b = key.authorization("POST", &url, &h("20260101T000000Z"), &sha256_hex(b"b"), t);
        let c = key.authorization("GET", &url, &h("20260101T000000Z"), &sha256_hex(b"a"), t);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert!(!a.contains('s') || !a.contains("=s,"));
    }

    #[test]
    fn azure_shared_key_signs_the_canonical_string() {
        // The well-known development storage key (Azurite's default); checked end to end
        // against Azurite in the cloud crate's tests.
        let key = AzureKey {
            account: "devstoreaccount1",
            key_base64: "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        };
        let url =
            Url::parse("http://127.0.0.1:10000/devstoreaccount1/c?restype=container&comp=list")
                .unwrap();
        let headers = vec![
            (
                "x-ms-date".to_owned(),
                "Mon, 01 Jan 2026 00:00:00 GMT".to_owned(),
            ),
            ("x-ms-version".to_owned(), "2021-08-06".to_owned()),
        ];
        let a = key.authorization("GET", &url, &headers, 0, false).unwrap();
        assert!(a.starts_with("SharedKey devstoreaccount1:"), "{a}");
        let resource = key.canonical_resource(&url, true);
        assert_eq!(
            resource,
            "/devstoreaccount1/devstoreaccount1/c\ncomp:list\nrestype:container"
        );
        assert_eq!(
            key.canonical_resource(&url, false),
            "/devstoreaccount1/devstoreaccount1/c?comp=list"
        );
        let bad = AzureKey {
            account: "a",
            key_base64: "not base64!",
        };
        assert!(bad.authorization("GET", &url, &headers, 0, false).is_err());
    }
}
