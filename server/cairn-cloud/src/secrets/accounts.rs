//! `cloud_accounts`: the configured `[cloud.NAME]` accounts, from the configuration alone.

use cairn_config::CloudKind;
use cairn_toolkit::reply::text;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Placement;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::account::{Account, kind_name};
use crate::cloud::Cloud;

/// The `cloud_accounts` tool.
pub struct CloudAccounts;

/// Arguments of `cloud_accounts` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for CloudAccounts {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "cloud_accounts";
    const TITLE: &'static str = "Cloud accounts";
    const DESCRIPTION: &'static str = "List the cloud accounts the user configured (`[cloud.NAME]`): name, kind (aws, s3, azure, gcp), region, project or storage account, endpoints, how requests are signed and the NAME of the vault secret (never its value). No network; use it to pick the `account` argument of the other cloud tools.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, _: Args, _: CallContext) -> CallToolResult {
        if host.accounts.is_empty() {
            return text(
                "no cloud accounts are configured; add a `[cloud.NAME]` table with `kind = \"aws\"` (or s3, azure, gcp) to the user config (docs/cloud.md)",
            );
        }
        let table = Table {
            columns: [
                "account",
                "kind",
                "where",
                "endpoints",
                "signed with",
                "vault secret",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows: host.accounts.values().map(row).collect(),
            more: false,
        };
        table.result_hinting("cloud accounts", &Limits::default(), "")
    }
}

fn row(a: &Account) -> Vec<Cell> {
    let place = match a.kind {
        CloudKind::Aws | CloudKind::S3 => format!("region {}", a.region),
        CloudKind::Azure => format!(
            "storage account {}",
            a.storage_account.as_deref().unwrap_or("?")
        ),
        CloudKind::Gcp => format!("project {}", a.project.as_deref().unwrap_or("?")),
    };
    let endpoints = a
        .configured_endpoints()
        .into_iter()
        .map(|(service, url)| {
            // A user name or password in an endpoint URL is not shown.
            let mut url = url.clone();
            let _ = url.set_username("");
            let _ = url.set_password(None);
            format!("{service}: {url}")
        })
        .collect::<Vec<_>>();
    let endpoints = if endpoints.is_empty() {
        "public".to_owned()
    } else {
        endpoints.join(", ")
    };
    let service = match a.kind {
        CloudKind::Azure => "blob",
        _ => "s3",
    };
    let signed = match a.credential(service).map(|c| c.placement) {
        None => "nothing (no secret)".to_owned(),
        Some(Placement::AwsSigV4 { .. }) => format!(
            "AWS SigV4, access key id {}",
            a.access_key_id().unwrap_or("?")
        ),
        Some(Placement::AzureSharedKey { .. }) => "Azure Shared Key".to_owned(),
        Some(Placement::SasToken) => "Azure SAS token".to_owned(),
        Some(Placement::Bearer) => "Google access token (Bearer)".to_owned(),
        Some(_) => "the vault secret".to_owned(),
    };
    let cell = |s: String| Cell::Text(s);
    vec![
        cell(a.name.clone()),
        cell(kind_name(a.kind).to_owned()),
        cell(place),
        cell(endpoints),
        cell(signed),
        a.secret_name().map_or(Cell::Null, |n| cell(n.to_owned())),
    ]
}
