//! Code tools on a remote engine: a second Docker engine on this machine that listens on a TCP
//! port on loopback with mutual TLS (`scripts/remote-engine`), so the workspace reaches its
//! containers as an archive and what a writable run changes comes back through the scope.
//!
//! Gated by `CAIRN_REMOTE_ENGINE_TESTS=1` with `CAIRN_REMOTE_ENGINE` (its address) and
//! `CAIRN_REMOTE_ENGINE_TLS` (the directory of the script's certificates), and by
//! `CAIRN_DOCKER_TESTS` for the local engine; `.ci/run` starts both engines and sets them all.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_config::{EngineConfig, SandboxConfig};
use cairn_sandbox::engine::{LABEL, OWNER_LABEL};
use cairn_sandbox::runtimes::runtime;
use cairn_sandbox::tools::{Code, code_tools};
use cairn_sandbox::{Ending, RunOptions, Sandbox, SandboxError};
use cairn_toolkit::ToolSet;
use cairn_workspace::Workspace;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The tests count containers on the shared engines: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_REMOTE_ENGINE_TESTS",
        "with CAIRN_REMOTE_ENGINE and CAIRN_REMOTE_ENGINE_TLS as scripts/remote-engine prints them to run this test",
    ) && cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a running Docker engine to run this test",
    )
}

fn image() -> String {
    std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".to_owned())
}

fn address() -> String {
    std::env::var("CAIRN_REMOTE_ENGINE").unwrap()
}

fn tls_dir() -> PathBuf {
    PathBuf::from(std::env::var("CAIRN_REMOTE_ENGINE_TLS").unwrap())
}

/// The remote engine at `address`, with the client certificate `cert` (`cert.pem`/`key.pem`,
/// or `wrong-cert.pem`/`wrong-key.pem`).
fn remote_at(address: &str, cert: &str, key: &str) -> EngineConfig {
    let tls = tls_dir();
    EngineConfig {
        name: Some("remote".to_owned()),
        engine: address.to_owned(),
        tls_ca: Some(tls.join("ca.pem")),
        tls_cert: Some(tls.join(cert)),
        tls_key: Some(tls.join(key)),
        ssh_key: None,
    }
}

fn remote() -> EngineConfig {
    remote_at(&address(), "cert.pem", "key.pem")
}

fn local() -> EngineConfig {
    EngineConfig {
        name: Some("local".to_owned()),
        engine: "unix:///var/run/docker.sock".to_owned(),
        tls_ca: None,
        tls_cert: None,
        tls_key: None,
        ssh_key: None,
    }
}

fn config(engines: Vec<EngineConfig>) -> SandboxConfig {
    let images: BTreeMap<String, String> = ["python", "bash"]
        .iter()
        .map(|r| ((*r).to_owned(), image()))
        .collect();
    SandboxConfig {
        engines,
        timeout_secs: 20,
        memory_mib: 256,
        tmpfs_mib: 16,
        pids_limit: 64,
        output_max_bytes: 64 * 1024,
        pool_size: 0,
        images,
        ..SandboxConfig::default()
    }
}

/// This process's containers on the engine of `slot`.
async fn ours(sb: &Sandbox, slot: usize) -> usize {
    let engine = sb.engine_at(slot).await.unwrap();
    engine.list(true).await.unwrap().len()
}

async fn call(tools: &ToolSet<Code>, name: &str, args: Value) -> cairn_test_support::tools::Seen {
    cairn_test_support::tools::call(tools, name, args).await
}

/// A workspace of `files` (owned by `nobody`, as the attacks tests make theirs), under access
/// rules that protect secrets and code that runs.
fn workspace(dir: &Path, files: &[(&str, &str)]) -> Arc<Workspace> {
    common::protected_workspace(dir, files, cairn_workspace::ExactApprovals::new())
}

fn root_of(ws: &Workspace) -> PathBuf {
    ws.resolve(".").unwrap().as_path().to_path_buf()
}

