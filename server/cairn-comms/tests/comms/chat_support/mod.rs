//! What the Matrix and calendar tests share: the tools over a `[comms]` config, a guard that
//! allows loopback (the peers of `scripts/chat-servers`), a vault of fixed secrets bound to
//! hosts, the approvals the agent would hold, and raw requests to the peers through the same
//! guard (to read back what was sent as another client would).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use cairn_agent::tools::protected_of;
use cairn_comms::{Comms, comms_tools};
use cairn_config::CommsConfig;
use cairn_test_support::tools::{Seen, call};
use cairn_toolkit::ToolSet;
use cairn_vault::Secret;
use cairn_web::{
    CredentialRefusal, Credentials, GuardConfig, Method, WebGuard, WebRequest, header,
};
use cairn_workspace::{ExactApprovals, Operation};
use serde_json::Value;

/// Secrets by name: (value, the hosts it is bound to).
pub struct Vault(pub HashMap<String, (String, Vec<String>)>);

impl Vault {
    pub fn of(entries: &[(&str, &str, &str)]) -> Vault {
        Vault(
            entries
                .iter()
                .map(|(n, v, h)| ((*n).to_owned(), ((*v).to_owned(), vec![(*h).to_owned()])))
                .collect(),
        )
    }
}

impl Credentials for Vault {
    fn for_host(&self, name: &str, host: &str) -> Result<Secret, CredentialRefusal> {
        match self.0.get(name) {
            Some((value, hosts)) if hosts.iter().any(|h| h == host) => {
                Ok(Secret::new(value.clone()))
            }
            Some(_) => Err(CredentialRefusal {
                reason: format!("secret `{name}` is not bound to {host}"),
            }),
            None => Err(CredentialRefusal {
                reason: format!("no secret `{name}` in the vault"),
            }),
        }
    }
}

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/chat-servers"))
}

pub fn guard(vault: Vault) -> Arc<WebGuard> {
    let config = GuardConfig {
        allow_loopback: true,
        per_user_per_minute: 1000,
        per_host_per_minute: 1000,
        ..GuardConfig::default()
    };
    Arc::new(
        WebGuard::new(config)
            .unwrap()
            .with_credentials(Arc::new(vault)),
    )
}

/// The tools over `settings`, with `vault` behind both the guard and `Comms.secrets`.
pub struct Setup {
    pub tools: ToolSet<Comms>,
    pub approvals: Arc<ExactApprovals>,
    /// A guard without secrets, for the test's own requests to the peers.
    pub raw: Arc<WebGuard>,
}

pub fn setup(settings: CommsConfig, vault: Vault) -> Setup {
    let secrets = Vault(vault.0.clone());
    let approvals = ExactApprovals::new();
    let comms = Comms::new(
        settings,
        Some(guard(vault)),
        Arc::new(secrets),
        approvals.clone(),
    );
    Setup {
        tools: comms_tools(comms),
        approvals,
        raw: guard(Vault(HashMap::new())),
    }
}

impl Setup {
    pub async fn call(&self, name: &str, args: Value) -> Seen {
        call(&self.tools, name, args).await
    }

    /// The call's text, which must not be an error.
    pub async fn ok(&self, name: &str, args: Value) -> String {
        let seen = self.call(name, args).await;
        assert!(!seen.is_error, "{name} failed: {}", seen.text);
        seen.text
    }

    /// The call's text, which must be an error.
    pub async fn err(&self, name: &str, args: Value) -> String {
        let seen = self.call(name, args).await;
        assert!(seen.is_error, "{name} should have failed: {}", seen.text);
        seen.text
    }

    /// The call asks the strict question (nothing sent yet); its key and what it showed.
    pub async fn asks(&self, name: &str, args: Value) -> (String, String) {
        let seen = self.call(name, args).await;
        assert!(seen.is_error, "{name} should have asked: {}", seen.text);
        let asked = protected_of(&seen.result);
        assert_eq!(asked.len(), 1, "{}", seen.text);
        assert_eq!(asked[0].operation, "write");
        (asked[0].key.clone(), asked[0].path.clone())
    }

    /// The call again with the approval of `key` held, as the agent holds it after "allow once".
    pub async fn approved(&self, key: &str, name: &str, args: Value) -> Seen {
        self.approvals.hold(Path::new(key), Operation::Write);
        let seen = self.call(name, args).await;
        self.approvals.release(Path::new(key), Operation::Write);
        seen
    }

    /// A request of the test's own to a peer, with `authorization` set by the test.
    pub async fn raw(
        &self,
        method: Method,
        url: &str,
        authorization: &str,
        body: Option<(&str, &'static str)>,
    ) -> (u16, String) {
        self.raw_with(method, url, authorization, body, &[]).await
    }

    /// [`Setup::raw`] with extra headers.
    pub async fn raw_with(
        &self,
        method: Method,
        url: &str,
        authorization: &str,
        body: Option<(&str, &'static str)>,
        headers: &[(&'static str, &'static str)],
    ) -> (u16, String) {
        let mut request = WebRequest::new(method, url);
        for (name, value) in headers {
            request.headers.insert(
                header::HeaderName::from_static(name),
                header::HeaderValue::from_static(value),
            );
        }
        request.headers.insert(
            header::AUTHORIZATION,
            header::HeaderValue::from_str(authorization).unwrap(),
        );
        if let Some((body, kind)) = body {
            request.body = Some(body.as_bytes().to_vec());
            request
                .headers
                .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(kind));
        }
        let response = self.raw.fetch(request).await.unwrap();
        (
            response.status.as_u16(),
            String::from_utf8_lossy(&response.body).into_owned(),
        )
    }
}

/// The host of `url`, as the vault binds secrets.
pub fn host_of(url: &str) -> String {
    url::Url::parse(url).unwrap().host_str().unwrap().to_owned()
}

/// A text no earlier run of the peers has seen.
pub fn unique(what: &str) -> String {
    format!("{what} {}", uuid::Uuid::new_v4().simple())
}
