//! The object storage tools against real servers: moto (S3, as the `s3` and `aws` accounts),
//! Azurite (Blob) and the Google Cloud Storage emulator. Each test checks what the user reads
//! and what is really in the store afterwards (through another tool, or a plain request).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use cairn_agent::tools::protected_of;
use cairn_cloud::Cloud;
use cairn_test_support::tools::{Seen, call};
use cairn_toolkit::ToolSet;
use cairn_web::{CredentialUse, Method, Placement, WebRequest};
use serde_json::{Value, json};

/// The accounts every tool is tried on: one per provider.
const PROVIDERS: &[&str] = &["s3", "azure", "gcp"];

async fn ok(tools: &ToolSet<Cloud>, name: &str, args: Value) -> String {
    let seen = call(tools, name, args.clone()).await;
    assert!(!seen.is_error, "{name} {args}: {}", seen.text);
    seen.text
}

async fn err(tools: &ToolSet<Cloud>, name: &str, args: Value) -> Seen {
    let seen = call(tools, name, args.clone()).await;
    assert!(seen.is_error, "{name} {args} did not fail: {}", seen.text);
    seen
}

/// A bucket of its own on `account`.
async fn bucket(tools: &ToolSet<Cloud>, account: &str) -> String {
    let name = common::unique("cairn-st");
    let out = ok(
        tools,
        "storage_create_bucket",
        json!({"account": account, "bucket": name}),
    )
    .await;
    assert!(out.contains("created") && out.contains(&name), "{out}");
    name
}

/// `bucket/key` uploaded from a workspace file holding `body`.
async fn put(
    tools: &ToolSet<Cloud>,
    dir: &Path,
    account: &str,
    bucket: &str,
    key: &str,
    body: &[u8],
) {
    let file = format!("up-{}.bin", common::unique("f"));
    std::fs::write(dir.join(&file), body).unwrap();
    ok(
        tools,
        "storage_upload",
        json!({"account": account, "path": file, "bucket": bucket, "key": key}),
    )
    .await;
}

async fn exists(tools: &ToolSet<Cloud>, account: &str, bucket: &str, key: &str) -> bool {
    let seen = call(
        tools,
        "storage_head",
        json!({"account": account, "bucket": bucket, "key": key}),
    )
    .await;
    if seen.is_error {
        assert!(seen.text.contains("no object"), "{}", seen.text);
    }
    !seen.is_error
}

