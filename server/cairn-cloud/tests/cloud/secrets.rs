//! The account and secret tools against moto: the accounts as configured (names of secrets,
//! never values), STS, SSM parameters (a SecureString's value never shown), and secrets copied
//! into the vault only after the strict question, their values in no result in any encoding.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use base64::Engine;
use cairn_test_support::tools::{Seen, call};
use common::aws_json as aws;
use serde_json::json;

async fn put_parameter(name: &str, value: &str, kind: &str) {
    aws(
        "ssm",
        "AmazonSSM.PutParameter",
        json!({"Name": name, "Value": value, "Type": kind}),
    )
    .await;
}

/// Asserts that `secret` appears nowhere in `seen` (text, structured content, the question's
/// protected paths): not plain, not base64, not hex.
fn assert_hidden(seen: &Seen, secret: &str) {
    let all = serde_json::to_string(&seen.result).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
    let b64_bare = base64::engine::general_purpose::STANDARD_NO_PAD.encode(secret);
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    for (form, encoded) in [
        ("plain", secret),
        ("base64", &b64_bare),
        ("base64", &b64),
        ("hex", &hex),
        ("HEX", &hex.to_uppercase()),
    ] {
        assert!(
            !all.contains(encoded),
            "the secret is in the result ({form}): {all}"
        );
        assert!(
            !seen.text.contains(encoded),
            "the secret is in the text ({form})"
        );
    }
}

fn ok(seen: &Seen) -> &str {
    assert!(!seen.is_error, "{}", seen.text);
    &seen.text
}

fn err(seen: &Seen) -> &str {
    assert!(seen.is_error, "expected an error: {}", seen.text);
    &seen.text
}

#[tokio::test]
async fn cloud_accounts_shows_the_configuration_and_secret_names_only() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let seen = call(&s.tools, "cloud_accounts", json!({})).await;
    let text = ok(&seen);
    let moto = std::env::var("CAIRN_MOTO_URL").unwrap();
    assert!(text.contains(&format!("| aws | aws | region us-east-1 | *: {moto}/ | AWS SigV4, access key id AKIDCAIRNTEST | aws-test |")), "{text}");
    assert!(
        text.contains("| azure | azure | storage account devstoreaccount1 |"),
        "{text}"
    );
    assert!(text.contains("Azure Shared Key | azure-test |"), "{text}");
    assert!(
        text.contains("| gcp | gcp | project cairn-test |"),
        "{text}"
    );
    assert!(text.contains("| nothing (no secret) | NULL |"), "{text}");
    assert!(text.contains("(4 rows)"), "{text}");
    assert_hidden(&seen, common::AWS_SECRET);
    assert_hidden(&seen, &std::env::var("CAIRN_AZURITE_KEY").unwrap());
    let extra = call(&s.tools, "cloud_accounts", json!({"account": "aws"})).await;
    assert!(err(&extra).contains("unknown field"), "{}", extra.text);
}

#[tokio::test]
async fn aws_identity_names_the_account_behind_the_keys() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let seen = call(&s.tools, "aws_identity", json!({})).await;
    let text = ok(&seen);
    assert!(
        text.contains("account `aws` signs as arn:aws:sts::123456789012:"),
        "{text}"
    );
    assert!(text.contains("AWS account: 123456789012"), "{text}");
    assert_eq!(
        seen.result.structured_content.as_ref().unwrap()["aws_account"],
        "123456789012"
    );
    let azure = call(&s.tools, "aws_identity", json!({"account": "azure"})).await;
    assert!(
        err(&azure).contains("account `azure` is azure; this tool needs aws"),
        "{}",
        azure.text
    );
}

