//! Code tools through the agent, against a real Docker engine (gated by `CAIRN_DOCKER_TESTS=1`;
//! the image is `CAIRN_TEST_IMAGE`, default `cairn-test/runtime:2`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Editor, Sandbox, answer_in_turn, of_kind};

/// The Docker tests run one at a time: each loads both cores (compilers in containers), and the
/// other end-to-end tests run beside them.
pub(crate) static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a running Docker engine to run this test",
    )
}

pub(crate) fn configure(sb: &Sandbox) {
    let image = std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".into());
    let images: Vec<String> = ["python", "node", "bash", "ruby", "perl", "go", "rust"]
        .iter()
        .map(|r| format!("{r} = \"{image}\""))
        .collect();
    sb.user_config(&format!(
        "[sandbox]\ntimeout_secs = 20\nmemory_mib = 512\npool_size = 0\nimages = {{ {} }}\n",
        images.join(", ")
    ));
}

/// Containers labelled by cairn whose owner is `pid` (any pid when `None`).
fn containers_of(pid: Option<u32>) -> Vec<String> {
    let out = Command::new("docker")
        .args([
            "ps",
            "-a",
            "--filter",
            "label=cairn.sandbox",
            "--format",
            "{{.ID}} {{.Label \"cairn.owner\"}}",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| pid.is_none_or(|p| l.ends_with(&format!(":{p}"))))
        .map(|l| l.split(' ').next().unwrap_or_default().to_owned())
        .collect()
}

/// A chat turn runs Python in a sandbox and the model gets the output back.
#[test]
fn chat_runs_code_in_a_sandbox() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("run_python", json!({"code": "print(6 * 7)"})),
            Reply::text("It is 42."),
        ],
    );
    configure(&sb);
    let ws = sb.ws();
    let child = sb
        .command()
        .args([
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "what is 6 times 7?",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "It is 42.");
    let second = sb.model.requests()[1].body.to_string();
    assert!(
        second.contains("exit code 0") && second.contains("42"),
        "{second}"
    );
    assert!(
        containers_of(Some(pid)).is_empty(),
        "the run's container was removed"
    );
}

/// In the editor, a run that asks for the network is asked about with the network named, and a
/// denial means the code never runs.
#[test]
fn the_network_is_asked_for_in_the_editor() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "run_python",
                json!({"code": "print('ran')", "network": true}),
            ),
            Reply::tool_call("run_python", json!({"code": "print('ran offline')"})),
            Reply::text("Done."),
        ],
    );
    configure(&sb);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = Box::new(|method, params| match method {
        "window/showMessageRequest" => {
            let message = params["message"].as_str().unwrap_or_default();
            if message.contains("with network access") {
                Answer::Now(json!({"title": "Deny"}))
            } else {
                Answer::Now(json!({"title": "Allow once"}))
            }
        }
        _ => Answer::Now(Value::Null),
    });
    let (run, _) = ed.chat(json!({"message": "run it"}));
    let events = ed.finish(&run);
    let results = of_kind(&events, "toolResult");
    assert_eq!(results.len(), 2, "{events:#?}");
    assert_eq!(results[0]["isError"], true);
    assert_eq!(results[0]["content"], "the user denied this call");
    assert_eq!(results[1]["isError"], false);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("ran offline")
    );
    let asks = ed.question_texts();
    assert!(
        asks[0].contains("runs code with network access (policy.effects.network)"),
        "{asks:?}"
    );
    assert!(!asks[1].contains("with network access"), "{asks:?}");
    ed.shutdown();
}

/// A9: cairn killed with SIGKILL mid-run leaves a container; the next start removes it.
#[test]
fn a9_a_killed_cairn_leaves_nothing_after_the_next_start() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    configure(&sb);
    let ws = sb.ws();
    let mut child = sb
        .command()
        .args([
            "tools",
            "call",
            "-w",
            ws.to_str().unwrap(),
            "run_bash",
            "--yes",
            "--args",
        ])
        .arg(json!({"code": "sleep 300"}).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while containers_of(Some(pid)).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let left = containers_of(Some(pid));
    assert_eq!(left.len(), 1, "the run's container is up");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        containers_of(Some(pid)),
        left,
        "a SIGKILL leaves the container behind"
    );
    let out = sb
        .command()
        .args([
            "tools",
            "call",
            "-w",
            ws.to_str().unwrap(),
            "list_sandboxes",
            "--yes",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        containers_of(Some(pid)).is_empty(),
        "reaped at the next start"
    );
}

