//! What every cloud test shares: the emulators' accounts (`eval "$(scripts/cloud-emulators)"`),
//! a guard that lets requests reach loopback with the accounts' secrets bound to it, a
//! workspace in a temporary directory, and the approvals a strict question is answered in.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use cairn_cloud::{Cloud, SecretStore, cloud_tools};
use cairn_config::{CloudAccountConfig, CloudKind};
use cairn_toolkit::ToolSet;
use cairn_web::{CredentialRefusal, Credentials, GuardConfig, WebGuard};
use cairn_workspace::{AccessRules, ExactApprovals, Operation, Workspace};

/// The secret access key the AWS account signs with (moto accepts any).
pub const AWS_SECRET: &str = "cairn-test-aws-secret-4f1d2c";

/// Whether the emulators are there; a test returns at once when not.
pub fn emulators() -> bool {
    cairn_test_support::gate(
        "CAIRN_CLOUD_TESTS",
        "with the cloud emulators (eval \"$(scripts/cloud-emulators)\")",
    )
}

/// Whether the emulators are there and among them Pub/Sub (`CAIRN_PUBSUB_URL`), which
/// scripts/cloud-emulators starts only where the machine has the Google Cloud SDK; a skip is
/// logged either way, so CI fails rather than passing without it.
pub fn pubsub() -> bool {
    emulators()
        && cairn_test_support::peer(
            "CAIRN_PUBSUB_URL",
            "(scripts/cloud-emulators starts the emulator where gcloud and java are)",
        )
        .is_some()
}

/// [`pubsub`] for Firestore (`CAIRN_FIRESTORE_URL`).
pub fn firestore() -> bool {
    emulators()
        && cairn_test_support::peer(
            "CAIRN_FIRESTORE_URL",
            "(scripts/cloud-emulators starts the emulator where gcloud and java are)",
        )
        .is_some()
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/cloud-emulators"))
}

/// Vault secrets by name, each bound to loopback (`127.0.0.1`) only, as `cairn vault set NAME
/// --host 127.0.0.1` would.
pub struct Secrets(pub Vec<(String, String)>);

impl Credentials for Secrets {
    fn for_host(&self, name: &str, host: &str) -> Result<cairn_vault::Secret, CredentialRefusal> {
        match self.0.iter().find(|(n, _)| n == name) {
            Some((_, value)) if host == "127.0.0.1" => Ok(cairn_vault::Secret::new(value.clone())),
            Some(_) => Err(CredentialRefusal {
                reason: format!("it is bound to 127.0.0.1, not {host}"),
            }),
            None => Err(CredentialRefusal {
                reason: "no such secret".into(),
            }),
        }
    }
}

/// What was stored in the "vault" through the cloud tools: (name, hosts, value).
#[derive(Default)]
pub struct Stored(pub Mutex<Vec<(String, Vec<String>, String)>>);

impl SecretStore for Stored {
    fn store(&self, name: &str, hosts: &[String], value: &str) -> Result<(), String> {
        self.0
            .lock()
            .unwrap()
            .push((name.to_owned(), hosts.to_vec(), value.to_owned()));
        Ok(())
    }
}

/// The accounts over the emulators: `aws` (moto, every service), `s3` (moto as an
/// S3-compatible store), `azure` (Azurite, Shared Key), `gcp` (the Google emulators, no secret).
pub fn accounts() -> BTreeMap<String, CloudAccountConfig> {
    let mut accounts = BTreeMap::new();
    let base = |kind| CloudAccountConfig {
        kind,
        region: None,
        endpoint: None,
        endpoints: BTreeMap::new(),
        access_key_id: None,
        account: None,
        project: None,
        secret: None,
        auth: None,
    };
    accounts.insert(
        "aws".to_owned(),
        CloudAccountConfig {
            region: Some("us-east-1".into()),
            endpoint: Some(var("CAIRN_MOTO_URL")),
            access_key_id: Some("AKIDCAIRNTEST".into()),
            secret: Some("aws-test".into()),
            ..base(CloudKind::Aws)
        },
    );
    accounts.insert(
        "s3".to_owned(),
        CloudAccountConfig {
            endpoint: Some(var("CAIRN_MOTO_URL")),
            access_key_id: Some("AKIDCAIRNTEST".into()),
            secret: Some("aws-test".into()),
            ..base(CloudKind::S3)
        },
    );
    let mut azure = BTreeMap::new();
    azure.insert("blob".to_owned(), var("CAIRN_AZURITE_BLOB"));
    azure.insert("queue".to_owned(), var("CAIRN_AZURITE_QUEUE"));
    azure.insert("table".to_owned(), var("CAIRN_AZURITE_TABLE"));
    accounts.insert(
        "azure".to_owned(),
        CloudAccountConfig {
            endpoints: azure,
            account: Some(var("CAIRN_AZURITE_ACCOUNT")),
            secret: Some("azure-test".into()),
            ..base(CloudKind::Azure)
        },
    );
    let mut gcp = BTreeMap::new();
    gcp.insert("storage".to_owned(), var("CAIRN_GCS_URL"));
    if let Ok(url) = std::env::var("CAIRN_PUBSUB_URL") {
        gcp.insert("pubsub".to_owned(), url);
    }
    if let Ok(url) = std::env::var("CAIRN_FIRESTORE_URL") {
        gcp.insert("firestore".to_owned(), url);
    }
    accounts.insert(
        "gcp".to_owned(),
        CloudAccountConfig {
            endpoints: gcp,
            project: Some("cairn-test".into()),
            ..base(CloudKind::Gcp)
        },
    );
    accounts
}

