//! Where the vault key comes from: the OS keyring (Secret Service), a 0600 key file of 32
//! random bytes next to the store, or a passphrase stretched with Argon2id over a random salt
//! kept in the store.
//!
//! [`KeySource::from_env`] is what the `cairn` commands use. It picks, in this order:
//!
//! 1. `CAIRN_VAULT_PASSPHRASE` set (and not empty): the passphrase. A store sealed otherwise
//!    is refused with a message that says to unset it.
//! 2. Otherwise [`KeySource::Auto`], which [`crate::Vault::open`] settles from what is on disk:
//!    - a store that records `"key_source": "keyring"`: the key in the OS keyring, under
//!      service `cairn` and the store's absolute path as user (so two stores get two keys). A
//!      keyring that does not answer, or has no such entry, is an error that says what to do;
//!      a new key is never made for an existing store, which it could not read;
//!    - else an existing `vault.key` next to the store: that key file. An existing store that
//!      records a key file, or records nothing (written before `key_source` existed, without
//!      `kdf`), is opened with it, and its missing key file is an error as before;
//!    - else a new store: nothing is decided until the first write. Then the key goes to the
//!      OS keyring when a Secret Service answers within [`KEYRING_PROBE_TIMEOUT`] (an entry
//!      already there for this path is reused rather than replaced), else into a new 0600
//!      `vault.key`, and [`crate::Vault::take_notice`] says so once.
//!
//! The store records the source it was sealed with (`key_source`), so opening never guesses;
//! a store without the field was written by an older cairn and is read as before: `kdf`
//! present means a passphrase, absent a key file.
//!
//! The key never leaves memory except into the key file or the keyring: [`Key`] is wiped on
//! drop, and the keyring entry holds it as hex in a buffer wiped the same way.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::error::VaultError;
use crate::hex::{hex, unhex};
use crate::os_keyring::{KEYRING_PROBE_TIMEOUT, KEYRING_SERVICE, Keyring, SecretServiceKeyring};
use crate::private_dir::create_private_dir;
use crate::secret::Secret;

pub const KEY_LEN: usize = 32;
pub const SALT_LEN: usize = 16;
/// The environment variable a passphrase is read from.
pub const PASSPHRASE_ENV: &str = "CAIRN_VAULT_PASSPHRASE";
/// The key file's name, next to the store.
pub const KEY_FILE_NAME: &str = "vault.key";

/// The vault key; wiped when dropped.
pub type Key = Zeroizing<[u8; KEY_LEN]>;

/// How the vault key is obtained.
#[derive(Clone)]
pub enum KeySource {
    /// 32 random bytes in a file only its owner may read; created on the first write.
    KeyFile(PathBuf),
    /// A passphrase, stretched with Argon2id.
    Passphrase(Secret),
    /// The OS keyring only: the entry is read for an existing store, and made on the first
    /// write of a new one; a keyring that does not answer is an error.
    Keyring(Arc<dyn Keyring>),
    /// Chosen from what is on disk (the module doc): the keyring for a store sealed with it,
    /// else `key_file` when it exists or the store records it, else, for a new store, the
    /// keyring when it answers and `key_file` when not.
    Auto {
        key_file: PathBuf,
        keyring: Arc<dyn Keyring>,
    },
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::KeyFile(path) => f.debug_tuple("KeyFile").field(path).finish(),
            KeySource::Passphrase(p) => f.debug_tuple("Passphrase").field(p).finish(),
            KeySource::Keyring(_) => f.write_str("Keyring"),
            KeySource::Auto { key_file, .. } => f
                .debug_struct("Auto")
                .field("key_file", key_file)
                .finish_non_exhaustive(),
        }
    }
}

impl KeySource {
    /// The passphrase in `CAIRN_VAULT_PASSPHRASE` when it is set and not empty, else
    /// [`KeySource::Auto`] with the Secret Service and `vault.key` next to `store`. `get` reads
    /// the environment.
    pub fn from_env(store: &Path, get: impl Fn(&str) -> Option<String>) -> KeySource {
        Self::from_env_with(store, get, Arc::new(SecretServiceKeyring))
    }

