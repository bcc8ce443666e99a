//! The OS keyring as the vault sees it: one entry per store (service `cairn`, user the store's
//! absolute path), holding the 32-byte key as 64 hex digits.
//!
//! [`Keyring`] is the seam: [`SecretServiceKeyring`] talks to the freedesktop Secret Service
//! (gnome-keyring, KWallet, KeePassXC) through the `keyring` crate over pure-Rust zbus, so no
//! libdbus is needed; tests put a fake in its place.
//!
//! Every call runs on a thread of its own and is waited for with a timeout. Two reasons: a
//! session bus that accepts the connection but never answers must not hang `cairn vault list`,
//! and the crate drives zbus with a private tokio runtime through `block_on`, which panics when
//! called from inside another runtime (the LSP server and `cairn doctor` run in one).

use std::sync::mpsc;
use std::time::Duration;

use zeroize::Zeroizing;

/// The service name of every vault entry.
pub const KEYRING_SERVICE: &str = "cairn";
/// How long a new store waits for a Secret Service to answer before it falls back to a key
/// file: short, since a headless machine has none and should not be slowed down by it.
pub const KEYRING_PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long reading or writing a key may take: long enough for the user to answer an unlock
/// prompt of the desktop's keyring.
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the keyring could not be used. Never holds secret material.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyringError {
    #[error("no Secret Service answered within {} s", .0.as_secs_f32())]
    TimedOut(Duration),
    #[error("{0}")]
    Unavailable(String),
}

/// The keyring: what the vault needs of it, and nothing more.
pub trait Keyring: Send + Sync {
    /// The secret stored for `user` under [`KEYRING_SERVICE`]; `Ok(None)` when the keyring
    /// answered and has no such entry.
    fn get(
        &self,
        user: &str,
        timeout: Duration,
    ) -> Result<Option<Zeroizing<Vec<u8>>>, KeyringError>;

    /// Stores `secret` for `user`, replacing any entry there.
    fn set(&self, user: &str, secret: &[u8], timeout: Duration) -> Result<(), KeyringError>;
}

/// The freedesktop Secret Service on the session bus (`DBUS_SESSION_BUS_ADDRESS`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SecretServiceKeyring;

impl Keyring for SecretServiceKeyring {
    fn get(
        &self,
        user: &str,
        timeout: Duration,
    ) -> Result<Option<Zeroizing<Vec<u8>>>, KeyringError> {
        let user = user.to_string();
        with_timeout(timeout, move || {
            let entry = ::keyring::Entry::new(KEYRING_SERVICE, &user).map_err(unavailable)?;
            match entry.get_secret() {
                Ok(bytes) => Ok(Some(Zeroizing::new(bytes))),
                Err(::keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(unavailable(e)),
            }
        })
    }

    fn set(&self, user: &str, secret: &[u8], timeout: Duration) -> Result<(), KeyringError> {
        let user = user.to_string();
        // The thread needs its own copy; it is wiped when the thread is done with it.
        let secret = Zeroizing::new(secret.to_vec());
        with_timeout(timeout, move || {
            let entry = ::keyring::Entry::new(KEYRING_SERVICE, &user).map_err(unavailable)?;
            entry.set_secret(&secret).map_err(unavailable)
        })
    }
}

/// A message for a keyring failure. `Ambiguous` would list the matching items, and no variant
/// used here carries a secret, but only the kinds with a useful cause are spelled out.
fn unavailable(e: ::keyring::Error) -> KeyringError {
    KeyringError::Unavailable(match e {
        ::keyring::Error::PlatformFailure(cause) => format!("Secret Service failure: {cause}"),
        ::keyring::Error::NoStorageAccess(cause) => {
            format!("the keyring is locked or refused access: {cause}")
        }
        ::keyring::Error::Ambiguous(items) => format!(
            "{} keyring items match the vault's entry; remove all but one",
            items.len()
        ),
        ::keyring::Error::TooLong(attr, limit) => {
            format!("the keyring refuses {attr} longer than {limit}")
        }
        ::keyring::Error::Invalid(attr, reason) => format!("invalid keyring {attr}: {reason}"),
        _ => "the keyring failed".to_string(),
    })
}

/// Runs `call` on its own thread and waits at most `timeout`. A call that times out is left to
/// finish or to end with the process; it holds no lock the caller needs.
fn with_timeout<T: Send + 'static>(
    timeout: Duration,
    call: impl FnOnce() -> Result<T, KeyringError> + Send + 'static,
) -> Result<T, KeyringError> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("cairn-keyring".to_string())
        .spawn(move || {
            // The receiver is gone when the caller gave up; nothing is left to tell.
            let _ = tx.send(call());
        })
        .map_err(|e| KeyringError::Unavailable(format!("cannot start a thread: {e}")))?;
    match rx.recv_timeout(timeout) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(KeyringError::TimedOut(timeout)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(KeyringError::Unavailable(
            "the keyring call ended without an answer".to_string(),
        )),
    }
}
