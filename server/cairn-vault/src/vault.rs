//! The open vault: [`Vault`], its secrets decrypted in memory and written back on each change,
//! and where its store lives by default ([`default_store_path`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::VaultError;
use crate::key::{self, KdfParams, Key, KeyLocation, KeySource, keyring_user};
use crate::os_keyring::{KEYRING_PROBE_TIMEOUT, KEYRING_TIMEOUT, Keyring};
use crate::secret::Secret;
use crate::store::{self, OpenError, StoreFile, StoredKeySource, StoredSecret};
use crate::validate::{host_matches, validate_host, validate_name};

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

/// Where a new vault's key goes on its first write: a new vault creates nothing, key file or
/// keyring entry, until it has something to keep.
#[derive(Clone)]
enum Pending {
    /// Create this key file.
    KeyFile(PathBuf),
    /// Put the key in the keyring; when `fallback` is set and no Secret Service answers in
    /// time, create that key file instead.
    Keyring {
        keyring: Arc<dyn Keyring>,
        fallback: Option<PathBuf>,
    },
}

/// An open vault: the secrets decrypted in memory (wiped on drop), written back on each change.
pub struct Vault {
    path: PathBuf,
    key: Key,
    kdf: Option<KdfParams>,
    location: KeyLocation,
    pending: Option<Pending>,
    notice: Option<String>,
    secrets: BTreeMap<String, Entry>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vault")
            .field("path", &self.path)
            .field("key", &self.location)
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
        let mut kdf = None;
        let mut pending = None;
        let (key, location) = match key_source {
            KeySource::KeyFile(key_file) => match key::read_key_file(&key_file)? {
                Some(key) => (key, KeyLocation::KeyFile(key_file)),
                None => {
                    pending = Some(Pending::KeyFile(key_file.clone()));
                    (key::new_key()?, KeyLocation::KeyFile(key_file))
                }
            },
            KeySource::Passphrase(passphrase) => {
                let fresh = KdfParams::fresh()?;
                let key = fresh.derive(&passphrase)?;
                kdf = Some(fresh);
                (key, KeyLocation::Passphrase)
            }
            KeySource::Keyring(keyring) => {
                pending = Some(Pending::Keyring {
                    keyring,
                    fallback: None,
                });
                let user = keyring_user(&path);
                (key::new_key()?, KeyLocation::Keyring { user })
            }
            // A key file left from an earlier store is used, as before there was a keyring;
            // otherwise the choice waits for the first write, so reading an empty vault never
            // waits on a keyring.
            KeySource::Auto { key_file, keyring } => match key::read_key_file(&key_file)? {
                Some(key) => (key, KeyLocation::KeyFile(key_file)),
                None => {
                    pending = Some(Pending::Keyring {
                        keyring,
                        fallback: Some(key_file.clone()),
                    });
                    (key::new_key()?, KeyLocation::Undecided { key_file })
                }
            },
        };
        Ok(Vault {
            path,
            key,
            kdf,
            location,
            pending,
            notice: None,
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
        let (key, location) = derive_stored_key(&path, &file, &key_source)?;
        match store::open_check(&key, &file.check) {
            Ok(()) => {}
            Err(OpenError::Format(reason)) => return Err(damaged(format!("check: {reason}"))),
            Err(OpenError::Tag) => {
                // The source that was used, which for `Auto` is known only now.
                let key = match &location {
                    KeyLocation::Passphrase => key_source.describe(),
                    other => other.to_string(),
                };
                return Err(VaultError::WrongKey { path, key });
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
            location,
            pending: None,
            notice: None,
            secrets,
        })
    }

    /// The store file this vault reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the key lives.
    pub fn key_location(&self) -> &KeyLocation {
        &self.location
    }

    /// A note for the user about the last write, once: today only that no keyring answered
    /// and the key went into a key file.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
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
        // The key is put in place first: a store whose key was never kept could not be read.
        if let Some(pending) = self.pending.take()
            && let Err(e) = self.settle_key(&pending)
        {
            self.pending = Some(pending);
            return Err(e);
        }
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
        let key_source = match &self.location {
            KeyLocation::Passphrase => StoredKeySource::Passphrase,
            KeyLocation::Keyring { .. } => StoredKeySource::Keyring,
            KeyLocation::KeyFile(_) | KeyLocation::Undecided { .. } => StoredKeySource::KeyFile,
        };
        let file = StoreFile {
            version: store::VERSION,
            cipher: store::CIPHER.to_string(),
            key_source: Some(key_source),
            kdf: self.kdf.clone(),
            check: store::seal_check(&self.key)?,
            secrets,
        };
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| VaultError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        bytes.push(b'\n');
        store::write_atomic(&self.path, &bytes)
    }