#[tokio::test]
async fn every_tool_round_trips_an_object_on_each_provider() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    for &account in PROVIDERS {
        let b = bucket(&s.tools, account).await;
        // By prefix: the shared emulators hold every run's buckets, more than a page.
        let listed = ok(
            &s.tools,
            "storage_buckets",
            json!({"account": account, "prefix": b}),
        )
        .await;
        assert!(listed.contains(&format!("| {b} |")), "{account}: {listed}");
        assert!(listed.contains("(1 row)"), "{account}: {listed}");

        std::fs::write(dir.path().join("report.csv"), "a,b\n1,2\n").unwrap();
        let out = ok(
            &s.tools,
            "storage_upload",
            json!({"account": account, "path": "report.csv", "bucket": b, "key": "reports/2024/q1 report.csv"}),
        )
        .await;
        assert!(
            out.contains("uploaded report.csv (8 bytes, text/csv)"),
            "{account}: {out}"
        );

        let head = ok(
            &s.tools,
            "storage_head",
            json!({"account": account, "bucket": b, "key": "reports/2024/q1 report.csv"}),
        )
        .await;
        assert!(head.contains("size: 8 bytes"), "{account}: {head}");
        assert!(head.contains("type: text/csv"), "{account}: {head}");
        assert!(head.contains("etag: "), "{account}: {head}");

        // Folders at the delimiter, objects with their sizes.
        put(&s.tools, dir.path(), account, &b, "top.txt", b"top").await;
        let listing = ok(
            &s.tools,
            "storage_list",
            json!({"account": account, "bucket": b, "delimiter": "/"}),
        )
        .await;
        assert!(
            listing.contains("| folder | reports/ |"),
            "{account}: {listing}"
        );
        assert!(
            listing.contains("| object | top.txt | 3 |"),
            "{account}: {listing}"
        );
        let listing = ok(
            &s.tools,
            "storage_list",
            json!({"account": account, "bucket": b, "prefix": "reports/"}),
        )
        .await;
        assert!(
            listing.contains("| object | reports/2024/q1 report.csv | 8 |"),
            "{account}: {listing}"
        );
        assert!(!listing.contains("top.txt"), "{account}: {listing}");

        // Down into the workspace, byte for byte, reported as an edit.
        let out = ok(
            &s.tools,
            "storage_download",
            json!({"account": account, "bucket": b, "key": "reports/2024/q1 report.csv", "path": format!("got/{account}/q1.csv")}),
        )
        .await;
        assert!(
            out.contains(&format!("saved got/{account}/q1.csv (8 bytes")),
            "{account}: {out}"
        );
        assert_eq!(
            std::fs::read(dir.path().join(format!("got/{account}/q1.csv"))).unwrap(),
            b"a,b\n1,2\n"
        );

        // An existing file is kept unless overwrite is said.
        let seen = err(
            &s.tools,
            "storage_download",
            json!({"account": account, "bucket": b, "key": "top.txt", "path": format!("got/{account}/q1.csv")}),
        )
        .await;
        assert!(seen.text.contains("already exists"), "{}", seen.text);
        assert_eq!(
            std::fs::read(dir.path().join(format!("got/{account}/q1.csv"))).unwrap(),
            b"a,b\n1,2\n"
        );
        let out = ok(
            &s.tools,
            "storage_download",
            json!({"account": account, "bucket": b, "key": "top.txt", "path": format!("got/{account}/q1.csv"), "overwrite": true}),
        )
        .await;
        assert!(
            out.contains(&format!("replaced got/{account}/q1.csv (3 bytes")),
            "{account}: {out}"
        );
        assert_eq!(
            std::fs::read(dir.path().join(format!("got/{account}/q1.csv"))).unwrap(),
            b"top"
        );

        // Server-side copy into another bucket, then the copy is really there.
        let other = bucket(&s.tools, account).await;
        let out = ok(
            &s.tools,
            "storage_copy",
            json!({"account": account, "bucket": b, "key": "top.txt", "to_bucket": other, "to_key": "copied/top.txt"}),
        )
        .await;
        assert!(
            out.contains(&format!("copied {b}/top.txt to {other}/copied/top.txt")),
            "{account}: {out}"
        );
        ok(
            &s.tools,
            "storage_download",
            json!({"account": account, "bucket": other, "key": "copied/top.txt", "path": format!("got/{account}/copy.txt")}),
        )
        .await;
        assert_eq!(
            std::fs::read(dir.path().join(format!("got/{account}/copy.txt"))).unwrap(),
            b"top"
        );
        // Not over an existing object without overwrite.
        let seen = err(
            &s.tools,
            "storage_copy",
            json!({"account": account, "bucket": b, "key": "reports/2024/q1 report.csv", "to_bucket": other, "to_key": "copied/top.txt"}),
        )
        .await;
        assert!(
            seen.text.contains("exists; pass overwrite"),
            "{}",
            seen.text
        );

        // Upload does not replace an object without overwrite either.
        std::fs::write(dir.path().join("new.txt"), "new").unwrap();
        let seen = err(
            &s.tools,
            "storage_upload",
            json!({"account": account, "path": "new.txt", "bucket": b, "key": "top.txt"}),
        )
        .await;
        assert!(
            seen.text.contains("exists; pass overwrite"),
            "{}",
            seen.text
        );
        let head = ok(
            &s.tools,
            "storage_head",
            json!({"account": account, "bucket": b, "key": "top.txt"}),
        )
        .await;
        assert!(head.contains("size: 3 bytes"), "{head}");

        // Delete: the strict question names the object, which stays until approved.
        let args = json!({"account": account, "bucket": other, "key": "copied/top.txt"});
        let seen = err(&s.tools, "storage_delete", args.clone()).await;
        let asked = protected_of(&seen.result);
        assert_eq!(asked.len(), 1, "{}", seen.text);
        assert!(
            asked[0].path.contains(&format!("{other}/copied/top.txt")),
            "{:?}",
            asked[0]
        );
        assert!(asked[0].path.contains("3 bytes"), "{:?}", asked[0]);
        assert!(exists(&s.tools, account, &other, "copied/top.txt").await);
        // An approval of another object does not cover it.
        s.approvals.hold(
            Path::new(&format!("storage:{account}:{other}/top.txt:delete")),
            cairn_workspace::Operation::Write,
        );
        err(&s.tools, "storage_delete", args.clone()).await;
        assert!(exists(&s.tools, account, &other, "copied/top.txt").await);
        common::approve(&s.approvals, &seen.result);
        let out = ok(&s.tools, "storage_delete", args.clone()).await;
        assert!(
            out.contains(&format!("deleted {other}/copied/top.txt")),
            "{out}"
        );
        assert!(!exists(&s.tools, account, &other, "copied/top.txt").await);
        // Nothing left to delete: said so, not "deleted".
        let seen = err(&s.tools, "storage_delete", args).await;
        assert!(seen.text.contains("no object"), "{}", seen.text);
    }
}

