//! The accounts (which are configured, who the AWS keys are), SSM parameters, and secrets a
//! cloud API returns, which go to the vault, never to the model.
//!
//! A secret value (a SecureString parameter, a Secrets Manager secret) is read only by
//! `cloud_secret_to_vault`, after the user's approval, and only to hand it to the vault;
//! every other path drops it unread.

mod accounts;
mod identity;
mod ssm;
mod to_vault;

pub(crate) use accounts::CloudAccounts;
pub(crate) use identity::AwsIdentity;
pub(crate) use ssm::SsmParameter;
pub(crate) use to_vault::CloudSecretToVault;

use base64::Engine;
use cairn_toolkit::CallContext;
use serde_json::Value;

use crate::Cloud;
use crate::account::Account;
use crate::request::CloudError;

/// An SSM call (`action` such as `GetParameter`).
async fn ssm(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    action: &str,
    body: &Value,
) -> Result<Value, CloudError> {
    cloud
        .aws_json(
            cx,
            account,
            "ssm",
            &format!("AmazonSSM.{action}"),
            "1.1",
            body,
        )
        .await
}

/// A Secrets Manager call (`action` such as `DescribeSecret`).
async fn secrets_manager(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    action: &str,
    body: &Value,
) -> Result<Value, CloudError> {
    cloud
        .aws_json(
            cx,
            account,
            "secretsmanager",
            &format!("secretsmanager.{action}"),
            "1.1",
            body,
        )
        .await
}

/// `text` with every occurrence of `secret` (plain, base64, hex) replaced: the last line of
/// defence for a message that passed near the value (a vault error, say).
fn scrub(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_owned();
    }
    let forms = [
        secret.to_owned(),
        base64::engine::general_purpose::STANDARD.encode(secret),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(secret),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret),
        hex_of(secret.as_bytes()),
        hex_of(secret.as_bytes()).to_ascii_uppercase(),
    ];
    let mut out = text.to_owned();
    for form in forms {
        out = out.replace(&form, "[secret]");
    }
    out
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_removes_every_encoding() {
        let s = "hunter2!";
        let b64 = base64::engine::general_purpose::STANDARD.encode(s);
        let text = format!("a {s} b {b64} c {} d", hex_of(s.as_bytes()));
        let out = scrub(&text, s);
        assert_eq!(out, "a [secret] b [secret] c [secret] d");
    }
}