#[tokio::test]
async fn a_remote_run_sees_the_workspace_without_its_protected_files() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let secrets = [
        (".env", "SECRET-R1-dotenv"),
        ("node_modules/pkg/.npmrc", "SECRET-R1-npmrc"),
        ("deploy/id_ed25519", "SECRET-R1-key"),
        (".git/config", "SECRET-R1-git"),
    ];
    let mut files: Vec<(&str, &str)> = secrets.to_vec();
    files.extend([
        ("main.py", "R1-VISIBLE"),
        ("src/lib/util.py", "R1-VISIBLE"),
        ("node_modules/pkg/index.js", "R1-VISIBLE"),
    ]);
    let ws = workspace(dir.path(), &files);
    let sb = Sandbox::new(config(vec![remote()]));
    let tools = code_tools(sb.clone(), Some(ws.clone()));
    let seen = call(
        &tools,
        "run_bash",
        json!({"code": "find /workspace -type f | sort; find /workspace -type f | sort | xargs cat; echo; touch /workspace/x 2>&1; echo end"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(seen.text.matches("R1-VISIBLE").count(), 3, "{}", seen.text);
    assert!(
        seen.text.contains("/workspace/src/lib/util.py"),
        "{}",
        seen.text
    );
    for (path, secret) in secrets {
        assert!(
            !seen.text.contains(secret) && !seen.text.contains(&format!("/workspace/{path}")),
            "{path} reached the remote engine: {}",
            seen.text
        );
    }
    assert!(
        seen.text.contains("Permission denied") || seen.text.contains("Read-only"),
        "a read-only run cannot write its copy: {}",
        seen.text
    );
    assert!(seen.text.contains("end"), "{}", seen.text);
    assert_eq!(
        ours(&sb, 0).await,
        0,
        "nothing is left on the remote engine"
    );
}

#[tokio::test]
async fn a_writable_remote_run_brings_its_changes_back_through_the_scope() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(
        dir.path(),
        &[
            ("data.txt", "old\n"),
            ("gone.txt", "bye\n"),
            ("keep.txt", "same\n"),
            (".env", "SECRET-R2=1\n"),
        ],
    );
    let root = root_of(&ws);
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    let sb = Sandbox::new(config(vec![remote()]));
    let tools = code_tools(sb.clone(), Some(ws.clone()));
    let script = format!(
        "echo new > /workspace/data.txt; mkdir -p /workspace/sub && echo made > /workspace/sub/made.txt; \
         rm /workspace/gone.txt; \
         echo STOLEN > /workspace/.env; echo key > /workspace/id_rsa; \
         ln -s {} /workspace/escape; echo done",
        outside.display()
    );
    let seen = call(
        &tools,
        "run_bash",
        json!({"code": script, "workspace_write": true}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        std::fs::read_to_string(root.join("data.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sub/made.txt")).unwrap(),
        "made\n"
    );
    assert!(!root.join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("keep.txt")).unwrap(),
        "same\n"
    );
    // The protected file it could not see and one named like a protected one: refused, and
    // the symlink out of the workspace is not made.
    assert_eq!(
        std::fs::read_to_string(root.join(".env")).unwrap(),
        "SECRET-R2=1\n"
    );
    assert!(!root.join("id_rsa").exists());
    assert!(std::fs::symlink_metadata(root.join("escape")).is_err());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    for line in [
        "Changed in the workspace: data.txt",
        "Created in the workspace: sub/made.txt",
        "Deleted from the workspace: gone.txt",
        "Not applied: .env:",
        "Not applied: id_rsa:",
        "Not applied: escape: the run made a symlink",
    ] {
        assert!(seen.text.contains(line), "`{line}` missing: {}", seen.text);
    }
    // Shown to the editor as edits, like the file tools' own.
    let edits = cairn_agent::tools::edits_of(&seen.result);
    let uri = |p: &str| format!("file://{}", root.join(p).display());
    assert!(
        edits.iter().any(|e| e.uri == uri("data.txt") && e.applied),
        "{edits:?}"
    );
    assert!(
        edits
            .iter()
            .any(|e| e.uri == uri(".env") && !e.applied && e.reason.is_some()),
        "{edits:?}"
    );
    assert_eq!(ours(&sb, 0).await, 0);
}

#[tokio::test]
async fn what_is_too_big_to_send_or_bring_back_is_refused_whole() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), &[("a.txt", "a\n")]);
    let root = root_of(&ws);
    // A 5 GB workspace (a sparse file: the size counts, not the disk it takes).
    let big = std::fs::File::create(root.join("disk.img")).unwrap();
    big.set_len(5 * 1024 * 1024 * 1024).unwrap();
    drop(big);
    let sb = Sandbox::new(config(vec![remote()]));
    let tools = code_tools(sb.clone(), Some(ws.clone()));
    let seen = call(&tools, "run_bash", json!({"code": "echo R3-RAN"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(!seen.text.contains("R3-RAN"), "{}", seen.text);
    assert!(
        seen.text.contains(&format!(
            "refused to send the workspace `{}` to the sandbox",
            root.display()
        )) && seen.text.contains("sandbox.workspace_max_mib"),
        "{}",
        seen.text
    );
    assert_eq!(ours(&sb, 0).await, 0, "no container was made");
    std::fs::remove_file(root.join("disk.img")).unwrap();

    // A writable run that makes 100,000 files: nothing is applied, and the result says why.
    let seen = call(
        &tools,
        "run_python",
        json!({
            "code": "import os\nos.makedirs('/workspace/many')\nfor i in range(100000):\n    open(f'/workspace/many/{i}', 'w').close()\nopen('/workspace/a.txt', 'w').write('changed\\n')\nprint('made')",
            "workspace_write": true,
        }),
    )
    .await;
    assert!(seen.text.contains("made"), "{}", seen.text);
    assert!(
        seen.text.contains("the run's changes were not applied")
            && seen.text.contains("sandbox.return_max_files"),
        "{}",
        seen.text
    );
    assert!(!root.join("many").exists());
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    assert_eq!(ours(&sb, 0).await, 0);
}

#[tokio::test]
async fn the_pool_and_the_reaper_work_on_the_remote_engine() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), &[("n.txt", "41\n")]);
    let sb = Sandbox::new(SandboxConfig {
        pool_size: 1,
        ..config(vec![remote()])
    });
    let tools = code_tools(sb.clone(), Some(ws.clone()));
    let code = json!({"code": "print(int(open('/workspace/n.txt').read()) + 1)"});
    let seen = call(&tools, "run_python", code.clone()).await;
    assert!(!seen.is_error && seen.text.contains("42"), "{}", seen.text);
    // The refill is in the background: one warm container appears on the remote engine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while ours(&sb, 0).await == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ours(&sb, 0).await, 1, "one warm container");
    // The warm container gets the workspace as it is now, not as it was when it started.
    std::fs::write(root_of(&ws).join("n.txt"), "99\n").unwrap();
    let seen = call(&tools, "run_python", code).await;
    assert!(!seen.is_error && seen.text.contains("100"), "{}", seen.text);
    // Shutdown waits for a refill still starting, which removes its container once it is up.
    sb.shutdown().await;
    assert_eq!(
        ours(&sb, 0).await,
        0,
        "shutdown removes the warm ones there"
    );

    // A container left on the remote engine by a cairn of this host that died is reaped at
    // the next first contact.
    let engine = sb.engine_at(0).await.unwrap();
    let host = engine.owner().split(':').next().unwrap().to_owned();
    let dead = format!("{host}:{}", 4_000_000 + std::process::id() % 100_000);
    let leftover = engine
        .docker()
        .create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            bollard::models::ContainerCreateBody {
                image: Some(image()),
                cmd: Some(vec!["sleep".into(), "1".into()]),
                labels: Some(
                    [
                        (LABEL.to_owned(), "1".to_owned()),
                        (OWNER_LABEL.to_owned(), dead),
                    ]
                    .into(),
                ),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    let fresh = Sandbox::new(config(vec![remote()]));
    fresh.engine_at(0).await.unwrap();
    assert!(
        engine
            .docker()
            .inspect_container(
                &leftover,
                None::<bollard::query_parameters::InspectContainerOptions>
            )
            .await
            .is_err(),
        "the leftover was reaped"
    );
}