#[tokio::test]
async fn ssm_parameters_are_read_and_listed_without_secure_values() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let root = format!("/{}", common::unique("app"));
    let secret = format!("pw-{}", common::unique("ssm"));
    put_parameter(&format!("{root}/db/host"), "db.internal", "String").await;
    put_parameter(&format!("{root}/db/password"), &secret, "SecureString").await;
    put_parameter(&format!("{root}/flags"), "a,b", "StringList").await;

    let host = call(
        &s.tools,
        "ssm_parameter",
        json!({"name": format!("{root}/db/host")}),
    )
    .await;
    assert!(ok(&host).contains("value: db.internal"), "{}", host.text);
    assert_eq!(
        host.result.structured_content.as_ref().unwrap()["value"],
        "db.internal"
    );

    let pw = call(
        &s.tools,
        "ssm_parameter",
        json!({"name": format!("{root}/db/password")}),
    )
    .await;
    let text = ok(&pw);
    assert!(text.contains("SecureString, version 1"), "{text}");
    assert!(
        text.contains("value: (SecureString: secret, not shown)"),
        "{text}"
    );
    assert!(
        text.contains("`cloud_secret_to_vault` (source `ssm`"),
        "{text}"
    );
    assert_hidden(&pw, &secret);

    let listed = call(&s.tools, "ssm_parameter", json!({"path": root})).await;
    let text = ok(&listed);
    assert!(
        text.contains(&format!("| {root}/db/host | String | 1 | db.internal |")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "| {root}/db/password | SecureString | 1 | (SecureString: secret, not shown) |"
        )),
        "{text}"
    );
    assert!(
        text.contains("1 SecureString value(s) are secret"),
        "{text}"
    );
    assert_hidden(&listed, &secret);

    // One a page: three pages, each parameter once, the secret in none.
    let mut names = Vec::new();
    let mut args = json!({"path": root, "limit": 1});
    for _ in 0..10 {
        let page = call(&s.tools, "ssm_parameter", args.clone()).await;
        ok(&page);
        assert_hidden(&page, &secret);
        let content = page.result.structured_content.clone().unwrap();
        for row in content["rows"].as_array().unwrap() {
            names.push(row[0].as_str().unwrap().to_owned());
        }
        match content["next"].as_str() {
            Some(t) => args["next"] = json!(t),
            None => break,
        }
    }
    names.sort();
    assert_eq!(
        names,
        vec![
            format!("{root}/db/host"),
            format!("{root}/db/password"),
            format!("{root}/flags")
        ]
    );

    let missing = call(
        &s.tools,
        "ssm_parameter",
        json!({"name": format!("{root}/nope")}),
    )
    .await;
    assert!(err(&missing).contains("no parameter"), "{}", missing.text);
    let both = call(
        &s.tools,
        "ssm_parameter",
        json!({"name": "a", "path": "/b"}),
    )
    .await;
    assert!(err(&both).contains("not both"), "{}", both.text);
    for name in ["db/host", "db/password", "flags"] {
        aws(
            "ssm",
            "AmazonSSM.DeleteParameter",
            json!({"Name": format!("{root}/{name}")}),
        )
        .await;
    }
}