    /// [`KeySource::from_env`] with another keyring (tests use a fake).
    pub fn from_env_with(
        store: &Path,
        get: impl Fn(&str) -> Option<String>,
        keyring: Arc<dyn Keyring>,
    ) -> KeySource {
        match get(PASSPHRASE_ENV).filter(|p| !p.is_empty()) {
            Some(p) => KeySource::Passphrase(Secret::new(p)),
            None => KeySource::Auto {
                key_file: store.with_file_name(KEY_FILE_NAME),
                keyring,
            },
        }
    }

    /// Names the source in messages, never showing a passphrase or a key.
    pub fn describe(&self) -> String {
        match self {
            KeySource::KeyFile(path) | KeySource::Auto { key_file: path, .. } => {
                format!("key file {}", path.display())
            }
            KeySource::Passphrase(_) => "this passphrase".to_string(),
            KeySource::Keyring(_) => "the key in the OS keyring".to_string(),
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            KeySource::KeyFile(_) | KeySource::Auto { .. } => "a key file",
            KeySource::Passphrase(_) => "a passphrase",
            KeySource::Keyring(_) => "the OS keyring",
        }
    }
}

/// Where an open vault's key lives, for `cairn vault list` and `cairn doctor`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyLocation {
    KeyFile(PathBuf),
    Passphrase,
    /// The OS keyring entry: service `cairn`, this user.
    Keyring {
        user: String,
    },
    /// A new vault that has not been written yet: the first write puts the key in the keyring
    /// when one answers, else in `key_file`.
    Undecided {
        key_file: PathBuf,
    },
}

impl fmt::Display for KeyLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyLocation::KeyFile(path) => write!(f, "the key file {}", path.display()),
            KeyLocation::Passphrase => write!(f, "the passphrase in {PASSPHRASE_ENV}"),
            KeyLocation::Keyring { user } => write!(
                f,
                "the OS keyring (Secret Service; service {KEYRING_SERVICE:?}, user {user:?})"
            ),
            KeyLocation::Undecided { key_file } => write!(
                f,
                "nowhere yet: the first `cairn vault set` puts it in the OS keyring when a Secret \
                 Service answers within {} s, else in {}",
                KEYRING_PROBE_TIMEOUT.as_secs(),
                key_file.display()
            ),
        }
    }
}

/// The keyring user of the store at `store`: its absolute path (not canonical, since a new
/// store does not exist yet to be resolved), so each store has an entry of its own.
pub fn keyring_user(store: &Path) -> String {
    std::path::absolute(store)
        .unwrap_or_else(|_| store.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// The key as the keyring holds it: hex, so tools such as `secret-tool` show text.
pub fn keyring_secret(key: &Key) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(hex(key.as_ref()).into_bytes())
}

/// The key from a keyring entry; `None` when the entry is not 64 hex digits.
pub fn key_from_keyring(secret: &[u8]) -> Option<Key> {
    if secret.len() != KEY_LEN * 2 {
        return None;
    }
    let text = std::str::from_utf8(secret).ok()?;
    let bytes = Zeroizing::new(unhex(text)?);
    let mut key: Key = Zeroizing::new([0u8; KEY_LEN]);
    key.copy_from_slice(bytes.get(..KEY_LEN)?);
    Some(key)
}

/// Argon2id parameters as stored; the salt is hex.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct KdfParams {
    pub algorithm: String,
    pub m_cost_kib: u32,
    pub t_cost: u32,
    pub p_cost: u32,
    pub salt: String,
}

pub const ARGON2ID: &str = "argon2id";
// OWASP's first Argon2id recommendation (19 MiB, 2 passes, 1 lane): about 50 ms optimised.
const DEFAULT_M_COST_KIB: u32 = 19 * 1024;
const DEFAULT_T_COST: u32 = 2;
const DEFAULT_P_COST: u32 = 1;
// Bounds for parameters read from a file: an edited store must not make cairn allocate
// gigabytes or spin for minutes before it can say the passphrase is wrong.
const MAX_M_COST_KIB: u32 = 1024 * 1024;
const MAX_T_COST: u32 = 16;
const MAX_P_COST: u32 = 16;

