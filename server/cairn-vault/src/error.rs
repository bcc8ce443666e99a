//! Every way opening or using the vault can fail, each with a message that says what is wrong,
//! where, and (when there is one) what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("vault {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The store cannot be read as a vault; nothing of it was used and the file was not touched.
    #[error("vault {} is damaged: {reason}; it was left as it is", path.display())]
    Damaged { path: PathBuf, reason: String },
    /// The key check did not authenticate: another key, or the check itself was altered.
    #[error(
        "vault {} cannot be opened with {key}: wrong passphrase or key, or the file was altered; it was left as it is",
        path.display()
    )]
    WrongKey { path: PathBuf, key: String },
    #[error(
        "vault {} is protected by {expected}, not {given}{hint}",
        path.display()
    )]
    KeySourceMismatch {
        path: PathBuf,
        expected: &'static str,
        given: &'static str,
        hint: &'static str,
    },
    #[error(
        "vault {} exists but its key file {} is missing; restore the key file (a new key cannot read the secrets)",
        path.display(),
        key_file.display()
    )]
    KeyFileMissing { path: PathBuf, key_file: PathBuf },
    /// A store sealed with the keyring key, and the keyring did not answer; nothing changed.
    #[error(
        "vault {} is sealed with a key in the OS keyring, which cannot be reached ({reason}); start or unlock a Secret Service (gnome-keyring, KWallet, KeePassXC) on this session bus and retry; the vault was left as it is",
        path.display()
    )]
    KeyringUnavailable { path: PathBuf, reason: String },
    /// A store sealed with the keyring key, and the keyring has no entry for it. A new key
    /// could not read the secrets, so none is made.
    #[error(
        "vault {} is sealed with a key in the OS keyring, but the keyring has no entry for it (service \"cairn\", user {user:?}); if the store was moved or copied, put it back at that path, or restore the entry from a backup of the keyring; the vault was left as it is",
        path.display()
    )]
    KeyringEntryMissing { path: PathBuf, user: String },
    #[error(
        "the OS keyring's entry for vault {} (service \"cairn\", user {user:?}) is not a vault key (64 hex digits); the vault was left as it is",
        path.display()
    )]
    KeyringEntryInvalid { path: PathBuf, user: String },
    /// A new store's key could not be put in the keyring that answered; nothing was written.
    #[error(
        "vault {}: the key could not be stored in the OS keyring ({reason}); nothing was written; unlock the keyring and retry, or set CAIRN_VAULT_PASSPHRASE to use a passphrase instead",
        path.display()
    )]
    KeyringWrite { path: PathBuf, reason: String },
    #[error(
        "key file {} can be read by group or others (mode {mode:03o}); run `chmod 600 {}`",
        path.display(),
        path.display()
    )]
    KeyFileMode { path: PathBuf, mode: u32 },
    #[error("key file {} is not a key: {reason}", path.display())]
    KeyFileInvalid { path: PathBuf, reason: String },
    #[error(
        "vault {} was written in format version {found}; this cairn reads version {supported}",
        path.display()
    )]
    UnsupportedVersion {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
    #[error("the vault passphrase is empty")]
    EmptyPassphrase,
    #[error("invalid secret name {name:?}: use 1 to 64 of A-Z a-z 0-9 _ . -")]
    InvalidName { name: String },
    #[error("invalid host {host:?}: {reason}")]
    InvalidHost { host: String, reason: String },
    #[error("secret {name} needs at least one host it may be sent to")]
    NoHosts { name: String },
    #[error("no secret named {name}")]
    NotFound { name: String },
    #[error(
        "secret {name} may not be sent to {host}; it is bound to {}",
        bound.join(", ")
    )]
    NotBound {
        name: String,
        host: String,
        bound: Vec<String>,
    },
    #[error("the system random number generator failed: {0}")]
    Random(String),
    #[error("key derivation failed: {0}")]
    Kdf(String),
    #[error("encryption failed")]
    Encrypt,
}