#[tokio::test]
async fn the_aws_account_reaches_the_same_store_with_its_own_signature() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let b = bucket(&s.tools, "aws").await;
    put(&s.tools, dir.path(), "aws", &b, "k", b"via aws").await;
    // The `s3` account over the same moto sees it.
    let head = ok(
        &s.tools,
        "storage_head",
        json!({"account": "s3", "bucket": b, "key": "k"}),
    )
    .await;
    assert!(head.contains("size: 7 bytes"), "{head}");
    // Several accounts fit: the tool asks which.
    let seen = err(&s.tools, "storage_buckets", json!({})).await;
    assert!(
        seen.text.contains("name one with `account`"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn listing_pages_with_a_continuation_token_and_stays_capped() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    for &account in PROVIDERS {
        let b = bucket(&s.tools, account).await;
        let keys: Vec<String> = (0..5).map(|i| format!("p/{i}.txt")).collect();
        for k in &keys {
            put(&s.tools, dir.path(), account, &b, k, b"x").await;
        }
        let mut seen_keys = Vec::new();
        let mut continuation: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut args = json!({"account": account, "bucket": b, "prefix": "p/", "max": 2});
            if let Some(c) = &continuation {
                args["continuation"] = json!(c);
            }
            let r = call(&s.tools, "storage_list", args).await;
            assert!(!r.is_error, "{}", r.text);
            let data = r.result.structured_content.clone().unwrap();
            let objects = data["objects"].as_array().unwrap();
            assert!(objects.len() <= 2, "{account}: {}", r.text);
            seen_keys.extend(
                objects
                    .iter()
                    .map(|o| o["key"].as_str().unwrap().to_owned()),
            );
            pages += 1;
            match data["continuation"].as_str() {
                Some(token) => {
                    assert!(
                        r.text.contains("call again with continuation"),
                        "{}",
                        r.text
                    );
                    continuation = Some(token.to_owned());
                }
                None => {
                    if account == "gcp" && seen_keys.len() < keys.len() {
                        // The emulator ignores the page size: the cap and the note hold.
                        assert!(r.text.contains("3 more were left out"), "{}", r.text);
                        seen_keys = keys.clone();
                    }
                    break;
                }
            }
            assert!(pages < 10, "{account}: paging does not end");
        }
        seen_keys.sort();
        assert_eq!(seen_keys, keys, "{account}");
        if account != "gcp" {
            assert_eq!(pages, 3, "{account}");
        }
    }
}

