//! Choosing the vault key's source, with a fake keyring in place of the Secret Service: a new
//! store goes to the keyring when it answers and to a key file when not, an existing keyring
//! store fails closed without its entry, and a passphrase overrides both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_vault::{
    KeyLocation, KeySource, Keyring, KeyringError, Secret, Vault, VaultError, keyring_user,
};
use serde_json::Value;
use zeroize::Zeroizing;

const VALUE: &str = "ghp_keyRINGtestVALUE0123456789";

/// An in-memory keyring that can be down; counts every call so tests see when none is made.
#[derive(Default)]
struct FakeKeyring {
    down: AtomicBool,
    entries: Mutex<HashMap<String, Vec<u8>>>,
    calls: AtomicUsize,
}

impl Keyring for FakeKeyring {
    fn get(
        &self,
        user: &str,
        timeout: Duration,
    ) -> Result<Option<Zeroizing<Vec<u8>>>, KeyringError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return Err(KeyringError::TimedOut(timeout));
        }
        Ok(self
            .entries
            .lock()
            .unwrap()
            .get(user)
            .cloned()
            .map(Zeroizing::new))
    }

    fn set(&self, user: &str, secret: &[u8], _timeout: Duration) -> Result<(), KeyringError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return Err(KeyringError::Unavailable("down".to_string()));
        }
        self.entries
            .lock()
            .unwrap()
            .insert(user.to_string(), secret.to_vec());
        Ok(())
    }
}

struct Case {
    dir: tempfile::TempDir,
    keyring: Arc<FakeKeyring>,
}

impl Case {
    fn new(keyring_up: bool) -> Case {
        let keyring = Arc::new(FakeKeyring::default());
        keyring.down.store(!keyring_up, Ordering::SeqCst);
        Case {
            dir: tempfile::tempdir().unwrap(),
            keyring,
        }
    }
    fn store(&self) -> PathBuf {
        self.dir.path().join("cairn/vault.json")
    }
    fn key_file(&self) -> PathBuf {
        self.dir.path().join("cairn/vault.key")
    }
    fn source(&self, passphrase: Option<&str>) -> KeySource {
        let pass = passphrase.map(str::to_string);
        KeySource::from_env_with(
            &self.store(),
            |k| {
                (k == "CAIRN_VAULT_PASSPHRASE")
                    .then(|| pass.clone())
                    .flatten()
            },
            self.keyring.clone(),
        )
    }
    fn open(&self) -> Result<Vault, VaultError> {
        Vault::open(self.store(), self.source(None))
    }
    fn set(&self, v: &mut Vault, name: &str) {
        v.set(
            name,
            Secret::new(VALUE.to_string()),
            vec!["api.github.com".to_string()],
        )
        .unwrap();
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.store()).unwrap()).unwrap()
    }
    fn entry(&self) -> Option<Vec<u8>> {
        self.keyring
            .entries
            .lock()
            .unwrap()
            .get(&keyring_user(&self.store()))
            .cloned()
    }
    fn calls(&self) -> usize {
        self.keyring.calls.load(Ordering::SeqCst)
    }
}

/// A store sealed with the keyring key, and the case's keyring holding it.
fn keyring_store() -> Case {
    let c = Case::new(true);
    let mut v = c.open().unwrap();
    c.set(&mut v, "github");
    c
}

#[test]
fn a_new_store_keeps_its_key_in_the_keyring_when_one_answers() {
    let c = Case::new(true);
    let mut v = c.open().unwrap();
    assert!(matches!(v.key_location(), KeyLocation::Undecided { .. }));
    c.set(&mut v, "github");
    assert_eq!(v.take_notice(), None);
    assert_eq!(
        v.key_location(),
        &KeyLocation::Keyring {
            user: keyring_user(&c.store())
        }
    );
    assert!(
        !c.key_file().exists(),
        "no key file next to a keyring store"
    );
    let entry = c.entry().expect("the key is in the keyring");
    assert_eq!(entry.len(), 64, "32 bytes as hex");
    assert!(entry.iter().all(u8::is_ascii_hexdigit));
    let json = c.json();
    assert_eq!(json["key_source"], "keyring");
    assert_eq!(json["kdf"], Value::Null);
    let bytes = std::fs::read(c.store()).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains(VALUE));
    assert!(
        !String::from_utf8_lossy(&bytes).contains(std::str::from_utf8(&entry).unwrap()),
        "the key is not in the store"
    );

    // Another process: opens from the keyring, writes keep the same entry.
    let mut again = c.open().unwrap();
    assert_eq!(again.get("github").unwrap().expose(), VALUE);
    c.set(&mut again, "second");
    assert_eq!(c.entry().unwrap(), entry);
    assert_eq!(c.open().unwrap().list().len(), 2);
}