/// Without an engine, code tools say how to start one, and the rest of cairn keeps working.
/// Not gated: it needs no engine.
#[test]
fn without_an_engine_the_code_tools_say_how_to_start_one() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.user_config(
        "[sandbox]\ndocker_host = \"unix:///nonexistent/docker.sock\"\ncode_max_bytes = 1000\n",
    );
    sb.write("a.txt", "hello\n");
    let call = |tool: &str, args: Value| {
        let out = sb.call_yes(tool, &args);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, text) = call("run_python", json!({"code": "print(1)"}));
    assert!(!ok);
    assert!(
        text.contains("no container engine answers at unix:///nonexistent/docker.sock"),
        "{text}"
    );
    assert!(text.contains("start Docker"), "{text}");
    let (ok, text) = call("run_python", json!({"code": "x".repeat(2000)}));
    assert!(!ok);
    assert!(
        text.contains("the code is 2000 bytes, over the 1000-byte limit (sandbox.code_max_bytes)"),
        "{text}"
    );
    let (ok, text) = call("read_file", json!({"path": "a.txt"}));
    assert!(ok && text.contains("hello"), "{text}");
}

/// Every code tool, called by the model through the agent (`cairn chat`), in one turn.
#[test]
fn every_code_tool_through_the_agent() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let calls: Vec<(&str, Value, &str)> = vec![
        ("run_python", json!({"code": "print(6 * 7)"}), "42"),
        ("run_node", json!({"code": "console.log(6 * 7)"}), "42"),
        ("run_bash", json!({"code": "echo $((6 * 7))"}), "42"),
        ("run_ruby", json!({"code": "puts 6 * 7"}), "42"),
        (
            "run_go",
            json!({"code": "package main\nimport \"fmt\"\nfunc main() { fmt.Println(6 * 7) }\n"}),
            "42",
        ),
        (
            "run_rust",
            json!({"code": "fn main() { println!(\"{}\", 6 * 7); }"}),
            "42",
        ),
        ("run_perl", json!({"code": "print 6 * 7, \"\\n\";"}), "42"),
        ("run_file", json!({"path": "tool.py"}), "from a file"),
        ("run_tests", json!({}), "OK"),
        (
            "python_session",
            json!({"code": "total = 40"}),
            "new Python session",
        ),
        (
            "copy_into_sandbox",
            json!({"path": "numbers.txt"}),
            "copied",
        ),
        (
            "python_session",
            json!({"code": "total + int(open('/tmp/numbers.txt').read())"}),
            "42",
        ),
        (
            "python_session",
            json!({"code": "open('/tmp/answer.txt', 'w').write('42\\n')"}),
            "exit code 0",
        ),
        (
            "copy_out_of_sandbox",
            json!({"from": "/tmp/answer.txt", "path": "answer.txt"}),
            "copied",
        ),
        ("list_sandboxes", json!({}), "python session (this chat"),
        (
            "install_packages",
            json!({"packages": ["left-pad-cairn-test"]}),
            "exit code",
        ),
        ("stop_sandbox", json!({}), "stopped and removed"),
    ];
    let mut replies: Vec<Reply> = calls
        .iter()
        .map(|(name, args, _)| Reply::tool_call(*name, args.clone()))
        .collect();
    replies.push(Reply::text("All done."));
    let sb = Sandbox::new(Format::OpenAi, replies);
    configure(&sb);
    sb.write("tool.py", "print('hello from a file')\n");
    sb.write("numbers.txt", "2\n");
    sb.write(
        "tests/test_math.py",
        "import unittest\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(2 + 2, 4)\n",
    );
    let ws = sb.ws();
    let out = sb
        .command()
        .args([
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--agent",
            "--yes",
            "use every code tool",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "All done.");
    // The model's last request holds every tool result, in order.
    let requests = sb.model.requests();
    let last = &requests.last().unwrap().body["messages"];
    let results: Vec<String> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), calls.len(), "{results:#?}");
    for ((name, _, expect), result) in calls.iter().zip(&results) {
        assert!(result.contains(expect), "{name}: {result}");
    }
    assert_eq!(sb.read("answer.txt"), "42\n");
}

