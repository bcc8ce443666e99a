//! `cairn-vault`: the user's credentials, encrypted at rest, each bound to the hosts it may be
//! sent to.
//!
//! The store is one JSON file (by default `$XDG_DATA_HOME/cairn/vault.json`), mode 0600, in
//! which every value is sealed with XChaCha20-Poly1305 under a key from a [`KeySource`]: the OS
//! keyring, a key file, or a passphrase (`key.rs` says which is chosen when). The format is
//! described in `store.rs`.
//!
//! Architecture invariants:
//! - no plaintext value is ever written to disk, printed, or put in an error: [`Secret`] prints
//!   `[REDACTED]` and is read only through [`Secret::expose`];
//! - opening fails closed: a store that does not parse, authenticate or validate in full is an
//!   error naming the problem and where it is, no partial vault is returned, and the file is
//!   left byte for byte as it was;
//! - every write replaces the store atomically (temporary file, fsync, rename);
//! - a secret is handed out for a host only through [`Vault::secret_for_host`], which refuses
//!   hosts outside its binding; the binding is authenticated with the value.
//!
//! Two processes writing at once: the last rename wins (the vault is a per-user file written by
//! short terminal commands; a lock can come when something writes it from a long-lived server).

mod error;
mod hex;
mod key;
mod os_keyring;
mod private_dir;
pub mod redact;
mod secret;
mod store;
mod validate;
mod vault;

pub use error::VaultError;
pub use key::{KEY_FILE_NAME, KeyLocation, KeySource, PASSPHRASE_ENV, keyring_user};
pub use os_keyring::{
    KEYRING_PROBE_TIMEOUT, KEYRING_SERVICE, KEYRING_TIMEOUT, Keyring, KeyringError,
    SecretServiceKeyring,
};
pub use redact::Redactor;
pub use secret::Secret;
pub use validate::{host_matches, validate_host, validate_name};
pub use vault::{Vault, default_store_path};
