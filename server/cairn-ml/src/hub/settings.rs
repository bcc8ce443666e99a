//! [`HubSettings`], where the hub tools look (`[ml]`): the Hub's and the dataset viewer's
//! addresses and the vault secret for the hub's token.

/// Where the hub tools look (`[ml]`), and the vault secret for the hub's token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSettings {
    /// The Hub (or a mirror): `https://huggingface.co`.
    pub hub_url: String,
    /// The dataset viewer's API: `https://datasets-server.huggingface.co`.
    pub datasets_url: String,
    /// A vault secret holding a Hub token, sent as a bearer token to the hub's host only.
    pub secret: Option<String>,
}

impl Default for HubSettings {
    fn default() -> Self {
        HubSettings {
            hub_url: "https://huggingface.co".into(),
            datasets_url: "https://datasets-server.huggingface.co".into(),
            secret: None,
        }
    }
}
