//! DynamoDB's attribute values and Firestore's typed fields to plain JSON and back.
//!
//! What plain JSON has no type for is an object with one `$`-key: `{"$binary": "<base64>"}`,
//! `{"$set": [...]}` (DynamoDB string, number and binary sets), `{"$timestamp": "<RFC 3339>"}`,
//! `{"$reference": "<document name>"}`, `{"$geo": {"latitude": .., "longitude": ..}}`
//! (Firestore). The same objects are read back, so an item shown can be put again unchanged.

use serde_json::{Map, Number, Value, json};

/// The only `$`-key of `value`, if it is such an object.
fn special(value: &Map<String, Value>) -> Option<(&str, &Value)> {
    if value.len() != 1 {
        return None;
    }
    let (k, v) = value.iter().next()?;
    matches!(
        k.as_str(),
        "$binary" | "$set" | "$timestamp" | "$reference" | "$geo"
    )
    .then_some((k.as_str(), v))
}

/// A DynamoDB number (a decimal string) as a JSON number, or the string when JSON cannot hold it.
fn number(text: &str) -> Value {
    match text.parse::<i64>() {
        Ok(i) => Value::Number(i.into()),
        Err(_) => match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Value::Number(n),
            None => Value::String(text.to_owned()),
        },
    }
}

/// One DynamoDB attribute value (`{"S": "a"}`) as plain JSON.
pub(crate) fn from_dynamo(value: &Value) -> Value {
    let Some((ty, v)) = value.as_object().and_then(|o| o.iter().next()) else {
        return Value::Null;
    };
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    match ty.as_str() {
        "S" => v.clone(),
        "N" => number(v.as_str().unwrap_or_default()),
        "B" => json!({ "$binary": v }),
        "BOOL" => v.clone(),
        "NULL" => Value::Null,
        "L" => Value::Array(list(v).iter().map(from_dynamo).collect()),
        "M" => Value::Object(
            v.as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), from_dynamo(v)))
                .collect(),
        ),
        "SS" => json!({ "$set": v }),
        "NS" => {
            json!({ "$set": list(v).iter().map(|n| number(n.as_str().unwrap_or_default())).collect::<Vec<_>>() })
        }
        "BS" => {
            json!({ "$set": list(v).iter().map(|b| json!({ "$binary": b })).collect::<Vec<_>>() })
        }
        _ => value.clone(),
    }
}

/// A DynamoDB item (attribute name to typed value) as a plain JSON object.
pub(crate) fn item_from_dynamo(item: &Value) -> Value {
    Value::Object(
        item.as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), from_dynamo(v)))
            .collect(),
    )
}

/// Plain JSON as a DynamoDB attribute value.
pub(crate) fn to_dynamo(value: &Value) -> Result<Value, String> {
    Ok(match value {
        Value::Null => json!({ "NULL": true }),
        Value::Bool(b) => json!({ "BOOL": b }),
        Value::Number(n) => json!({ "N": n.to_string() }),
        Value::String(s) => json!({ "S": s }),
        Value::Array(items) => {
            json!({ "L": items.iter().map(to_dynamo).collect::<Result<Vec<_>, _>>()? })
        }
        Value::Object(map) => match special(map) {
            Some(("$binary", Value::String(b))) => json!({ "B": b }),
            Some(("$set", Value::Array(items))) => set_to_dynamo(items)?,
            Some((k, _)) if k == "$binary" || k == "$set" => {
                return Err(format!(
                    "`{k}` takes a {}",
                    if k == "$set" { "list" } else { "base64 string" }
                ));
            }
            _ => {
                let mut m = Map::new();
                for (k, v) in map {
                    m.insert(k.clone(), to_dynamo(v)?);
                }
                json!({ "M": m })
            }
        },
    })
}

fn set_to_dynamo(items: &[Value]) -> Result<Value, String> {
    if items.is_empty() {
        return Err("DynamoDB has no empty sets; leave the attribute out".into());
    }
    if items.iter().all(Value::is_string) {
        Ok(json!({ "SS": items }))
    } else if items.iter().all(Value::is_number) {
        Ok(json!({ "NS": items.iter().map(|n| n.to_string()).collect::<Vec<_>>() }))
    } else if items
        .iter()
        .all(|b| b.get("$binary").is_some_and(Value::is_string))
    {
        Ok(json!({ "BS": items.iter().map(|b| b["$binary"].clone()).collect::<Vec<_>>() }))
    } else {
        Err("a `$set` holds only strings, only numbers or only `$binary` values".into())
    }
}

/// A plain JSON object as a DynamoDB item.
pub(crate) fn item_to_dynamo(item: &Map<String, Value>) -> Result<Value, String> {
    let mut m = Map::new();
    for (k, v) in item {
        m.insert(k.clone(), to_dynamo(v).map_err(|e| format!("`{k}`: {e}"))?);
    }
    Ok(Value::Object(m))
}

/// A key attribute given as plain JSON, typed as the table's key schema says (`S`, `N`, `B`),
/// so `"42"` and `42` both find a number key.
pub(crate) fn key_to_dynamo(name: &str, ty: &str, value: &Value) -> Result<Value, String> {
    match (ty, value) {
        ("S", Value::String(s)) => Ok(json!({ "S": s })),
        ("S", Value::Number(n)) => Ok(json!({ "S": n.to_string() })),
        ("N", Value::Number(n)) => Ok(json!({ "N": n.to_string() })),
        ("N", Value::String(s)) if s.trim().parse::<f64>().is_ok() => Ok(json!({ "N": s.trim() })),
        ("B", Value::String(b)) => Ok(json!({ "B": b })),
        ("B", Value::Object(o)) if o.get("$binary").is_some_and(Value::is_string) => {
            Ok(json!({ "B": o["$binary"] }))
        }
        _ => Err(format!(
            "key attribute `{name}` is of type {ty} ({}); got {value}",
            match ty {
                "S" => "a string",
                "N" => "a number",
                _ => "base64 binary",
            }
        )),
    }
}

