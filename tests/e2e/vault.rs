//! `cairn vault set|list|rm` on the command line: values come from stdin only, never show up
//! in output, and the store on disk is private and encrypted; the key is in the OS keyring
//! when a Secret Service answers (`CAIRN_KEYRING_TESTS=1`, which `.ci/run` provides), else in
//! a key file.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use cairn_test_support::Format;

use crate::support::{Sandbox, text};

const VALUE: &str = "ghp_e2eSECRETvalue0123456789abcdef";

fn sandbox() -> Sandbox {
    Sandbox::new(Format::OpenAi, vec![])
}

fn store(sb: &Sandbox) -> PathBuf {
    sb.dir.path().join("home/data/cairn/vault.json")
}

/// Runs `cmd` with `input` on stdin; asserts the value shows up in neither argv nor output.
fn run(mut cmd: Command, input: &str) -> Output {
    let argv: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert!(!argv.iter().any(|a| a.contains(VALUE)), "{argv:?}");
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that refuses its arguments exits before reading stdin; the
    // pipe closing under the write is then expected, not a failure.
    match child.stdin.take().unwrap().write_all(input.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    let out = child.wait_with_output().unwrap();
    for stream in [&out.stdout, &out.stderr] {
        assert!(!text(stream).contains(VALUE), "{}", text(stream));
    }
    out
}

fn vault(sb: &Sandbox, args: &[&str], input: &str) -> Output {
    let mut cmd = sb.command();
    cmd.arg("vault").args(args);
    run(cmd, input)
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn set_list_rm_with_key_file() {
    let sb = sandbox();
    let out = vault(
        &sb,
        &[
            "set",
            "github",
            "--host",
            "api.github.com",
            "--host",
            "*.GitHubUserContent.com",
        ],
        &format!("{VALUE}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("stored github"),
        "{}",
        text(&out.stdout)
    );
    let path = store(&sb);
    assert!(
        text(&out.stderr).contains(&format!(
            "no OS keyring (Secret Service) answered; the vault key is in {}",
            path.with_file_name("vault.key").display()
        )),
        "{}",
        text(&out.stderr)
    );

    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&path.with_file_name("vault.key")), 0o600);
    let bytes = std::fs::read(&path).unwrap();
    assert!(!text(&bytes).contains(VALUE));
    assert!(!text(&bytes).contains(&VALUE[..10]));

    let out = vault(&sb, &["list"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "github\t*.githubusercontent.com, api.github.com\n"
    );
    assert!(
        text(&out.stderr).contains("vault key: the key file"),
        "{}",
        text(&out.stderr)
    );

    let out = vault(&sb, &["rm", "github"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = vault(&sb, &["list"], "");
    assert!(
        text(&out.stdout).starts_with("no secrets"),
        "{}",
        text(&out.stdout)
    );
    let out = vault(&sb, &["rm", "github"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no secret named github"));
}

/// The value is never taken from the command line, and bad names or hosts store nothing.
#[test]
fn set_refuses_values_in_argv_and_bad_input() {
    let sb = sandbox();
    let mut cmd = sb.command();
    cmd.args([
        "vault",
        "set",
        "github",
        "--host",
        "api.github.com",
        "hunter2",
    ]);
    let out = run(cmd, "x\n");
    assert!(!out.status.success());
    assert!(!store(&sb).exists());

    for (args, want) in [
        (
            vec!["set", "bad name", "--host", "a.com"],
            "invalid secret name",
        ),
        (vec!["set", "ok", "--host", "https://a.com"], "invalid host"),
        (vec!["set", "ok"], "--host"),
    ] {
        let out = vault(&sb, &args, &format!("{VALUE}\n"));
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out.stderr).contains(want), "{}", text(&out.stderr));
    }
    let out = vault(&sb, &["set", "ok", "--host", "a.com"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("empty"), "{}", text(&out.stderr));
    assert!(!store(&sb).exists());
}

#[test]
fn passphrase_from_the_environment() {
    let sb = sandbox();
    let with_pass = |pass: Option<&str>, args: &[&str], input: &str| {
        let mut cmd = sb.command();
        if let Some(p) = pass {
            cmd.env("CAIRN_VAULT_PASSPHRASE", p);
        }
        cmd.arg("vault").args(args);
        run(cmd, input)
    };
    let out = with_pass(
        Some("correct horse"),
        &["set", "openai", "--host", "api.openai.com"],
        VALUE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!store(&sb).with_file_name("vault.key").exists());
    let before = std::fs::read(store(&sb)).unwrap();
    assert!(!text(&before).contains(VALUE));

    let out = with_pass(Some("correct horse"), &["list"], "");
    assert_eq!(text(&out.stdout), "openai\tapi.openai.com\n");

    let out = with_pass(Some("wrong horse"), &["list"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("wrong passphrase"),
        "{}",
        text(&out.stderr)
    );
    let out = with_pass(None, &["list"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("CAIRN_VAULT_PASSPHRASE"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read(store(&sb)).unwrap(),
        before,
        "failed opens leave the store"
    );
}

/// With a Secret Service on the session bus, a new vault's key goes into it: no key file, a
/// second process reads the secrets with it, and without the bus the store fails closed.
#[test]
fn key_in_the_os_keyring() {
    if !cairn_test_support::gate(
        "CAIRN_KEYRING_TESTS",
        "and DBUS_SESSION_BUS_ADDRESS to a session bus with an unlocked Secret Service \
         (.ci/run starts gnome-keyring)",
    ) {
        return;
    }
    let Ok(bus) = std::env::var("DBUS_SESSION_BUS_ADDRESS") else {
        panic!(
            "CAIRN_KEYRING_TESTS=1 needs DBUS_SESSION_BUS_ADDRESS, a session bus with a Secret Service"
        );
    };
    let sb = sandbox();
    let with_bus = |args: &[&str], input: &str| {
        let mut cmd = sb.command();
        cmd.env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .arg("vault")
            .args(args);
        run(cmd, input)
    };
    let out = with_bus(&["set", "github", "--host", "api.github.com"], VALUE);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("no OS keyring"),
        "{}",
        text(&out.stderr)
    );
    let path = store(&sb);
    let key_file = path.with_file_name("vault.key");
    assert!(!key_file.exists(), "the key is in the keyring, not a file");
    assert_eq!(mode(&path), 0o600);
    let before = std::fs::read(&path).unwrap();
    assert!(!text(&before).contains(VALUE));
    assert!(!text(&before).contains(&VALUE[..10]));
    let json: serde_json::Value = serde_json::from_slice(&before).unwrap();
    assert_eq!(json["key_source"], "keyring");

    let out = with_bus(&["list"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "github\tapi.github.com\n");
    assert!(
        text(&out.stderr).contains("vault key: the OS keyring"),
        "{}",
        text(&out.stderr)
    );

    // No keyring reachable: refused with what to do, and nothing made or changed.
    let out = vault(&sb, &["list"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("sealed with a key in the OS keyring"),
        "{}",
        text(&out.stderr)
    );
    assert!(!key_file.exists());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// On a terminal, `vault set` prompts and the value typed is not echoed: the terminal's output
/// holds the prompt but not the value, and the value stored is the one typed (a file holding
/// it reads back redacted under the secret's name).
#[test]
fn the_terminal_prompt_does_not_echo_the_value() {
    use std::io::Read;
    const TYPED: &str = "typed-on-a-tty-5c1e";
    let sb = sandbox();
    let cairn = env!("CARGO_BIN_EXE_cairn");
    // `script` gives the command a terminal; its stdin feeds that terminal.
    let inner = format!("{cairn} vault set tty_token --host example.com");
    let mut cmd = Command::new("script");
    cmd.args(["-qefc", &inner, "/dev/null"]);
    for (k, v) in sb.command().get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    // Type only once the prompt is up, when echo is already off (as a person would).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !text(&seen.lock().unwrap()).contains("(not shown): ") {
        assert!(
            std::time::Instant::now() < deadline,
            "no prompt: {}",
            text(&seen.lock().unwrap())
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(format!("{TYPED}\n").as_bytes())
        .unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let transcript = text(&seen.lock().unwrap());
    assert!(status.success(), "{transcript}");
    assert!(
        transcript.contains("value for tty_token (not shown): "),
        "{transcript}"
    );
    assert!(
        !transcript.contains(TYPED),
        "the value was echoed: {transcript}"
    );

    sb.write("notes.txt", &format!("token {TYPED}\n"));
    let ws = sb.ws();
    let out = sb.run(
        &[
            "tools",
            "call",
            "read_file",
            "--args",
            r#"{"path": "notes.txt"}"#,
            "-w",
            ws.to_str().unwrap(),
        ],
        &[],
    );
    let shown = text(&out.stdout);
    assert!(shown.contains("token [REDACTED:tty_token]"), "{shown}");
}
