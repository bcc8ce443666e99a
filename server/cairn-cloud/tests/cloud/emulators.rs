//! The guard's signatures against real services: Azurite checks Azure Shared Key (blobs,
//! queues and tables) and refuses a wrong key; a secret bound to another host is refused
//! before any request leaves.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_web::{CredentialUse, Method, Placement, WebRequest};

fn signed(url: &str, table: bool) -> WebRequest {
    let mut request = WebRequest::new(Method::GET, url);
    let date = chrono::Utc::now()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    request.headers.insert("x-ms-date", date.parse().unwrap());
    request
        .headers
        .insert("x-ms-version", "2021-08-06".parse().unwrap());
    if table {
        request.headers.insert(
            "accept",
            "application/json;odata=nometadata".parse().unwrap(),
        );
    }
    request.with_credential(CredentialUse {
        secret: "azure-test".into(),
        placement: Placement::AzureSharedKey {
            account: std::env::var("CAIRN_AZURITE_ACCOUNT").unwrap(),
            table,
        },
    })
}

#[tokio::test]
async fn azurite_accepts_the_guards_shared_key_and_refuses_a_wrong_one() {
    if !common::emulators() {
        return;
    }
    let blob = format!("{}?comp=list", std::env::var("CAIRN_AZURITE_BLOB").unwrap());
    let queue = format!(
        "{}?comp=list",
        std::env::var("CAIRN_AZURITE_QUEUE").unwrap()
    );
    let table = format!("{}/Tables", std::env::var("CAIRN_AZURITE_TABLE").unwrap());
    let good = common::guard(common::secrets());
    for (url, is_table) in [(&blob, false), (&queue, false), (&table, true)] {
        let response = good.fetch(signed(url, is_table)).await.unwrap();
        let body = String::from_utf8_lossy(&response.body);
        assert_eq!(response.status.as_u16(), 200, "{url}: {body}");
    }
    // A key Azurite does not know: the same requests are refused by the service.
    let wrong = common::guard(common::Secrets(vec![(
        "azure-test".into(),
        "d3Jvbmcga2V5IGZvciB0aGUgdGVzdA==".into(),
    )]));
    for (url, is_table) in [(&blob, false), (&table, true)] {
        let response = wrong.fetch(signed(url, is_table)).await.unwrap();
        assert_eq!(response.status.as_u16(), 403, "{url}");
    }
}

#[tokio::test]
async fn a_secret_bound_elsewhere_is_never_sent() {
    if !common::emulators() {
        return;
    }
    // The secret is bound to 127.0.0.1; `localhost` is the same server under another name.
    let url = std::env::var("CAIRN_AZURITE_BLOB")
        .unwrap()
        .replace("127.0.0.1", "localhost");
    let guard = common::guard(common::secrets());
    let err = guard
        .fetch(signed(&format!("{url}?comp=list"), false))
        .await
        .unwrap_err();
    assert!(err.is_denial(), "{err}");
    assert!(
        err.to_string().contains("may not be sent to localhost"),
        "{err}"
    );
    let presigned = guard.presign(
        &CredentialUse {
            secret: "aws-test".into(),
            placement: Placement::AwsSigV4 {
                access_key_id: "AKIDCAIRNTEST".into(),
                region: "us-east-1".into(),
                service: "s3".into(),
            },
        },
        &Method::GET,
        "http://localhost:9/bucket/key",
        std::time::Duration::from_secs(60),
    );
    assert!(presigned.unwrap_err().is_denial());
}
