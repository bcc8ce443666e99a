//! SECURITY.md §7 (a), A1–A9, against a real Docker engine, and the normal use of each tool.
//!
//! Gated by `CAIRN_DOCKER_TESTS=1` (`.ci/run` sets it after starting `dockerd` and building the
//! images with `scripts/sandbox-images`); the image is `CAIRN_TEST_IMAGE`, default
//! `cairn-test/runtime:2`, which has python3, node, ruby, go, rustc, perl and bash.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;

use cairn_config::SandboxConfig;
use cairn_sandbox::engine::{LABEL, OWNER_LABEL};
use cairn_sandbox::runtimes::runtime;
use cairn_sandbox::tools::{Code, code_tools};
use cairn_sandbox::{Ending, RunAs, RunOptions, Sandbox, WorkspaceMount};
use cairn_toolkit::ToolSet;
use cairn_workspace::Workspace;
use common::protected_workspace;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The tests run one at a time: they measure this process's memory and count containers.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a running Docker engine to run this test",
    )
}

fn image() -> String {
    std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".to_owned())
}

fn config() -> SandboxConfig {
    let images: BTreeMap<String, String> = ["python", "node", "bash", "ruby", "perl", "go", "rust"]
        .iter()
        .map(|r| ((*r).to_owned(), image()))
        .collect();
    SandboxConfig {
        timeout_secs: 8,
        memory_mib: 256,
        tmpfs_mib: 16,
        pids_limit: 64,
        output_max_bytes: 64 * 1024,
        pool_size: 0,
        images,
        ..SandboxConfig::default()
    }
}

fn service() -> Arc<Sandbox> {
    Sandbox::new(config())
}

async fn ours(sb: &Sandbox) -> usize {
    let engine = sb.engine().await.unwrap();
    engine.list(true).await.unwrap().len()
}

async fn run(sb: &Sandbox, lang: &str, code: &str) -> cairn_sandbox::RunReport {
    sb.run_code(
        runtime(lang).unwrap(),
        code,
        RunOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test]
async fn a1_fork_bomb_stops_at_the_process_limit() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let sb = service();
    let started = Instant::now();
    let report = run(&sb, "bash", ":(){ :|:& };:").await;
    assert_eq!(report.ending, Ending::ProcessLimit, "{report:?}");
    assert!(started.elapsed() < sb.limits().timeout + Duration::from_secs(5));
    assert!(
        report
            .to_text(sb.limits())
            .contains("limit of 64 processes (sandbox.pids_limit)")
    );
    assert_eq!(ours(&sb).await, 0, "the container is gone");
}

#[tokio::test]
async fn a2_memory_bomb_is_reported_as_out_of_memory() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let sb = service();
    let before = rss_kib();
    for (lang, code) in [
        ("python", "b = bytearray(8 << 30)\nprint('allocated')"),
        ("bash", "tail /dev/zero"),
    ] {
        let report = run(&sb, lang, code).await;
        assert_eq!(report.ending, Ending::OutOfMemory, "{lang}: {report:?}");
        assert!(!report.stdout.contains("allocated"));
        assert!(
            report.to_text(sb.limits()).contains("out of memory"),
            "{report:?}"
        );
    }
    assert!(rss_kib() < before + 50_000, "cairn's memory stays flat");
    assert_eq!(ours(&sb).await, 0);
}

