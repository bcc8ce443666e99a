//! `cairn vault set|list|rm`: the user's side of the credential vault.
//!
//! A value comes from stdin only: a command line is visible to every process on the machine
//! (`/proc/*/cmdline`) and lands in shell history. The key is the passphrase in
//! `CAIRN_VAULT_PASSPHRASE` when it is set, else the OS keyring or the key file `vault.key`
//! next to the store, as `cairn-vault`'s `key.rs` chooses; `list` says which on stderr, so its
//! stdout stays one secret per line.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use cairn_vault::{KeyLocation, KeySource, Keyring as _, Secret, Vault};

use crate::compose::Env;

/// A secret longer than this is not a credential typed or piped by hand.
const MAX_VALUE_BYTES: u64 = 1024 * 1024;

pub(crate) fn open(env: &Env) -> anyhow::Result<Vault> {
    let get = |k: &str| env.get(k).map(str::to_string);
    let path = cairn_vault::default_store_path(get)
        .ok_or_else(|| anyhow::format_err!("no place for the vault: set XDG_DATA_HOME or HOME"))?;
    let key = KeySource::from_env(&path, get);
    Ok(Vault::open(path, key)?)
}

/// The value from stdin: one line after a prompt on a terminal (not echoed), else everything up
/// to EOF, less one trailing newline (what `echo` and most editors add).
fn read_value(name: &str) -> anyhow::Result<Secret> {
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let mut bytes = Vec::new();
    if terminal {
        let mut err = std::io::stderr();
        let _ = write!(err, "value for {name} (not shown): ");
        let _ = err.flush();
        bytes = read_line_unechoed(&stdin)
            .context("reading the value")?
            .into_bytes();
    } else {
        stdin
            .lock()
            .take(MAX_VALUE_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("reading the value from stdin")?;
        if bytes.len() as u64 > MAX_VALUE_BYTES {
            anyhow::bail!("the value on stdin is longer than {MAX_VALUE_BYTES} bytes");
        }
    }
    // Into a `Secret` at once (no copy), so the buffer is wiped when it is dropped.
    let mut value = String::from_utf8(bytes)
        .map_err(|_| anyhow::format_err!("the value on stdin is not UTF-8"))?;
    if value.ends_with('\n') {
        value.pop();
        if value.ends_with('\r') {
            value.pop();
        }
    }
    let value = Secret::new(value);
    if value.is_empty() {
        anyhow::bail!("the value on stdin is empty; nothing was stored");
    }
    Ok(value)
}

/// One line from the terminal with echo off (the newline is still echoed, so the cursor moves
/// on); the terminal's settings are put back even when reading fails.
fn read_line_unechoed(stdin: &std::io::Stdin) -> std::io::Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let original = tcgetattr(stdin)?;
    let mut quiet = original.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    tcsetattr(stdin, OptionalActions::Flush, &quiet)?;
    let mut line = String::new();
    let read = stdin.read_line(&mut line);
    let restored = tcsetattr(stdin, OptionalActions::Now, &original);
    read?;
    restored?;
    Ok(line)
}

/// `cairn vault set NAME --host H...`.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn set(env: &Env, name: &str, hosts: Vec<String>) -> anyhow::Result<ExitCode> {
    // Checked before the value is asked for, so a typo costs no typing.
    cairn_vault::validate_name(name)?;
    let hosts: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
    for host in &hosts {
        cairn_vault::validate_host(host)?;
    }
    let mut vault = open(env)?;
    let value = read_value(name)?;
    vault.set(name, value, hosts.clone())?;
    if let Some(notice) = vault.take_notice() {
        eprintln!("cairn: {notice}");
    }
    println!(
        "stored {name} for {} in {}",
        hosts.join(", "),
        vault.path().display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cairn vault list`: names and hosts, never values; where the key lives goes to stderr.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn list(env: &Env) -> anyhow::Result<ExitCode> {
    let vault = open(env)?;
    eprintln!("cairn: vault key: {}", vault.key_location());
    let secrets = vault.list();
    if secrets.is_empty() {
        println!("no secrets in {}", vault.path().display());
    }
    for (name, hosts) in secrets {
        println!("{name}\t{}", hosts.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// `cairn vault rm NAME`; exits 1 when there is no such secret.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn rm(env: &Env, name: &str) -> anyhow::Result<ExitCode> {
    let mut vault = open(env)?;
    if vault.remove(name)? {
        println!("removed {name}");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("cairn: no secret named {name}");
        Ok(ExitCode::FAILURE)
    }
}

/// `cairn doctor`'s vault line: `Some(good)` with the detail for a store, or `None` with a note
/// when there is none yet. It opens the store (so a key that is not where the store says is a
/// failure) and, with no store, asks the keyring whether it would take a new key.
pub(crate) fn doctor(env: &Env) -> (Option<bool>, String) {
    let get = |k: &str| env.get(k).map(str::to_string);
    let Some(path) = cairn_vault::default_store_path(get) else {
        return (
            None,
            "no place for a vault: set XDG_DATA_HOME or HOME".into(),
        );
    };
    if path.exists() {
        return match Vault::open(&path, KeySource::from_env(&path, get)) {
            Ok(vault) => (
                Some(true),
                format!(
                    "{} ({} secrets); key in {}",
                    path.display(),
                    vault.list().len(),
                    vault.key_location()
                ),
            ),
            Err(e) => (Some(false), e.to_string()),
        };
    }
    let next = match KeySource::from_env(&path, get) {
        KeySource::Passphrase(_) => KeyLocation::Passphrase.to_string(),
        _ => match cairn_vault::SecretServiceKeyring.get(
            &cairn_vault::keyring_user(&path),
            cairn_vault::KEYRING_PROBE_TIMEOUT,
        ) {
            Ok(_) => "the OS keyring (a Secret Service answers)".to_string(),
            Err(e) => format!(
                "{} ({e})",
                KeyLocation::KeyFile(path.with_file_name(cairn_vault::KEY_FILE_NAME))
            ),
        },
    };
    (
        None,
        format!(
            "none yet at {}; the first `cairn vault set` keeps its key in {next}",
            path.display()
        ),
    )
}
