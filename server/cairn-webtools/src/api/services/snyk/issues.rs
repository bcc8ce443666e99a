//! `snyk_issues`: the open issues (vulnerabilities, license problems) of a Snyk organization,
//! or of one project, at or above a severity, worst first, with what fixes them.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{PUBLIC, SERVICE, id};
use crate::api::services::Services;
use crate::api::services::gitlab::{cell, field};
use crate::api::services::paging::{self, Items, List, More, Next, Paging, Size};
use cairn_web::Method;

/// How the organization's list pages: numbered pages of [`PAGE`] while its `total` is beyond
/// them.
const PAGING: Paging = Paging {
    items: Items::At("/results"),
    size: Some(Size {
        param: "perPage",
        max: PAGE as usize,
    }),
    next: Next::Page {
        param: "page",
        more: More::Total {
            at: "/total",
            or_link: None,
        },
    },
};

/// The most issues a page of the organization's list asks for.
const PAGE: u32 = 50;

/// The `snyk_issues` tool.
pub struct SnykIssues;

/// The least severity listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

const SEVERITIES: [(Severity, &str); 4] = [
    (Severity::Critical, "critical"),
    (Severity::High, "high"),
    (Severity::Medium, "medium"),
    (Severity::Low, "low"),
];

/// Arguments of `snyk_issues`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The organization's id (a UUID).
    org: String,
    /// One project's id (a UUID): its issues instead of the whole organization's.
    project: Option<String>,
    /// The least severity listed: `low` (default: all), `medium`, `high` or `critical`.
    min_severity: Option<Severity>,
    /// Also list issues that were ignored (default: left out).
    include_ignored: Option<bool>,
    /// The page of the organization's list, from 1 (50 a page; a project's come at once).
    page: Option<u32>,
}

impl Tool for SnykIssues {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "snyk_issues";
    const TITLE: &'static str = "Snyk issues";
    const DESCRIPTION: &'static str = "List the open vulnerability and license issues Snyk found in an organization or one project, at or above a severity, worst first: package, version, CVE, CVSS, exploit maturity and the version that fixes it.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let org = match id("org", &args.org) {
            Ok(o) => o,
            Err(e) => return error(e),
        };
        let least = args.min_severity.unwrap_or(Severity::Low);
        let severities: Vec<&str> = SEVERITIES
            .iter()
            .filter(|(s, _)| *s >= least)
            .map(|(_, n)| *n)
            .collect();
        let ignored = args.include_ignored.unwrap_or(false);
        match args
            .project
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            Some(p) => match id("project", p) {
                Ok(project) => {
                    one_project(services, &cx, &org, &project, &severities, ignored).await
                }
                Err(e) => error(e),
            },
            None => organization(services, &cx, &org, &severities, ignored, args.page).await,
        }
    }
}

/// Where a severity sorts: critical first, unknown last.
fn rank(severity: &str) -> usize {
    SEVERITIES
        .iter()
        .position(|(_, n)| *n == severity)
        .unwrap_or(SEVERITIES.len())
}