#[test]
fn a_new_store_falls_back_to_a_key_file_and_says_so_once() {
    let c = Case::new(false);
    let mut v = c.open().unwrap();
    c.set(&mut v, "github");
    let notice = v.take_notice().expect("a notice");
    assert_eq!(
        notice,
        format!(
            "no OS keyring (Secret Service) answered; the vault key is in {}",
            c.key_file().display()
        )
    );
    assert_eq!(v.take_notice(), None, "said once");
    c.set(&mut v, "second");
    assert_eq!(v.take_notice(), None, "a later write says nothing");
    assert_eq!(v.key_location(), &KeyLocation::KeyFile(c.key_file()));
    let mode = std::fs::metadata(c.key_file())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(c.json()["key_source"], "key_file");

    // The keyring coming back later changes nothing for this store: it records a key file.
    c.keyring.down.store(false, Ordering::SeqCst);
    let before = c.calls();
    let v = c.open().unwrap();
    assert_eq!(v.list().len(), 2);
    assert_eq!(c.calls(), before, "a key-file store never asks the keyring");
    assert_eq!(c.entry(), None);
}

#[test]
fn an_existing_keyring_store_without_its_entry_fails_closed() {
    let c = keyring_store();
    let before = std::fs::read(c.store()).unwrap();
    c.keyring.entries.lock().unwrap().clear();

    let err = c.open().unwrap_err();
    assert!(
        matches!(err, VaultError::KeyringEntryMissing { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("no entry"), "{message}");
    assert!(message.contains("left as it is"), "{message}");
    assert_eq!(std::fs::read(c.store()).unwrap(), before, "store unchanged");
    assert!(!c.key_file().exists(), "no new key file");
    assert_eq!(c.entry(), None, "no new keyring entry");

    // The keyring down: the same, with what to do.
    c.keyring.down.store(true, Ordering::SeqCst);
    let err = c.open().unwrap_err();
    assert!(
        matches!(err, VaultError::KeyringUnavailable { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("Secret Service"), "{err}");
    assert_eq!(std::fs::read(c.store()).unwrap(), before);
    assert!(!c.key_file().exists());
}

#[test]
fn a_key_file_next_to_a_keyring_store_does_not_override_the_record() {
    let c = keyring_store();
    std::fs::write(c.key_file(), [7u8; 32]).unwrap();
    std::fs::set_permissions(c.key_file(), std::fs::Permissions::from_mode(0o600)).unwrap();
    let v = c.open().unwrap();
    assert_eq!(v.get("github").unwrap().expose(), VALUE);
    assert!(matches!(v.key_location(), KeyLocation::Keyring { .. }));
}

#[test]
fn an_entry_that_is_not_a_key_is_refused() {
    let c = keyring_store();
    let before = std::fs::read(c.store()).unwrap();
    c.keyring
        .entries
        .lock()
        .unwrap()
        .insert(keyring_user(&c.store()), b"not a key".to_vec());
    let err = c.open().unwrap_err();
    assert!(
        matches!(err, VaultError::KeyringEntryInvalid { .. }),
        "{err:?}"
    );
    assert_eq!(std::fs::read(c.store()).unwrap(), before);

    // Another key of the right shape: the key check tells.
    c.keyring
        .entries
        .lock()
        .unwrap()
        .insert(keyring_user(&c.store()), b"ab".repeat(32));
    let err = c.open().unwrap_err();
    assert!(matches!(err, VaultError::WrongKey { .. }), "{err:?}");
    assert!(err.to_string().contains("OS keyring"), "{err}");
}

#[test]
fn a_passphrase_overrides_the_keyring() {
    let c = Case::new(true);
    let mut v = Vault::open(c.store(), c.source(Some("correct horse"))).unwrap();
    c.set(&mut v, "github");
    assert_eq!(v.key_location(), &KeyLocation::Passphrase);
    assert_eq!(c.calls(), 0, "the keyring is not asked");
    assert_eq!(c.json()["key_source"], "passphrase");
    assert!(!c.key_file().exists());
    let v = Vault::open(c.store(), c.source(Some("correct horse"))).unwrap();
    assert_eq!(v.get("github").unwrap().expose(), VALUE);

    // A keyring store with the passphrase set: refused, saying to unset it.
    let k = keyring_store();
    let err = Vault::open(k.store(), k.source(Some("correct horse"))).unwrap_err();
    assert!(
        matches!(err, VaultError::KeySourceMismatch { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("unset CAIRN_VAULT_PASSPHRASE"),
        "{err}"
    );
    // And a passphrase store without it: refused, saying to set it.
    let err = c.open().unwrap_err();
    assert!(
        err.to_string().contains("set CAIRN_VAULT_PASSPHRASE"),
        "{err}"
    );
}

#[test]
fn an_empty_new_vault_asks_no_keyring_until_it_is_written() {
    let c = Case::new(true);
    let v = c.open().unwrap();
    assert!(v.list().is_empty());
    assert_eq!(c.calls(), 0);
    assert!(!c.store().exists());
    assert!(v.key_location().to_string().contains("nowhere yet"));
}

#[test]
fn an_entry_left_for_a_deleted_store_is_used_not_replaced() {
    let c = keyring_store();
    let entry = c.entry().unwrap();
    std::fs::remove_file(c.store()).unwrap();
    let mut v = c.open().unwrap();
    c.set(&mut v, "fresh");
    assert_eq!(c.entry().unwrap(), entry);
    assert_eq!(c.open().unwrap().get("fresh").unwrap().expose(), VALUE);
}

#[test]
fn two_stores_get_two_entries() {
    let c = keyring_store();
    let other = c.dir.path().join("other/vault.json");
    let source = KeySource::from_env_with(&other, |_| None, c.keyring.clone());
    let mut v = Vault::open(&other, source).unwrap();
    c.set(&mut v, "github");
    let entries = c.keyring.entries.lock().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries.contains_key(&keyring_user(&other)));
}

#[test]
fn a_store_from_before_key_source_opens_as_before() {
    let c = Case::new(false);
    let mut v = c.open().unwrap();
    c.set(&mut v, "github");
    let mut json = c.json();
    json.as_object_mut().unwrap().remove("key_source");
    std::fs::write(c.store(), serde_json::to_vec(&json).unwrap()).unwrap();
    c.keyring.down.store(false, Ordering::SeqCst);
    let before = c.calls();
    let v = c.open().unwrap();
    assert_eq!(v.get("github").unwrap().expose(), VALUE);
    assert_eq!(c.calls(), before);

    // Without its key file it is the old error, and the keyring is not tried.
    std::fs::remove_file(c.key_file()).unwrap();
    let err = c.open().unwrap_err();
    assert!(matches!(err, VaultError::KeyFileMissing { .. }), "{err:?}");
    assert_eq!(c.calls(), before);
}

#[test]
fn a_key_source_that_contradicts_the_kdf_is_damage() {
    let c = keyring_store();
    let mut json = c.json();
    json["key_source"] = Value::from("passphrase");
    std::fs::write(c.store(), serde_json::to_vec(&json).unwrap()).unwrap();
    let err = c.open().unwrap_err();
    assert!(matches!(err, VaultError::Damaged { .. }), "{err:?}");
    json["key_source"] = Value::from("tpm");
    std::fs::write(c.store(), serde_json::to_vec(&json).unwrap()).unwrap();
    let err = c.open().unwrap_err();
    assert!(matches!(err, VaultError::Damaged { .. }), "{err:?}");
}

#[test]
fn a_keyring_that_fails_to_store_a_new_key_writes_nothing() {
    struct ReadOnly;
    impl Keyring for ReadOnly {
        fn get(
            &self,
            _user: &str,
            _timeout: Duration,
        ) -> Result<Option<Zeroizing<Vec<u8>>>, KeyringError> {
            Ok(None)
        }
        fn set(&self, _user: &str, _secret: &[u8], _t: Duration) -> Result<(), KeyringError> {
            Err(KeyringError::Unavailable("prompt dismissed".to_string()))
        }
    }
    let c = Case::new(true);
    let source = KeySource::from_env_with(&c.store(), |_| None, Arc::new(ReadOnly));
    let mut v = Vault::open(c.store(), source).unwrap();
    let err = v
        .set(
            "github",
            Secret::new(VALUE.to_string()),
            vec!["a.com".into()],
        )
        .unwrap_err();
    assert!(matches!(err, VaultError::KeyringWrite { .. }), "{err:?}");
    assert!(err.to_string().contains("CAIRN_VAULT_PASSPHRASE"), "{err}");
    assert!(!c.store().exists());
    assert!(!c.key_file().exists());
    assert!(v.list().is_empty(), "memory stays what is on disk");
}