/// The secrets of [`accounts`].
pub fn secrets() -> Secrets {
    Secrets(vec![
        ("aws-test".into(), AWS_SECRET.into()),
        ("azure-test".into(), var("CAIRN_AZURITE_KEY")),
    ])
}

/// A guard that allows loopback and a generous per-user rate (the tests make many requests).
pub fn guard(secrets: Secrets) -> Arc<WebGuard> {
    Arc::new(
        WebGuard::new(GuardConfig {
            allow_loopback: true,
            per_user_per_minute: 100_000,
            per_host_per_minute: 100_000,
            ..GuardConfig::default()
        })
        .unwrap()
        .with_credentials(Arc::new(secrets)),
    )
}

/// The cloud tools over `accounts`, a workspace at `dir`, and where approvals are held.
pub struct Setup {
    pub tools: ToolSet<Cloud>,
    pub approvals: Arc<ExactApprovals>,
    pub stored: Arc<Stored>,
}

pub fn setup_with(
    dir: &Path,
    accounts: &BTreeMap<String, CloudAccountConfig>,
    guard: Arc<WebGuard>,
) -> Setup {
    let approvals = ExactApprovals::new();
    let ws = Workspace::new(vec![dir.to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            approvals.clone(),
        );
    let stored = Arc::new(Stored::default());
    let (cloud, problems) =
        Cloud::new(accounts, Some(guard), Some(Arc::new(ws)), approvals.clone());
    assert!(problems.is_empty(), "{problems:?}");
    let cloud = cloud.with_secret_store(stored.clone());
    Setup {
        tools: cloud_tools(cloud),
        approvals,
        stored,
    }
}

/// The cloud tools over the emulators' accounts and a workspace at `dir`.
pub fn setup(dir: &Path) -> Setup {
    setup_with(dir, &accounts(), guard(secrets()))
}

/// A name no other test (or earlier run against the same emulators) uses: `prefix-<random>`.
pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// Answers the strict question `result` asked (the key in its protected paths) with "allow
/// once": the approval is held while the same call runs again.
pub fn approve(approvals: &ExactApprovals, result: &rmcp::model::CallToolResult) {
    let protected = cairn_agent::tools::protected_of(result);
    assert!(!protected.is_empty(), "no strict question was asked");
    for p in protected {
        approvals.hold(Path::new(&p.key), Operation::Write);
    }
}

/// A request to moto signed for `service` as the `aws` account's are (setting up and reading
/// back without the tools): the status and the body.
pub async fn aws_send(
    method: cairn_web::Method,
    service: &str,
    path: &str,
    body: Option<(Vec<u8>, &str)>,
    headers: &[(&str, &str)],
) -> (u16, String) {
    use cairn_web::{CredentialUse, Placement, WebRequest};
    let base = var("CAIRN_MOTO_URL");
    let mut request = WebRequest::new(
        method,
        format!(
            "{}/{}",
            base.trim_end_matches('/'),
            path.trim_start_matches('/')
        ),
    );
    if let Some((bytes, kind)) = body {
        request
            .headers
            .insert("content-type", kind.parse().unwrap());
        request.body = Some(bytes);
    }
    for (k, v) in headers {
        request.headers.insert(
            cairn_web::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    let request = request.with_credential(CredentialUse {
        secret: "aws-test".into(),
        placement: Placement::AwsSigV4 {
            access_key_id: "AKIDCAIRNTEST".into(),
            region: "us-east-1".into(),
            service: service.into(),
        },
    });
    let response = guard(secrets()).fetch(request).await.unwrap();
    (
        response.status.as_u16(),
        String::from_utf8_lossy(&response.body).into_owned(),
    )
}

/// An AWS query-protocol call on moto (`params` hold `Action` and `Version`): its XML answer;
/// the call must succeed.
pub async fn aws_form(service: &str, params: &[(&str, &str)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        form.append_pair(k, v);
    }
    let body = form.finish().into_bytes();
    let (status, text) = aws_send(
        cairn_web::Method::POST,
        service,
        "/",
        Some((body, "application/x-www-form-urlencoded; charset=utf-8")),
        &[],
    )
    .await;
    assert!(status < 300, "{params:?}: {status} {text}");
    text
}

/// An AWS JSON-protocol call on moto (`target` such as `AmazonSSM.PutParameter`); the call
/// must succeed.
pub async fn aws_json(service: &str, target: &str, body: serde_json::Value) -> serde_json::Value {
    let (status, text) = aws_send(
        cairn_web::Method::POST,
        service,
        "/",
        Some((
            serde_json::to_vec(&body).unwrap(),
            "application/x-amz-json-1.1",
        )),
        &[("x-amz-target", target)],
    )
    .await;
    assert!(status < 300, "{target}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}