/// A TCP relay to the remote engine that the test can cut, as a network would.
struct Relay {
    port: u16,
    cut: CancellationToken,
}

impl Relay {
    async fn start(port: u16) -> Relay {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = address().trim_start_matches("tcp://").to_owned();
        let cut = CancellationToken::new();
        let stop = cut.clone();
        tokio::spawn(async move {
            loop {
                let (mut inbound, _) = tokio::select! {
                    () = stop.cancelled() => return,
                    accepted = listener.accept() => accepted.unwrap(),
                };
                let target = target.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        () = stop.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    }
                });
            }
        });
        Relay { port, cut }
    }
}

#[tokio::test]
async fn a_lost_connection_ends_the_run_clearly_and_its_container_is_reaped_on_reconnect() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let relay = Relay::start(0).await;
    let port = relay.port;
    let through = remote_at(&format!("tcp://127.0.0.1:{port}"), "cert.pem", "key.pem");
    let sb = Sandbox::new(config(vec![through]));
    // Seen directly, not through the relay.
    let direct = Sandbox::new(config(vec![remote()]));
    let engine = direct.engine_at(0).await.unwrap();
    let theirs = || async {
        let filters = std::collections::HashMap::from([(
            "label".to_owned(),
            vec![format!("{OWNER_LABEL}={}", engine.owner())],
        )]);
        let options = bollard::query_parameters::ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        engine
            .docker()
            .list_containers(Some(options))
            .await
            .unwrap()
            .len()
    };
    let sb2 = sb.clone();
    let task = tokio::spawn(async move {
        sb2.run_code(
            runtime("bash").unwrap(),
            "echo started; sleep 15; echo finished",
            RunOptions::default(),
            &CancellationToken::new(),
        )
        .await
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while theirs().await == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        theirs().await,
        1,
        "the run's container is on the remote engine"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    relay.cut.cancel();
    let started = Instant::now();
    let result = task.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "the run ended with the connection, not with the program"
    );
    let err = result.expect_err("a run whose engine is gone has no report");
    assert!(matches!(err, SandboxError::EngineLost { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("the connection to the container engine remote was lost during the run")
            && message.contains("removed when cairn reaches the engine again"),
        "{message}"
    );
    assert_eq!(
        theirs().await,
        1,
        "left there while the engine cannot be reached"
    );
    // The network comes back: the next use of that engine removes what was left.
    let _relay = Relay::start(port).await;
    sb.engine_at(0).await.unwrap();
    assert_eq!(theirs().await, 0, "reaped on reconnect");
}

#[tokio::test]
async fn bad_certificates_and_silent_hosts_are_refused_clearly() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let run = |engine: EngineConfig| async move {
        let sb = Sandbox::new(config(vec![engine]));
        sb.run_code(
            runtime("bash").unwrap(),
            "echo RAN",
            RunOptions::default(),
            &CancellationToken::new(),
        )
        .await
        .expect_err("no run")
        .to_string()
    };
    // A client certificate of another CA: the engine refuses the handshake.
    let message = run(remote_at(&address(), "wrong-cert.pem", "wrong-key.pem")).await;
    assert!(
        message.starts_with(&format!("no container engine answers at {}", address())),
        "{message}"
    );

    // A host that accepts the connection and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_at = format!("tcp://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            open.push(s);
        }
    });
    let started = Instant::now();
    let message = run(remote_at(&silent_at, "cert.pem", "key.pem")).await;
    held.abort();
    assert!(
        message.starts_with(&format!("no container engine answers at {silent_at}"))
            && message.contains("no answer within 5 s"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Why a run on `engine` alone was refused (it must be).
async fn refusal(engine: EngineConfig) -> SandboxError {
    let sb = Sandbox::new(config(vec![engine]));
    let err = sb
        .run_code(
            runtime("bash").unwrap(),
            "echo RAN",
            RunOptions::default(),
            &CancellationToken::new(),
        )
        .await
        .expect_err("no run");
    // Its connections close with it, so a listener's reads of them end.
    sb.shutdown().await;
    err
}

/// What a test's listener saw on one connection: how its TLS handshake ended (`Ok` when
/// there was none to make) and every byte of the application's data it then read.
#[derive(Debug)]
struct Connection {
    handshake: Result<(), String>,
    bytes: Vec<u8>,
}

/// A listener that records every connection made to it, over TLS with `tls`, else plain.
struct Recorder {
    address: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    seen: tokio::task::JoinHandle<Vec<Connection>>,
}

impl Recorder {
    async fn start(ip: std::net::IpAddr, tls: Option<tokio_rustls::TlsAcceptor>) -> Recorder {
        let listener = TcpListener::bind((ip, 0)).await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let seen = tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    accepted = listener.accept() => {
                        seen.push(record(accepted.unwrap().0, tls.as_ref()).await);
                    }
                }
            }
            // A connection the client made before it gave up is in the backlog even when this
            // task has not accepted it yet: take them all, without waiting for more.
            let listener = listener.into_std().unwrap();
            loop {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(true).unwrap();
                        let stream = TcpStream::from_std(stream).unwrap();
                        seen.push(record(stream, tls.as_ref()).await);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("accept: {e}"),
                }
            }
            seen
        });
        Recorder {
            address,
            stop,
            seen,
        }
    }

    /// Every connection made to it, once the client is done (its connections closed).
    async fn finish(self) -> Vec<Connection> {
        let _ = self.stop.send(());
        self.seen.await.unwrap()
    }
}

