//! Approval policy: what happens when the model calls a tool, and the approvals that only the
//! user can give.
//!
//! Architecture invariant: an approval is the answer of the editor (or terminal) to a request
//! that names one run, one call and the hash of its exact arguments; it is used once. Nothing the
//! model or a tool writes can produce one.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::tools::{Effect, ToolInfo};

/// What happens to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// The approval policy: the most specific entry wins (tool, then category, then effect).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub tools: BTreeMap<String, Decision>,
    pub categories: BTreeMap<String, Decision>,
    pub effects: BTreeMap<Effect, Decision>,
}

impl Default for Policy {
    fn default() -> Self {
        let effects = [
            (Effect::Read, Decision::Allow),
            (Effect::Write, Decision::Ask),
            (Effect::Execute, Decision::Ask),
            (Effect::Network, Decision::Ask),
        ];
        Self {
            tools: BTreeMap::new(),
            categories: BTreeMap::new(),
            effects: effects.into_iter().collect(),
        }
    }
}

/// The setting that produced a decision, so a denial can say what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    pub decision: Decision,
    pub setting: String,
}

impl Policy {
    /// Decide for one tool.
    pub fn decide(&self, tool: &ToolInfo) -> Ruling {
        let name = tool.tool.name.as_ref();
        if let Some(d) = self.tools.get(name) {
            return Ruling {
                decision: *d,
                setting: format!("policy.tools.{name}"),
            };
        }
        if let Some(d) = self.categories.get(&tool.category) {
            return Ruling {
                decision: *d,
                setting: format!("policy.categories.{}", tool.category),
            };
        }
        let decision = self
            .effects
            .get(&tool.effect)
            .copied()
            .unwrap_or(Decision::Ask);
        Ruling {
            decision,
            setting: format!("policy.effects.{}", tool.effect.as_str()),
        }
    }
}

/// What the user is asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// A fresh id for this one question; the answer must carry it back.
    pub approval_id: String,
    pub run_id: String,
    pub call_id: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    /// SHA-256 of the canonical JSON of `arguments`.
    pub args_hash: String,
    pub effect: Effect,
    /// Why the user is asked, in words.
    pub reason: String,
    /// The tool's own description, in full: what the user approves includes what the tool
    /// claims to do (a poisoned description shows here, uncut).
    pub description: String,
    /// When not empty, the user is asked about exactly these protected paths: only "allow once"
    /// counts (an answer of "allow for this session" is taken as once), and an approver that
    /// accepts everything (`--yes`) must refuse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<crate::tools::ProtectedPath>,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalAnswer {
    AllowOnce,
    AllowSession,
    Deny,
}

/// Asks the user. Implementations: the editor (LSP), the terminal, `--yes`.
pub trait Approver: Send + Sync {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer>;
}

/// "Allow for this session" grants, per chat session, in memory only. A grant is held for the
/// tool's identity (its server and its own name there, [`ToolInfo::origin`]) and the extra
/// powers the call asked for, not for its public name: a name another tool comes to carry
/// (a server went down, the configuration changed) does not bring the grant with it.
#[derive(Debug, Clone, Default)]
pub struct SessionGrants(Arc<Mutex<HashSet<GrantKey>>>);

/// What a grant is held for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct GrantKey {
    /// The tool's origin, or, for a host that gives none, its name.
    tool: Result<crate::tools::ToolOrigin, String>,
    extra: Vec<Effect>,
}

impl GrantKey {
    fn of(tool: &ToolInfo, extra: &[Effect]) -> GrantKey {
        GrantKey {
            tool: tool
                .origin
                .clone()
                .ok_or_else(|| tool.tool.name.to_string()),
            extra: extra.to_vec(),
        }
    }
}

impl SessionGrants {
    /// Grants `tool` with exactly the extra powers `extra` for the rest of the session.
    pub fn grant(&self, tool: &ToolInfo, extra: &[Effect]) {
        if let Ok(mut set) = self.0.lock() {
            set.insert(GrantKey::of(tool, extra));
        }
    }

    pub fn is_granted(&self, tool: &ToolInfo, extra: &[Effect]) -> bool {
        self.0
            .lock()
            .map(|set| set.contains(&GrantKey::of(tool, extra)))
            .unwrap_or(false)
    }
}

/// SHA-256 over the canonical JSON (keys sorted at every level) of a value.
pub fn args_hash(value: &serde_json::Value) -> String {
    let mut canonical = String::new();
    write_canonical(value, &mut canonical);
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_canonical(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(k) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Tool;

    fn tool(name: &str, effect: Effect, category: &str) -> ToolInfo {
        ToolInfo {
            tool: Tool::new(name.to_string(), "t", serde_json::Map::new()),
            effect,
            category: category.into(),
            agent_only: false,
            origin: None,
        }
    }

    #[track_caller]
    fn check(policy: &Policy, t: ToolInfo, decision: Decision, setting: &str) {
        let ruling = policy.decide(&t);
        assert_eq!(
            (ruling.decision, ruling.setting.as_str()),
            (decision, setting)
        );
    }

    #[test]
    fn most_specific_entry_wins() {
        let mut policy = Policy::default();
        check(
            &policy,
            tool("read_file", Effect::Read, "file"),
            Decision::Allow,
            "policy.effects.read",
        );
        check(
            &policy,
            tool("edit_file", Effect::Write, "file"),
            Decision::Ask,
            "policy.effects.write",
        );
        check(
            &policy,
            tool("run", Effect::Execute, "code"),
            Decision::Ask,
            "policy.effects.execute",
        );
        check(
            &policy,
            tool("fetch", Effect::Network, "web"),
            Decision::Ask,
            "policy.effects.network",
        );
        policy.categories.insert("file".into(), Decision::Deny);
        check(
            &policy,
            tool("read_file", Effect::Read, "file"),
            Decision::Deny,
            "policy.categories.file",
        );
        policy.tools.insert("read_file".into(), Decision::Allow);
        check(
            &policy,
            tool("read_file", Effect::Read, "file"),
            Decision::Allow,
            "policy.tools.read_file",
        );
    }

    #[test]
    fn a_grant_is_held_for_the_tool_behind_the_name_not_the_name() {
        let of = |server: &str, tool: &str| ToolInfo {
            origin: Some(crate::tools::ToolOrigin {
                server: server.into(),
                tool: tool.into(),
            }),
            ..self::tool("a__b__c", Effect::Execute, "mcp:x")
        };
        let grants = SessionGrants::default();
        grants.grant(&of("a", "b__c"), &[]);
        assert!(grants.is_granted(&of("a", "b__c"), &[]));
        assert!(!grants.is_granted(&of("a__b", "c"), &[]));
        assert!(!grants.is_granted(&of("a", "b__c"), &[Effect::Network]));
        // A host without origins: the name is the identity.
        grants.grant(&tool("plain", Effect::Write, "file"), &[]);
        assert!(grants.is_granted(&tool("plain", Effect::Write, "file"), &[]));
    }

    #[test]
    fn args_hash_ignores_key_order_but_not_values() {
        let a = serde_json::json!({"path": "a", "n": {"x": 1, "y": [1, 2]}});
        let b = serde_json::json!({"n": {"y": [1, 2], "x": 1}, "path": "a"});
        let c = serde_json::json!({"n": {"y": [2, 1], "x": 1}, "path": "a"});
        assert_eq!(args_hash(&a), args_hash(&b));
        assert_ne!(args_hash(&a), args_hash(&c));
        assert_eq!(args_hash(&a).len(), 64);
    }
}
