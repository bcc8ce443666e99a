//! Directories only their owner may enter, for the store and its key file.

use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use crate::error::VaultError;

/// Creates `dir` and its missing parents, readable only by the owner (an existing directory
/// keeps its mode: it may be shared on purpose).
pub fn create_private_dir(dir: &Path) -> Result<(), VaultError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| VaultError::Io {
            path: dir.to_path_buf(),
            source,
        })
}
