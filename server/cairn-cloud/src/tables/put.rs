//! `table_put`: insert or replace one item (a DynamoDB item, an Azure entity, a Firestore
//! document).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::get::{azure_keys, document_id, typed_key};
use super::service::{
    MAX_PUT_BYTES, Store, azure, azure_entity_url, azure_table, dynamo, firestore, firestore_item,
    firestore_path, firestore_url, not_found, object, pick,
};
use super::typed;
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, url_of};

/// The `table_put` tool.
pub struct TablePut;

/// Arguments of `table_put`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The table (Firestore: the collection path, such as `users` or `users/ada/orders`).
    table: String,
    /// The whole item as plain JSON, key included (DynamoDB: its key attributes; Azure:
    /// `PartitionKey` and `RowKey`; Firestore: `_id` or `id`). Binary, sets and timestamps as
    /// `{"$binary": "<base64>"}`, `{"$set": [...]}`, `{"$timestamp": "..."}`.
    item: Value,
    /// Firestore: the document id (else the item's `_id`; else Firestore makes a new one).
    #[serde(default)]
    id: Option<String>,
    /// Only insert: refuse when an item with this key exists, instead of replacing it.
    #[serde(default)]
    only_if_new: bool,
}

impl Tool for TablePut {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "table_put";
    const TITLE: &'static str = "Put a table item";
    const DESCRIPTION: &'static str = "Insert or replace one whole item in a DynamoDB table, an Azure table or a Firestore collection, given as plain JSON with its key; `only_if_new` refuses to replace an existing item. Items up to 400 KB; Azure entities take flat values only.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let (account, store) = pick(host, args.account.as_deref())?;
            let item = object(&args.item, "item")?;
            let size = args.item.to_string().len();
            if size > MAX_PUT_BYTES {
                return Err(CloudError::Invalid(format!(
                    "the item is {size} bytes; one item may be at most {} KB",
                    MAX_PUT_BYTES / 1024
                )));
            }
            match store {
                Store::Dynamo => put_dynamo(host, &cx, account, &args, item).await,
                Store::Azure => put_azure(host, &cx, account, &args, item).await,
                Store::Firestore => put_firestore(host, &cx, account, &args, item).await,
            }
        };
        run.await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}

/// "replaced or inserted" in words, for the result.
fn how(only_if_new: bool) -> &'static str {
    if only_if_new {
        "inserted (it was new)"
    } else {
        "stored (inserted, or replacing the item with that key)"
    }
}

async fn put_dynamo(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
    item: &Map<String, Value>,
) -> Result<CallToolResult, CloudError> {
    // The key is checked against the schema first, for an error that names the key.
    let (_, schema) = super::service::dynamo_keys(host, cx, account, &args.table)
        .await
        .map_err(|e| not_found(e, &format!("DynamoDB table `{}`", args.table)))?;
    let key_of_item: Map<String, Value> = schema
        .iter()
        .filter_map(|(n, _)| item.get(n).map(|v| (n.clone(), v.clone())))
        .collect();
    let key = typed_key(&args.table, &schema, &key_of_item)?;
    let mut body = json!({
        "TableName": args.table,
        "Item": typed::item_to_dynamo(item).map_err(CloudError::Invalid)?,
    });
    // `dynamo_key` typed the key attributes by the schema; they win over the plain guess.
    if let (Some(typed_item), Some(k)) = (body["Item"].as_object_mut(), key.as_object()) {
        for (name, v) in k {
            typed_item.insert(name.clone(), v.clone());
        }
    }
    if args.only_if_new {
        let hash = key
            .as_object()
            .and_then(|k| k.keys().next())
            .cloned()
            .unwrap_or_default();
        body["ConditionExpression"] = json!("attribute_not_exists(#k)");
        body["ExpressionAttributeNames"] = json!({ "#k": hash });
    }
    match dynamo(host, cx, account, "PutItem", &body).await {
        Ok(_) => Ok(text(format!(
            "{} item {} in DynamoDB table `{}`",
            how(args.only_if_new),
            typed_key_text(&key),
            args.table
        ))),
        Err(CloudError::Service { code, .. }) if code == "ConditionalCheckFailedException" => {
            Err(CloudError::Invalid(format!(
                "refused: an item with key {} exists in `{}` (`only_if_new`); nothing was written",
                typed_key_text(&key),
                args.table
            )))
        }
        Err(e) => Err(e),
    }
}

/// A typed DynamoDB key shown as plain JSON.
fn typed_key_text(key: &Value) -> String {
    typed::item_from_dynamo(key).to_string()
}