#[tokio::test]
async fn a_presigned_link_works_with_a_plain_request() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    // A guard that holds no secret at all: the link alone must do.
    let plain = common::guard(common::Secrets(vec![]));
    for account in ["s3", "azure"] {
        let b = bucket(&s.tools, account).await;
        put(
            &s.tools,
            dir.path(),
            account,
            &b,
            "shared/file.txt",
            b"shared body",
        )
        .await;
        let out = ok(
            &s.tools,
            "storage_presign",
            json!({"account": account, "bucket": b, "key": "shared/file.txt", "expires_seconds": 600}),
        )
        .await;
        assert!(out.contains("anyone with this link can download"), "{out}");
        let link = out.lines().last().unwrap();
        assert!(!link.contains(common::AWS_SECRET), "{link}");
        let key = std::env::var("CAIRN_AZURITE_KEY").unwrap();
        assert!(!link.contains(&key), "{link}");
        let got = plain.fetch(WebRequest::get(link)).await.unwrap();
        assert_eq!(
            got.status.as_u16(),
            200,
            "{account}: {}",
            String::from_utf8_lossy(&got.body)
        );
        assert_eq!(got.body, b"shared body");

        // A PUT link uploads without any key.
        let out = ok(
            &s.tools,
            "storage_presign",
            json!({"account": account, "bucket": b, "key": "incoming.txt", "method": "put"}),
        )
        .await;
        assert!(out.contains("can upload to"), "{out}");
        let link = out.lines().last().unwrap();
        let mut put = WebRequest::new(Method::PUT, link);
        put.body = Some(b"from a link".to_vec());
        if account == "azure" {
            put.headers
                .insert("x-ms-blob-type", "BlockBlob".parse().unwrap());
        }
        let got = plain.fetch(put).await.unwrap();
        assert!(
            got.status.is_success(),
            "{account}: {} {}",
            got.status,
            String::from_utf8_lossy(&got.body)
        );
        let head = ok(
            &s.tools,
            "storage_head",
            json!({"account": account, "bucket": b, "key": "incoming.txt"}),
        )
        .await;
        assert!(head.contains("size: 11 bytes"), "{head}");
    }
    // Beyond 7 days: refused.
    let seen = err(
        &s.tools,
        "storage_presign",
        json!({"account": "s3", "bucket": "any-bucket", "key": "k", "expires_seconds": 604_801}),
    )
    .await;
    assert!(
        seen.text.contains("at most") || seen.text.contains("1 to 604800"),
        "{}",
        seen.text
    );
    // Google: refused, saying why.
    let seen = err(
        &s.tools,
        "storage_presign",
        json!({"account": "gcp", "bucket": "any-bucket", "key": "k"}),
    )
    .await;
    assert!(seen.text.contains("service-account key"), "{}", seen.text);
}

#[tokio::test]
async fn a_presign_for_a_host_the_secret_is_not_bound_to_is_refused() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The same servers under another name (`localhost`): the secrets are bound to 127.0.0.1.
    let mut accounts = common::accounts();
    let moto = std::env::var("CAIRN_MOTO_URL")
        .unwrap()
        .replace("127.0.0.1", "localhost");
    accounts.get_mut("s3").unwrap().endpoint = Some(moto);
    let blob = std::env::var("CAIRN_AZURITE_BLOB")
        .unwrap()
        .replace("127.0.0.1", "localhost");
    accounts
        .get_mut("azure")
        .unwrap()
        .endpoints
        .insert("blob".into(), blob);
    let s = common::setup_with(dir.path(), &accounts, common::guard(common::secrets()));
    for account in ["s3", "azure"] {
        let seen = err(
            &s.tools,
            "storage_presign",
            json!({"account": account, "bucket": "some-bucket", "key": "k"}),
        )
        .await;
        assert!(seen.text.contains("no link was made"), "{}", seen.text);
        assert!(
            seen.text.contains("may not be sent to localhost"),
            "{}",
            seen.text
        );
        assert!(
            !seen.text.contains("X-Amz-Signature") && !seen.text.contains("sig="),
            "{}",
            seen.text
        );
    }
}