#[tokio::test]
async fn a3_runaways_are_killed_at_the_limit_and_output_is_capped() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let sb = service();
    let before = rss_kib();
    for code in [
        "while :; do :; done",
        "sleep 1000000000",
        // Closes its output and keeps running.
        "exec >&- 2>&-; sleep 1000000000",
    ] {
        let started = Instant::now();
        let report = run(&sb, "bash", code).await;
        assert_eq!(report.ending, Ending::Timeout, "{code}: {report:?}");
        let took = started.elapsed();
        assert!(
            took >= sb.limits().timeout && took < sb.limits().timeout + Duration::from_secs(5),
            "{took:?}"
        );
    }
    for code in [
        "yes",
        "head -c 10000000 /dev/zero | tr '\\0' 'x'",
        "cat /dev/urandom | base64 -w0",
    ] {
        let report = run(&sb, "bash", code).await;
        assert!(report.truncated, "{code}");
        assert!(
            report.stdout.len() <= 64 * 1024,
            "{code}: {}",
            report.stdout.len()
        );
        assert!(report.to_text(sb.limits()).contains("[truncated"), "{code}");
    }
    // A background child that keeps the output open does not keep the run going.
    let started = Instant::now();
    let report = run(&sb, "bash", "sleep 1000 & echo started").await;
    assert_eq!(report.ending, Ending::Exited(0), "{report:?}");
    assert_eq!(report.stdout, "started\n");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Binary output is summarised, not shown.
    let report = run(&sb, "bash", "head -c 4096 /dev/urandom").await;
    assert!(
        report.binary && report.stdout.starts_with("[binary output:"),
        "{report:?}"
    );
    assert!(rss_kib() < before + 50_000, "cairn's memory stays flat");
    assert_eq!(ours(&sb).await, 0);
}

#[tokio::test]
async fn a4_no_egress_without_a_grant() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let sb = service();
    let probe = format!(
        r#"
import socket
for host, port in [("1.1.1.1", 53), ("169.254.169.254", 80), ("172.17.0.1", {port}), ("host.docker.internal", 80), ("example.com", 443)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        print("CONNECTED", host)
    except Exception as e:
        print("refused", host, type(e).__name__)
try:
    socket.getaddrinfo("example.com", 443)
    print("RESOLVED")
except Exception as e:
    print("no dns", type(e).__name__)
"#
    );
    let report = run(&sb, "python", &probe).await;
    assert_eq!(report.ending, Ending::Exited(0), "{report:?}");
    assert!(
        !report.stdout.contains("CONNECTED") && !report.stdout.contains("RESOLVED"),
        "{}",
        report.stdout
    );
    assert_eq!(
        report.stdout.matches("refused").count(),
        5,
        "{}",
        report.stdout
    );
    let report = run(
        &sb,
        "bash",
        &format!("echo > /dev/tcp/172.17.0.1/{port} && echo CONNECTED"),
    )
    .await;
    assert!(!report.stdout.contains("CONNECTED"));
    assert!(
        listener.accept().is_err(),
        "nothing reached the host listener"
    );
    assert_eq!(ours(&sb).await, 0);
}

#[tokio::test]
async fn a5_a6_writes_outside_are_refused_and_links_resolve_inside() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("data.txt"), "original\n").unwrap();
    let outside = dir.path().join("host-secret.txt");
    std::fs::write(&outside, "HOST-SECRET\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    let ws = std::fs::canonicalize(&ws).unwrap();
    // The sandbox runs as nobody here (the tests run as root, and a sandbox never does): give
    // nobody the workspace, as a user's own workspace belongs to the user it runs as.
    let chown = std::process::Command::new("chown")
        .args(["-hR", "65534:65534"])
        .arg(&ws)
        .status()
        .unwrap();
    assert!(chown.success());
    let sb = service();
    let mount = |writable| RunOptions {
        workspace: Some(WorkspaceMount {
            root: ws.clone(),
            writable,
            masked_files: Vec::new(),
            masked_dirs: Vec::new(),
            read_only: Vec::new(),
            run_as: RunAs {
                user: "65534:65534".to_owned(),
                groups: Vec::new(),
            },
            scope: None,
            archive: false,
        }),
        ..RunOptions::default()
    };
    let script = "echo x > /etc/passwd; echo etc=$?; touch /usr/bin/x; echo usr=$?; \
                  dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1 | grep -o 'No space left on device'; \
                  echo changed > /workspace/data.txt; echo ws=$?; \
                  cat /workspace/link; echo link=$?; echo pwned > /workspace/link; echo linkw=$?";
    let bash = runtime("bash").unwrap();
    let report = sb
        .run_code(bash, script, mount(false), &CancellationToken::new())
        .await
        .unwrap();
    let out = format!("{}{}", report.stdout, report.stderr);
    assert!(out.contains("etc=1") && out.contains("usr=1"), "{out}");
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(out.contains("No space left on device"), "{out}");
    assert!(out.contains("ws=1"), "{out}");
    assert!(out.contains("link=1") && out.contains("linkw=1"), "{out}");
    assert!(!out.contains("HOST-SECRET"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "HOST-SECRET\n");
    // Writable only when asked for (and, through the tools, approved).
    let report = sb
        .run_code(
            bash,
            "echo changed > /workspace/data.txt",
            mount(true),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.ending, Ending::Exited(0), "{report:?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.txt")).unwrap(),
        "changed\n"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "HOST-SECRET\n");
    assert_eq!(ours(&sb).await, 0);
}