impl KdfParams {
    pub fn fresh() -> Result<KdfParams, VaultError> {
        let mut salt = [0u8; SALT_LEN];
        random(&mut salt)?;
        Ok(KdfParams {
            algorithm: ARGON2ID.to_string(),
            m_cost_kib: DEFAULT_M_COST_KIB,
            t_cost: DEFAULT_T_COST,
            p_cost: DEFAULT_P_COST,
            salt: hex(&salt),
        })
    }

    /// Why these stored parameters cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.algorithm != ARGON2ID {
            return Some(format!(
                "kdf.algorithm is {:?}, expected {ARGON2ID:?}",
                self.algorithm
            ));
        }
        if self.m_cost_kib > MAX_M_COST_KIB || self.t_cost > MAX_T_COST || self.p_cost > MAX_P_COST
        {
            return Some("kdf costs are beyond the limits cairn accepts".to_string());
        }
        match unhex(&self.salt) {
            Some(salt) if salt.len() >= 8 => None,
            _ => Some("kdf.salt is not hex of at least 8 bytes".to_string()),
        }
    }

    pub fn derive(&self, passphrase: &Secret) -> Result<Key, VaultError> {
        if passphrase.is_empty() {
            return Err(VaultError::EmptyPassphrase);
        }
        let salt =
            unhex(&self.salt).ok_or_else(|| VaultError::Kdf("the salt is not hex".to_string()))?;
        let params = argon2::Params::new(self.m_cost_kib, self.t_cost, self.p_cost, Some(KEY_LEN))
            .map_err(|e| VaultError::Kdf(e.to_string()))?;
        let argon =
            argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let mut key: Key = Zeroizing::new([0u8; KEY_LEN]);
        argon
            .hash_password_into(passphrase.expose().as_bytes(), &salt, key.as_mut())
            .map_err(|e| VaultError::Kdf(e.to_string()))?;
        Ok(key)
    }
}

pub fn random(buf: &mut [u8]) -> Result<(), VaultError> {
    getrandom::fill(buf).map_err(|e| VaultError::Random(e.to_string()))
}

pub fn new_key() -> Result<Key, VaultError> {
    let mut key: Key = Zeroizing::new([0u8; KEY_LEN]);
    random(key.as_mut())?;
    Ok(key)
}

/// Reads a key file: `Ok(None)` when it does not exist; refused when group or others may read
/// it, since then the encryption protects nothing from them.
pub fn read_key_file(path: &Path) -> Result<Option<Key>, VaultError> {
    let io = |source| VaultError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(VaultError::KeyFileInvalid {
            path: path.to_path_buf(),
            reason: "not a regular file".to_string(),
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(VaultError::KeyFileMode {
            path: path.to_path_buf(),
            mode,
        });
    }
    // One byte more than a key, so a longer file is noticed; a fixed buffer, so no copy of the
    // key is left behind by a reallocation.
    let mut buf = Zeroizing::new([0u8; KEY_LEN + 1]);
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    if len != KEY_LEN {
        return Err(VaultError::KeyFileInvalid {
            path: path.to_path_buf(),
            reason: format!("it must hold exactly {KEY_LEN} bytes"),
        });
    }
    let mut key: Key = Zeroizing::new([0u8; KEY_LEN]);
    key.copy_from_slice(&buf[..KEY_LEN]);
    Ok(Some(key))
}

/// Creates a new key file, 0600 from the start (never chmod-ed after the bytes are in it), and
/// fails rather than replace a key file that appeared meanwhile.
pub fn create_key_file(path: &Path, key: &Key) -> Result<(), VaultError> {
    let io = |source| VaultError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    file.write_all(key.as_ref()).map_err(io)?;
    file.sync_all().map_err(io)
}
