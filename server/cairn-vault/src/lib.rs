//! `cairn-vault`: the user's credentials, encrypted at rest, each bound to the hosts it may be
//! sent to.
//!
//! The store is one JSON file (by default `$XDG_DATA_HOME/cairn/vault.json`), mode 0600, in
//! which every value is sealed with XChaCha20-Poly1305 under a key from a [`KeySource`]. The
//! format is described in `store.rs`.
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
mod key;
pub mod redact;
mod secret;
mod store;
mod validate;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

pub use error::VaultError;
pub use key::{KEY_FILE_NAME, KeySource, PASSPHRASE_ENV};
pub use redact::Redactor;
pub use secret::Secret;
pub use validate::{host_matches, validate_host, validate_name};

use key::{KdfParams, Key};
use store::{OpenError, StoreFile, StoredSecret};

/// A store larger than this is not a vault cairn wrote; refusing it early keeps a stray file
/// from being read into memory whole.
const MAX_STORE_BYTES: u64 = 16 * 1024 * 1024;

/// Where the store lives by default: `$XDG_DATA_HOME/cairn/vault.json`, else
/// `$HOME/.local/share/cairn/vault.json`. `get` reads the environment.
pub fn default_store_path(get: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let data = get("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            get("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".local/share"))
        })?;
    Some(data.join("cairn").join("vault.json"))
}

struct Entry {
    hosts: Vec<String>,
    value: Secret,
}

