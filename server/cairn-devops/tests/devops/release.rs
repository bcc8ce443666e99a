//! The release chores on real repositories, real certificates (made by `openssl`) and real
//! servers on loopback: the next version and a changelog from commits the test makes, a
//! certificate's details from a file and from a TLS server, and health checks through the guard.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::tools::protected_of;
use cairn_devops::{DevOps, devops_tools};
use cairn_toolkit::ToolSet;
use cairn_web::{GuardConfig, WebGuard};
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use git2::{Repository, Signature};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn tools(dir: &Path, allow_loopback: bool) -> ToolSet<DevOps> {
    let ws = Workspace::new(vec![dir.to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let guard = WebGuard::new(GuardConfig {
        allow_loopback,
        ..GuardConfig::default()
    })
    .unwrap();
    let sandbox = cairn_sandbox::Sandbox::new(cairn_config::SandboxConfig::default());
    devops_tools(DevOps::new(
        sandbox,
        Some(Arc::new(guard)),
        Some(Arc::new(ws)),
        ExactApprovals::new(),
    ))
}

/// What the model reads, and whether it is an error.
async fn call(t: &ToolSet<DevOps>, name: &str, args: Value) -> (bool, String) {
    let seen = cairn_test_support::tools::call(t, name, args).await;
    (seen.is_error, seen.text)
}

fn commit(repo: &Repository, message: &str) {
    let sig = Signature::new("Ada", "ada@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let dir = repo.workdir().unwrap().to_path_buf();
    let n = std::fs::read_dir(&dir).unwrap().count();
    std::fs::write(dir.join(format!("f{n}.txt")), message).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap();
}

fn tag(repo: &Repository, name: &str) {
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    repo.tag_lightweight(name, head.as_object(), false).unwrap();
}

#[tokio::test]
async fn next_version_follows_the_commits_since_the_last_release() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    let t = tools(dir.path(), false);

    commit(&repo, "feat: first");
    let (err, out) = call(&t, "next_version", json!({})).await;
    assert!(!err, "{out}");
    assert!(out.contains("no version tag `vX.Y.Z`"), "{out}");
    assert!(out.contains("next: 0.1.0"), "{out}");

    tag(&repo, "v1.2.3");
    let (_, out) = call(&t, "next_version", json!({})).await;
    assert!(out.contains("nothing to release"), "{out}");

    commit(&repo, "docs: readme");
    let (_, out) = call(&t, "next_version", json!({})).await;
    assert!(out.contains("no release is needed"), "{out}");
    assert!(out.contains("1 docs"), "{out}");

    commit(&repo, "fix(parser): off by one");
    let (_, out) = call(&t, "next_version", json!({})).await;
    assert!(
        out.contains("next: 1.2.4 (fixes only); tag it v1.2.4"),
        "{out}"
    );

    commit(&repo, "feat(api): paging");
    let (_, out) = call(&t, "next_version", json!({})).await;
    assert!(out.contains("next: 1.3.0 (a feature)"), "{out}");
    assert!(out.contains("feat(api): paging"), "{out}");
    assert!(
        !out.contains("off by one"),
        "only deciding commits are listed: {out}"
    );

    commit(
        &repo,
        "refactor: rename run\n\nBREAKING CHANGE: `run` is now `start`",
    );
    let (_, out) = call(&t, "next_version", json!({})).await;
    assert!(out.contains("next: 2.0.0 (a breaking change)"), "{out}");
    assert!(
        out.contains("BREAKING CHANGE: `run` is now `start`"),
        "{out}"
    );

    tag(&repo, "v2.0.0-rc.1");
    let (_, out) = call(&t, "next_version", json!({"pre_release": "rc"})).await;
    assert!(out.contains("next: 2.0.0-rc.2"), "{out}");

    let (_, out) = call(&t, "next_version", json!({"tag_prefix": "release-"})).await;
    assert!(out.contains("no version tag `release-X.Y.Z`"), "{out}");

    let (err, out) = call(&t, "next_version", json!({"pre_release": "r c"})).await;
    assert!(err && out.contains("not a pre-release label"), "{out}");
}

#[tokio::test]
async fn a_tag_on_another_line_of_history_does_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    commit(&repo, "chore: init");
    tag(&repo, "v1.0.0");
    let base = repo.head().unwrap().peel_to_commit().unwrap();
    commit(&repo, "feat: on main");
    // v9.0.0 on a side branch from the base: not an ancestor of HEAD.
    let sig = Signature::now("Ada", "ada@example.com").unwrap();
    let side = repo
        .commit(
            None,
            &sig,
            &sig,
            "feat: side",
            &base.tree().unwrap(),
            &[&base],
        )
        .unwrap();
    repo.tag_lightweight("v9.0.0", &repo.find_object(side, None).unwrap(), false)
        .unwrap();
    let t = tools(dir.path(), false);
    let (_, out) = call(&t, "next_version", json!({})).await;
    assert!(out.contains("current: 1.0.0 (tag v1.0.0)"), "{out}");
    assert!(out.contains("next: 1.1.0"), "{out}");
}

#[tokio::test]
async fn zero_major_versions_bump_one_place_lower() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    commit(&repo, "chore: init");
    tag(&repo, "0.4.1");
    commit(&repo, "feat!: new config format");
    let t = tools(dir.path(), false);
    let (_, out) = call(&t, "next_version", json!({"tag_prefix": ""})).await;
    assert!(
        out.contains("next: 0.5.0 (a breaking change (0.x: minor)); tag it 0.5.0"),
        "{out}"
    );
}

