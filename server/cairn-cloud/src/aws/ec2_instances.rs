//! `ec2_instances`: EC2 instances with their type, state, zone, addresses and Name tag,
//! filtered by id, state or tag, capped and paged.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{
    EC2, Params, account, child, children, find, items, next_page, rows_wanted, said, table,
    text_at,
};
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::xml;

/// The `ec2_instances` tool.
pub struct Ec2Instances;

/// Arguments of `ec2_instances`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// Only these instances (`i-0abc...`), at most 100.
    instance_ids: Option<Vec<String>>,
    /// Only instances in this state: `pending`, `running`, `stopping`, `stopped`,
    /// `shutting-down` or `terminated`.
    state: Option<String>,
    /// Only instances with this tag, as `Key=Value` (`Name=web-1`), or `Key` for any value.
    tag: Option<String>,
    /// Instances to show, 5 to 200. Default: 50.
    max: Option<u32>,
    /// The `next_token` a previous call returned, for the next page.
    next_token: Option<String>,
}

/// The states EC2 knows.
pub(super) const STATES: &[&str] = &[
    "pending",
    "running",
    "stopping",
    "stopped",
    "shutting-down",
    "terminated",
];

impl Tool for Ec2Instances {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "ec2_instances";
    const TITLE: &'static str = "EC2 instances";
    const DESCRIPTION: &'static str = "List EC2 instances of an AWS account (id, type, state, availability zone, private and public IP, Name tag), optionally only some ids, one state or one tag; at most 200 per call, paged with `next_token`.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, args, &cx).await.unwrap_or_else(error)
    }
}

/// One instance as shown.
#[derive(Debug, Clone)]
pub(super) struct Instance {
    pub id: String,
    pub kind: String,
    pub state: String,
    pub zone: String,
    pub private_ip: String,
    pub public_ip: String,
    pub name: String,
}

/// Checks instance ids (`i-` and hex), at most `max`.
pub(super) fn check_ids(ids: &[String], max: usize) -> Result<(), String> {
    if ids.len() > max {
        return Err(format!(
            "{} instance ids given; at most {max} per call",
            ids.len()
        ));
    }
    for id in ids {
        let ok = id.strip_prefix("i-").is_some_and(|h| {
            !h.is_empty() && h.len() <= 32 && h.chars().all(|c| c.is_ascii_hexdigit())
        });
        if !ok {
            return Err(format!(
                "{id:?} is not an instance id (`i-` and hex digits, as `ec2_instances` shows)"
            ));
        }
    }
    Ok(())
}

/// The instances of a `DescribeInstances` answer, and its `nextToken`.
pub(super) fn parse(text: &str) -> Result<(Vec<Instance>, Option<String>), CloudError> {
    let doc = xml("ec2", text)?;
    let Some(root) = find(&doc, "DescribeInstancesResponse") else {
        return Err(CloudError::Invalid(
            "ec2 answered without DescribeInstancesResponse".into(),
        ));
    };
    let mut out = Vec::new();
    for reservation in items(root, "reservationSet", "item") {
        for i in items(reservation, "instancesSet", "item") {
            let name = child(i, "tagSet")
                .into_iter()
                .flat_map(|t| children(t, "item"))
                .find(|t| text_at(*t, "key") == "Name")
                .map(|t| text_at(t, "value"))
                .unwrap_or_default();
            out.push(Instance {
                id: text_at(i, "instanceId"),
                kind: text_at(i, "instanceType"),
                state: text_at(i, "instanceState/name"),
                zone: text_at(i, "placement/availabilityZone"),
                private_ip: text_at(i, "privateIpAddress"),
                public_ip: text_at(i, "ipAddress"),
                name,
            });
        }
    }
    let token = Some(text_at(root, "nextToken")).filter(|t| !t.is_empty());
    Ok((out, token))
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let ids = args.instance_ids.unwrap_or_default();
    check_ids(&ids, 100)?;
    let mut params = Params::new();
    params.list("InstanceId", &ids);
    let mut filter = 0;
    let mut add_filter = |params: &mut Params, name: &str, value: &str| {
        filter += 1;
        params
            .set(format!("Filter.{filter}.Name"), name)
            .set(format!("Filter.{filter}.Value.1"), value);
    };
    if let Some(state) = args.state.as_deref().map(str::trim) {
        if !STATES.contains(&state) {
            return Err(format!(
                "`state`: {state:?} is not one of {}",
                STATES.join(", ")
            ));
        }
        add_filter(&mut params, "instance-state-name", state);
    }
    if let Some(tag) = args.tag.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        match tag.split_once('=') {
            Some((k, v)) => add_filter(&mut params, &format!("tag:{}", k.trim()), v.trim()),
            None => add_filter(&mut params, "tag-key", tag),
        }
    }
    let max = rows_wanted(args.max).max(5);
    // EC2 refuses MaxResults together with instance ids; a list of ids is short anyway.
    if ids.is_empty() {
        params.set("MaxResults", max.to_string());
    }
    params.opt("NextToken", args.next_token.as_deref());
    let answer = host
        .aws_query(cx, account, "ec2", EC2, "DescribeInstances", &params.0)
        .await
        .map_err(said)?;
    let (instances, token) = parse(&answer).map_err(said)?;
    let more = token.is_some();
    let rows = instances
        .into_iter()
        .map(|i| {
            vec![
                i.id,
                i.name,
                i.kind,
                i.state,
                i.zone,
                i.private_ip,
                i.public_ip,
            ]
        })
        .collect();
    let hint = match &token {
        Some(t) => next_page("next_token", t),
        None => "filter by `state`, `tag` or `instance_ids`".into(),
    };
    Ok(table(
        &format!("EC2 instances in {} ({})", account.name, account.region),
        &[
            "id",
            "name",
            "type",
            "state",
            "zone",
            "private ip",
            "public ip",
        ],
        rows,
        max,
        more,
        &hint,
    ))
}