#[tokio::test]
async fn a7_privileges_are_dropped() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let sb = service();
    let script = "grep NoNewPrivs /proc/self/status; grep CapEff /proc/self/status; id -u; \
                  cp /bin/bash /tmp/b && chmod u+s /tmp/b && /tmp/b -p -c 'echo suid=$(id -u)'; \
                  mount -t tmpfs none /mnt 2>/dev/null; echo mount=$?; \
                  unshare -U true 2>/dev/null; echo unshare=$?; \
                  mknod /tmp/dev c 1 3 2>/dev/null; echo mknod=$?; \
                  sudo true 2>/dev/null; echo sudo=$?; \
                  test -S /var/run/docker.sock; echo socket=$?";
    let report = run(&sb, "bash", script).await;
    let out = &report.stdout;
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.lines().any(|l| l == "65534"), "{out}");
    assert!(out.contains("suid=65534"), "{out}");
    for denied in ["mount=", "unshare=", "mknod=", "sudo=", "socket="] {
        let line = out.lines().find(|l| l.starts_with(denied)).unwrap();
        assert_ne!(line, format!("{denied}0"), "{out}");
    }
    assert_eq!(ours(&sb).await, 0);
}

async fn call(tools: &ToolSet<Code>, name: &str, args: Value) -> (bool, String) {
    let seen = cairn_test_support::tools::call(tools, name, args).await;
    (seen.is_error, seen.text)
}

#[tokio::test]
async fn a8_knobs_the_model_invents_are_rejected() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let sb = service();
    let tools = code_tools(sb.clone(), None);
    for extra in [
        json!({"image": "docker:dind"}),
        json!({"privileged": true}),
        json!({"binds": ["/:/host"]}),
        json!({"network_mode": "host"}),
        json!({"env": {"A": "1"}}),
        json!({"user": "root"}),
    ] {
        let mut args = json!({"code": "print(1)"});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (err, text) = call(&tools, "run_python", args.clone()).await;
        assert!(err && text.contains("unknown field"), "{args}: {text}");
        assert_eq!(ours(&sb).await, 0, "nothing was started for {args}");
    }
    // The code is the only thing that reaches the container.
    let (err, text) = call(
        &tools,
        "run_python",
        json!({"code": "import os; print(os.getuid())"}),
    )
    .await;
    assert!(!err && text.contains("65534"), "{text}");
}

