//! The store file: its JSON format, the AEAD around each value, and atomic replacement.
//!
//! ```json
//! { "version": 1, "cipher": "xchacha20poly1305", "key_source": "passphrase",
//!   "kdf": { "algorithm": "argon2id", "m_cost_kib": 19456, "t_cost": 2, "p_cost": 1, "salt": "…" },
//!   "check": { "nonce": "…", "ciphertext": "…" },
//!   "secrets": [ { "name": "github", "hosts": ["api.github.com"], "nonce": "…", "ciphertext": "…" } ] }
//! ```
//!
//! `key_source` is `"keyring"`, `"key_file"` or `"passphrase"`: where the key came from, so
//! opening never has to guess (`key.rs`). A store without it was written before it existed and
//! is read as before: a passphrase when `kdf` is set, else a key file. `kdf` is `null` unless
//! the key is a passphrase's. `check` seals a fixed text, so a wrong key is told
//! apart from a damaged secret even in an empty vault. Each value is sealed under a random
//! 24-byte nonce with its name and hosts as associated data: moving a ciphertext to another
//! name, or adding a host to its list, makes it fail to authenticate.

use std::fs::{File, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::error::VaultError;
use crate::hex::{hex, unhex};
use crate::key::{KdfParams, Key, random};
use crate::private_dir::create_private_dir;

pub const VERSION: u32 = 1;
pub const CIPHER: &str = "xchacha20poly1305";
pub const NONCE_LEN: usize = 24;
const CHECK_AD: &[u8] = b"cairn-vault/1/check";
const CHECK_TEXT: &[u8] = b"cairn vault key check";
const SECRET_AD: &[u8] = b"cairn-vault/1/secret";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreFile {
    pub version: u32,
    pub cipher: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_source: Option<StoredKeySource>,
    pub kdf: Option<KdfParams>,
    pub check: Sealed,
    pub secrets: Vec<StoredSecret>,
}

/// The key source a store records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredKeySource {
    KeyFile,
    Passphrase,
    Keyring,
}

impl StoredKeySource {
    /// What the store was sealed with: as recorded, or as an older cairn wrote it.
    pub fn of(file: &StoreFile) -> StoredKeySource {
        match (file.key_source, &file.kdf) {
            (Some(source), _) => source,
            (None, Some(_)) => StoredKeySource::Passphrase,
            (None, None) => StoredKeySource::KeyFile,
        }
    }
}

/// Only the version, read first so a newer format is reported as such, not as damage.
#[derive(Deserialize)]
pub struct VersionProbe {
    pub version: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sealed {
    pub nonce: String,
    pub ciphertext: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredSecret {
    pub name: String,
    pub hosts: Vec<String>,
    pub nonce: String,
    pub ciphertext: String,
}

/// The associated data of a secret: its name and hosts, NUL-separated (neither may hold NUL).
pub fn secret_ad(name: &str, hosts: &[String]) -> Vec<u8> {
    let mut ad = SECRET_AD.to_vec();
    ad.push(0);
    ad.extend_from_slice(name.as_bytes());
    for host in hosts {
        ad.push(0);
        ad.extend_from_slice(host.as_bytes());
    }
    ad
}

pub fn seal(key: &Key, plaintext: &[u8], ad: &[u8]) -> Result<Sealed, VaultError> {
    let cipher = XChaCha20Poly1305::new(key.as_ref().into());
    let mut nonce = [0u8; NONCE_LEN];
    random(&mut nonce)?;
    let ciphertext = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: plaintext,
                aad: ad,
            },
        )
        .map_err(|_| VaultError::Encrypt)?;
    Ok(Sealed {
        nonce: hex(&nonce),
        ciphertext: hex(&ciphertext),
    })
}

/// Why a sealed value cannot be opened.
pub enum OpenError {
    /// A field is not what the format says (bad hex, wrong nonce length).
    Format(String),
    /// The tag does not authenticate the ciphertext and associated data under this key.
    Tag,
}

pub fn open(
    key: &Key,
    nonce: &str,
    ciphertext: &str,
    ad: &[u8],
) -> Result<Zeroizing<Vec<u8>>, OpenError> {
    let nonce = unhex(nonce)
        .filter(|n| n.len() == NONCE_LEN)
        .ok_or_else(|| OpenError::Format(format!("nonce is not {NONCE_LEN} bytes of hex")))?;
    let ciphertext =
        unhex(ciphertext).ok_or_else(|| OpenError::Format("ciphertext is not hex".to_string()))?;
    let cipher = XChaCha20Poly1305::new(key.as_ref().into());
    cipher
        .decrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: &ciphertext,
                aad: ad,
            },
        )
        .map(Zeroizing::new)
        .map_err(|_| OpenError::Tag)
}

pub fn seal_check(key: &Key) -> Result<Sealed, VaultError> {
    seal(key, CHECK_TEXT, CHECK_AD)
}

pub fn open_check(key: &Key, check: &Sealed) -> Result<(), OpenError> {
    let text = open(key, &check.nonce, &check.ciphertext, CHECK_AD)?;
    if text.as_slice() == CHECK_TEXT {
        Ok(())
    } else {
        Err(OpenError::Tag)
    }
}

/// Replaces `path` with `bytes` so that a crash leaves the old file or the new one, never a
/// mix: a 0600 temporary file in the same directory (a rename is atomic only within one file
/// system), written and fsynced, renamed over the store, then the directory fsynced so the
/// rename itself is durable. A failure removes the temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), VaultError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_private_dir(dir)?;
    let io = |source| VaultError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".vault.")
        .suffix(".tmp")
        .permissions(Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| VaultError::Io {
            path: dir.to_path_buf(),
            source,
        })
}
