//! `[cloud.NAME]` accounts: what kind, where each service answers, and how its requests are
//! signed (which vault secret, in which placement). The key itself is never here: the web guard
//! asks the vault for it, for the request's host, when it signs.

use std::collections::BTreeMap;

use cairn_config::{CloudAccountConfig, CloudKind};
use cairn_web::{CredentialUse, Placement};
use url::Url;

use crate::error::CloudError;

/// Why an account from the configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    /// A setting the kind needs is missing.
    #[error("`[cloud.{account}]` ({kind}) needs `{setting}`")]
    Missing {
        account: String,
        kind: &'static str,
        setting: &'static str,
    },
    /// An address that does not parse as an http(s) URL.
    #[error("`[cloud.{account}]` {setting}: {value:?} is not an http(s) URL")]
    BadEndpoint {
        account: String,
        setting: String,
        value: String,
    },
    /// `auth` is not one this kind knows.
    #[error("`[cloud.{account}]` auth: {value:?} is not `shared-key` or `sas`")]
    BadAuth { account: String, value: String },
}

/// One configured account, checked.
#[derive(Debug, Clone)]
pub struct Account {
    /// The `NAME` of `[cloud.NAME]`, which tools take as `account`.
    pub name: String,
    pub kind: CloudKind,
    /// The region (AWS); `us-east-1` when unset.
    pub region: String,
    endpoint: Option<Url>,
    endpoints: BTreeMap<String, Url>,
    access_key_id: Option<String>,
    /// Azure: the storage account name.
    pub storage_account: Option<String>,
    /// Google: the project id.
    pub project: Option<String>,
    secret: Option<String>,
    sas: bool,
}

/// The kind's name as configured.
pub fn kind_name(kind: CloudKind) -> &'static str {
    match kind {
        CloudKind::Aws => "aws",
        CloudKind::S3 => "s3",
        CloudKind::Azure => "azure",
        CloudKind::Gcp => "gcp",
    }
}

fn http_url(account: &str, setting: &str, value: &str) -> Result<Url, AccountError> {
    let bad = || AccountError::BadEndpoint {
        account: account.to_owned(),
        setting: setting.to_owned(),
        value: value.to_owned(),
    };
    let mut url = Url::parse(value.trim()).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad());
    }
    // A base the services' paths are appended to: no query, and one trailing slash.
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

