//! The request `_meta` the hub sends a built-in (in-process) server with each call: which chat
//! session, run and call it serves, as one typed value ([`CallMeta`]). The hub writes it
//! ([`CallMeta::to_meta`]) and the in-process server reads it back into the tool's
//! [`CallContext`] ([`CallMeta::from_meta`]); the keys exist nowhere else. External servers
//! never see these ids.
//!
//! The result `_meta` a built-in tool sends back (the edits it made, the protected paths that
//! stopped it) is typed in `cairn_agent::tools` instead (`attach_edits`/`edits_of`,
//! `attach_protected`/`protected_of`): the agent reads it, and the tool crates that write it
//! cannot depend on this crate (it reaches an HTTP client).

use cairn_agent::tools::CallContext;
use rmcp::model::{MetaObject, RequestMetaObject};
use tokio_util::sync::CancellationToken;

/// `_meta` key carrying the chat session id into a built-in call.
const SESSION_ID: &str = "cairn/sessionId";
/// `_meta` key carrying the agent's run id into a built-in call.
const RUN_ID: &str = "cairn/runId";
/// `_meta` key carrying the agent's call id into a built-in call.
const CALL_ID: &str = "cairn/callId";

/// The ids of one built-in call, as they travel in the request's `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMeta {
    /// The chat session the run belongs to.
    pub session_id: String,
    /// The agent's run.
    pub run_id: String,
    /// The agent's call.
    pub call_id: String,
}

impl CallMeta {
    /// The ids of the call `ctx` describes.
    pub fn of(ctx: &CallContext) -> Self {
        Self {
            session_id: ctx.session_id.clone(),
            run_id: ctx.run_id.clone(),
            call_id: ctx.call_id.clone(),
        }
    }

    /// The request `_meta` carrying these ids (every key, empty ids included).
    pub fn to_meta(&self) -> RequestMetaObject {
        let mut meta = MetaObject::default();
        for (key, value) in [
            (SESSION_ID, &self.session_id),
            (RUN_ID, &self.run_id),
            (CALL_ID, &self.call_id),
        ] {
            meta.insert(key.to_owned(), serde_json::Value::String(value.clone()));
        }
        RequestMetaObject(meta)
    }

    /// The ids in a request's `_meta`; a missing key or one that is not a string reads as
    /// empty. On the server side rmcp hands the received `_meta` over in the request's context
    /// (`RequestContext::meta`), not in the params.
    pub fn from_meta(meta: &RequestMetaObject) -> Self {
        let id = |key: &str| {
            meta.get(key)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        Self {
            session_id: id(SESSION_ID),
            run_id: id(RUN_ID),
            call_id: id(CALL_ID),
        }
    }

    /// The tool's context for these ids, cancelled by `cancel`.
    pub fn into_context(self, cancel: CancellationToken) -> CallContext {
        CallContext {
            session_id: self.session_id,
            run_id: self.run_id,
            call_id: self.call_id,
            cancel,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_come_back_as_they_went() {
        let ids = CallMeta {
            session_id: "s".to_owned(),
            run_id: "r".to_owned(),
            call_id: "c".to_owned(),
        };
        let meta = ids.to_meta();
        assert_eq!(meta.len(), 3);
        assert_eq!(CallMeta::from_meta(&meta), ids);
        let ctx = CallMeta::from_meta(&meta).into_context(CancellationToken::new());
        assert_eq!(CallMeta::of(&ctx), ids);
    }

    #[test]
    fn missing_or_odd_ids_read_as_empty() {
        assert_eq!(
            CallMeta::from_meta(&RequestMetaObject::default()),
            CallMeta::default()
        );
        let mut meta = CallMeta::default().to_meta();
        meta.insert(RUN_ID.to_owned(), serde_json::json!(7));
        meta.remove(CALL_ID);
        assert_eq!(CallMeta::from_meta(&meta), CallMeta::default());
    }
}