/// The handshake on `stream` and what follows it, to the end of the connection.
async fn record(stream: TcpStream, tls: Option<&tokio_rustls::TlsAcceptor>) -> Connection {
    use tokio::io::AsyncReadExt;
    let mut bytes = Vec::new();
    let handshake = match tls {
        None => {
            let mut stream = stream;
            let _ = stream.read_to_end(&mut bytes).await;
            Ok(())
        }
        Some(acceptor) => match acceptor.accept(stream).await {
            Ok(mut stream) => {
                let _ = stream.read_to_end(&mut bytes).await;
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        },
    };
    Connection { handshake, bytes }
}

/// A TLS server presenting the script's certificate `name` (`NAME-cert.pem`, `NAME-key.pem`).
fn presenting(name: &str) -> tokio_rustls::TlsAcceptor {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let tls = tls_dir();
    let chain = CertificateDer::pem_file_iter(tls.join(format!("{name}-cert.pem")))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(tls.join(format!("{name}-key.pem"))).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

#[tokio::test]
async fn bad_server_certificates_are_refused_in_the_handshake() {
    if !enabled() {
        return;
    }
    // (the script's certificate, what the refusal says, the alert the client sends the server)
    let cases = [
        ("wrong-ca-server", "unknownissuer", "UnknownCA"),
        (
            "wrong-name",
            "certificate not valid for name \"127.0.0.1\"",
            "BadCertificate",
        ),
        ("expired", "certificate expired", "CertificateExpired"),
    ];
    for (certificate, says, alert) in cases {
        let server = Recorder::start([127, 0, 0, 1].into(), Some(presenting(certificate))).await;
        let at = format!("tcp://{}", server.address);
        let err = refusal(remote_at(&at, "cert.pem", "key.pem")).await;
        let seen = server.finish().await;
        assert!(
            matches!(err, SandboxError::EngineUntrusted { .. }),
            "{certificate}: {err:?}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "cairn refused the container engine at {at}: its TLS certificate is not trusted"
            )) && message.contains("nothing was sent to it")
                && message
                    .to_lowercase()
                    .contains(&format!("invalid peer certificate: {says}")),
            "{certificate}: {message}"
        );
        // The client reached the server and ended the handshake itself, with the alert of the
        // certificate's fault: no request was sent on any connection.
        assert!(!seen.is_empty(), "{certificate}: no connection was made");
        for connection in &seen {
            assert_eq!(
                connection.handshake,
                Err(format!("received fatal alert: {alert}")),
                "{certificate}: {connection:?}"
            );
            assert!(
                connection.bytes.is_empty(),
                "{certificate}: {:?}",
                String::from_utf8_lossy(&connection.bytes)
            );
        }
    }
}

