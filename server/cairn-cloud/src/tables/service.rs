//! What the table tools share: which service an account's tables live in ([`Store`]), the
//! three services' request paths (DynamoDB's JSON protocol, Azure Table's OData, Firestore's
//! REST API), their addresses, page tokens, and the limits on what an answer shows.
//!
//! Apart from `mod.rs` so that the tools import it without a cycle through the module that
//! lists them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use cairn_config::CloudKind;
use cairn_web::Method;
use serde_json::{Map, Value, json};
use url::Url;

use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, url_of};
use cairn_toolkit::CallContext;

use super::typed;

/// The `X-Amz-Target` prefix of DynamoDB's JSON protocol.
pub(super) const DYNAMO: &str = "DynamoDB_20120810";

/// What the Azure Table service answers in: plain JSON, no OData annotations.
pub(super) const AZURE_JSON: &str = "application/json;odata=nometadata";

/// Items one page shows at most.
pub(super) const MAX_ITEMS: usize = 200;

/// Bytes of item JSON one result shows at most.
pub(super) const MAX_BYTES: usize = 48 * 1024;

/// Characters of one item's JSON shown in a listing; a longer one is cut (`table_get` shows it all).
pub(super) const MAX_ITEM_CHARS: usize = 4 * 1024;

/// Bytes of one item a put sends at most (DynamoDB's own limit is 400 KB, Azure's 1 MB).
pub(super) const MAX_PUT_BYTES: usize = 400 * 1024;

/// Which service an account's tables live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Store {
    Dynamo,
    Azure,
    Firestore,
}

/// The account a call names (or the only AWS, Azure or Google one) and its table service.
pub(super) fn pick<'a>(
    cloud: &'a Cloud,
    name: Option<&str>,
) -> Result<(&'a Account, Store), CloudError> {
    let account = cloud.account(name, &[CloudKind::Aws, CloudKind::Azure, CloudKind::Gcp])?;
    let store = match account.kind {
        CloudKind::Azure => Store::Azure,
        CloudKind::Gcp => Store::Firestore,
        _ => Store::Dynamo,
    };
    Ok((account, store))
}

/// A DynamoDB call (`action` such as `GetItem`).
pub(super) async fn dynamo(
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
            "dynamodb",
            &format!("{DYNAMO}.{action}"),
            "1.0",
            body,
        )
        .await
}

/// An Azure Table service request, JSON without metadata back.
pub(super) async fn azure(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    request: CloudRequest,
) -> Result<cairn_web::WebResponse, CloudError> {
    let request = request
        .header("accept", AZURE_JSON)?
        .header("dataserviceversion", "3.0")?;
    cloud.azure(cx, account, "table", request).await
}

/// `name` checked as an Azure table name (3 to 63 letters and digits, starting with a letter),
/// so it can go into a URL path as is.
pub(super) fn azure_table(name: &str) -> Result<&str, CloudError> {
    let ok = (3..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(name)
    } else {
        Err(CloudError::Invalid(format!(
            "{name:?} is not an Azure table name (3 to 63 letters and digits, starting with a letter)"
        )))
    }
}

/// A string in an OData key or filter literal: `'` doubled, the whole percent-encoded.
pub(super) fn odata_key(value: &str) -> String {
    segment(&value.replace('\'', "''"))
}

/// The Azure address of one entity.
pub(super) fn azure_entity_url(
    account: &Account,
    table: &str,
    partition: &str,
    row: &str,
) -> Result<Url, CloudError> {
    let path = format!(
        "{}(PartitionKey='{}',RowKey='{}')",
        azure_table(table)?,
        odata_key(partition),
        odata_key(row)
    );
    url_of(&account.base_url("table")?, &path, &[])
}

/// The Firestore address of `segments` under the `documents` root (none: the root itself),
/// with `suffix` (such as `:runQuery`) appended.
pub(super) fn firestore_url(
    account: &Account,
    segments: &[String],
    suffix: &str,
    query: &[(&str, &str)],
) -> Result<Url, CloudError> {
    let project = account.project.as_deref().unwrap_or_default();
    let mut path = format!(
        "v1/projects/{}/databases/(default)/documents",
        segment(project)
    );
    for s in segments {
        path.push('/');
        path.push_str(s);
    }
    path.push_str(suffix);
    url_of(&account.base_url("firestore")?, &path, query)
}

/// A Firestore collection or document path (`users`, `users/ada/orders`) checked and split
/// into its segments, each percent-encoded for the URL.
pub(super) fn firestore_path(path: &str, what: &str) -> Result<Vec<String>, CloudError> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let bad =
        |why: &str| CloudError::Invalid(format!("{path:?} is not a Firestore {what} path: {why}"));
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(bad("empty, `.` or `..` segment"));
    }
    let odd = parts.len() % 2 == 1;
    match what {
        "collection" if !odd => Err(bad(
            "a collection path has an odd number of segments (`users`, `users/ada/orders`)",
        )),
        "document" if odd => Err(bad(
            "a document path has an even number of segments (`users/ada`)",
        )),
        _ => Ok(parts.iter().map(|p| segment(p)).collect()),
    }
}

/// A Firestore document (`name`, `fields`) as plain JSON with its id under `_id`.
pub(super) fn firestore_item(doc: &Value) -> Value {
    let mut item = Map::new();
    if let Some(name) = doc.get("name").and_then(Value::as_str) {
        let id = name.rsplit('/').next().unwrap_or(name);
        item.insert("_id".into(), Value::String(id.to_owned()));
    }
    if let Some(Value::Object(fields)) = doc.get("fields") {
        for (k, v) in fields {
            item.insert(k.clone(), typed::from_firestore(v));
        }
    }
    Value::Object(item)
}