/// `chown -R uid:gid path` (the tests run as root).
pub(crate) fn chown(path: &std::path::Path, owner: &str) {
    let status = Command::new("chown")
        .args(["-R", owner])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "chown {owner} {}", path.display());
}

fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The engine's clock, as `docker events --since` takes it.
fn engine_now() -> String {
    let out = Command::new("docker")
        .args(["info", "--format", "{{.SystemTime}}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// How many containers labelled by cairn process `pid` the engine created since `since`
/// (removed ones included, which `docker ps -a` no longer shows).
fn containers_created_by(pid: u32, since: &str) -> usize {
    let out = Command::new("docker")
        .args([
            "events",
            "--since",
            since,
            "--until",
            &engine_now(),
            "--filter",
            "type=container",
            "--filter",
            "event=create",
            "--filter",
            "label=cairn.sandbox",
            "--format",
            "{{index .Actor.Attributes \"cairn.owner\"}}",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.ends_with(&format!(":{pid}")))
        .count()
}

/// `cairn chat --yes` with the workspace; its exit, stdout and pid.
fn chat(sb: &Sandbox, prompt: &str) -> (std::process::Output, u32) {
    let ws = sb.ws();
    let child = sb
        .command()
        .args(["chat", "-w", ws.to_str().unwrap(), "--yes", prompt])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

/// Class 5: protected files inside dependency and build directories, a `.git` file, a protected
/// directory name, hard links and symlinks to protected files, a socket: code that prints every file
/// of `/workspace` shows none of them, so no secret reaches the model; the run did read the
/// workspace (an ordinary file's text comes back).
#[test]
fn protected_files_anywhere_in_the_workspace_stay_hidden_in_the_sandbox() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let script = "cd /workspace; for f in $(find . -type f -o -type l | sort); do \
                  echo \"== $f\"; cat \"$f\"; done; cat vendor/lib/.git/config; echo end-of-files";
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("run_bash", json!({ "code": script })),
            Reply::text("done"),
        ],
    );
    configure(&sb);
    sb.write("src/main.rs", "VISIBLE-CONTROL-TEXT\n");
    let secrets = [
        ("node_modules/pkg/.env", "SECRET-node-modules-env"),
        ("target/debug/build/key.pem", "SECRET-target-pem"),
        (".venv/lib/python3/.env.local", "SECRET-venv-env"),
        ("__pycache__/id_rsa", "SECRET-pycache-ssh-key"),
        ("vendor/lib/.git", "gitdir: SECRET-gitdir-pointer"),
        (".git/config", "SECRET-git-config"),
        ("certs.pem/private.txt", "SECRET-protected-directory"),
        (".env", "SECRET-top-env"),
        // A `:` and a `,` in the name: a `binds` string would split there.
        ("deploy:prod,v2.key", "SECRET-colon-comma-key"),
    ];
    for (path, secret) in secrets {
        sb.write(path, &format!("{secret}\n"));
    }
    // Ordinary files beside them, so each directory is not hidden whole.
    for dir in [
        "node_modules/pkg",
        "target/debug/build",
        ".venv/lib/python3",
        "__pycache__",
        "vendor/lib",
    ] {
        sb.write(&format!("{dir}/ordinary.txt"), "ordinary\n");
    }
    let ws = sb.ws();
    std::fs::hard_link(ws.join(".env"), ws.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(".env", ws.join("env-link")).unwrap();
    std::os::unix::fs::symlink("node_modules/pkg/.env", ws.join("deep-link")).unwrap();
    // Another name of a file in a directory hidden whole, and a socket of a host process.
    std::fs::hard_link(ws.join(".git/config"), ws.join("src/config-copy")).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(ws.join("agent.sock")).unwrap();
    let (out, pid) = chat(&sb, "print every file");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = sb.model.requests();
    let result = &crate::support::tool_results(&requests[1].body)[0];
    assert!(
        result.contains("VISIBLE-CONTROL-TEXT") && result.contains("end-of-files"),
        "the code did not read the workspace: {result}"
    );
    assert!(
        result.contains("== ./node_modules/pkg/ordinary.txt")
            && result.contains("== ./env-link")
            && result.contains("== ./deploy:prod,v2.key"),
        "{result}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for (path, secret) in secrets {
        for (i, r) in requests.iter().enumerate() {
            assert!(
                !r.body.to_string().contains(secret),
                "{path} reached model request {i}: {result}"
            );
        }
        assert!(!stdout.contains(secret), "{path} reached the terminal");
    }
    assert!(
        containers_of(Some(pid)).is_empty(),
        "the container was removed"
    );
}

/// Class 5, failing closed: a workspace with more entries than `sandbox.mask_max_entries`, or
/// more paths to hide than `sandbox.mask_max_mounts`, is refused with what to do, and no
/// container is created at all.
#[test]
fn a_workspace_too_large_to_mask_is_refused_before_any_container() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let run = Reply::tool_call("run_bash", json!({"code": "echo RAN-IN-A-CONTAINER"}));
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![run.clone(), Reply::text("done"), run, Reply::text("done")],
    );
    let image = std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".into());
    for i in 0..60 {
        sb.write(&format!("node_modules/p{i}/index.js"), "x\n");
    }
    sb.write("a/.env", "A=1\n");
    sb.write("a/ok.txt", "ok\n");
    sb.write("b/.env", "B=1\n");
    sb.write("b/ok.txt", "ok\n");
    let ws = sb.ws().display().to_string();
    let cases = [
        (
            "mask_max_entries = 100",
            "it holds more than 100 files and directories, too many to check each for protected \
             files, and a sandbox never starts with one unchecked. Open a smaller folder as the \
             workspace, or raise `sandbox.mask_max_entries` in your config",
        ),
        (
            "mask_max_mounts = 1",
            "2 protected or unreadable paths would have to be hidden or made read-only, over \
             the limit of 1 mounts in one container",
        ),
    ];
    for (i, (setting, expected)) in cases.iter().enumerate() {
        sb.user_config(&format!(
            "[sandbox]\npool_size = 0\n{setting}\nimages = {{ bash = \"{image}\" }}\n"
        ));
        let since = engine_now();
        let (out, pid) = chat(&sb, "run it");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let requests = sb.model.requests();
        let result = &crate::support::tool_results(&requests[2 * i + 1].body)[0];
        assert!(
            result.contains(&format!(
                "refused to mount the workspace `{ws}` in the sandbox: {expected}"
            )),
            "{setting}: {result}"
        );
        assert!(!result.contains("RAN-IN-A-CONTAINER"), "{result}");
        assert_eq!(
            containers_created_by(pid, &since),
            0,
            "{setting}: no container was created"
        );
    }
}

/// Class 8: a workspace only root may open (a `mktemp -d` of root's, mode 0700) is refused
/// with what to do before any container starts, instead of failing inside with `can't cd`;
/// one that belongs to a user, 0700 too, is listed, as that user.
#[test]
fn a_workspace_the_sandbox_user_cannot_open_is_refused_before_a_container_starts() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let run = Reply::tool_call("run_bash", json!({"code": "id -u; ls /workspace"}));
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![run.clone(), Reply::text("done"), run, Reply::text("done")],
    );
    configure(&sb);
    sb.write("hello.txt", "hi\n");
    let ws = sb.ws();
    chmod(&ws, 0o700);
    let since = engine_now();
    let (out, pid) = chat(&sb, "list it");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = &crate::support::tool_results(&sb.model.requests()[1].body)[0];
    let shown = ws.display();
    assert!(
        result.contains(&format!(
            "refused to mount the workspace `{shown}` in the sandbox: it belongs to root with \
             mode 0700; a sandbox never runs as root, and its user `nobody` (uid 65534) may not \
             open it. Let others read it (`chmod o+rx {shown}`)"
        )),
        "{result}"
    );
    assert!(!result.contains("can't cd"), "{result}");
    assert_eq!(
        containers_created_by(pid, &since),
        0,
        "no container was created"
    );

    // The same folder given to a user: the sandbox runs as its owner and lists it.
    chown(&ws, "4242:4242");
    let (out, _) = chat(&sb, "list it");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = &crate::support::tool_results(&sb.model.requests()[3].body)[0];
    assert!(
        result.contains("exit code 0") && result.contains("4242\nhello.txt"),
        "{result}"
    );
}

