//! The provider kinds and their registration: the one place a [`ProviderKind`] is mapped to
//! the [`WireFormat`] that speaks it. Adding a provider is a variant here, one arm in
//! [`ProviderKind::wire`], and the file implementing [`WireFormat`].

use crate::anthropic::Anthropic;
use crate::openai::OpenAi;
use crate::wire::WireFormat;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// `POST {base_url}/chat/completions`, e.g. base `https://api.openai.com/v1`.
    OpenAiCompatible,
    /// `POST {base_url}/v1/messages`, e.g. base `https://api.anthropic.com`.
    Anthropic,
}

impl ProviderKind {
    /// The wire format of this kind: the registration point.
    pub(crate) fn wire(self) -> &'static dyn WireFormat {
        match self {
            Self::OpenAiCompatible => &OpenAi,
            Self::Anthropic => &Anthropic,
        }
    }

    /// The name used in messages and errors.
    pub fn name(self) -> &'static str {
        self.wire().name()
    }

    /// The environment variable users conventionally set for this kind.
    pub fn default_key_setting(self) -> &'static str {
        self.wire().default_key_setting()
    }
}
