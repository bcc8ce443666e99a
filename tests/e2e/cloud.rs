//! The cloud tools through the real binary, against the emulators: a scripted chat uses an AWS
//! account on moto, an Azure account on Azurite and a Google account whose storage endpoint is
//! a loopback server that echoes the bearer token it received. Each account's secret is a vault
//! secret bound to loopback; the guard signs with it (SigV4, Shared Key) or sends it (the
//! token), and no request the model server receives carries any of them, in any encoding.

use base64::Engine as _;
use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{HttpStub, Sandbox, StubReply, text, vault_set};

const AWS_VALUE: &str = "e2eAwsSecretKey/9c41d7+Qw";
const GCP_VALUE: &str = "ya29.e2e-gcp-token-77b3e0";

/// Every form of `value` a response or a leak could plausibly carry.
fn forms(value: &str) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    vec![
        value.to_owned(),
        STANDARD.encode(value),
        URL_SAFE_NO_PAD.encode(value),
        hex::encode(value),
        url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
    ]
}

/// Google's bucket listing, with the `Authorization` header it received echoed as a bucket
/// name, as a misbehaving or hostile endpoint would.
fn echoing_storage() -> HttpStub {
    HttpStub::start(|head| {
        let echoed = head
            .lines()
            .find_map(|l| l.strip_prefix("authorization: "))
            .unwrap_or("none");
        let body = json!({"kind": "storage#buckets", "items": [{"name": format!("echo {echoed}"), "timeCreated": "2026-01-01T00:00:00Z"}]}).to_string();
        StubReply::Status(200, vec!["content-type: application/json".into()], body)
    })
}

#[test]
fn cloud_secrets_never_reach_the_model() {
    if !cairn_test_support::gate(
        "CAIRN_CLOUD_TESTS",
        "with the cloud emulators (eval \"$(scripts/cloud-emulators)\")",
    ) {
        return;
    }
    let var = |name: &str| std::env::var(name).unwrap();
    let azure_key = var("CAIRN_AZURITE_KEY");
    let storage = echoing_storage();
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("cloud_accounts", json!({})),
            Reply::tool_call("aws_identity", json!({"account": "prod"})),
            Reply::tool_call("storage_buckets", json!({"account": "files"})),
            Reply::tool_call("storage_buckets", json!({"account": "gcs"})),
            Reply::tool_call("queue_list", json!({"account": "prod"})),
            Reply::text("Three accounts checked."),
        ],
    );
    sb.user_config(&format!(
        r#"
[web]
allow_loopback = true
per_user_per_minute = 1000

[cloud.prod]
kind = "aws"
endpoint = "{moto}"
access_key_id = "AKIDE2ETEST"
secret = "aws-prod"

[cloud.files]
kind = "azure"
account = "{account}"
secret = "azure-files"
endpoints = {{ blob = "{blob}", queue = "{queue}", table = "{table}" }}

[cloud.gcs]
kind = "gcp"
project = "cairn-e2e"
secret = "gcp-token"
endpoints = {{ storage = "http://127.0.0.1:{port}" }}
"#,
        moto = var("CAIRN_MOTO_URL"),
        account = var("CAIRN_AZURITE_ACCOUNT"),
        blob = var("CAIRN_AZURITE_BLOB"),
        queue = var("CAIRN_AZURITE_QUEUE"),
        table = var("CAIRN_AZURITE_TABLE"),
        port = storage.port,
    ));
    vault_set(&sb, "aws-prod", "127.0.0.1", AWS_VALUE);
    vault_set(&sb, "azure-files", "127.0.0.1", &azure_key);
    vault_set(&sb, "gcp-token", "127.0.0.1", GCP_VALUE);
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "check my clouds",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Three accounts checked.");

    // The Google token was really sent, to the host it is bound to.
    let heads = storage.heads();
    assert!(
        heads
            .iter()
            .any(|h| h.contains(&format!("authorization: Bearer {GCP_VALUE}"))),
        "{heads:?}"
    );

    let requests = sb.model.requests();
    assert_eq!(requests.len(), 6);
    for r in &requests {
        let body = r.body.to_string();
        for secret in [AWS_VALUE, GCP_VALUE, azure_key.as_str()] {
            for form in forms(secret) {
                assert!(
                    !body.contains(&form),
                    "a secret reached the model as {form}: {body}"
                );
            }
        }
    }
    // The model read what the tools found: the accounts by name (never their secrets' values),
    // moto's identity, the echo with the token redacted.
    let last = requests[5].body.to_string();
    for shown in [
        "prod",
        "files",
        "gcs",
        "aws-prod",
        "123456789012",
        "[REDACTED",
    ] {
        assert!(last.contains(shown), "{shown} missing: {last}");
    }
    for shown in [text(&out.stdout), text(&out.stderr)] {
        for secret in [AWS_VALUE, GCP_VALUE, azure_key.as_str()] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