/// An item as an Azure entity: flat values only; integers beyond 32 bits marked `Edm.Int64`,
/// which Azure otherwise cannot tell from a 32-bit one.
fn azure_entity(item: &Map<String, Value>) -> Result<Value, CloudError> {
    let mut entity = Map::new();
    for (k, v) in item {
        match v {
            Value::Object(o)
                if o.len() == 1 && (o.contains_key("$timestamp") || o.contains_key("$binary")) =>
            {
                let (edm, v) = match o.get("$timestamp") {
                    Some(t) => ("Edm.DateTime", t),
                    None => ("Edm.Binary", &o["$binary"]),
                };
                entity.insert(format!("{k}@odata.type"), json!(edm));
                entity.insert(k.clone(), v.clone());
            }
            Value::Array(_) | Value::Object(_) => {
                return Err(CloudError::Invalid(format!(
                    "`{k}`: Azure table entities hold strings, numbers, booleans, `$timestamp` and `$binary` values only, not lists or objects (store it as a JSON string)"
                )));
            }
            Value::Null => {} // Azure has no null: an absent property is one.
            Value::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_err()) => {
                entity.insert(format!("{k}@odata.type"), json!("Edm.Int64"));
                entity.insert(k.clone(), json!(n.to_string()));
            }
            _ => {
                entity.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Object(entity))
}

async fn put_azure(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
    item: &Map<String, Value>,
) -> Result<CallToolResult, CloudError> {
    let table = azure_table(&args.table)?;
    let (partition, row) = azure_keys(&args.item)?;
    let body =
        serde_json::to_vec(&azure_entity(item)?).map_err(|e| CloudError::Invalid(e.to_string()))?;
    let request = if args.only_if_new {
        CloudRequest::new(
            Method::POST,
            url_of(&account.base_url("table")?, table, &[])?,
        )
        .header("prefer", "return-no-content")?
    } else {
        // PUT without If-Match: Azure's "insert or replace".
        CloudRequest::new(
            Method::PUT,
            azure_entity_url(account, table, &partition, &row)?,
        )
    }
    .body(body, "application/json")?;
    match azure(host, cx, account, request).await {
        Ok(_) => Ok(text(format!(
            "{} entity PartitionKey {partition:?}, RowKey {row:?} in Azure table `{table}`",
            how(args.only_if_new)
        ))),
        Err(CloudError::Service { code, .. }) if code == "EntityAlreadyExists" => {
            Err(CloudError::Invalid(format!(
                "refused: an entity with PartitionKey {partition:?}, RowKey {row:?} exists in `{table}` (`only_if_new`); nothing was written"
            )))
        }
        Err(e) => Err(not_found(e, &format!("Azure table `{table}`"))),
    }
}

async fn put_firestore(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
    item: &Map<String, Value>,
) -> Result<CallToolResult, CloudError> {
    let collection = firestore_path(&args.table, "collection")?;
    let mut fields = item.clone();
    let from_item = fields.remove("_id");
    let id = match (&args.id, from_item) {
        (Some(id), _) => Some(document_id(&json!(id))?),
        (None, Some(v)) => Some(document_id(&v)?),
        (None, None) => None,
    };
    let auto = id.is_none();
    let body =
        json!({ "fields": typed::fields_to_firestore(&fields).map_err(CloudError::Invalid)? });
    let (method, url) = match &id {
        // PATCH without a field mask replaces the whole document, creating it if need be.
        Some(id) => {
            let mut segments = collection.clone();
            segments.push(segment(id));
            let query: &[(&str, &str)] = if args.only_if_new {
                &[("currentDocument.exists", "false")]
            } else {
                &[]
            };
            (Method::PATCH, firestore_url(account, &segments, "", query)?)
        }
        None => (Method::POST, firestore_url(account, &collection, "", &[])?),
    };
    match firestore(host, cx, account, method, url, Some(&body)).await {
        Ok(doc) => {
            let id = firestore_item(&doc)["_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok(text(format!(
                "{} document `{id}` in Firestore collection `{}`",
                // Without an id Firestore made a new document.
                how(args.only_if_new || auto),
                args.table.trim_matches('/')
            )))
        }
        Err(CloudError::Service { code, .. })
            if args.only_if_new && (code == "ALREADY_EXISTS" || code == "FAILED_PRECONDITION") =>
        {
            Err(CloudError::Invalid(format!(
                "refused: document `{}` exists in `{}` (`only_if_new`); nothing was written",
                id.unwrap_or_default(),
                args.table
            )))
        }
        Err(e) => Err(e),
    }
}