/// Class 8, cairn run by a user (uid 4242, reaching the engine through the `docker` group): the
/// sandbox runs as that user, so it lists the user's own 0700 workspace, and cannot read a file
/// of another user's that the user may not read either (it ran as the workspace's owner before).
#[test]
fn a_user_s_sandbox_reads_what_the_user_reads() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let run = Reply::tool_call(
        "run_bash",
        json!({"code": "id -u; ls /workspace; cat /workspace/private.txt; echo cat=$?"}),
    );
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![run.clone(), Reply::text("done"), run, Reply::text("done")],
    );
    configure(&sb);
    sb.write("hello.txt", "hi\n");
    sb.write("private.txt", "SECRET-of-another-user\n");
    let ws = sb.ws();
    let docker_gid = std::fs::metadata("/var/run/docker.sock").unwrap().gid();
    // Everything of the test's is the user's, but the workspace: first their own, 0700.
    chown(sb.dir.path(), &format!("4242:{docker_gid}"));
    chmod(&ws, 0o700);
    let as_user = |prompt: &str| {
        let out = sb
            .command()
            .uid(4242)
            .gid(docker_gid)
            .args(["chat", "-w", ws.to_str().unwrap(), "--yes", prompt])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    as_user("list it");
    let result = &crate::support::tool_results(&sb.model.requests()[1].body)[0];
    assert!(
        result.contains("4242\nhello.txt\nprivate.txt\nSECRET-of-another-user"),
        "the user's own 0700 workspace is read as the user: {result}"
    );
    // Now the workspace is another user's, open to all but `private.txt`, which is theirs alone.
    chown(&ws, "4343:4343");
    chmod(&ws, 0o755);
    chmod(&ws.join("private.txt"), 0o600);
    chmod(&ws.join("hello.txt"), 0o644);
    as_user("list it");
    let requests = sb.model.requests();
    let result = &crate::support::tool_results(&requests[3].body)[0];
    assert!(
        result.contains("4242\nhello.txt\nprivate.txt") && result.contains("Permission denied"),
        "{result}"
    );
    assert!(
        !requests[3]
            .body
            .to_string()
            .contains("SECRET-of-another-user"),
        "the sandbox read what its user may not: {result}"
    );
}

