//! The accounts (which are configured, who the AWS keys are), SSM parameters, and secrets a
//! cloud API returns, which go to the vault, never to the model.
//!
//! A secret value (a SecureString parameter, a Secrets Manager secret) is read only by
//! `cloud_secret_to_vault`, after the user's approval, and only to hand it to the vault;
//! every other path drops it unread.

mod accounts;
mod api;
mod identity;
mod scrub;
mod ssm;
mod to_vault;

pub(crate) use accounts::CloudAccounts;
pub(crate) use identity::AwsIdentity;
pub(crate) use ssm::SsmParameter;
pub(crate) use to_vault::CloudSecretToVault;