#[tokio::test]
async fn a_secrets_manager_secret_reaches_the_vault_only_after_approval_and_never_the_model() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = common::unique("db-creds");
    let password = format!("S3cret-{}", common::unique("pw"));
    let whole = json!({"user": "ada", "password": password}).to_string();
    aws(
        "secretsmanager",
        "secretsmanager.CreateSecret",
        json!({"Name": name, "SecretString": whole}),
    )
    .await;
    let args = json!({"source": "secretsmanager", "id": name, "json_key": "password",
        "vault_name": "db_password", "hosts": ["db.example.com", "*.internal.example.com"]});

    // Bad input first: nothing is asked, nothing stored.
    for (bad, expect) in [
        (json!({"hosts": []}), "`hosts` is required"),
        (
            json!({"hosts": ["https://db.example.com"]}),
            "https://db.example.com",
        ),
        (json!({"hosts": ["*.com"]}), "at least two labels"),
        (json!({"vault_name": "db password!"}), "db password!"),
        (
            json!({"id": common::unique("missing")}),
            "does not exist; nothing was stored",
        ),
        (json!({"json_key": "nope"}), ""),
    ] {
        let mut a = args.clone();
        for (k, v) in bad.as_object().unwrap() {
            a[k] = v.clone();
        }
        let seen = call(&s.tools, "cloud_secret_to_vault", a).await;
        assert_hidden(&seen, &password);
        assert_hidden(&seen, &whole);
        if expect.is_empty() {
            // A missing key is found only after the approval; the question comes first.
            assert!(
                cairn_agent::tools::protected_of(&seen.result).len() == 1,
                "{}",
                seen.text
            );
        } else {
            assert!(err(&seen).contains(expect), "{expect}: {}", seen.text);
        }
    }
    assert!(s.stored.0.lock().unwrap().is_empty());

    // The strict question names the source, the vault name and the hosts; nothing is stored.
    let asked = call(&s.tools, "cloud_secret_to_vault", args.clone()).await;
    let text = err(&asked);
    assert!(
        text.contains(&format!(
            "Secrets Manager secret `{name}` (key `password`) of account `aws`"
        )),
        "{text}"
    );
    assert!(
        text.contains("as `db_password` (bound to db.example.com, *.internal.example.com)"),
        "{text}"
    );
    let protected = cairn_agent::tools::protected_of(&asked.result);
    assert_eq!(protected.len(), 1);
    assert!(
        protected[0].path.contains(
            "→ vault secret `db_password`, usable only on db.example.com, *.internal.example.com"
        ),
        "{}",
        protected[0].path
    );
    assert_hidden(&asked, &password);
    assert!(s.stored.0.lock().unwrap().is_empty());

    // Approving this copy does not approve another vault name.
    common::approve(&s.approvals, &asked.result);
    let mut other = args.clone();
    other["vault_name"] = json!("other_name");
    let again = call(&s.tools, "cloud_secret_to_vault", other).await;
    assert!(
        !cairn_agent::tools::protected_of(&again.result).is_empty(),
        "{}",
        again.text
    );
    assert!(s.stored.0.lock().unwrap().is_empty());

    let stored = call(&s.tools, "cloud_secret_to_vault", args.clone()).await;
    let text = ok(&stored);
    assert!(
        text.contains(
            "in the vault as `db_password`, usable only on db.example.com, *.internal.example.com"
        ),
        "{text}"
    );
    assert!(text.contains("Its value was not shown"), "{text}");
    assert_hidden(&stored, &password);
    assert_hidden(&stored, &whole);
    assert_eq!(
        *s.stored.0.lock().unwrap(),
        vec![(
            "db_password".to_owned(),
            vec![
                "db.example.com".to_owned(),
                "*.internal.example.com".to_owned()
            ],
            password.clone()
        )]
    );

    // Without `json_key` the whole secret is stored.
    let mut all = args.clone();
    all.as_object_mut().unwrap().remove("json_key");
    all["vault_name"] = json!("db_creds");
    let asked = call(&s.tools, "cloud_secret_to_vault", all.clone()).await;
    common::approve(&s.approvals, &asked.result);
    let stored = call(&s.tools, "cloud_secret_to_vault", all).await;
    ok(&stored);
    assert_hidden(&stored, &whole);
    assert_hidden(&stored, &password);
    assert_eq!(s.stored.0.lock().unwrap()[1].2, whole);

    aws(
        "secretsmanager",
        "secretsmanager.DeleteSecret",
        json!({"SecretId": name, "ForceDeleteWithoutRecovery": true}),
    )
    .await;
}

#[tokio::test]
async fn a_securestring_parameter_reaches_the_vault_only_after_approval() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let param = format!("/{}/token", common::unique("svc"));
    let secret = format!("tok-{}", common::unique("x"));
    put_parameter(&param, &secret, "SecureString").await;
    let args = json!({"account": "aws", "source": "ssm", "id": param, "vault_name": "svc_token", "hosts": ["api.example.com"]});

    let asked = call(&s.tools, "cloud_secret_to_vault", args.clone()).await;
    assert!(
        err(&asked).contains(&format!("SSM parameter `{param}` of account `aws`")),
        "{}",
        asked.text
    );
    assert_hidden(&asked, &secret);
    assert!(s.stored.0.lock().unwrap().is_empty());

    common::approve(&s.approvals, &asked.result);
    let stored = call(&s.tools, "cloud_secret_to_vault", args).await;
    assert!(
        ok(&stored).contains("as `svc_token`, usable only on api.example.com"),
        "{}",
        stored.text
    );
    assert_hidden(&stored, &secret);
    assert_eq!(
        *s.stored.0.lock().unwrap(),
        vec![(
            "svc_token".to_owned(),
            vec!["api.example.com".to_owned()],
            secret.clone()
        )]
    );
    let json_key = call(&s.tools, "cloud_secret_to_vault", json!({"source": "ssm", "id": param, "json_key": "a", "vault_name": "x", "hosts": ["a.example.com"]})).await;
    assert!(
        err(&json_key).contains("`json_key` is for Secrets Manager"),
        "{}",
        json_key.text
    );
    aws("ssm", "AmazonSSM.DeleteParameter", json!({"Name": param})).await;
}