#[tokio::test]
async fn changelog_groups_commits_since_the_last_release() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    commit(&repo, "feat: before the release");
    tag(&repo, "v1.0.0");
    commit(&repo, "feat(api): paging");
    commit(&repo, "fix: crash on empty input");
    commit(&repo, "perf(db): batch inserts");
    commit(&repo, "docs: typo");
    commit(&repo, "Update things");
    commit(
        &repo,
        "feat!: drop the v1 endpoint\n\nBREAKING CHANGE: /v1 is gone, use /v2",
    );
    let t = tools(dir.path(), false);

    let (err, out) = call(&t, "changelog", json!({"title": "v2.0.0"})).await;
    assert!(!err, "{out}");
    assert!(out.starts_with("## v2.0.0\n"), "{out}");
    let breaking = out.find("### Breaking changes").unwrap();
    let features = out.find("### Features").unwrap();
    let fixes = out.find("### Fixes").unwrap();
    let perf = out.find("### Performance").unwrap();
    assert!(
        breaking < features && features < fixes && fixes < perf,
        "{out}"
    );
    assert!(out.contains("- /v1 is gone, use /v2 ("), "{out}");
    assert!(out.contains("- **api:** paging ("), "{out}");
    assert!(out.contains("- crash on empty input ("), "{out}");
    assert!(out.contains("- **db:** batch inserts ("), "{out}");
    assert!(!out.contains("before the release"), "{out}");
    assert!(!out.contains("Update things"), "{out}");
    assert!(out.contains("6 commits from v1.0.0 to HEAD"), "{out}");
    assert!(out.contains("2 not listed (1 docs, 1 other)"), "{out}");

    let (_, out) = call(&t, "changelog", json!({"include_other": true})).await;
    assert!(out.contains("### Other changes"), "{out}");
    assert!(out.contains("- docs: typo ("), "{out}");
    assert!(out.contains("- Update things ("), "{out}");

    // Notes for a tagged release go from the release before it.
    tag(&repo, "v2.0.0");
    let (_, out) = call(&t, "changelog", json!({})).await;
    assert!(out.contains("from v1.0.0 to HEAD"), "{out}");

    let (err, out) = call(&t, "changelog", json!({"since": "v7"})).await;
    assert!(err && out.contains("no commit named `v7`"), "{out}");
    let (err, out) = call(&t, "changelog", json!({"since": "--output=x"})).await;
    assert!(err && out.contains("starts with `-`"), "{out}");
}

#[tokio::test]
async fn release_tools_refuse_a_repository_outside_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    let other = Repository::init(outside.path()).unwrap();
    commit(&other, "feat: secret project codename zebra");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join(".git"),
        format!("gitdir: {}\n", outside.path().join(".git").display()),
    )
    .unwrap();
    let t = tools(ws.path(), false);
    for tool in ["next_version", "changelog"] {
        let (err, out) = call(&t, tool, json!({})).await;
        assert!(err, "{tool}: {out}");
        assert!(!out.contains("zebra"), "{tool}: {out}");
    }
}

/// A self-signed certificate for `example.test` valid for `days`, with its key, made by
/// openssl in `dir`: (cert path, key path).
fn openssl_cert(dir: &Path, name: &str, days: u32) -> (std::path::PathBuf, std::path::PathBuf) {
    let cert = dir.join(format!("{name}.crt"));
    let key = dir.join(format!("{name}.key"));
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days",
        ])
        .arg(days.to_string())
        .args(["-subj", "/CN=example.test/O=Cairn Test"])
        .args([
            "-addext",
            "subjectAltName=DNS:example.test,DNS:localhost,IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl must be installed (.ci/run installs it)");
    assert!(status.success());
    (cert, key)
}