impl Account {
    /// Checks `config` for account `name`.
    pub fn from_config(name: &str, config: &CloudAccountConfig) -> Result<Account, AccountError> {
        let kind = config.kind;
        let missing = |setting: &'static str| AccountError::Missing {
            account: name.to_owned(),
            kind: kind_name(kind),
            setting,
        };
        let endpoint = config
            .endpoint
            .as_deref()
            .map(|e| http_url(name, "endpoint", e))
            .transpose()?;
        let mut endpoints = BTreeMap::new();
        for (service, value) in &config.endpoints {
            endpoints.insert(
                service.to_ascii_lowercase(),
                http_url(name, &format!("endpoints.{service}"), value)?,
            );
        }
        match kind {
            CloudKind::Aws | CloudKind::S3 => {
                if config.secret.is_some() && config.access_key_id.is_none() {
                    return Err(missing("access_key_id"));
                }
                if kind == CloudKind::S3 && endpoint.is_none() && !endpoints.contains_key("s3") {
                    return Err(missing("endpoint"));
                }
            }
            CloudKind::Azure => {
                if config.account.is_none() {
                    return Err(missing("account"));
                }
            }
            CloudKind::Gcp => {
                if config.project.is_none() {
                    return Err(missing("project"));
                }
            }
        }
        let sas = match config.auth.as_deref().map(str::trim) {
            None | Some("shared-key") => false,
            Some("sas") if kind == CloudKind::Azure => true,
            Some(other) => {
                return Err(AccountError::BadAuth {
                    account: name.to_owned(),
                    value: other.to_owned(),
                });
            }
        };
        Ok(Account {
            name: name.to_owned(),
            kind,
            region: config
                .region
                .clone()
                .filter(|r| !r.trim().is_empty())
                .unwrap_or_else(|| "us-east-1".into()),
            endpoint,
            endpoints,
            access_key_id: config.access_key_id.clone(),
            storage_account: config.account.clone(),
            project: config.project.clone(),
            secret: config.secret.clone(),
            sas,
        })
    }

    /// Whether requests go to an endpoint the user set (an emulator, an S3-compatible store):
    /// S3 then uses path-style addresses.
    pub fn has_custom_endpoint(&self, service: &str) -> bool {
        self.endpoints.contains_key(service) || self.endpoint.is_some()
    }

    /// The base address of `service` (AWS: its endpoint prefix such as `sqs`, `dynamodb`,
    /// `logs`; Azure: `blob`, `queue`, `table`; Google: `storage`, `pubsub`, `firestore`), with
    /// a trailing slash. A per-service endpoint wins over `endpoint`, which wins over the
    /// public one.
    pub fn base_url(&self, service: &str) -> Result<Url, CloudError> {
        if let Some(url) = self.endpoints.get(service).or(self.endpoint.as_ref()) {
            return Ok(url.clone());
        }
        let text = match self.kind {
            CloudKind::Aws | CloudKind::S3 => match service {
                // Global services answer in one place whatever the region.
                "iam" => "https://iam.amazonaws.com/".to_owned(),
                "route53" => "https://route53.amazonaws.com/".to_owned(),
                "s3" => format!("https://s3.{}.amazonaws.com/", self.region),
                other => format!("https://{other}.{}.amazonaws.com/", self.region),
            },
            CloudKind::Azure => {
                let account = self.storage_account.as_deref().unwrap_or_default();
                format!("https://{account}.{service}.core.windows.net/")
            }
            CloudKind::Gcp => format!("https://{service}.googleapis.com/"),
        };
        Url::parse(&text).map_err(|e| CloudError::Invalid(format!("{text}: {e}")))
    }

    /// How requests to `service` are signed: `None` when the account has no secret (an
    /// emulator, a public bucket). `service` is the AWS signing name (`s3`, `sqs`, `logs`...),
    /// or Azure's `blob`, `queue`, `table`.
    pub fn credential(&self, service: &str) -> Option<CredentialUse> {
        let secret = self.secret.clone()?;
        let placement = match self.kind {
            CloudKind::Aws | CloudKind::S3 => Placement::AwsSigV4 {
                access_key_id: self.access_key_id.clone().unwrap_or_default(),
                // IAM and Route 53 are signed for us-east-1 whatever the account's region.
                region: if matches!(service, "iam" | "route53") && self.kind == CloudKind::Aws {
                    "us-east-1".into()
                } else {
                    self.region.clone()
                },
                service: service.to_owned(),
            },
            CloudKind::Azure if self.sas => Placement::SasToken,
            CloudKind::Azure => Placement::AzureSharedKey {
                account: self.storage_account.clone().unwrap_or_default(),
                table: service == "table",
            },
            CloudKind::Gcp => Placement::Bearer,
        };
        Some(CredentialUse { secret, placement })
    }

    /// The vault secret that signs this account's requests, if any.
    pub fn secret_name(&self) -> Option<&str> {
        self.secret.as_deref()
    }

    /// The endpoints the user set: `endpoint` (as `*`, every service) and the per-service
    /// ones, shown by `cloud_accounts`.
    pub fn configured_endpoints(&self) -> Vec<(String, &Url)> {
        let all = self.endpoint.iter().map(|u| ("*".to_owned(), u));
        all.chain(self.endpoints.iter().map(|(s, u)| (s.clone(), u)))
            .collect()
    }

    /// The access key id (AWS, S3), shown by `cloud_accounts`; not a secret.
    pub fn access_key_id(&self) -> Option<&str> {
        self.access_key_id.as_deref()
    }
}

/// The account named `name`, or the only one of `kinds` when no name is given.
pub(crate) fn pick<'a>(
    accounts: &'a BTreeMap<String, Account>,
    name: Option<&str>,
    kinds: &[CloudKind],
) -> Result<&'a Account, CloudError> {
    let fits = |a: &Account| kinds.is_empty() || kinds.contains(&a.kind);
    let wanted = || {
        kinds
            .iter()
            .map(|k| kind_name(*k))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    match name {
        Some(name) => {
            let account = accounts
                .get(name)
                .ok_or_else(|| CloudError::UnknownAccount {
                    name: name.to_owned(),
                    known: accounts.keys().cloned().collect(),
                })?;
            if !fits(account) {
                return Err(CloudError::WrongKind {
                    account: name.to_owned(),
                    kind: kind_name(account.kind),
                    wanted: wanted(),
                });
            }
            Ok(account)
        }
        None => {
            let mut fitting = accounts.values().filter(|a| fits(a));
            match (fitting.next(), fitting.next()) {
                (Some(only), None) => Ok(only),
                (None, _) => Err(CloudError::NoAccount { wanted: wanted() }),
                (Some(_), Some(_)) => Err(CloudError::WhichAccount {
                    candidates: accounts
                        .values()
                        .filter(|a| fits(a))
                        .map(|a| a.name.clone())
                        .collect(),
                }),
            }
        }
    }
}
