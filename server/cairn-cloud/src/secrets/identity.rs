//! `aws_identity`: who an AWS account's keys are (STS GetCallerIdentity).

use cairn_config::CloudKind;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{xml, xml_text};

/// The `aws_identity` tool.
pub struct AwsIdentity;

/// Arguments of `aws_identity`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
}

impl Tool for AwsIdentity {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "aws_identity";
    const TITLE: &'static str = "AWS caller identity";
    const DESCRIPTION: &'static str = "Ask AWS STS who an AWS account's keys belong to (GetCallerIdentity): the AWS account number, the user or role ARN and its id. Use it to check that the keys work and which account they reach.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let account = host.account(args.account.as_deref(), &[CloudKind::Aws])?;
            let answer = host
                .aws_query(&cx, account, "sts", "2011-06-15", "GetCallerIdentity", &[])
                .await?;
            let doc = xml("sts", &answer)?;
            let root = doc.root();
            let field = |name: &str| xml_text(root, name).unwrap_or("?").trim().to_owned();
            let (number, arn, id) = (field("Account"), field("Arn"), field("UserId"));
            let mut result = text(format!(
                "account `{}` signs as {arn}\nAWS account: {number}\nuser id: {id}\nregion: {}",
                account.name, account.region
            ));
            result.structured_content = Some(json!({
                "account": account.name, "aws_account": number, "arn": arn, "user_id": id,
            }));
            Ok(result)
        };
        run.await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}