/// An IPv4 address of this machine other than loopback (the kernel's table of local
/// addresses: `/32 host LOCAL` entries), where plain TCP is refused.
fn non_loopback_address() -> Option<std::net::Ipv4Addr> {
    let trie = std::fs::read_to_string("/proc/net/fib_trie").ok()?;
    let lines: Vec<&str> = trie.lines().collect();
    lines.windows(2).find_map(|pair| {
        let ip: std::net::Ipv4Addr = pair[0].trim().strip_prefix("|-- ")?.parse().ok()?;
        (pair[1].trim() == "/32 host LOCAL" && !ip.is_loopback()).then_some(ip)
    })
}

#[tokio::test]
async fn plain_tcp_to_another_host_is_refused_before_anything_is_sent() {
    if !enabled() {
        return;
    }
    let Some(ip) = non_loopback_address() else {
        cairn_test_support::skip("this machine has no IPv4 address other than loopback");
        return;
    };
    let listener = Recorder::start(ip.into(), None).await;
    let at = format!("tcp://{}", listener.address);
    let err = refusal(EngineConfig {
        tls_ca: None,
        tls_cert: None,
        tls_key: None,
        ..remote_at(&at, "cert.pem", "key.pem")
    })
    .await;
    let seen = listener.finish().await;
    assert!(
        matches!(&err, SandboxError::EngineRefused { host, .. } if *host == at),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("cairn uses one only with TLS"),
        "{err}"
    );
    // Not even a connection, so not a byte of a request.
    assert!(seen.is_empty(), "{seen:?}");
}

