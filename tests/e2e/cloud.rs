//! The cloud tools through the real binary, against the emulators: a scripted chat uses an AWS
//! account on moto, an Azure account on Azurite and a Google account whose storage endpoint is
//! a loopback server that echoes the bearer token it received. Each account's secret is a vault
//! secret bound to loopback; the guard signs with it (SigV4, Shared Key) or sends it (the
//! token), and no request the model server receives carries any of them, in any encoding.

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{HttpStub, Sandbox, StubReply, assert_absent, text, vault_set};

const AWS_VALUE: &str = "e2eAwsSecretKey/9c41d7+Qw";
const GCP_VALUE: &str = "ya29.e2e-gcp-token-77b3e0";

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

/// The user's three accounts: AWS at `aws` with access key `key_id`, Azure on Azurite, and
/// Google whose storage endpoint is the loopback server on `gcs_port`; each secret a vault name.
fn accounts(aws: &str, key_id: &str, gcs_port: u16) -> String {
    let var = |name: &str| std::env::var(name).unwrap();
    format!(
        r#"
[web]
allow_loopback = true
per_user_per_minute = 1000

[cloud.prod]
kind = "aws"
endpoint = "{aws}"
access_key_id = "{key_id}"
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
endpoints = {{ storage = "http://127.0.0.1:{gcs_port}" }}
"#,
        account = var("CAIRN_AZURITE_ACCOUNT"),
        blob = var("CAIRN_AZURITE_BLOB"),
        queue = var("CAIRN_AZURITE_QUEUE"),
        table = var("CAIRN_AZURITE_TABLE"),
    )
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
    sb.user_config(&accounts(
        &var("CAIRN_MOTO_URL"),
        "AKIDE2ETEST",
        storage.port,
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
            assert_absent(secret, &body, "a model request");
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

/// Wrong credentials on each kind of account. Azurite checks the Shared Key signature and says
/// so; the AWS endpoint and Google's answer as real services do to a bad signature or token,
/// Google's quoting the token it got. Each tool shows the service's refusal, and no form of
/// any secret is in a model request, a tool result, the terminal or the log; the AWS secret
/// (which signs, and is never sent) is in no request the endpoint received either.
#[test]
fn failed_cloud_logins_never_show_the_secret() {
    if !cairn_test_support::gate(
        "CAIRN_CLOUD_TESTS",
        "with the cloud emulators (eval \"$(scripts/cloud-emulators)\")",
    ) {
        return;
    }
    const AWS_WRONG: &str = "Wr0ngAws/Secret+Key=~ 81";
    const GCP_WRONG: &str = "ya29.Wr0ng/token+81=";
    // A well-formed Shared Key (64 bytes in base64), not the account's.
    let azure_wrong = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode([0xa7u8; 64])
    };
    let aws = HttpStub::start(|_| {
        StubReply::Status(
            403,
            vec!["content-type: text/xml".into()],
            "<ErrorResponse><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code>\
             <Message>The request signature we calculated does not match the signature you \
             provided. Check your AWS Secret Access Key and signing method.</Message></Error>\
             <RequestId>e2e</RequestId></ErrorResponse>"
                .into(),
        )
    });
    let gcp = HttpStub::start(|head| {
        let echoed = head
            .lines()
            .find_map(|l| l.strip_prefix("authorization: "))
            .unwrap_or("none");
        let body = json!({"error": {"code": 401, "message": format!("Invalid Credentials: {echoed}"), "status": "UNAUTHENTICATED"}}).to_string();
        StubReply::Status(401, vec!["content-type: application/json".into()], body)
    });
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_calls(vec![
                ("aws_identity", json!({"account": "prod"})),
                ("storage_buckets", json!({"account": "files"})),
                ("storage_buckets", json!({"account": "gcs"})),
            ]),
            Reply::text("None of them let me in."),
        ],
    );
    sb.user_config(&accounts(
        &format!("http://127.0.0.1:{}", aws.port),
        "AKIDE2EWRONG",
        gcp.port,
    ));
    vault_set(&sb, "aws-prod", "127.0.0.1", AWS_WRONG);
    vault_set(&sb, "azure-files", "127.0.0.1", &azure_wrong);
    vault_set(&sb, "gcp-token", "127.0.0.1", GCP_WRONG);
    let out = sb.chat_yes("check my clouds");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "None of them let me in.");

    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    let results = crate::support::tool_results(&requests[1].body);
    assert_eq!(results.len(), 3, "{results:?}");
    // What the user and the model are told: each service's own refusal.
    assert!(
        results[0].contains("SignatureDoesNotMatch"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("403"), "{}", results[1]);
    assert!(
        results[1].contains("AuthorizationFailure") || results[1].contains("authenticate"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("Invalid Credentials"), "{}", results[2]);
    assert!(results[2].contains("[REDACTED"), "{}", results[2]);
    // The token was sent, to the host it is bound to; the AWS secret never left cairn.
    assert!(
        gcp.heads()
            .iter()
            .any(|h| h.contains(&format!("authorization: Bearer {GCP_WRONG}"))),
        "{:?}",
        gcp.heads()
    );
    assert!(!aws.heads().is_empty(), "the AWS endpoint was asked");
    for head in aws.heads() {
        assert_absent(AWS_WRONG, &head, "a request to the AWS endpoint");
    }
    let sent: String = requests.iter().map(|r| r.body.to_string()).collect();
    for secret in [AWS_WRONG, GCP_WRONG, azure_wrong.as_str()] {
        assert_absent(secret, &sent, "a model request");
        for r in &results {
            assert_absent(secret, r, "a tool result");
        }
        assert_absent(secret, &text(&out.stdout), "the terminal");
        assert_absent(secret, &text(&out.stderr), "the log");
    }
}