/// A page token for the model to pass back: opaque base64 of `state`.
pub(super) fn token_of(state: &Value) -> String {
    STANDARD.encode(state.to_string())
}

/// A page token read back.
pub(super) fn token_state(token: &str) -> Result<Value, CloudError> {
    let bad = || {
        CloudError::Invalid(
            "`next` is not a token a previous page gave; leave it out to start over".into(),
        )
    };
    let bytes = STANDARD.decode(token.trim()).map_err(|_| bad())?;
    serde_json::from_slice(&bytes).map_err(|_| bad())
}

/// Items as lines of compact JSON, capped in count, bytes and length per item, with the note
/// on what was left out and how to see the rest; and how many items it shows.
pub(super) fn item_lines(items: &[Value], more: Option<&str>) -> (String, usize) {
    let mut out = String::new();
    let mut shown = 0;
    for item in items {
        // A long item is cut with its length said; `table_get` shows one up to `MAX_BYTES`.
        let line = cairn_toolkit::table::cut(&item.to_string(), MAX_ITEM_CHARS);
        if out.len() + line.len() + 1 > MAX_BYTES {
            break;
        }
        out.push_str(&line);
        out.push('\n');
        shown += 1;
    }
    let noun = if shown == 1 { "item" } else { "items" };
    if shown < items.len() {
        out.push_str(&format!(
            "({shown} {noun} shown; {} more on this page were left out at {} KB: ask for fewer with `limit`)\n",
            items.len() - shown,
            MAX_BYTES / 1024
        ));
    } else {
        out.push_str(&format!("({shown} {noun})\n"));
    }
    if let Some(next) = more {
        out.push_str(&format!(
            "more items: pass `next: \"{next}\"` for the next page\n"
        ));
    }
    (out, shown)
}

/// Whether a plain JSON value is an object (an item or key must be).
pub(super) fn object<'a>(
    value: &'a Value,
    what: &str,
) -> Result<&'a Map<String, Value>, CloudError> {
    value
        .as_object()
        .ok_or_else(|| CloudError::Invalid(format!("`{what}` must be a JSON object")))
}

/// DynamoDB's key schema of `table`: each key attribute's name and type (`S`, `N`, `B`),
/// hash key first.
pub(super) async fn dynamo_keys(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    table: &str,
) -> Result<(Value, Vec<(String, String)>), CloudError> {
    let described = dynamo(
        cloud,
        cx,
        account,
        "DescribeTable",
        &json!({ "TableName": table }),
    )
    .await?;
    let t = &described["Table"];
    let types: Map<String, Value> = t["AttributeDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            Some((
                d["AttributeName"].as_str()?.to_owned(),
                d["AttributeType"].clone(),
            ))
        })
        .collect();
    let mut keys: Vec<(String, String, bool)> = t["KeySchema"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| {
            let name = k["AttributeName"].as_str()?.to_owned();
            let ty = types
                .get(&name)
                .and_then(Value::as_str)
                .unwrap_or("S")
                .to_owned();
            Some((name, ty, k["KeyType"] == "HASH"))
        })
        .collect();
    keys.sort_by_key(|(_, _, hash)| !hash);
    Ok((
        described,
        keys.into_iter().map(|(n, t, _)| (n, t)).collect(),
    ))
}

/// What a missing item or table reads as, for every store.
pub(super) fn not_found(e: CloudError, what: &str) -> CloudError {
    if e.is_not_found() {
        CloudError::Invalid(format!(
            "{what} does not exist; `table_list` shows what there is"
        ))
    } else {
        e
    }
}

/// Firestore `GET`/`POST`/`PATCH` on `url`.
pub(super) async fn firestore(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    method: Method,
    url: Url,
    body: Option<&Value>,
) -> Result<Value, CloudError> {
    cloud.gcp(cx, account, "firestore", method, url, body).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn item_lines_cap_bytes_and_long_items_and_say_so() {
        let items: Vec<Value> = (0..100)
            .map(|i| json!({ "id": i, "pad": "x".repeat(900) }))
            .collect();
        let (text, shown) = item_lines(&items, Some("tok"));
        assert!(shown > 10 && shown < 100, "{shown}");
        assert!(text.len() < MAX_BYTES + 300);
        assert!(text.contains(&format!("({shown} items shown; {} more", 100 - shown)));
        assert!(text.contains("pass `next: \"tok\"`"));
        let (text, shown) = item_lines(&[json!({ "big": "y".repeat(10_000) })], None);
        assert_eq!(shown, 1);
        assert!(text.contains("characters)"), "{text}");
        assert!(text.len() < 5_000);
    }

    #[test]
    fn tokens_round_trip_and_garbage_is_refused() {
        let state = json!({ "offset": 40 });
        assert_eq!(token_state(&token_of(&state)).unwrap(), state);
        assert!(token_state("%%%").is_err());
        assert!(token_state(&STANDARD.encode("not json")).is_err());
    }

    #[test]
    fn firestore_paths_and_azure_names_are_checked() {
        assert!(firestore_path("users", "collection").is_ok());
        assert!(firestore_path("users/ada/orders", "collection").is_ok());
        assert!(firestore_path("users/ada", "collection").is_err());
        assert!(firestore_path("users//x", "collection").is_err());
        assert!(firestore_path("users/../x", "collection").is_err());
        assert_eq!(
            firestore_path("a b/c?d/e", "collection").unwrap()[0],
            "a%20b"
        );
        assert!(azure_table("orders2").is_ok());
        assert!(azure_table("2orders").is_err());
        assert!(azure_table("or/ders").is_err());
        assert_eq!(odata_key("it's"), "it%27%27s");
    }
}