/// An open vault: the secrets decrypted in memory (wiped on drop), written back on each change.
pub struct Vault {
    path: PathBuf,
    key: Key,
    kdf: Option<KdfParams>,
    /// A key file to create with the first write (a new key-file vault creates nothing until
    /// it has something to keep).
    pending_key_file: Option<PathBuf>,
    secrets: BTreeMap<String, Entry>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vault")
            .field("path", &self.path)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Vault {
    /// Opens the store at `path` with the key from `key_source`. A missing store is an empty
    /// vault; a damaged one, or the wrong key, is an error and the file is not touched.
    pub fn open(path: impl Into<PathBuf>, key_source: KeySource) -> Result<Vault, VaultError> {
        let path = path.into();
        match read_store(&path)? {
            None => Self::new_empty(path, key_source),
            Some(bytes) => Self::from_bytes(path, &bytes, key_source),
        }
    }

    fn new_empty(path: PathBuf, key_source: KeySource) -> Result<Vault, VaultError> {
        let (key, kdf, pending_key_file) = match key_source {
            KeySource::KeyFile(key_file) => match key::read_key_file(&key_file)? {
                Some(key) => (key, None, None),
                None => (key::new_key()?, None, Some(key_file)),
            },
            KeySource::Passphrase(passphrase) => {
                let kdf = KdfParams::fresh()?;
                (kdf.derive(&passphrase)?, Some(kdf), None)
            }
        };
        Ok(Vault {
            path,
            key,
            kdf,
            pending_key_file,
            secrets: BTreeMap::new(),
        })
    }

    fn from_bytes(path: PathBuf, bytes: &[u8], key_source: KeySource) -> Result<Vault, VaultError> {
        let damaged = |reason: String| VaultError::Damaged {
            path: path.clone(),
            reason,
        };
        let probe: store::VersionProbe = serde_json::from_slice(bytes)
            .map_err(|e| damaged(format!("it is not a vault file ({e})")))?;
        if probe.version != u64::from(store::VERSION) {
            return Err(VaultError::UnsupportedVersion {
                path,
                found: probe.version,
                supported: store::VERSION,
            });
        }
        let file: StoreFile =
            serde_json::from_slice(bytes).map_err(|e| damaged(format!("bad JSON: {e}")))?;
        if file.cipher != store::CIPHER {
            return Err(damaged(format!(
                "cipher is {:?}, expected {:?}",
                file.cipher,
                store::CIPHER
            )));
        }
        let key = derive_stored_key(&path, &file, &key_source)?;
        match store::open_check(&key, &file.check) {
            Ok(()) => {}
            Err(OpenError::Format(reason)) => return Err(damaged(format!("check: {reason}"))),
            Err(OpenError::Tag) => {
                return Err(VaultError::WrongKey {
                    path,
                    key: key_source.describe(),
                });
            }
        }
        let mut secrets = BTreeMap::new();
        for (index, stored) in file.secrets.iter().enumerate() {
            let (name, entry) = open_secret(&key, stored)
                .map_err(|reason| damaged(format!("secrets[{index}]: {reason}")))?;
            if secrets.insert(name, entry).is_some() {
                return Err(damaged(format!(
                    "secrets[{index}]: the name {:?} appears twice",
                    stored.name
                )));
            }
        }
        Ok(Vault {
            path,
            key,
            kdf: file.kdf,
            pending_key_file: None,
            secrets,
        })
    }

    /// The store file this vault reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores `value` under `name`, replacing any secret of that name, bound to `hosts`
    /// (validated, deduplicated and sorted; at least one), and writes the store.
    pub fn set(&mut self, name: &str, value: Secret, hosts: Vec<String>) -> Result<(), VaultError> {
        validate_name(name)?;
        if hosts.is_empty() {
            return Err(VaultError::NoHosts {
                name: name.to_string(),
            });
        }
        for host in &hosts {
            validate_host(host)?;
        }
        let hosts: Vec<String> = hosts
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let previous = self
            .secrets
            .insert(name.to_string(), Entry { hosts, value });
        if let Err(e) = self.save() {
            // Memory stays what is on disk.
            match previous {
                Some(entry) => self.secrets.insert(name.to_string(), entry),
                None => self.secrets.remove(name),
            };
            return Err(e);
        }
        Ok(())
    }

    /// The secret called `name`, whatever its hosts. Code that sends a secret somewhere uses
    /// [`Vault::secret_for_host`] instead.
    pub fn get(&self, name: &str) -> Option<Secret> {
        self.secrets.get(name).map(|e| e.value.clone())
    }

    /// The secret called `name`, if `host` is one of the hosts it is bound to.
    pub fn secret_for_host(&self, name: &str, host: &str) -> Result<Secret, VaultError> {
        let entry = self.secrets.get(name).ok_or_else(|| VaultError::NotFound {
            name: name.to_string(),
        })?;
        if entry.hosts.iter().any(|p| host_matches(p, host)) {
            Ok(entry.value.clone())
        } else {
            Err(VaultError::NotBound {
                name: name.to_string(),
                host: host.to_string(),
                bound: entry.hosts.clone(),
            })
        }
    }

    /// Names and hosts of every secret, sorted by name; never values.
    pub fn list(&self) -> Vec<(String, Vec<String>)> {
        self.secrets
            .iter()
            .map(|(name, e)| (name.clone(), e.hosts.clone()))
            .collect()
    }

    /// Removes the secret called `name` and writes the store; `false` when there was none.
    pub fn remove(&mut self, name: &str) -> Result<bool, VaultError> {
        let Some(entry) = self.secrets.remove(name) else {
            return Ok(false);
        };
        if let Err(e) = self.save() {
            self.secrets.insert(name.to_string(), entry);
            return Err(e);
        }
        Ok(true)
    }

    /// Every name with its plaintext value, for the redactor only: it must know each value to
    /// replace it in text bound for the model, logs or the editor.
    pub fn values(&self) -> impl Iterator<Item = (&str, &Secret)> {
        self.secrets.iter().map(|(n, e)| (n.as_str(), &e.value))
    }

    /// Seals every value under a fresh nonce and replaces the store.
    fn save(&mut self) -> Result<(), VaultError> {
        let mut secrets = Vec::with_capacity(self.secrets.len());
        for (name, entry) in &self.secrets {
            let ad = store::secret_ad(name, &entry.hosts);
            let sealed = store::seal(&self.key, entry.value.expose().as_bytes(), &ad)?;
            secrets.push(StoredSecret {
                name: name.clone(),
                hosts: entry.hosts.clone(),
                nonce: sealed.nonce,
                ciphertext: sealed.ciphertext,
            });
        }
        let file = StoreFile {
            version: store::VERSION,
            cipher: store::CIPHER.to_string(),
            kdf: self.kdf.clone(),
            check: store::seal_check(&self.key)?,
            secrets,
        };
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| VaultError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        bytes.push(b'\n');
        // The key file goes first: a store whose key was never written could not be read.
        if let Some(key_file) = &self.pending_key_file {
            key::create_key_file(key_file, &self.key)?;
            self.pending_key_file = None;
        }
        store::write_atomic(&self.path, &bytes)
    }
}

/// The store's bytes, `None` when there is no store.
fn read_store(path: &Path) -> Result<Option<Vec<u8>>, VaultError> {
    let io = |source| VaultError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    if !meta.is_file() || meta.len() > MAX_STORE_BYTES {
        return Err(VaultError::Damaged {
            path: path.to_path_buf(),
            reason: format!("not a regular file of at most {MAX_STORE_BYTES} bytes"),
        });
    }
    std::fs::read(path).map(Some).map_err(io)
}

/// The key for an existing store: the source must be the kind the store was made with.
fn derive_stored_key(
    path: &Path,
    file: &StoreFile,
    key_source: &KeySource,
) -> Result<Key, VaultError> {
    let mismatch = |expected: &'static str, hint: &'static str| VaultError::KeySourceMismatch {
        path: path.to_path_buf(),
        expected,
        given: key_source.kind(),
        hint,
    };
    match (key_source, &file.kdf) {
        (KeySource::KeyFile(key_file), None) => {
            key::read_key_file(key_file)?.ok_or_else(|| VaultError::KeyFileMissing {
                path: path.to_path_buf(),
                key_file: key_file.clone(),
            })
        }
        (KeySource::Passphrase(passphrase), Some(kdf)) => {
            if let Some(reason) = kdf.problem() {
                return Err(VaultError::Damaged {
                    path: path.to_path_buf(),
                    reason,
                });
            }
            kdf.derive(passphrase)
        }
        (KeySource::KeyFile(_), Some(_)) => {
            Err(mismatch("a passphrase", "; set CAIRN_VAULT_PASSPHRASE"))
        }
        (KeySource::Passphrase(_), None) => Err(mismatch(
            "a key file",
            "; unset CAIRN_VAULT_PASSPHRASE to use the key file next to it",
        )),
    }
}

/// Validates and decrypts one stored secret; the error says which part is wrong.
fn open_secret(key: &Key, stored: &StoredSecret) -> Result<(String, Entry), String> {
    validate_name(&stored.name).map_err(|e| e.to_string())?;
    let label = format!("secret {:?}", stored.name);
    if stored.hosts.is_empty() {
        return Err(format!("{label} has no hosts"));
    }
    for host in &stored.hosts {
        validate_host(host).map_err(|e| format!("{label}: {e}"))?;
    }
    let ad = store::secret_ad(&stored.name, &stored.hosts);
    let plaintext = match store::open(key, &stored.nonce, &stored.ciphertext, &ad) {
        Ok(p) => p,
        Err(OpenError::Format(reason)) => return Err(format!("{label}: {reason}")),
        Err(OpenError::Tag) => {
            return Err(format!(
                "{label} fails authentication: its value, name or hosts were altered"
            ));
        }
    };
    let value = std::str::from_utf8(&plaintext)
        .map_err(|_| format!("{label}: the value is not UTF-8"))?
        .to_string();
    Ok((
        stored.name.clone(),
        Entry {
            hosts: stored.hosts.clone(),
            value: Secret::new(value),
        },
    ))
}