#[tokio::test]
async fn parallel_runs_spread_over_two_engines() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), &[("w.txt", "R7-SEEN\n")]);
    let sb = Sandbox::new(config(vec![local(), remote()]));
    let tools = Arc::new(code_tools(sb.clone(), Some(ws.clone())));
    let runs = (0..4).map(|_| {
        let tools = tools.clone();
        tokio::spawn(async move {
            call(
                &tools,
                "run_bash",
                json!({"code": "cat /workspace/w.txt; sleep 4"}),
            )
            .await
        })
    });
    let runs: Vec<_> = runs.collect();
    // While they run: two on each engine.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = (0, 0);
    while Instant::now() < deadline {
        seen = (ours(&sb, 0).await, ours(&sb, 1).await);
        if seen.0 + seen.1 == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        seen,
        (2, 2),
        "(local, remote) containers while four runs run"
    );
    for run in runs {
        let seen = run.await.unwrap();
        assert!(
            !seen.is_error && seen.text.contains("R7-SEEN"),
            "{}",
            seen.text
        );
    }
    assert_eq!((ours(&sb, 0).await, ours(&sb, 1).await), (0, 0));

    // An engine that does not answer is passed over; the run goes to the other.
    let sb = Sandbox::new(config(vec![
        EngineConfig {
            name: Some("gone".to_owned()),
            engine: "unix:///nonexistent/docker.sock".to_owned(),
            ..local()
        },
        remote(),
    ]));
    let report = sb
        .run_code(
            runtime("bash").unwrap(),
            "echo R7-RAN",
            RunOptions::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.ending, Ending::Exited(0));
    assert!(report.stdout.contains("R7-RAN"));
}
