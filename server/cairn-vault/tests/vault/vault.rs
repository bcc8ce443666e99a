//! The vault against its store on disk: round trips, failing closed on every kind of damage,
//! file modes, and host bindings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_vault::{KeySource, Secret, Vault, VaultError};
use serde_json::Value;

const VALUE: &str = "ghp_s3cretTOKENvalue0123456789";

struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        Dir {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn store(&self) -> PathBuf {
        self.dir.path().join("cairn/vault.json")
    }
    fn key_file(&self) -> KeySource {
        KeySource::KeyFile(self.dir.path().join("cairn/vault.key"))
    }
    fn open(&self) -> Result<Vault, VaultError> {
        Vault::open(self.store(), self.key_file())
    }
    fn bytes(&self) -> Vec<u8> {
        std::fs::read(self.store()).unwrap()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes()).unwrap()
    }
    fn write_json(&self, v: &Value) {
        std::fs::write(self.store(), serde_json::to_vec_pretty(v).unwrap()).unwrap();
    }
}

fn passphrase(p: &str) -> KeySource {
    KeySource::Passphrase(Secret::new(p.to_string()))
}

fn hosts(h: &[&str]) -> Vec<String> {
    h.iter().map(|s| s.to_string()).collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A vault with one secret, written with the key file.
fn with_secret(d: &Dir) {
    let mut v = d.open().unwrap();
    v.set(
        "github",
        Secret::new(VALUE.to_string()),
        hosts(&["api.github.com", "*.githubusercontent.com"]),
    )
    .unwrap();
}

/// Opening the damaged store fails with `Damaged` mentioning `what`, and leaves it as it was.
fn assert_fails_closed(d: &Dir, what: &str) {
    let before = d.bytes();
    let err = d.open().unwrap_err();
    assert!(
        matches!(err, VaultError::Damaged { .. }),
        "{what}: expected Damaged, got {err:?}"
    );
    let message = err.to_string();
    assert!(message.contains(what), "{message}");
    assert!(message.contains("vault.json"), "{message}");
    assert!(!message.contains(VALUE), "{message}");
    assert_eq!(d.bytes(), before, "the store was rewritten");
}

#[test]
fn round_trip_with_key_file() {
    let d = Dir::new();
    with_secret(&d);
    let key = d.dir.path().join("cairn/vault.key");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    assert_eq!(mode(&key), 0o600);

    let mut v = d.open().unwrap();
    assert_eq!(v.get("github").unwrap().expose(), VALUE);
    assert_eq!(
        v.list(),
        vec![(
            "github".to_string(),
            hosts(&["*.githubusercontent.com", "api.github.com"])
        )]
    );
    let values: Vec<_> = v.values().map(|(n, s)| (n, s.expose())).collect();
    assert_eq!(values, vec![("github", VALUE)]);

    assert!(v.remove("github").unwrap());
    assert!(!v.remove("github").unwrap());
    assert!(d.open().unwrap().list().is_empty());
}

#[test]
fn round_trip_with_passphrase() {
    let d = Dir::new();
    let mut v = Vault::open(d.store(), passphrase("correct horse")).unwrap();
    v.set(
        "openai",
        Secret::new(VALUE.into()),
        hosts(&["api.openai.com"]),
    )
    .unwrap();
    let stored = d.json();
    assert_eq!(stored["kdf"]["algorithm"], "argon2id");
    assert_eq!(stored["kdf"]["salt"].as_str().unwrap().len(), 32);
    assert!(!d.dir.path().join("cairn/vault.key").exists());

    let v = Vault::open(d.store(), passphrase("correct horse")).unwrap();
    assert_eq!(v.get("openai").unwrap().expose(), VALUE);
}

#[test]
fn wrong_passphrase_fails_closed() {
    let d = Dir::new();
    let mut v = Vault::open(d.store(), passphrase("correct horse")).unwrap();
    v.set(
        "openai",
        Secret::new(VALUE.into()),
        hosts(&["api.openai.com"]),
    )
    .unwrap();
    let before = d.bytes();
    let err = Vault::open(d.store(), passphrase("wrong horse")).unwrap_err();
    assert!(matches!(err, VaultError::WrongKey { .. }), "{err:?}");
    assert!(err.to_string().contains("wrong passphrase"), "{err}");
    assert!(!err.to_string().contains("wrong horse"), "{err}");
    assert_eq!(d.bytes(), before);

    // The other kind of key is named, not reported as damage.
    let err = d.open().unwrap_err();
    assert!(
        matches!(err, VaultError::KeySourceMismatch { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("CAIRN_VAULT_PASSPHRASE"), "{err}");
    assert_eq!(d.bytes(), before);
}

#[test]
fn wrong_key_file_fails_closed() {
    let d = Dir::new();
    with_secret(&d);
    let before = d.bytes();
    let key = d.dir.path().join("cairn/vault.key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    let err = d.open().unwrap_err();
    assert!(matches!(err, VaultError::WrongKey { .. }), "{err:?}");
    assert_eq!(d.bytes(), before);

    std::fs::remove_file(&key).unwrap();
    let err = d.open().unwrap_err();
    assert!(matches!(err, VaultError::KeyFileMissing { .. }), "{err:?}");
    assert!(!key.exists(), "no new key was made for an existing store");
    assert_eq!(d.bytes(), before);
}

#[test]
fn flipped_ciphertext_byte_fails_closed() {
    let d = Dir::new();
    with_secret(&d);
    let mut json = d.json();
    let ct = json["secrets"][0]["ciphertext"]
        .as_str()
        .unwrap()
        .to_string();
    let flipped = if ct.starts_with('0') { "1" } else { "0" };
    json["secrets"][0]["ciphertext"] = Value::String(format!("{flipped}{}", &ct[1..]));
    d.write_json(&json);
    assert_fails_closed(&d, "secrets[0]: secret \"github\" fails authentication");
}

#[test]
fn edited_hosts_fail_closed() {
    let d = Dir::new();
    with_secret(&d);
    let mut json = d.json();
    json["secrets"][0]["hosts"]
        .as_array_mut()
        .unwrap()
        .push(Value::String("evil.example.com".into()));
    d.write_json(&json);
    assert_fails_closed(&d, "fails authentication");
}

#[test]
fn renamed_secret_fails_closed() {
    let d = Dir::new();
    with_secret(&d);
    let mut json = d.json();
    json["secrets"][0]["name"] = Value::String("other".into());
    d.write_json(&json);
    assert_fails_closed(&d, "secret \"other\" fails authentication");
}

#[test]
fn truncated_and_garbled_files_fail_closed() {
    let d = Dir::new();
    with_secret(&d);
    let whole = d.bytes();
    std::fs::write(d.store(), &whole[..whole.len() / 2]).unwrap();
    assert_fails_closed(&d, "line");
    std::fs::write(d.store(), b"not json").unwrap();
    assert_fails_closed(&d, "not a vault file");
    std::fs::write(d.store(), b"").unwrap();
    assert_fails_closed(&d, "not a vault file");

    let mut json: Value = serde_json::from_slice(&whole).unwrap();
    json["secrets"][0]["nonce"] = Value::String("abcd".into());
    d.write_json(&json);
    assert_fails_closed(&d, "nonce is not 24 bytes");

    let mut json: Value = serde_json::from_slice(&whole).unwrap();
    json["extra"] = Value::Bool(true);
    d.write_json(&json);
    assert_fails_closed(&d, "unknown field `extra`");

    let mut json: Value = serde_json::from_slice(&whole).unwrap();
    json["version"] = Value::from(2);
    d.write_json(&json);
    let err = d.open().unwrap_err();
    assert!(
        matches!(err, VaultError::UnsupportedVersion { .. }),
        "{err:?}"
    );
}

#[test]
fn duplicate_names_fail_closed() {
    let d = Dir::new();
    with_secret(&d);
    let mut json = d.json();
    let first = json["secrets"][0].clone();
    json["secrets"].as_array_mut().unwrap().push(first);
    d.write_json(&json);
    assert_fails_closed(&d, "appears twice");
}

#[test]
fn group_readable_key_file_is_refused() {
    let d = Dir::new();
    with_secret(&d);
    let key = d.dir.path().join("cairn/vault.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = d.open().unwrap_err();
    assert!(matches!(err, VaultError::KeyFileMode { .. }), "{err:?}");
    assert!(err.to_string().contains("chmod 600"), "{err}");

    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(d.open().is_ok());
}

#[test]
fn store_is_private_and_holds_no_plaintext() {
    let d = Dir::new();
    with_secret(&d);
    assert_eq!(mode(&d.store()), 0o600);
    let bytes = d.bytes();
    assert!(!contains(&bytes, VALUE));
    assert!(!contains(&bytes, &VALUE[..12]));
    assert!(contains(&bytes, "api.github.com"));

    // Every write leaves only the store and the key; no temporary files.
    let mut v = d.open().unwrap();
    for i in 0..5 {
        v.set(
            &format!("k{i}"),
            Secret::new(format!("{VALUE}{i}")),
            hosts(&["example.com"]),
        )
        .unwrap();
    }
    v.remove("k0").unwrap();
    let mut names: Vec<String> = std::fs::read_dir(d.dir.path().join("cairn"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["vault.json", "vault.key"]);
    assert_eq!(mode(&d.store()), 0o600);
    assert!(!contains(&d.bytes(), VALUE));
}

#[test]
fn opening_an_absent_store_creates_nothing() {
    let d = Dir::new();
    let v = d.open().unwrap();
    assert!(v.list().is_empty());
    assert!(!d.dir.path().join("cairn").exists());
}

#[test]
fn host_binding_is_enforced() {
    let d = Dir::new();
    with_secret(&d);
    let v = d.open().unwrap();
    assert_eq!(
        v.secret_for_host("github", "api.github.com")
            .unwrap()
            .expose(),
        VALUE
    );
    assert!(
        v.secret_for_host("github", "raw.githubusercontent.com")
            .is_ok()
    );
    let err = v.secret_for_host("github", "evil.com").unwrap_err();
    match &err {
        VaultError::NotBound { name, host, bound } => {
            assert_eq!(name, "github");
            assert_eq!(host, "evil.com");
            assert_eq!(bound.len(), 2);
        }
        other => panic!("expected NotBound, got {other:?}"),
    }
    assert!(err.to_string().contains("api.github.com"), "{err}");
    assert!(!err.to_string().contains(VALUE));
    assert!(matches!(
        v.secret_for_host("nope", "api.github.com"),
        Err(VaultError::NotFound { .. })
    ));
}

#[test]
fn set_validates_names_and_hosts() {
    let d = Dir::new();
    let mut v = d.open().unwrap();
    let s = || Secret::new(VALUE.into());
    assert!(matches!(
        v.set("bad name", s(), hosts(&["a.com"])),
        Err(VaultError::InvalidName { .. })
    ));
    assert!(matches!(
        v.set("ok", s(), hosts(&["https://a.com"])),
        Err(VaultError::InvalidHost { .. })
    ));
    assert!(matches!(
        v.set("ok", s(), hosts(&["*.com"])),
        Err(VaultError::InvalidHost { .. })
    ));
    assert!(matches!(
        v.set("ok", s(), vec![]),
        Err(VaultError::NoHosts { .. })
    ));
    assert!(!d.store().exists(), "nothing was written");
}

#[test]
fn secrets_never_print() {
    let s = Secret::new(VALUE.into());
    assert_eq!(format!("{s:?}"), "[REDACTED]");
    assert_eq!(format!("{s}"), "[REDACTED]");
    let d = Dir::new();
    with_secret(&d);
    let v = d.open().unwrap();
    let debug = format!("{v:?} {:?}", v.get("github"));
    assert!(!debug.contains(VALUE), "{debug}");
    let source = format!("{:?}", passphrase("hunter2"));
    assert!(!source.contains("hunter2"), "{source}");
}

#[test]
fn key_source_from_env() {
    let store = Path::new("/x/cairn/vault.json");
    match KeySource::from_env(store, |_| None) {
        KeySource::Auto { key_file, .. } => assert_eq!(key_file, Path::new("/x/cairn/vault.key")),
        other => panic!("{other:?}"),
    }
    let pass = KeySource::from_env(store, |k| {
        (k == "CAIRN_VAULT_PASSPHRASE").then(|| "pw".to_string())
    });
    assert!(matches!(pass, KeySource::Passphrase(_)));
    assert_eq!(
        cairn_vault::default_store_path(|k| (k == "HOME").then(|| "/h".to_string())),
        Some(PathBuf::from("/h/.local/share/cairn/vault.json"))
    );
    assert_eq!(
        cairn_vault::default_store_path(|k| (k == "XDG_DATA_HOME").then(|| "/d".to_string())),
        Some(PathBuf::from("/d/cairn/vault.json"))
    );
}