#[tokio::test]
async fn a_download_to_a_protected_path_is_refused_and_the_file_is_unchanged() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let b = bucket(&s.tools, "s3").await;
    put(
        &s.tools,
        dir.path(),
        "s3",
        &b,
        "env",
        b"TOKEN=from-the-bucket\n",
    )
    .await;
    std::fs::write(dir.path().join(".env"), "TOKEN=mine\n").unwrap();
    let seen = err(
        &s.tools,
        "storage_download",
        json!({"account": "s3", "bucket": b, "key": "env", "path": ".env", "overwrite": true}),
    )
    .await;
    let asked = protected_of(&seen.result);
    assert_eq!(asked.len(), 1, "{}", seen.text);
    assert!(asked[0].path.ends_with(".env"), "{:?}", asked[0]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".env")).unwrap(),
        "TOKEN=mine\n"
    );
    // Outside the workspace: refused too, nothing written there.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x.txt");
    let seen = err(
        &s.tools,
        "storage_download",
        json!({"account": "s3", "bucket": b, "key": "env", "path": target.to_str().unwrap()}),
    )
    .await;
    assert!(!target.exists(), "{}", seen.text);

    // Uploading a protected file is refused before it is read; nothing arrives.
    let seen = err(
        &s.tools,
        "storage_upload",
        json!({"account": "s3", "path": ".env", "bucket": b, "key": "leaked"}),
    )
    .await;
    assert_eq!(protected_of(&seen.result).len(), 1, "{}", seen.text);
    assert!(!exists(&s.tools, "s3", &b, "leaked").await);
}

#[tokio::test]
async fn a_multi_megabyte_object_streams_past_the_web_size_cap() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    // 3 MiB: three times the guard's in-memory cap (1 MiB), so `fetch` alone would cut it.
    let body: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    for account in ["s3", "azure"] {
        let b = bucket(&s.tools, account).await;
        put(&s.tools, dir.path(), account, &b, "big.bin", &body).await;
        let out = ok(
            &s.tools,
            "storage_download",
            json!({"account": account, "bucket": b, "key": "big.bin", "path": format!("{account}-big.bin")}),
        )
        .await;
        assert!(out.contains("3.0 MiB (3145728 bytes)"), "{out}");
        let got = std::fs::read(dir.path().join(format!("{account}-big.bin"))).unwrap();
        assert!(
            got == body,
            "{account}: the file differs ({} bytes)",
            got.len()
        );
    }
}

#[tokio::test]
async fn a_download_over_100_mib_asks_about_its_size_first() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let b = bucket(&s.tools, "s3").await;
    // Straight into moto (the upload tool sends at most 64 MiB in one request).
    let size = 100 * 1024 * 1024 + 17;
    let body: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
    let mut request = WebRequest::new(
        Method::PUT,
        format!("{}/{b}/huge.bin", std::env::var("CAIRN_MOTO_URL").unwrap()),
    )
    .with_credential(CredentialUse {
        secret: "aws-test".into(),
        placement: Placement::AwsSigV4 {
            access_key_id: "AKIDCAIRNTEST".into(),
            region: "us-east-1".into(),
            service: "s3".into(),
        },
    });
    request.body = Some(body.clone());
    let put = common::guard(common::secrets())
        .fetch(request)
        .await
        .unwrap();
    assert!(
        put.status.is_success(),
        "{}",
        String::from_utf8_lossy(&put.body)
    );

    let args = json!({"account": "s3", "bucket": b, "key": "huge.bin", "path": "huge.bin"});
    let seen = err(&s.tools, "storage_download", args.clone()).await;
    assert!(
        seen.text.contains("100.0 MiB (104857617 bytes)"),
        "{}",
        seen.text
    );
    let asked = protected_of(&seen.result);
    assert_eq!(asked.len(), 1, "{}", seen.text);
    assert!(
        asked[0].path.contains(&format!("{b}/huge.bin"))
            && asked[0].path.contains("104857617 bytes"),
        "{:?}",
        asked[0]
    );
    assert!(!dir.path().join("huge.bin").exists());
    common::approve(&s.approvals, &seen.result);

    // Cancelled while it streams (once the file's temp copy exists): nothing is put in place
    // and the temp copy goes.
    let temps = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with(".cairn-edit-")
            })
            .count()
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut running = std::pin::pin!(cairn_test_support::tools::call_with(
        &s.tools,
        "storage_download",
        args.clone(),
        cancel.clone(),
    ));
    let watch = async {
        while temps(dir.path()) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        cancel.cancel();
    };
    let seen = tokio::select! {
        seen = &mut running => seen,
        () = watch => running.await,
    };
    assert!(
        seen.is_error,
        "the download finished before it was cancelled: {}",
        seen.text
    );
    assert!(seen.text.contains("cancelled"), "{}", seen.text);
    assert!(!dir.path().join("huge.bin").exists());
    assert_eq!(temps(dir.path()), 0);

    let out = ok(&s.tools, "storage_download", args).await;
    assert!(
        out.contains("saved huge.bin (100.0 MiB (104857617 bytes)"),
        "{out}"
    );
    let got = std::fs::read(dir.path().join("huge.bin")).unwrap();
    assert!(got == body, "the file differs ({} bytes)", got.len());
}