/// The container a run really gets: `docker inspect` of it while it runs, with the default
/// limits (2 CPUs or the machine's, 4 GiB and no swap, 256 processes, a 256 MiB `/tmp`) and
/// every restriction; the output and time limits are the exec's (`Limits` unit tests).
#[test]
fn the_running_container_has_the_default_limits_and_no_privileges() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let image = std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".into());
    sb.user_config(&format!(
        "[sandbox]\npool_size = 0\nimages = {{ bash = \"{image}\" }}\n"
    ));
    let ws = sb.ws();
    let child = sb
        .command()
        .args([
            "tools",
            "call",
            "-w",
            ws.to_str().unwrap(),
            "run_bash",
            "--yes",
            "--args",
        ])
        .arg(
            json!({"code": "while [ ! -e /workspace/go ]; do sleep 0.1; done; echo finished"})
                .to_string(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while containers_of(Some(pid)).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let ids = containers_of(Some(pid));
    assert_eq!(ids.len(), 1, "the run's container is up");
    let out = Command::new("docker")
        .args(["inspect", &ids[0]])
        .output()
        .unwrap();
    let inspect: Value = serde_json::from_slice(&out.stdout).unwrap();
    std::fs::write(ws.join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("finished"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let host = &inspect[0]["HostConfig"];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    assert_eq!(host["NanoCpus"], json!(2.min(cores) * 1_000_000_000));
    assert_eq!(host["Memory"], json!(4_i64 * 1024 * 1024 * 1024));
    assert_eq!(
        host["MemorySwap"], host["Memory"],
        "no swap on top of memory"
    );
    assert_eq!(host["PidsLimit"], json!(256));
    assert_eq!(host["ReadonlyRootfs"], json!(true));
    assert_eq!(
        host["Tmpfs"]["/tmp"],
        json!(format!(
            "rw,exec,nosuid,nodev,size={},mode=1777",
            256 * 1024 * 1024
        ))
    );
    assert_eq!(host["CapDrop"], json!(["ALL"]));
    assert_eq!(host["SecurityOpt"], json!(["no-new-privileges"]));
    assert_eq!(host["NetworkMode"], json!("none"));
    assert_eq!(host["Init"], json!(true));
    assert_eq!(host["Privileged"], json!(false));
    let binds: Vec<&str> = host["Binds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert_eq!(binds, [format!("{}:/workspace:ro", ws.display())]);
    let user = inspect[0]["Config"]["User"].as_str().unwrap();
    assert_eq!(
        user, "65534:65534",
        "a root-owned workspace is seen as nobody"
    );
    assert!(
        containers_of(Some(pid)).is_empty(),
        "the container was removed"
    );
}

/// A run that asks for a writable workspace is asked about with the writable workspace named;
/// a denial leaves the files as they were, and an approval lets the write through (so the
/// test can tell the two apart).
#[test]
fn a_writable_workspace_is_asked_for_by_name_in_the_editor() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let write = Reply::tool_call(
        "run_bash",
        json!({
            "code": "cat /workspace/data.txt; echo changed > /workspace/data.txt; echo wrote=$?",
            "workspace_write": true
        }),
    );
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![write.clone(), write, Reply::text("Done.")],
    );
    configure(&sb);
    sb.write("data.txt", "original\n");
    // The user's own workspace (the tests run as root; a sandbox never does).
    chown(&sb.ws(), "4242:4242");
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = answer_in_turn(&["Deny", "Allow once"]);
    let (run, _) = ed.chat(json!({"message": "change it"}));
    let events = ed.finish(&run);
    let results = of_kind(&events, "toolResult");
    assert_eq!(results.len(), 2, "{events:#?}");
    let asks = ed.question_texts();
    assert_eq!(asks.len(), 2, "{asks:?}");
    for ask in &asks {
        assert!(
            ask.contains(
                "`run_bash` runs code with write access to the workspace (policy.effects.write)"
            ),
            "{ask}"
        );
    }
    assert_eq!(results[0]["isError"], true);
    assert!(
        results[0]["content"].as_str().unwrap().contains("denied"),
        "{:?}",
        results[0]
    );
    assert_eq!(results[1]["isError"], false, "{:?}", results[1]);
    // The approved run found the file as it was: the denied one changed nothing.
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("original\nwrote=0"),
        "{:?}",
        results[1]
    );
    assert_eq!(sb.read("data.txt"), "changed\n");
    ed.shutdown();
}

/// Class 6 through a writable sandbox: a file that runs code that does not exist yet (a
/// `.cargo/config.toml` whose `rustc-wrapper` the next build would run) cannot be masked, so
/// "allow for this session" on one writable run must not let the next one create it: each
/// writable run is asked, and the denied one leaves no such file.
#[test]
fn a_session_grant_does_not_cover_the_next_writable_run() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let first = Reply::tool_call(
        "run_bash",
        json!({ "code": "echo formatted > /workspace/data.txt", "workspace_write": true }),
    );
    let second = Reply::tool_call(
        "run_bash",
        json!({
            "code": "mkdir -p /workspace/.cargo && printf '[build]\\nrustc-wrapper = \"/workspace/w.sh\"\\n' > /workspace/.cargo/config.toml; echo planted=$?",
            "workspace_write": true
        }),
    );
    let sb = Sandbox::new(Format::OpenAi, vec![first, second, Reply::text("Done.")]);
    configure(&sb);
    sb.write("data.txt", "original\n");
    // The user's own workspace (the tests run as root; a sandbox never does).
    chown(&sb.ws(), "4242:4242");
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = answer_in_turn(&["Allow for this session", "Deny"]);
    let (run, _) = ed.chat(json!({"message": "format it"}));
    let events = ed.finish(&run);
    let results = of_kind(&events, "toolResult");
    assert_eq!(results.len(), 2, "{events:#?}");
    let asks = ed.question_texts();
    assert_eq!(
        asks.len(),
        2,
        "the second writable run was not asked: {asks:?}"
    );
    for ask in &asks {
        assert!(
            ask.contains(
                "`run_bash` runs code with write access to the workspace (policy.effects.write); asked at every call"
            ),
            "{ask}"
        );
    }
    // The first (approved for the session) ran; the second was denied and planted nothing.
    assert_eq!(results[0]["isError"], false, "{:?}", results[0]);
    assert_eq!(sb.read("data.txt"), "formatted\n");
    assert_eq!(results[1]["isError"], true, "{:?}", results[1]);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("the user denied this call"),
        "{:?}",
        results[1]
    );
    assert!(
        !sb.ws().join(".cargo").exists(),
        "a denied run created .cargo/config.toml"
    );
    ed.shutdown();
}

