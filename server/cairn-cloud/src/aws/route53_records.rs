//! `route53_records`: Route 53 hosted zones, or one zone's record sets.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{
    account, child, children, find, items, next_page, rows_wanted, said, table, text_at,
};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, text_of, url_of, xml};

/// The `route53_records` tool.
pub struct Route53Records;

/// Arguments of `route53_records`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// A hosted zone, by id (`Z1D633PJN98FT9`) or domain name (`example.com`): list its
    /// record sets. Default: list the hosted zones.
    zone: Option<String>,
    /// With `zone`: start at this record name (with `start_type`, from a previous page).
    start_name: Option<String>,
    /// With `zone`: start at this record type (`A`, `CNAME`...), together with `start_name`.
    start_type: Option<String>,
    /// Rows to show, 1 to 200. Default: 50.
    max: Option<u32>,
    /// Without `zone`: the `marker` a previous call returned, for the next page.
    marker: Option<String>,
}

impl Tool for Route53Records {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "route53_records";
    const TITLE: &'static str = "Route 53 zones and records";
    const DESCRIPTION: &'static str = "List Route 53 hosted zones (id, name, private or public, record count), or with `zone` (id or domain name) that zone's record sets: name, type, TTL and values or alias target; paged.";
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

/// A GET of `path` with `query` on Route 53, its XML text back.
async fn get(
    host: &Cloud,
    account: &Account,
    cx: &CallContext,
    path: &str,
    query: &[(&str, &str)],
) -> Result<String, CloudError> {
    let base = account.base_url("route53")?;
    let url = url_of(&base, path, query)?;
    let response = host
        .send_ok(cx, account, "route53", CloudRequest::new(Method::GET, url))
        .await?;
    text_of("route53", &response)
}

/// A domain name compared the way DNS does: lower case, one trailing dot.
fn fqdn(name: &str) -> String {
    format!(
        "{}.",
        name.trim().trim_end_matches('.').to_ascii_lowercase()
    )
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let max = rows_wanted(args.max).to_string();
    let Some(zone) = args
        .zone
        .as_deref()
        .map(str::trim)
        .filter(|z| !z.is_empty())
    else {
        if args.start_name.is_some() || args.start_type.is_some() {
            return Err("`start_name` and `start_type` go with `zone`".into());
        }
        let mut query = vec![("maxitems", max.as_str())];
        if let Some(m) = args.marker.as_deref() {
            query.push(("marker", m));
        }
        let answer = get(host, account, cx, "2013-04-01/hostedzone", &query)
            .await
            .map_err(said)?;
        let doc = xml("route53", &answer).map_err(said)?;
        let root =
            find(&doc, "ListHostedZonesResponse").ok_or("Route 53 answered without a zone list")?;
        let rows = items(root, "HostedZones", "HostedZone")
            .into_iter()
            .map(|z| {
                vec![
                    text_at(z, "Id")
                        .trim_start_matches("/hostedzone/")
                        .to_owned(),
                    text_at(z, "Name"),
                    if text_at(z, "Config/PrivateZone") == "true" {
                        "private"
                    } else {
                        "public"
                    }
                    .into(),
                    text_at(z, "ResourceRecordSetCount"),
                    text_at(z, "Config/Comment"),
                ]
            })
            .collect();
        let next = (text_at(root, "IsTruncated") == "true").then(|| text_at(root, "NextMarker"));
        let hint = match &next {
            Some(m) => next_page("marker", m),
            None => "ask for fewer with `max`".into(),
        };
        return Ok(table(
            &format!("Route 53 hosted zones in {}", account.name),
            &["id", "name", "visibility", "records", "comment"],
            rows,
            rows_wanted(args.max),
            next.is_some(),
            &hint,
        ));
    };
    let id = zone_id(host, account, cx, zone).await?;
    let mut query = vec![("maxitems", max.as_str())];
    let start_name = args.start_name.as_deref().map(fqdn);
    if let Some(n) = start_name.as_deref() {
        query.push(("name", n));
    }
    if let Some(t) = args.start_type.as_deref() {
        if start_name.is_none() {
            return Err("`start_type` needs `start_name`".into());
        }
        query.push(("type", t));
    }
    let answer = get(
        host,
        account,
        cx,
        &format!("2013-04-01/hostedzone/{}/rrset", segment(&id)),
        &query,
    )
    .await
    .map_err(|e| {
        if e.is_not_found() {
            format!("no hosted zone {zone:?} in {} (list them with `route53_records` without `zone`): {e}", account.name)
        } else {
            e.to_string()
        }
    })?;
    let doc = xml("route53", &answer).map_err(said)?;
    let root = find(&doc, "ListResourceRecordSetsResponse")
        .ok_or("Route 53 answered without record sets")?;
    let rows = items(root, "ResourceRecordSets", "ResourceRecordSet")
        .into_iter()
        .map(|r| {
            let values: Vec<String> = child(r, "ResourceRecords")
                .into_iter()
                .flat_map(|rr| children(rr, "ResourceRecord"))
                .map(|v| text_at(v, "Value"))
                .collect();
            let alias = text_at(r, "AliasTarget/DNSName");
            let mut shown = values.join(", ");
            if !alias.is_empty() {
                shown = format!("alias to {alias}");
            }
            let routing = text_at(r, "SetIdentifier");
            vec![
                text_at(r, "Name"),
                text_at(r, "Type"),
                text_at(r, "TTL"),
                shown,
                routing,
            ]
        })
        .collect();
    let next = (text_at(root, "IsTruncated") == "true").then(|| {
        (
            text_at(root, "NextRecordName"),
            text_at(root, "NextRecordType"),
        )
    });
    let hint = match &next {
        Some((n, t)) => format!(
            "more on the service: pass `start_name: \"{n}\"` and `start_type: \"{t}\"` for the next page"
        ),
        None => "ask for fewer with `max`".into(),
    };
    Ok(table(
        &format!("record sets of zone {zone} ({id}) in {}", account.name),
        &["name", "type", "ttl", "values", "set id"],
        rows,
        rows_wanted(args.max),
        next.is_some(),
        &hint,
    ))
}

/// The zone's id: as given when it is one, else the zone of that domain name.
async fn zone_id(
    host: &Cloud,
    account: &Account,
    cx: &CallContext,
    zone: &str,
) -> Result<String, String> {
    let given = zone.trim_start_matches("/hostedzone/");
    if !given.contains('.') {
        if given.is_empty() || given.len() > 32 || !given.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return Err(format!(
                "{zone:?} is neither a hosted zone id nor a domain name"
            ));
        }
        return Ok(given.to_owned());
    }
    let valid = given.len() <= 255
        && given
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '*'));
    if !valid {
        return Err(format!(
            "{zone:?} is neither a hosted zone id nor a domain name"
        ));
    }
    let wanted = fqdn(given);
    let answer = get(
        host,
        account,
        cx,
        "2013-04-01/hostedzonesbyname",
        &[("dnsname", wanted.as_str()), ("maxitems", "100")],
    )
    .await
    .map_err(said)?;
    let doc = xml("route53", &answer).map_err(said)?;
    let zones: Vec<(String, bool)> = find(&doc, "HostedZones")
        .into_iter()
        .flat_map(|z| children(z, "HostedZone"))
        .filter(|z| fqdn(&text_at(*z, "Name")) == wanted)
        .map(|z| {
            (
                text_at(z, "Id")
                    .trim_start_matches("/hostedzone/")
                    .to_owned(),
                text_at(z, "Config/PrivateZone") == "true",
            )
        })
        .collect();
    match zones.as_slice() {
        [] => Err(format!(
            "no hosted zone named {wanted} in {} (list them with `route53_records` without `zone`)",
            account.name
        )),
        [(id, _)] => Ok(id.clone()),
        several => Err(format!(
            "several hosted zones are named {wanted}: {}; pass one id as `zone`",
            several
                .iter()
                .map(|(id, private)| format!(
                    "{id} ({})",
                    if *private { "private" } else { "public" }
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
