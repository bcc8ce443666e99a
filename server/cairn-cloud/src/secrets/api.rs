//! The two AWS JSON APIs the secret tools call: SSM and Secrets Manager.
//!
//! Apart from `mod.rs` so that the tools share them without a cycle through the module that
//! lists the tools.

use cairn_toolkit::CallContext;
use serde_json::Value;

use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;

/// An SSM call (`action` such as `GetParameter`).
pub(super) async fn ssm(
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
pub(super) async fn secrets_manager(
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
