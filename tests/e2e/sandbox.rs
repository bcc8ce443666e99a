//! Code tools through the agent, against a real Docker engine (gated by `CAIRN_DOCKER_TESTS=1`;
//! the image is `CAIRN_TEST_IMAGE`, default `cairn-test/runtime:2`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Editor, Sandbox};

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
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "toolResult")
        .collect();
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
    let asks: Vec<String> = ed
        .server_requests
        .iter()
        .filter(|r| r["method"] == "window/showMessageRequest")
        .map(|r| r["params"]["message"].as_str().unwrap().to_owned())
        .collect();
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
    let ws = sb.ws();
    let call = |tool: &str, args: Value| {
        let out = sb
            .command()
            .args([
                "tools",
                "call",
                "-w",
                ws.to_str().unwrap(),
                tool,
                "--yes",
                "--args",
            ])
            .arg(args.to_string())
            .stdin(Stdio::null())
            .output()
            .unwrap();
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
