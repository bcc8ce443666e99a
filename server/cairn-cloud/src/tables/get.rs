//! `table_get`: one item by its key, as plain JSON.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::service::{
    MAX_BYTES, Store, azure, azure_entity_url, dynamo, dynamo_keys, firestore, firestore_item,
    firestore_path, firestore_url, not_found, object, pick,
};
use super::typed;
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, json_of};

/// The `table_get` tool.
pub struct TableGet;

/// Arguments of `table_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The table (Firestore: the collection path, such as `users` or `users/ada/orders`).
    table: String,
    /// The item's key. DynamoDB: its key attributes (`{"pk": "a", "sk": 3}`); Azure:
    /// `{"PartitionKey": "...", "RowKey": "..."}`; Firestore: the document id (a string).
    key: Value,
}

impl Tool for TableGet {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "table_get";
    const TITLE: &'static str = "Get a table item";
    const DESCRIPTION: &'static str = "Get one item by its key from a DynamoDB table (its key attributes), an Azure table (PartitionKey and RowKey) or a Firestore collection (the document id), shown as plain JSON. `table_list` with `table` shows the key.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let (account, store) = pick(host, args.account.as_deref())?;
            let found = match store {
                Store::Dynamo => get_dynamo(host, &cx, account, &args.table, &args.key).await?,
                Store::Azure => get_azure(host, &cx, account, &args.table, &args.key).await?,
                Store::Firestore => {
                    get_firestore(host, &cx, account, &args.table, &args.key).await?
                }
            };
            Ok(match found {
                Some(item) => shown(&args.table, &args.key, item),
                None => text(format!("no item with key {} in `{}`", args.key, args.table)),
            })
        };
        run.await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}

/// The item, pretty-printed up to the byte cap, and as structured content.
fn shown(table: &str, key: &Value, item: Value) -> CallToolResult {
    let pretty = serde_json::to_string_pretty(&item).unwrap_or_default();
    let mut out = format!("item {key} of `{table}`:\n");
    if pretty.len() > MAX_BYTES {
        let mut cut = MAX_BYTES;
        while !pretty.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(&pretty[..cut]);
        out.push_str(&format!(
            "\n… (cut at {} KB of {} bytes: the item is larger than one result shows)",
            MAX_BYTES / 1024,
            pretty.len()
        ));
    } else {
        out.push_str(&pretty);
    }
    let mut result = text(out);
    result.structured_content = Some(json!({ "item": item }));
    result
}

/// The key's attributes checked against the table's key schema and typed by it.
pub(super) async fn dynamo_key(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    table: &str,
    key: &Map<String, Value>,
) -> Result<Value, CloudError> {
    let (_, schema) = dynamo_keys(host, cx, account, table)
        .await
        .map_err(|e| not_found(e, &format!("DynamoDB table `{table}`")))?;
    typed_key(table, &schema, key)
}

/// `key` checked against `schema` (name and type of each key attribute) and typed by it.
pub(super) fn typed_key(
    table: &str,
    schema: &[(String, String)],
    key: &Map<String, Value>,
) -> Result<Value, CloudError> {
    let names: Vec<&str> = schema.iter().map(|(n, _)| n.as_str()).collect();
    let mut typed_key = Map::new();
    for (name, ty) in schema {
        let value = key.get(name).ok_or_else(|| {
            CloudError::Invalid(format!(
                "the key of `{table}` is {}; `{name}` is missing",
                names.join(" + ")
            ))
        })?;
        typed_key.insert(
            name.clone(),
            typed::key_to_dynamo(name, ty, value).map_err(CloudError::Invalid)?,
        );
    }
    if let Some(extra) = key.keys().find(|k| !names.contains(&k.as_str())) {
        return Err(CloudError::Invalid(format!(
            "`{extra}` is not a key attribute of `{table}` (its key is {})",
            names.join(" + ")
        )));
    }
    Ok(Value::Object(typed_key))
}

async fn get_dynamo(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    table: &str,
    key: &Value,
) -> Result<Option<Value>, CloudError> {
    let key = dynamo_key(host, cx, account, table, object(key, "key")?).await?;
    let answer = dynamo(
        host,
        cx,
        account,
        "GetItem",
        &json!({ "TableName": table, "Key": key }),
    )
    .await?;
    Ok(answer.get("Item").map(typed::item_from_dynamo))
}

/// Azure's two keys from the `key` object.
pub(super) fn azure_keys(key: &Value) -> Result<(String, String), CloudError> {
    let key = object(key, "key")?;
    let get = |name: &str| {
        key.get(name).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
            CloudError::Invalid(format!(
                "an Azure entity's key is `{{\"PartitionKey\": \"...\", \"RowKey\": \"...\"}}` (strings); `{name}` is missing"
            ))
        })
    };
    Ok((get("PartitionKey")?, get("RowKey")?))
}

async fn get_azure(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    table: &str,
    key: &Value,
) -> Result<Option<Value>, CloudError> {
    let (partition, row) = azure_keys(key)?;
    let url = azure_entity_url(account, table, &partition, &row)?;
    match azure(host, cx, account, CloudRequest::new(Method::GET, url)).await {
        Ok(response) => {
            let mut item = json_of("table", &response)?;
            if let Some(o) = item.as_object_mut() {
                o.remove("odata.metadata");
            }
            Ok(Some(item))
        }
        Err(CloudError::Service { code, .. }) if code == "ResourceNotFound" => Ok(None),
        Err(e) => Err(not_found(e, &format!("Azure table `{table}`"))),
    }
}

/// The document id from `key`: a string, or an object with `_id` (as items are shown).
pub(super) fn document_id(key: &Value) -> Result<String, CloudError> {
    match key {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("_id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
    .filter(|id| !id.is_empty() && !id.contains('/'))
    .ok_or_else(|| {
        CloudError::Invalid(
            "a Firestore key is the document id, a string without `/` (the collection goes in `table`)".into(),
        )
    })
}

async fn get_firestore(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    collection: &str,
    key: &Value,
) -> Result<Option<Value>, CloudError> {
    let id = document_id(key)?;
    let mut segments = firestore_path(collection, "collection")?;
    segments.push(crate::request::segment(&id));
    let url = firestore_url(account, &segments, "", &[])?;
    match firestore(host, cx, account, Method::GET, url, None).await {
        Ok(doc) => Ok(Some(firestore_item(&doc))),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}