#[tokio::test]
async fn a9_cancel_removes_the_container_and_leftovers_are_reaped() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let sb = service();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let sb2 = sb.clone();
    let task = tokio::spawn(async move {
        sb2.run_code(
            runtime("bash").unwrap(),
            "sleep 600 & sleep 600",
            RunOptions::default(),
            &c2,
        )
        .await
    });
    // Wait until the container exists, then cancel.
    let deadline = Instant::now() + Duration::from_secs(20);
    while ours(&sb).await == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ours(&sb).await, 1);
    cancel.cancel();
    let report = task.await.unwrap().unwrap();
    assert_eq!(report.ending, Ending::Cancelled);
    assert_eq!(ours(&sb).await, 0, "removed when the run returns");

    // A container left by a cairn that died (its process is gone) is reaped at the next start;
    // one of a live process is not.
    let engine = sb.engine().await.unwrap();
    let docker_owner = engine.owner().split(':').next().unwrap().to_owned();
    let dead = format!(
        "{docker_owner}:{}",
        4_000_000 + std::process::id() % 100_000
    );
    let out = std::process::Command::new("docker")
        .args([
            "create",
            "--label",
            &format!("{LABEL}=1"),
            "--label",
            &format!("{OWNER_LABEL}={dead}"),
            &image(),
            "sleep",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let leftover = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let fresh = service();
    // First use pings and reaps.
    run(&fresh, "bash", "true").await;
    let inspect = std::process::Command::new("docker")
        .args(["inspect", &leftover])
        .output()
        .unwrap();
    assert!(!inspect.status.success(), "the leftover was reaped");
}

#[tokio::test]
async fn every_tool_in_normal_use() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hello.py"),
        "import sys\nprint('hello from', sys.argv[0])\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("tests/test_x.py"),
        "import unittest\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(1 + 1, 2)\n",
    )
    .unwrap();
    let ws = Arc::new(Workspace::new(vec![dir.path().to_path_buf()]).unwrap());
    let sb = service();
    let tools = code_tools(sb.clone(), Some(ws));
    for (name, code, expect) in [
        ("run_python", "print(6 * 7)", "42"),
        ("run_node", "console.log(6 * 7)", "42"),
        ("run_bash", "echo $((6 * 7))", "42"),
        ("run_ruby", "puts 6 * 7", "42"),
        ("run_perl", "print 6 * 7, \"\\n\";", "42"),
        (
            "run_go",
            "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(6 * 7) }\n",
            "42",
        ),
        ("run_rust", "fn main() { println!(\"{}\", 6 * 7); }", "42"),
    ] {
        let (err, text) = call(&tools, name, json!({"code": code})).await;
        assert!(
            !err && text.contains(expect) && text.starts_with("exit code 0"),
            "{name}: {text}"
        );
    }
    let (err, text) = call(
        &tools,
        "run_python",
        json!({"code": "import sys; sys.exit(3)"}),
    )
    .await;
    assert!(err && text.starts_with("exit code 3"), "{text}");
    let (err, text) = call(&tools, "run_python", json!({"code": "open('/workspace/data.csv').read()\nprint(open('/workspace/data.csv').read())"})).await;
    assert!(
        !err && text.contains("1,2"),
        "the workspace is mounted: {text}"
    );
    let (err, text) = call(&tools, "run_file", json!({"path": "hello.py"})).await;
    assert!(!err && text.contains("hello from"), "{text}");
    let (err, text) = call(&tools, "run_tests", json!({})).await;
    assert!(
        !err && text.contains("$ python3 -m unittest") && text.contains("OK"),
        "{text}"
    );
    let (err, text) = call(&tools, "python_session", json!({"code": "x = 20"})).await;
    assert!(!err && text.contains("new Python session"), "{text}");
    let (err, text) = call(&tools, "python_session", json!({"code": "x + 22"})).await;
    assert!(
        !err && text.contains("42") && !text.contains("new Python session"),
        "state lasts: {text}"
    );
    let (err, text) = call(&tools, "copy_into_sandbox", json!({"path": "data.csv"})).await;
    assert!(!err, "{text}");
    let (err, text) = call(
        &tools,
        "python_session",
        json!({"code": "open('/tmp/data.csv').read().split()[1]"}),
    )
    .await;
    assert!(!err && text.contains("'1,2'"), "{text}");
    let (err, text) = call(
        &tools,
        "python_session",
        json!({"code": "open('/tmp/out.txt', 'w').write('result 42\\n')"}),
    )
    .await;
    assert!(!err, "{text}");
    let (err, text) = call(
        &tools,
        "copy_out_of_sandbox",
        json!({"from": "/tmp/out.txt", "path": "out.txt"}),
    )
    .await;
    assert!(!err, "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "result 42\n"
    );
    let (err, text) = call(&tools, "list_sandboxes", json!({})).await;
    assert!(!err && text.contains("python session (this chat"), "{text}");
    // Without network, pip cannot reach an index; the run says so and nothing is left behind.
    let (err, text) = call(
        &tools,
        "install_packages",
        json!({"packages": ["--index-url=http://evil"]}),
    )
    .await;
    assert!(err && text.contains("not a package requirement"), "{text}");
    let (err, text) = call(&tools, "stop_sandbox", json!({})).await;
    assert!(!err, "{text}");
    let (_, text) = call(&tools, "list_sandboxes", json!({})).await;
    assert!(text.contains("no sandboxes"), "{text}");
    assert_eq!(ours(&sb).await, 0);
    sb.shutdown().await;
}

