//! Tables and documents: DynamoDB, Azure Table Storage and Firestore through one interface
//! (list, get, query, put).
//!
//! Items are plain JSON both ways ([`typed`] converts DynamoDB's attribute values and
//! Firestore's fields); what plain JSON cannot say (binary, sets, timestamps, references) is an
//! object with one `$`-key, read back the same way.

mod get;
mod list;
mod put;
mod query;
mod service;
mod typed;

pub(crate) use get::TableGet;
pub(crate) use list::TableList;
pub(crate) use put::TablePut;
pub(crate) use query::TableQuery;