/// The CVE ids (else CWE) of an issue's `identifiers`, joined.
fn identifiers(issue: &Value) -> String {
    let list = |k: &str| -> Vec<String> {
        issue
            .pointer(&format!("/identifiers/{k}"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let cve = list("CVE");
    if cve.is_empty() { list("CWE") } else { cve }.join(", ")
}

fn cvss(issue: &Value) -> String {
    issue
        .get("cvssScore")
        .and_then(Value::as_f64)
        .map(|s| format!("{s:.1}"))
        .unwrap_or_default()
}

fn heading(scope: &str, severities: &[&str], ignored: bool) -> String {
    format!(
        "Snyk issues of {scope} ({}{})",
        severities.join(", "),
        if ignored { ", ignored ones too" } else { "" }
    )
}

const COLUMNS: [&str; 8] = [
    "severity", "title", "package", "version", "id", "CVSS", "exploit", "fix",
];

async fn one_project(
    services: &Services,
    cx: &CallContext,
    org: &str,
    project: &str,
    severities: &[&str],
    ignored: bool,
) -> CallToolResult {
    let mut filters = json!({ "severities": severities });
    if !ignored {
        filters["ignored"] = json!(false);
    }
    let body = json!({ "includeDescription": false, "filters": filters });
    let json = match services
        .call(
            cx,
            SERVICE,
            PUBLIC,
            Method::POST,
            &format!("org/{org}/project/{project}/aggregated-issues"),
            &[],
            Some(&body),
            &format!("project {project} of organization {org}"),
        )
        .await
    {
        Ok((_, json)) => json,
        Err(e) => return error(e.to_string()),
    };
    let mut issues: Vec<&Value> = json
        .get("issues")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let heading = heading(&format!("project {project}"), severities, ignored);
    if issues.is_empty() {
        return text(format!("{heading}: none"));
    }
    let data = |i: &Value| i.get("issueData").cloned().unwrap_or(Value::Null);
    // Worst first: severity, then CVSS (highest first).
    issues.sort_by(|a, b| {
        let (da, db) = (data(a), data(b));
        rank(&field(&da, "severity"))
            .cmp(&rank(&field(&db, "severity")))
            .then_with(|| {
                let s = |d: &Value| d.get("cvssScore").and_then(Value::as_f64).unwrap_or(0.0);
                s(&db).total_cmp(&s(&da))
            })
    });
    let table = Table {
        columns: COLUMNS.map(str::to_owned).to_vec(),
        rows: issues
            .iter()
            .map(|i| {
                let d = data(i);
                let versions = i
                    .get("pkgVersions")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let fix = i
                    .pointer("/fixInfo/nearestFixedInVersion")
                    .and_then(Value::as_str)
                    .filter(|v| !v.is_empty())
                    .map(|v| format!("upgrade to {v}"))
                    .unwrap_or_else(|| "no fix".to_owned());
                let ignored_mark = if i.get("isIgnored").and_then(Value::as_bool) == Some(true) {
                    " (ignored)"
                } else {
                    ""
                };
                [
                    format!("{}{ignored_mark}", field(&d, "severity")),
                    cell(&field(&d, "title"), 100),
                    field(i, "pkgName"),
                    cell(&versions, 60),
                    cell([field(i, "id"), identifiers(&d)].join(" ").trim(), 100),
                    cvss(&d),
                    field(&d, "exploitMaturity"),
                    fix,
                ]
                .into_iter()
                .map(Cell::Text)
                .collect()
            })
            .collect(),
        more: false,
    };
    table.result(&heading, &Limits::default())
}

async fn organization(
    services: &Services,
    cx: &CallContext,
    org: &str,
    severities: &[&str],
    ignored: bool,
    page: Option<u32>,
) -> CallToolResult {
    let page = page.unwrap_or(1).max(1);
    let mut filters = json!({ "orgs": [org], "severity": severities, "isFixed": false });
    if !ignored {
        filters["ignored"] = json!(false);
    }
    let body = json!({ "filters": filters });
    let what = format!("organization {org}");
    let list = List {
        service: SERVICE,
        public: PUBLIC,
        label: "Snyk",
        method: Method::POST,
        path: "reporting/issues/latest",
        query: vec![
            ("page", page.to_string()),
            ("perPage", PAGE.to_string()),
            ("sortBy", "severity".to_owned()),
            ("order", "desc".to_owned()),
            ("groupBy", "issue".to_owned()),
        ],
        body: Some(&body),
        what: &what,
    };
    let listed = match paging::list(services, cx, &list, &PAGING, PAGE as usize, 1).await {
        Ok(l) => l,
        Err(e) => return error(e.to_string()),
    };
    let (json, results) = (&listed.last, &listed.items);
    let total = json.get("total").and_then(Value::as_u64);
    let heading = format!(
        "{}, page {page}{}",
        heading(&format!("organization {org}"), severities, ignored),
        total.map(|t| format!(" of {t} issues")).unwrap_or_default()
    );
    if results.is_empty() {
        return text(format!("{heading}: none"));
    }
    let mut columns = COLUMNS.map(str::to_owned).to_vec();
    columns.push("projects".to_owned());
    let table = Table {
        columns,
        rows: results
            .iter()
            .map(|r| {
                let i = r.get("issue").unwrap_or(&Value::Null);
                let projects: Vec<String> = r
                    .get("projects")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|p| field(p, "name"))
                            .filter(|n| !n.is_empty())
                            .collect()
                    })
                    .unwrap_or_default();
                let fix = if i.get("isUpgradable").and_then(Value::as_bool) == Some(true) {
                    "upgrade"
                } else if i.get("isPatchable").and_then(Value::as_bool) == Some(true) {
                    "patch"
                } else if i.get("isPinnable").and_then(Value::as_bool) == Some(true) {
                    "pin"
                } else {
                    "no fix"
                };
                [
                    field(i, "severity"),
                    cell(&field(i, "title"), 100),
                    field(i, "package"),
                    field(i, "version"),
                    cell([field(i, "id"), identifiers(i)].join(" ").trim(), 100),
                    cvss(i),
                    field(i, "exploitMaturity"),
                    fix.to_owned(),
                    cell(&projects.join(", "), 120),
                ]
                .into_iter()
                .map(Cell::Text)
                .collect()
            })
            .collect(),
        more: listed.next.is_some(),
    };
    table.result_hinting(
        &heading,
        &Limits::default(),
        &format!("call again with page={}", page.saturating_add(1)),
    )
}