#[tokio::test]
async fn a10_protected_files_are_hidden_in_every_directory_or_the_run_is_refused() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let secrets = [
        ("node_modules/pkg/.env", "SECRET-A10-node-modules"),
        ("target/release/deploy.key", "SECRET-A10-target-key"),
        (".venv/lib/id_ed25519", "SECRET-A10-venv"),
        ("__pycache__/.npmrc", "SECRET-A10-pycache"),
        ("sub/.git", "gitdir: SECRET-A10-gitdir"),
    ];
    let mut files: Vec<(&str, &str)> = secrets.to_vec();
    files.extend([
        ("node_modules/pkg/index.js", "A10-VISIBLE"),
        ("target/release/app.txt", "A10-VISIBLE"),
        (".venv/lib/site.py", "A10-VISIBLE"),
        ("__pycache__/m.pyc", "A10-VISIBLE"),
        ("sub/lib.rs", "A10-VISIBLE"),
    ]);
    let ws = protected_workspace(dir.path(), &files, cairn_workspace::ExactApprovals::new());
    let root = ws.resolve(".").unwrap().as_path().to_path_buf();
    std::fs::hard_link(
        root.join("node_modules/pkg/.env"),
        root.join("node_modules/pkg/copy.txt"),
    )
    .unwrap();
    let sb = service();
    let tools = code_tools(sb.clone(), Some(ws.clone()));
    let (err, text) = call(
        &tools,
        "run_bash",
        json!({"code": "find /workspace -type f | sort | xargs cat; echo end"}),
    )
    .await;
    assert!(!err, "{text}");
    assert_eq!(text.matches("A10-VISIBLE").count(), 5, "{text}");
    for (path, secret) in secrets {
        assert!(
            !text.contains(secret),
            "{path} was seen in the sandbox: {text}"
        );
    }
    assert_eq!(ours(&sb).await, 0);

    // Too many entries to check: refused, and no container is made.
    let small = Sandbox::new(SandboxConfig {
        mask_max_entries: 10,
        ..config()
    });
    let tools = code_tools(small.clone(), Some(ws));
    let (err, text) = call(&tools, "run_bash", json!({"code": "echo A10-RAN"})).await;
    assert!(err, "{text}");
    assert!(
        text.contains(&format!(
            "refused to mount the workspace `{}` in the sandbox: it holds more than 10 files and directories",
            root.display()
        )),
        "{text}"
    );
    assert!(!text.contains("A10-RAN"), "{text}");
    assert_eq!(ours(&small).await, 0);
}

#[tokio::test]
async fn a11_a_protected_program_runs_only_once_that_path_is_approved() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let approvals = cairn_workspace::ExactApprovals::new();
    let ws = protected_workspace(
        dir.path(),
        &[("scripts/.env.sh", "echo A11-RAN\n")],
        approvals.clone(),
    );
    let sb = service();
    let tools = code_tools(sb.clone(), Some(ws.clone()));
    let (err, text) = call(&tools, "run_file", json!({"path": "scripts/.env.sh"})).await;
    assert!(err, "{text}");
    assert!(
        text.starts_with("refused to read `scripts/.env.sh`: it is protected"),
        "{text}"
    );
    assert_eq!(ours(&sb).await, 0, "no container was made");
    // The agent's gate holds the user's approval of that exact path while the call runs.
    let key = ws
        .resolve("scripts/.env.sh")
        .unwrap()
        .as_path()
        .to_path_buf();
    approvals.hold(&key, cairn_workspace::Operation::Read);
    let (err, text) = call(&tools, "run_file", json!({"path": "scripts/.env.sh"})).await;
    assert!(!err && text.contains("A11-RAN"), "{text}");
    assert_eq!(ours(&sb).await, 0);
}
