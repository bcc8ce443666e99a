//! The one place that picks an account's object store: which [`ObjectStore`] serves which
//! kind of account. Adding a provider is its file and one arm here.

use cairn_agent::tools::CallContext;
use cairn_config::CloudKind;

use super::azure::AzureStore;
use super::gcs::GcsStore;
use super::s3::S3Store;
use super::store::{ObjectStore, Store};
use crate::cloud::Cloud;
use crate::error::CloudError;

/// The kinds of account object storage works with.
const KINDS: &[CloudKind] = &[
    CloudKind::Aws,
    CloudKind::S3,
    CloudKind::Azure,
    CloudKind::Gcp,
];

/// The object store that speaks for accounts of `kind`.
fn backend(kind: CloudKind) -> &'static dyn ObjectStore {
    match kind {
        CloudKind::Aws | CloudKind::S3 => &S3Store,
        CloudKind::Azure => &AzureStore,
        CloudKind::Gcp => &GcsStore,
    }
}

/// The store of the account a call names (or the only one).
pub(super) fn store<'a>(
    cloud: &'a Cloud,
    account: Option<&str>,
    cx: &'a CallContext,
) -> Result<Store<'a>, CloudError> {
    let account = cloud.account(account, KINDS)?;
    Ok(Store::new(cloud, account, cx, backend(account.kind)))
}
