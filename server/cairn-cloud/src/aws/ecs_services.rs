//! `ecs_services`: ECS clusters, or one cluster's services with their desired and running
//! task counts and task definition.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::client::{account, next_page, said, table};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;

/// The `ecs_services` tool.
pub struct EcsServices;

/// Arguments of `ecs_services`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// A cluster's name or ARN: list its services. Default: list the clusters.
    cluster: Option<String>,
    /// Rows to show, 1 to 100. Default: 50.
    max: Option<u32>,
    /// The `next_token` a previous call returned, for the next page.
    next_token: Option<String>,
}

impl Tool for EcsServices {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "ecs_services";
    const TITLE: &'static str = "ECS clusters and services";
    const DESCRIPTION: &'static str = "List ECS clusters (status, services, running and pending tasks), or with `cluster` that cluster's services: status, desired/running/pending task counts, launch type and task definition; paged with `next_token`.";
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

const TARGET: &str = "AmazonEC2ContainerServiceV20141113";

async fn ecs(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    action: &str,
    body: Value,
) -> Result<Value, CloudError> {
    host.aws_json(
        cx,
        account,
        "ecs",
        &format!("{TARGET}.{action}"),
        "1.1",
        &body,
    )
    .await
}

/// The last part of an ARN (`.../my-service` → `my-service`, `task-definition/web:3` → `web:3`).
fn short(arn: &str) -> String {
    arn.rsplit('/').next().unwrap_or(arn).to_owned()
}

fn count(v: &Value) -> String {
    v.as_i64().map(|n| n.to_string()).unwrap_or_default()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let max = args.max.unwrap_or(50).clamp(1, 100);
    let mut body = json!({ "maxResults": max });
    if let Some(t) = &args.next_token {
        body["nextToken"] = json!(t);
    }
    let Some(cluster) = args
        .cluster
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        let listed = ecs(host, cx, account, "ListClusters", body)
            .await
            .map_err(said)?;
        let arns: Vec<Value> = listed["clusterArns"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut rows = Vec::new();
        // DescribeClusters takes at most 100 at once; a page has at most 100.
        if !arns.is_empty() {
            let described = ecs(
                host,
                cx,
                account,
                "DescribeClusters",
                json!({ "clusters": arns }),
            )
            .await
            .map_err(said)?;
            for c in described["clusters"].as_array().into_iter().flatten() {
                rows.push(vec![
                    s(&c["clusterName"]),
                    s(&c["status"]),
                    count(&c["activeServicesCount"]),
                    count(&c["runningTasksCount"]),
                    count(&c["pendingTasksCount"]),
                    count(&c["registeredContainerInstancesCount"]),
                ]);
            }
        }
        let token = listed["nextToken"].as_str().map(str::to_owned);
        let hint = match &token {
            Some(t) => next_page("next_token", t),
            None => "see a cluster's services with `cluster`".into(),
        };
        return Ok(table(
            &format!("ECS clusters in {} ({})", account.name, account.region),
            &[
                "cluster",
                "status",
                "services",
                "running tasks",
                "pending tasks",
                "instances",
            ],
            rows,
            max as usize,
            token.is_some(),
            &hint,
        ));
    };
    if cluster.len() > 2048 || cluster.chars().any(char::is_control) {
        return Err("`cluster` must be a cluster name or ARN (see `ecs_services`)".into());
    }
    body["cluster"] = json!(cluster);
    let listed = ecs(host, cx, account, "ListServices", body)
        .await
        .map_err(|e| {
            if e.is_not_found() {
                format!(
                    "no ECS cluster {cluster:?} in {} (list them with `ecs_services`): {e}",
                    account.name
                )
            } else {
                e.to_string()
            }
        })?;
    let arns: Vec<Value> = listed["serviceArns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut rows = Vec::new();
    // DescribeServices takes at most 10 services at once.
    for chunk in arns.chunks(10) {
        let described = ecs(
            host,
            cx,
            account,
            "DescribeServices",
            json!({ "cluster": cluster, "services": chunk }),
        )
        .await
        .map_err(said)?;
        for v in described["services"].as_array().into_iter().flatten() {
            let deployments = v["deployments"].as_array().map_or(0, Vec::len);
            rows.push(vec![
                s(&v["serviceName"]),
                s(&v["status"]),
                count(&v["desiredCount"]),
                count(&v["runningCount"]),
                count(&v["pendingCount"]),
                s(&v["launchType"]),
                short(&s(&v["taskDefinition"])),
                if deployments > 1 {
                    format!("{deployments} (rolling out)")
                } else {
                    deployments.to_string()
                },
            ]);
        }
    }
    let token = listed["nextToken"].as_str().map(str::to_owned);
    let hint = match &token {
        Some(t) => next_page("next_token", t),
        None => "ask for fewer with `max`".into(),
    };
    Ok(table(
        &format!("services of ECS cluster {cluster} in {}", account.name),
        &[
            "service",
            "status",
            "desired",
            "running",
            "pending",
            "launch type",
            "task definition",
            "deployments",
        ],
        rows,
        max as usize,
        token.is_some(),
        &hint,
    ))
}