    /// Keeps a new vault's key where `pending` says, and records where it went.
    fn settle_key(&mut self, pending: &Pending) -> Result<(), VaultError> {
        let (keyring, fallback) = match pending {
            Pending::KeyFile(key_file) => {
                return key::create_key_file(key_file, &self.key);
            }
            Pending::Keyring { keyring, fallback } => (keyring, fallback),
        };
        let user = keyring_user(&self.path);
        // With a fallback this is also the probe, so it waits only briefly.
        let timeout = if fallback.is_some() {
            KEYRING_PROBE_TIMEOUT
        } else {
            KEYRING_TIMEOUT
        };
        match keyring.get(&user, timeout) {
            // An entry for this path with no store is a key whose store went away (deleted, or
            // moved and maybe coming back): it is used, never replaced, so no key is lost.
            Ok(Some(secret)) => {
                self.key = key::key_from_keyring(&secret).ok_or_else(|| {
                    VaultError::KeyringEntryInvalid {
                        path: self.path.clone(),
                        user: user.clone(),
                    }
                })?;
            }
            Ok(None) => keyring
                .set(&user, &key::keyring_secret(&self.key), KEYRING_TIMEOUT)
                .map_err(|e| VaultError::KeyringWrite {
                    path: self.path.clone(),
                    reason: e.to_string(),
                })?,
            Err(e) => {
                let Some(key_file) = fallback else {
                    return Err(VaultError::KeyringWrite {
                        path: self.path.clone(),
                        reason: e.to_string(),
                    });
                };
                key::create_key_file(key_file, &self.key)?;
                self.notice = Some(format!(
                    "no OS keyring (Secret Service) answered; the vault key is in {}",
                    key_file.display()
                ));
                self.location = KeyLocation::KeyFile(key_file.clone());
                return Ok(());
            }
        }
        self.location = KeyLocation::Keyring { user };
        Ok(())
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

/// The key for an existing store, and where it lives: the source must be the kind the store
/// was sealed with, as it records (or, written by an older cairn, as its `kdf` shows).
fn derive_stored_key(
    path: &Path,
    file: &StoreFile,
    key_source: &KeySource,
) -> Result<(Key, KeyLocation), VaultError> {
    let stored = StoredKeySource::of(file);
    let damaged = |reason: &str| VaultError::Damaged {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    match (stored, &file.kdf) {
        (StoredKeySource::Passphrase, None) => {
            return Err(damaged("key_source is \"passphrase\" but kdf is missing"));
        }
        (StoredKeySource::KeyFile | StoredKeySource::Keyring, Some(_)) => {
            return Err(damaged("kdf is set, but key_source is not \"passphrase\""));
        }
        _ => {}
    }
    let mismatch = |expected: &'static str, hint: &'static str| VaultError::KeySourceMismatch {
        path: path.to_path_buf(),
        expected,
        given: key_source.kind(),
        hint,
    };
    let from_keyring = |keyring: &Arc<dyn Keyring>| {
        let user = keyring_user(path);
        let secret = keyring
            .get(&user, KEYRING_TIMEOUT)
            .map_err(|e| VaultError::KeyringUnavailable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?
            .ok_or_else(|| VaultError::KeyringEntryMissing {
                path: path.to_path_buf(),
                user: user.clone(),
            })?;
        let key =
            key::key_from_keyring(&secret).ok_or_else(|| VaultError::KeyringEntryInvalid {
                path: path.to_path_buf(),
                user: user.clone(),
            })?;
        Ok((key, KeyLocation::Keyring { user }))
    };
    let from_key_file = |key_file: &PathBuf| match key::read_key_file(key_file)? {
        Some(key) => Ok((key, KeyLocation::KeyFile(key_file.clone()))),
        None => Err(VaultError::KeyFileMissing {
            path: path.to_path_buf(),
            key_file: key_file.clone(),
        }),
    };
    match (key_source, stored) {
        (KeySource::Keyring(keyring), StoredKeySource::Keyring)
        | (KeySource::Auto { keyring, .. }, StoredKeySource::Keyring) => from_keyring(keyring),
        (KeySource::KeyFile(key_file), StoredKeySource::KeyFile)
        | (KeySource::Auto { key_file, .. }, StoredKeySource::KeyFile) => from_key_file(key_file),
        (KeySource::Passphrase(passphrase), StoredKeySource::Passphrase) => {
            let Some(kdf) = &file.kdf else {
                return Err(damaged("kdf is missing"));
            };
            if let Some(reason) = kdf.problem() {
                return Err(VaultError::Damaged {
                    path: path.to_path_buf(),
                    reason,
                });
            }
            Ok((kdf.derive(passphrase)?, KeyLocation::Passphrase))
        }
        (
            KeySource::KeyFile(_) | KeySource::Auto { .. } | KeySource::Keyring(_),
            StoredKeySource::Passphrase,
        ) => Err(mismatch("a passphrase", "; set CAIRN_VAULT_PASSPHRASE")),
        (KeySource::Passphrase(_), StoredKeySource::KeyFile) => Err(mismatch(
            "a key file",
            "; unset CAIRN_VAULT_PASSPHRASE to use the key file next to it",
        )),
        (KeySource::Passphrase(_), StoredKeySource::Keyring) => Err(mismatch(
            "a key in the OS keyring",
            "; unset CAIRN_VAULT_PASSPHRASE to use it",
        )),
        (KeySource::KeyFile(_), StoredKeySource::Keyring) => {
            Err(mismatch("a key in the OS keyring", ""))
        }
        (KeySource::Keyring(_), StoredKeySource::KeyFile) => Err(mismatch("a key file", "")),
    }
}

/// Why one stored secret cannot be opened; the vault reports it as damage at its index.
#[derive(Debug, thiserror::Error)]
enum SecretDamage {
    #[error("{0}")]
    Name(VaultError),
    #[error("secret {0:?} has no hosts")]
    NoHosts(String),
    #[error("secret {name:?}: {error}")]
    Host { name: String, error: VaultError },
    #[error("secret {name:?}: {reason}")]
    Format { name: String, reason: String },
    #[error("secret {0:?} fails authentication: its value, name or hosts were altered")]
    Altered(String),
    #[error("secret {0:?}: the value is not UTF-8")]
    NotUtf8(String),
}

/// Validates and decrypts one stored secret; the error says which part is wrong.
fn open_secret(key: &Key, stored: &StoredSecret) -> Result<(String, Entry), SecretDamage> {
    validate_name(&stored.name).map_err(SecretDamage::Name)?;
    let name = || stored.name.clone();
    if stored.hosts.is_empty() {
        return Err(SecretDamage::NoHosts(name()));
    }
    for host in &stored.hosts {
        validate_host(host).map_err(|error| SecretDamage::Host {
            name: name(),
            error,
        })?;
    }
    let ad = store::secret_ad(&stored.name, &stored.hosts);
    let plaintext = match store::open(key, &stored.nonce, &stored.ciphertext, &ad) {
        Ok(p) => p,
        Err(OpenError::Format(reason)) => {
            return Err(SecretDamage::Format {
                name: name(),
                reason,
            });
        }
        Err(OpenError::Tag) => return Err(SecretDamage::Altered(name())),
    };
    let value = std::str::from_utf8(&plaintext)
        .map_err(|_| SecretDamage::NotUtf8(name()))?
        .to_string();
    Ok((
        stored.name.clone(),
        Entry {
            hosts: stored.hosts.clone(),
            value: Secret::new(value),
        },
    ))
}