#[tokio::test]
async fn bad_names_wrong_keys_and_dead_endpoints_give_clear_results() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let seen = err(&s.tools, "storage_buckets", json!({"account": "nope"})).await;
    assert!(
        seen.text.contains("no cloud account `nope`"),
        "{}",
        seen.text
    );
    let seen = err(
        &s.tools,
        "storage_head",
        json!({"account": "s3", "bucket": "b", "key": "a/../../other-bucket/k"}),
    )
    .await;
    assert!(seen.text.contains("`..` segment"), "{}", seen.text);
    let seen = err(
        &s.tools,
        "storage_list",
        json!({"account": "azure", "bucket": "no/slashes"}),
    )
    .await;
    assert!(seen.text.contains("is not a bucket name"), "{}", seen.text);
    let seen = err(
        &s.tools,
        "storage_list",
        json!({"account": "s3", "bucket": common::unique("cairn-none")}),
    )
    .await;
    assert!(seen.text.contains("NoSuchBucket"), "{}", seen.text);

    // A wrong key: Azurite refuses the signature, and the tool says so.
    let wrong = common::guard(common::Secrets(vec![
        ("aws-test".into(), common::AWS_SECRET.into()),
        (
            "azure-test".into(),
            "d3Jvbmcga2V5IGZvciB0aGUgdGVzdA==".into(),
        ),
    ]));
    let w = common::setup_with(dir.path(), &common::accounts(), wrong);
    let seen = err(&w.tools, "storage_buckets", json!({"account": "azure"})).await;
    assert!(seen.text.contains("403"), "{}", seen.text);

    // An endpoint where nothing listens: an error, no hang.
    let mut accounts = common::accounts();
    accounts.get_mut("s3").unwrap().endpoint = Some("http://127.0.0.1:9/".into());
    let d = common::setup_with(dir.path(), &accounts, common::guard(common::secrets()));
    let seen = err(&d.tools, "storage_buckets", json!({"account": "s3"})).await;
    assert!(seen.text.contains("127.0.0.1:9"), "{}", seen.text);
}

#[tokio::test]
async fn an_account_whose_token_is_sent_as_itself_downloads_only_up_to_the_web_cap() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A Google account with an access token (sent as a Bearer header; the emulator ignores it).
    let mut accounts = common::accounts();
    let mut token = accounts["gcp"].clone();
    token.secret = Some("gcp-token".into());
    accounts.insert("gcptoken".into(), token);
    let mut secrets = common::secrets();
    secrets
        .0
        .push(("gcp-token".into(), "ya29.cairn-test-token".into()));
    let s = common::setup_with(dir.path(), &accounts, common::guard(secrets));
    let b = bucket(&s.tools, "gcptoken").await;
    let body: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 249) as u8).collect();
    put(&s.tools, dir.path(), "gcptoken", &b, "big.bin", &body).await;
    put(&s.tools, dir.path(), "gcptoken", &b, "small.txt", b"small").await;
    let seen = err(
        &s.tools,
        "storage_download",
        json!({"account": "gcptoken", "bucket": b, "key": "big.bin", "path": "big.bin"}),
    )
    .await;
    assert!(seen.text.contains("over the web size cap"), "{}", seen.text);
    assert!(!dir.path().join("big.bin").exists());
    ok(
        &s.tools,
        "storage_download",
        json!({"account": "gcptoken", "bucket": b, "key": "small.txt", "path": "small.txt"}),
    )
    .await;
    assert_eq!(
        std::fs::read(dir.path().join("small.txt")).unwrap(),
        b"small"
    );
    // The account without a token streams the same object.
    ok(
        &s.tools,
        "storage_download",
        json!({"account": "gcp", "bucket": b, "key": "big.bin", "path": "big.bin"}),
    )
    .await;
    assert!(std::fs::read(dir.path().join("big.bin")).unwrap() == body);
}