/// One Firestore value (`{"integerValue": "3"}`) as plain JSON.
pub(crate) fn from_firestore(value: &Value) -> Value {
    let Some((ty, v)) = value.as_object().and_then(|o| o.iter().next()) else {
        return Value::Null;
    };
    match ty.as_str() {
        "nullValue" => Value::Null,
        "booleanValue" | "stringValue" => v.clone(),
        "integerValue" => v.as_str().map(number).unwrap_or_else(|| v.clone()),
        "doubleValue" => v.clone(),
        "timestampValue" => json!({ "$timestamp": v }),
        "bytesValue" => json!({ "$binary": v }),
        "referenceValue" => json!({ "$reference": v }),
        "geoPointValue" => json!({ "$geo": v }),
        "arrayValue" => Value::Array(
            v["values"]
                .as_array()
                .into_iter()
                .flatten()
                .map(from_firestore)
                .collect(),
        ),
        "mapValue" => Value::Object(
            v["fields"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), from_firestore(v)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// Plain JSON as a Firestore value.
pub(crate) fn to_firestore(value: &Value) -> Result<Value, String> {
    Ok(match value {
        Value::Null => json!({ "nullValue": null }),
        Value::Bool(b) => json!({ "booleanValue": b }),
        Value::Number(n) if n.is_i64() || n.is_u64() => match n.as_i64() {
            Some(i) => json!({ "integerValue": i.to_string() }),
            None => return Err(format!("{n} is larger than Firestore's 64-bit integers")),
        },
        Value::Number(n) => json!({ "doubleValue": n.as_f64() }),
        Value::String(s) => json!({ "stringValue": s }),
        Value::Array(items) => {
            json!({ "arrayValue": { "values": items.iter().map(to_firestore).collect::<Result<Vec<_>, _>>()? } })
        }
        Value::Object(map) => match special(map) {
            Some(("$binary", Value::String(b))) => json!({ "bytesValue": b }),
            Some(("$timestamp", Value::String(t))) => json!({ "timestampValue": t }),
            Some(("$reference", Value::String(r))) => json!({ "referenceValue": r }),
            Some(("$geo", g @ Value::Object(_))) => json!({ "geoPointValue": g }),
            Some(("$set", _)) => return Err("Firestore has no sets; use a list".into()),
            Some((k, _)) => return Err(format!("`{k}` has the wrong shape")),
            None => json!({ "mapValue": { "fields": fields_to_firestore(map)? } }),
        },
    })
}

/// A plain JSON object as Firestore `fields`.
pub(crate) fn fields_to_firestore(item: &Map<String, Value>) -> Result<Value, String> {
    let mut m = Map::new();
    for (k, v) in item {
        m.insert(
            k.clone(),
            to_firestore(v).map_err(|e| format!("`{k}`: {e}"))?,
        );
    }
    Ok(Value::Object(m))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn dynamo_items_round_trip_through_plain_json() {
        let typed = json!({
            "id": {"S": "a"}, "n": {"N": "42"}, "f": {"N": "1.5"}, "ok": {"BOOL": true},
            "none": {"NULL": true}, "tags": {"SS": ["x", "y"]}, "nums": {"NS": ["1", "2"]},
            "raw": {"B": "AAE="}, "list": {"L": [{"S": "v"}, {"N": "3"}]},
            "map": {"M": {"k": {"S": "w"}}}
        });
        let plain = item_from_dynamo(&typed);
        assert_eq!(
            plain,
            json!({"id": "a", "n": 42, "f": 1.5, "ok": true, "none": null,
                   "tags": {"$set": ["x", "y"]}, "nums": {"$set": [1, 2]},
                   "raw": {"$binary": "AAE="}, "list": ["v", 3], "map": {"k": "w"}})
        );
        assert_eq!(item_to_dynamo(plain.as_object().unwrap()).unwrap(), typed);
        assert!(to_dynamo(&json!({"$set": []})).is_err());
        assert!(to_dynamo(&json!({"$set": ["a", 1]})).is_err());
    }

    #[test]
    fn firestore_fields_round_trip_through_plain_json() {
        let plain = json!({"s": "a", "i": 7, "d": 2.5, "b": false, "n": null,
            "t": {"$timestamp": "2026-01-02T03:04:05Z"}, "l": [1, "x"], "m": {"k": {"$binary": "AA=="}}});
        let fields = fields_to_firestore(plain.as_object().unwrap()).unwrap();
        assert_eq!(fields["i"], json!({"integerValue": "7"}));
        assert_eq!(fields["d"], json!({"doubleValue": 2.5}));
        let back: Map<String, Value> = fields
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), from_firestore(v)))
            .collect();
        assert_eq!(Value::Object(back), plain);
    }

    #[test]
    fn key_attributes_follow_the_schema_type() {
        assert_eq!(
            key_to_dynamo("k", "N", &json!("42")).unwrap(),
            json!({"N": "42"})
        );
        assert_eq!(
            key_to_dynamo("k", "S", &json!(7)).unwrap(),
            json!({"S": "7"})
        );
        assert!(key_to_dynamo("k", "N", &json!("abc")).is_err());
        assert!(key_to_dynamo("k", "S", &json!([1])).is_err());
    }
}