fn fingerprint(cert: &Path) -> String {
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(cert)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim().rsplit('=').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_certificate_file_is_described_with_its_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = openssl_cert(dir.path(), "site", 10);
    let t = tools(dir.path(), false);
    let (err, out) = call(&t, "tls_certificate", json!({"path": "site.crt"})).await;
    assert!(!err, "{out}");
    assert!(out.contains("site.crt: 1 certificate(s)"), "{out}");
    assert!(out.contains("CN=example.test"), "{out}");
    assert!(out.contains("self-issued"), "{out}");
    assert!(
        out.contains("DNS:example.test, DNS:localhost, IP:127.0.0.1"),
        "{out}"
    );
    // Ten days from the second openssl made it: 10, or 9 once that second has passed.
    let soon = |n: u32| format!("EXPIRES SOON: {n} days left");
    assert!(out.contains(&soon(10)) || out.contains(&soon(9)), "{out}");
    assert!(out.contains("RSA 2048 bits"), "{out}");
    // The fingerprint openssl computes, independently.
    assert!(out.contains(&fingerprint(&cert)), "{out}");

    let (_, out) = call(
        &t,
        "tls_certificate",
        json!({"path": "site.crt", "warn_days": 5}),
    )
    .await;
    assert!(
        out.contains("(valid, 10 days left)") || out.contains("(valid, 9 days left)"),
        "{out}"
    );

    // A chain: two certificates in one PEM file, both described.
    let (other, _) = openssl_cert(dir.path(), "other", 400);
    let chain = [
        std::fs::read_to_string(&cert).unwrap(),
        std::fs::read_to_string(&other).unwrap(),
    ]
    .concat();
    std::fs::write(dir.path().join("chain.crt"), chain).unwrap();
    let (_, out) = call(&t, "tls_certificate", json!({"path": "chain.crt"})).await;
    assert!(
        out.contains("2 certificate(s)") && out.contains("[2] subject"),
        "{out}"
    );

    // A DER file.
    let der = dir.path().join("site.der");
    let made = Command::new("openssl")
        .args(["x509", "-outform", "der", "-in"])
        .arg(&cert)
        .arg("-out")
        .arg(&der)
        .status()
        .unwrap();
    assert!(made.success());
    let (err, out) = call(&t, "tls_certificate", json!({"path": "site.der"})).await;
    assert!(!err && out.contains("CN=example.test"), "{out}");

    // A key: said to be a key, and nothing of it shown.
    let key_text = std::fs::read_to_string(&key).unwrap();
    std::fs::write(dir.path().join("only-key.txt"), &key_text).unwrap();
    let (err, out) = call(&t, "tls_certificate", json!({"path": "only-key.txt"})).await;
    assert!(
        err && out.contains("holds a private key and no certificate"),
        "{out}"
    );
    let body: String = key_text.lines().nth(1).unwrap().chars().take(20).collect();
    assert!(!out.contains(&body), "{out}");

    // Not a certificate; neither or both of path and host.
    std::fs::write(dir.path().join("junk.crt"), "hello").unwrap();
    let (err, out) = call(&t, "tls_certificate", json!({"path": "junk.crt"})).await;
    assert!(
        err && out.contains("neither PEM nor a DER certificate"),
        "{out}"
    );
    let (err, out) = call(&t, "tls_certificate", json!({})).await;
    assert!(err && out.contains("exactly one of `path`"), "{out}");
}