/// Class 6 in the sandbox: with a writable workspace approved, a file that runs code
/// (`.cargo/config.toml`, a CI workflow) is visible with its content, so builds and tests that
/// need it work, but neither it nor its directory of workflows can be changed from the
/// container, and the files are as they were afterwards; a secret stays hidden, and an ordinary
/// file is written.
#[test]
fn files_that_run_code_are_readable_but_not_writable_in_a_writable_sandbox() {
    if !enabled() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let script = "cd /workspace; cat .cargo/config.toml; cat .github/workflows/ci.yml; \
                  echo x >> .cargo/config.toml; echo cargo=$?; \
                  echo x >> .github/workflows/ci.yml; echo ci=$?; \
                  echo x > .github/workflows/new.yml; echo newci=$?; \
                  cat .env; echo ordinary > data.txt; echo data=$?";
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "run_bash",
                json!({ "code": script, "workspace_write": true }),
            ),
            Reply::text("done"),
        ],
    );
    configure(&sb);
    let cargo_config = "[build]\njobs = 2 # CARGO-CONFIG-VISIBLE\n";
    let workflow = "on: push # WORKFLOW-VISIBLE\n";
    sb.write(".cargo/config.toml", cargo_config);
    sb.write(".github/workflows/ci.yml", workflow);
    sb.write(".env", "SECRET-env-in-writable-run\n");
    sb.write("data.txt", "original\n");
    // The user's own workspace (the tests run as root; a sandbox never does).
    chown(&sb.ws(), "4242:4242");
    let (out, pid) = chat(&sb, "check the build config");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = sb.model.requests();
    let result = &crate::support::tool_results(&requests[1].body)[0];
    assert!(
        result.contains("CARGO-CONFIG-VISIBLE") && result.contains("WORKFLOW-VISIBLE"),
        "files that run code are readable: {result}"
    );
    for write in ["cargo=", "ci=", "newci="] {
        assert!(
            result.contains(write) && !result.contains(&format!("{write}0")),
            "{write} went through: {result}"
        );
    }
    assert!(result.contains("data=0"), "{result}");
    assert_eq!(sb.read("data.txt"), "ordinary\n", "the mount was writable");
    assert_eq!(sb.read(".cargo/config.toml"), cargo_config);
    assert_eq!(sb.read(".github/workflows/ci.yml"), workflow);
    assert!(!sb.ws().join(".github/workflows/new.yml").exists());
    for (i, r) in requests.iter().enumerate() {
        assert!(
            !r.body.to_string().contains("SECRET-env-in-writable-run"),
            "the secret reached model request {i}"
        );
    }
    assert!(
        containers_of(Some(pid)).is_empty(),
        "the container was removed"
    );
}
