//! Where the vault key comes from: a 0600 key file of 32 random bytes, or a passphrase
//! stretched with Argon2id over a random salt kept in the store.
//!
//! TODO(issue 7): an OS-keyring source. The `keyring` crate's Secret Service backend needs the
//! system's libdbus, which this machine and CI lack, and its kernel-keyutils backend forgets
//! the key at reboot; until one of them fits, headless and desktop machines use the key file.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::{Secret, VaultError};

pub const KEY_LEN: usize = 32;
pub const SALT_LEN: usize = 16;
/// The environment variable a passphrase is read from.
pub const PASSPHRASE_ENV: &str = "CAIRN_VAULT_PASSPHRASE";
/// The key file's name, next to the store.
pub const KEY_FILE_NAME: &str = "vault.key";

/// The vault key; wiped when dropped.
pub type Key = Zeroizing<[u8; KEY_LEN]>;

/// How the vault key is obtained.
#[derive(Clone, Debug)]
pub enum KeySource {
    /// 32 random bytes in a file only its owner may read; created on the first write.
    KeyFile(PathBuf),
    /// A passphrase, stretched with Argon2id.
    Passphrase(Secret),
}

impl KeySource {
    /// The passphrase in `CAIRN_VAULT_PASSPHRASE` when it is set and not empty, else the key
    /// file `vault.key` next to `store`. `get` reads the environment.
    pub fn from_env(store: &Path, get: impl Fn(&str) -> Option<String>) -> KeySource {
        match get(PASSPHRASE_ENV).filter(|p| !p.is_empty()) {
            Some(p) => KeySource::Passphrase(Secret::new(p)),
            None => KeySource::KeyFile(store.with_file_name(KEY_FILE_NAME)),
        }
    }

    /// Names the source in messages, never showing a passphrase.
    pub fn describe(&self) -> String {
        match self {
            KeySource::KeyFile(path) => format!("key file {}", path.display()),
            KeySource::Passphrase(_) => "this passphrase".to_string(),
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            KeySource::KeyFile(_) => "a key file",
            KeySource::Passphrase(_) => "a passphrase",
        }
    }
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
            salt: crate::store::hex(&salt),
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
        match crate::store::unhex(&self.salt) {
            Some(salt) if salt.len() >= 8 => None,
            _ => Some("kdf.salt is not hex of at least 8 bytes".to_string()),
        }
    }

    pub fn derive(&self, passphrase: &Secret) -> Result<Key, VaultError> {
        if passphrase.is_empty() {
            return Err(VaultError::EmptyPassphrase);
        }
        let salt = crate::store::unhex(&self.salt)
            .ok_or_else(|| VaultError::Kdf("the salt is not hex".to_string()))?;
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
        crate::store::create_private_dir(dir)?;
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