#[tokio::test]
async fn a_pem_file_is_protected_and_outside_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _) = openssl_cert(dir.path(), "site", 10);
    std::fs::copy(&cert, dir.path().join("server.pem")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(&cert, outside.path().join("x.crt")).unwrap();
    let t = tools(dir.path(), false);
    // `.pem` files are secrets by default: the agent is asked about this exact path.
    let seen =
        cairn_test_support::tools::call(&t, "tls_certificate", json!({"path": "server.pem"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert_eq!(protected_of(&seen.result).len(), 1, "{}", seen.text);
    assert!(!seen.text.contains("example.test"), "{}", seen.text);
    let outside_path = outside.path().join("x.crt");
    let (err, out) = call(
        &t,
        "tls_certificate",
        json!({"path": outside_path.to_str().unwrap()}),
    )
    .await;
    assert!(err && !out.contains("example.test"), "{out}");
}

/// `openssl s_server` with `cert`/`key` on a free loopback port; killed on drop.
struct TlsServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn tls_server(cert: &Path, key: &Path) -> TlsServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-cert")
        .arg(cert)
        .arg("-key")
        .arg(key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    TlsServer { child, port }
}

#[tokio::test]
async fn a_host_s_certificate_is_read_through_the_guard_even_when_it_does_not_verify() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = openssl_cert(dir.path(), "site", 30);
    let server = tls_server(&cert, &key).await;

    let t = tools(dir.path(), true);
    let (err, out) = call(
        &t,
        "tls_certificate",
        json!({"host": "localhost", "port": server.port}),
    )
    .await;
    assert!(!err, "{out}");
    let at = format!("localhost:{} (127.0.0.1:{})", server.port, server.port);
    assert!(out.contains(&at), "{out}");
    assert!(
        out.contains("chain: DOES NOT VERIFY for localhost"),
        "{out}"
    );
    assert!(out.contains("CN=example.test"), "{out}");
    assert!(out.contains(&fingerprint(&cert)), "{out}");

    // Without loopback allowed (the default), the guard refuses before connecting.
    let t = tools(dir.path(), false);
    let (err, out) = call(
        &t,
        "tls_certificate",
        json!({"host": "127.0.0.1", "port": server.port}),
    )
    .await;
    assert!(err, "{out}");
    assert!(out.contains("loopback"), "{out}");
    assert!(!out.contains("example.test"), "{out}");
}

/// An HTTP server on loopback answering every request with `status` and `body` after `delay`.
async fn http_server(status: u16, body: &'static str, delay: Duration) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = socket.read(&mut buf).await;
                tokio::time::sleep(delay).await;
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn health_checks_report_what_the_endpoint_answered() {
    let dir = tempfile::tempdir().unwrap();
    let t = tools(dir.path(), true);
    let up = http_server(200, r#"{"status":"ok"}"#, Duration::ZERO).await;
    let url = format!("http://127.0.0.1:{up}/health");

    let (err, out) = call(
        &t,
        "http_health_check",
        json!({"url": url, "expect_text": "\"status\":\"ok\""}),
    )
    .await;
    assert!(!err, "{out}");
    assert!(
        out.starts_with(&format!("HEALTHY: {url} answered 200")),
        "{out}"
    );
    assert!(out.contains("body: 15 bytes, application/json"), "{out}");

    let (_, out) = call(
        &t,
        "http_health_check",
        json!({"url": url, "expect_text": "ready"}),
    )
    .await;
    assert!(out.starts_with("UNHEALTHY"), "{out}");
    assert!(out.contains("does not contain \"ready\""), "{out}");

    let (_, out) = call(
        &t,
        "http_health_check",
        json!({"url": url, "expect_status": [204]}),
    )
    .await;
    assert!(out.contains("status 200, expected one of [204]"), "{out}");

    let down = http_server(503, "maintenance", Duration::ZERO).await;
    let down = format!("http://127.0.0.1:{down}/");
    let (_, out) = call(&t, "http_health_check", json!({"url": down})).await;
    assert!(
        out.starts_with("UNHEALTHY") && out.contains("status 503"),
        "{out}"
    );

    let slow = http_server(200, "ok", Duration::from_millis(300)).await;
    let slow = format!("http://127.0.0.1:{slow}/");
    let (_, out) = call(&t, "http_health_check", json!({"url": slow, "max_ms": 100})).await;
    assert!(
        out.starts_with("DEGRADED") && out.contains("slower than 100 ms"),
        "{out}"
    );

    // Nothing listens: unhealthy, said plainly.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{closed}/");
    let (err, out) = call(&t, "http_health_check", json!({"url": closed})).await;
    assert!(!err && out.starts_with("UNHEALTHY"), "{out}");

    // The guard's refusal is not a health verdict.
    let t = tools(dir.path(), false);
    let (err, out) = call(&t, "http_health_check", json!({"url": url})).await;
    assert!(
        err && out.starts_with("not checked:") && out.contains("loopback"),
        "{out}"
    );
    let metadata = "http://169.254.169.254/latest/meta-data";
    let (err, out) = call(&t, "http_health_check", json!({"url": metadata})).await;
    assert!(err && out.starts_with("not checked:"), "{out}");
}