/// Every storage tool is in the set once, with a schema that describes every field and
/// refuses unknown ones (no emulator needed).
#[test]
fn every_storage_tool_describes_its_arguments() {
    use cairn_agent::tools::ToolHost;
    let dir = tempfile::tempdir().unwrap();
    // With a workspace, so the tools that need one are offered too.
    let ws = cairn_workspace::Workspace::new(vec![dir.path().to_path_buf()]).unwrap();
    let (cloud, _) = Cloud::new(
        &std::collections::BTreeMap::new(),
        None,
        Some(std::sync::Arc::new(ws)),
        cairn_workspace::ExactApprovals::new(),
    );
    let tools = cairn_cloud::cloud_tools(cloud);
    let infos: Vec<_> = tools
        .list()
        .into_iter()
        .filter(|i| i.tool.name.starts_with("storage_"))
        .collect();
    let names: Vec<_> = infos.iter().map(|i| i.tool.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "storage_buckets",
            "storage_list",
            "storage_head",
            "storage_download",
            "storage_upload",
            "storage_copy",
            "storage_delete",
            "storage_create_bucket",
            "storage_presign"
        ]
    );
    for info in infos {
        let schema = serde_json::Value::Object(info.tool.input_schema.as_ref().clone());
        assert_eq!(
            schema["additionalProperties"],
            json!(false),
            "{}",
            info.tool.name
        );
        for (field, property) in schema["properties"].as_object().unwrap() {
            assert!(
                property.get("description").is_some(),
                "{}.{field}: {property}",
                info.tool.name
            );
        }
        assert_eq!(info.category, "cloud");
        let changes = !matches!(
            info.tool.name.as_ref(),
            "storage_buckets" | "storage_list" | "storage_head"
        );
        assert_eq!(info.agent_only, changes, "{}", info.tool.name);
    }
}

#[tokio::test]
async fn without_the_guard_every_tool_says_why_it_cannot_reach_the_store() {
    let mut accounts = std::collections::BTreeMap::new();
    accounts.insert(
        "s3".to_owned(),
        cairn_config::CloudAccountConfig {
            kind: cairn_config::CloudKind::S3,
            region: None,
            endpoint: Some("http://127.0.0.1:9/".into()),
            endpoints: std::collections::BTreeMap::new(),
            access_key_id: None,
            account: None,
            project: None,
            secret: None,
            auth: None,
        },
    );
    let (cloud, problems) = Cloud::new(
        &accounts,
        None,
        None,
        cairn_workspace::ExactApprovals::new(),
    );
    assert!(problems.is_empty());
    let tools = cairn_cloud::cloud_tools(cloud);
    let seen = err(&tools, "storage_list", json!({"bucket": "b"})).await;
    assert!(
        seen.text.contains("web guard, which is off"),
        "{}",
        seen.text
    );
    let seen = err(
        &tools,
        "storage_presign",
        json!({"bucket": "b", "key": "k"}),
    )
    .await;
    assert!(seen.text.contains("no link was made"), "{}", seen.text);
}

#[tokio::test]
async fn a_cancelled_download_saves_nothing() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let b = bucket(&s.tools, "azure").await;
    put(&s.tools, dir.path(), "azure", &b, "k.txt", b"body").await;
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let seen = cairn_test_support::tools::call_with(
        &s.tools,
        "storage_download",
        json!({"account": "azure", "bucket": b, "key": "k.txt", "path": "k.txt"}),
        cancel,
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(seen.text.contains("cancelled"), "{}", seen.text);
    assert!(!dir.path().join("k.txt").exists());
}
