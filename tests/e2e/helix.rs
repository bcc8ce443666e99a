//! Helix: the real `hx` (from `scripts/helix`, named by `CAIRN_HX`) in a detached tmux session,
//! with `editors/helix/languages.toml` and the `cairn-chat` queries of `grammars/helix`, driving
//! the real `cairn lsp` against the scripted model. Keys go in with `tmux send-keys`; what the
//! user sees is read back with `tmux capture-pane`. Gated by `CAIRN_HELIX_TESTS=1` (`.ci/run`
//! sets it); the tests of the server's side of Helix (a `rootPath`-only initialize, errors of
//! commands shown as messages) run always.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{Editor, Sandbox, uri};

const HX_TIMEOUT: Duration = Duration::from_secs(60);

/// The command that runs hx, when the Helix tests are on.
fn helix() -> Option<String> {
    if !cairn_test_support::gate(
        "CAIRN_HELIX_TESTS",
        "and CAIRN_HX=\"$(scripts/helix)\" to run Helix in tmux (.ci/run does)",
    ) {
        return None;
    }
    match std::env::var("CAIRN_HX").ok().filter(|s| !s.is_empty()) {
        Some(hx) => Some(hx),
        None => {
            panic!("CAIRN_HELIX_TESTS=1 needs CAIRN_HX, the hx to run (scripts/helix prints it)")
        }
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes Helix's config into the sandbox's home, as the guide says: the shipped
/// languages.toml with `cairn` by its path, the cairn-chat queries in the user's runtime dir,
/// and a config.toml whose statusline names the language. Returns the home.
fn configure(sb: &Sandbox) -> PathBuf {
    let home = sb.dir.path().join("home");
    let config = home.join("config/helix");
    std::fs::create_dir_all(config.join("runtime/queries")).unwrap();
    let shipped = std::fs::read_to_string(repo().join("editors/helix/languages.toml")).unwrap();
    assert!(shipped.contains("command = \"cairn\""), "{shipped}");
    let languages = shipped.replace(
        "command = \"cairn\"",
        &format!("command = {}", json!(env!("CARGO_BIN_EXE_cairn"))),
    );
    std::fs::write(config.join("languages.toml"), languages).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "theme = \"default\"\n\n[editor]\ntrue-color = true\n\n[editor.statusline]\nright = [\"file-type\", \"position\"]\n",
    )
    .unwrap();
    copy_dir(
        &repo().join("grammars/helix/queries/cairn-chat"),
        &config.join("runtime/queries/cairn-chat"),
    );
    home
}

/// Quotes a word for `sh`.
fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A Helix running in its own tmux server, with a private home and config.
struct Helix {
    socket: PathBuf,
    home: PathBuf,
}

impl Helix {
    /// Starts `hx FILE` in the workspace, configured by [`configure`].
    fn start(sb: &Sandbox, hx: &str, file: &str) -> Helix {
        configure(sb);
        Helix::launch(sb, hx, file)
    }

    /// Starts `hx FILE` in the workspace with the config already in the sandbox's home.
    fn launch(sb: &Sandbox, hx: &str, file: &str) -> Helix {
        let home = sb.dir.path().join("home");
        let socket = sb.dir.path().join("tmux.sock");
        let mut env = vec![
            ("HOME".to_string(), home.display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join("config").display().to_string(),
            ),
            (
                "XDG_DATA_HOME".into(),
                home.join("data").display().to_string(),
            ),
            (
                "XDG_CACHE_HOME".into(),
                home.join("cache").display().to_string(),
            ),
            // No marksman, rust-analyzer or cairn on it: Helix starts cairn by its path.
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("TERM".into(), "xterm-256color".into()),
            ("COLORTERM".into(), "truecolor".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        let cmd = sb.command();
        for (k, v) in cmd.get_envs() {
            let k = k.to_string_lossy().to_string();
            if let Some(v) = v
                && !env.iter().any(|(have, _)| *have == k)
            {
                env.push((k, v.to_string_lossy().to_string()));
            }
        }
        let mut line = String::from("exec env -i");
        for (k, v) in &env {
            line.push(' ');
            line.push_str(&sh_quote(&format!("{k}={v}")));
        }
        line.push(' ');
        line.push_str(hx);
        line.push_str(" -v ");
        line.push_str(&sh_quote(file));
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args([
                "-u",
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "hx",
                "-x",
                "100",
                "-y",
                "40",
            ])
            .arg("-c")
            .arg(sb.ws())
            .arg(line)
            .status()
            .expect("tmux is needed for the Helix tests");
        assert!(status.success(), "tmux new-session failed");
        Helix { socket, home }
    }

    fn tmux(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    /// Sends keys as tmux names them (`Enter`, `Down`, `Escape`, `C-c`, or literal text).
    fn keys(&self, keys: &[&str]) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "hx"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Types text literally.
    fn type_text(&self, text: &str) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "hx", "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    /// The screen as text; with `colors`, with its SGR escapes.
    fn pane(&self, colors: bool) -> String {
        let mut cmd = self.tmux();
        cmd.args(["capture-pane", "-p", "-t", "hx"]);
        if colors {
            cmd.arg("-e");
        }
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen satisfies `done`, and returns it.
    fn wait(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.wait_for(HX_TIMEOUT, done).unwrap_or_else(|| {
            panic!(
                "timeout waiting for {what}; the screen:\n{}\nHelix's log:\n{}",
                self.pane(false),
                self.log()
            )
        })
    }

    /// The screen once it satisfies `done`, or `None` after `within`.
    fn wait_for(&self, within: Duration, done: impl Fn(&str) -> bool) -> Option<String> {
        let started = Instant::now();
        loop {
            let pane = self.pane(false);
            if done(&pane) {
                return Some(pane);
            }
            if started.elapsed() > within {
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// How many `workspace/executeCommand` requests Helix has logged sending.
    fn commands_sent(&self) -> usize {
        std::fs::read_to_string(self.home.join("cache/helix/helix.log"))
            .unwrap_or_default()
            .matches(r#""method":"workspace/executeCommand""#)
            .count()
    }

    /// The last lines of Helix's log (it logs the LSP traffic with `-v`).
    fn log(&self) -> String {
        let log =
            std::fs::read_to_string(self.home.join("cache/helix/helix.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Opens the code-action menu until it lists `action` (the server may still be starting),
    /// then picks it by moving down to it.
    fn code_action(&self, action: &str) {
        let deadline = Instant::now() + HX_TIMEOUT;
        loop {
            self.keys(&["Space", "a"]);
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(3) {
                let pane = self.pane(false);
                if let Some(menu) = menu_items(&pane)
                    && let Some(i) = menu.iter().position(|item| item == action)
                {
                    for _ in 0..i {
                        self.keys(&["Down"]);
                    }
                    let sent = self.commands_sent();
                    self.keys(&["Enter"]);
                    // Under load a key can arrive before the menu takes input: no command in
                    // Helix's log and the menu still on the screen say so; Enter again picks it.
                    let started = Instant::now();
                    while self.commands_sent() == sent {
                        if started.elapsed() > Duration::from_secs(3) {
                            if menu_items(&self.pane(false)).is_some() {
                                self.keys(&["Enter"]);
                            }
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            assert!(
                Instant::now() < deadline,
                "the code actions never listed {action}; the screen:\n{}\nHelix's log:\n{}",
                self.pane(false),
                self.log()
            );
            self.keys(&["Escape"]);
            // An Escape followed at once by Space can be read as Alt-Space.
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Helix {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

/// The items of the code-action menu on the screen: the cairn titles we know, in screen order.
fn menu_items(pane: &str) -> Option<Vec<String>> {
    const TITLES: [&str; 4] = ["Send", "Ask cairn", "Explain", "Fix"];
    let mut items = Vec::new();
    for line in pane.lines() {
        // A menu row is drawn over the text after the line number column: `  3   Explain  `.
        for title in TITLES {
            let padded = format!(" {title} ");
            if line.contains(&padded) || line.trim_end().ends_with(&format!(" {title}")) {
                items.push(title.to_string());
            }
        }
    }
    (!items.is_empty()).then_some(items)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The line of the screen that contains `text`, with its colours.
fn colored_line<'a>(pane: &'a str, text: &str) -> &'a str {
    pane.lines()
        .find(|l| strip_sgr(l).contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?} on the screen:\n{pane}"))
}

fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The default theme's colours, as true-colour SGR parameters.
const GREEN_DIFF_PLUS: &str = "38;2;53;191;134"; // diff.plus = #35bf86
const LILAC_HEADING: &str = "38;2;219;191;239"; // markup.heading = lilac #dbbfef
const RAW_ALMOND: &str = "38;2;236;205;186"; // markup.raw = almond #eccdba

/// Send in a chat document: the tool call, its result and the answer stream into the buffer,
/// highlighted by the cairn-chat queries, and `:w` saves the conversation.
#[test]
fn helix_send_streams_a_tool_call_and_the_answer_into_the_chat_document() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text("The notes say hello, and that the answer is 42."),
        ],
    );
    sb.write("notes.txt", "Hello from the demo.\nThe answer is 42.\n");
    sb.write(
        ".cairn/chats/test.md",
        "## You\n\nWhat does `notes.txt` say?\n",
    );

    let helix = Helix::start(&sb, &hx, ".cairn/chats/test.md");
    let pane = helix.wait("Helix showing the chat document", |p| {
        p.contains("What does `notes.txt` say?") && p.contains("cairn-chat")
    });
    // The statusline names the language: the glob of languages.toml picked cairn-chat.
    assert!(pane.contains("cairn-chat"), "{pane}");

    helix.code_action("Send");
    let pane = helix.wait("the answer in the buffer", |p| {
        p.contains("The notes say hello, and that the answer is 42.")
    });
    let shown: Vec<&str> = pane.lines().map(str::trim_end).collect();
    let at = |needle: &str| {
        shown
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not on the screen:\n{pane}"))
    };
    let order = [
        at("## You"),
        at("What does `notes.txt` say?"),
        at("## cairn"),
        at("```tool-call read_file"),
        at(r#"{"path":"notes.txt"}"#),
        at("```tool-result ok"),
        at("Hello from the demo."),
        at("The notes say hello, and that the answer is 42."),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{pane}");
    // A fresh `## You` follows the answer, for the next message.
    helix.wait("a new `## You` after the answer", |p| {
        let after = p.split("The notes say hello").nth(1).unwrap_or_default();
        after.contains("## You")
    });

    // What the user sees: `## You` in the diff.plus green, not the plain heading's lilac;
    // `## cairn` in another colour; the tool result dimmed unlike the answer.
    let colors = helix.pane(true);
    // (From the `#` on: the gutter's line number has its own colour.)
    let heading = |text: &str| {
        let line = colored_line(&colors, text);
        line[line.find('#').unwrap()..].to_string()
    };
    let you = heading("## You");
    assert!(you.contains(GREEN_DIFF_PLUS), "{you:?}");
    assert!(!you.contains(LILAC_HEADING), "{you:?}");
    let cairn = heading("## cairn");
    assert!(
        !cairn.contains(GREEN_DIFF_PLUS) && !cairn.contains(LILAC_HEADING),
        "{cairn:?}"
    );
    let result = colored_line(&colors, "Hello from the demo.");
    let answer = colored_line(&colors, "The notes say hello");
    // The colour in effect where `text` starts: the parameters of the last SGR before it.
    let color_of = |line: &str, text: &str| {
        let at = line.find(text).unwrap();
        let (params, _) = line[..at]
            .rsplit_once("\u{1b}[")
            .and_then(|(_, s)| s.split_once('m'))
            .unwrap();
        params.to_string()
    };
    let result_color = color_of(result, "Hello");
    assert_ne!(
        result_color,
        color_of(answer, "notes"),
        "{result:?}\n{answer:?}"
    );
    // (Without the cairn-chat queries it would be the code block's colour.)
    assert_ne!(result_color, RAW_ALMOND, "{result:?}");

    // A tool call's arguments are highlighted as JSON: the key and the string differ.
    let arguments = colored_line(&colors, r#"{"path":"notes.txt"}"#);
    assert_ne!(
        color_of(arguments, "\"path\""),
        color_of(arguments, "\"notes.txt\""),
        "{arguments:?}"
    );

    // The inherited injections work: the inline code in the question has the raw colour.
    let question = colored_line(&colors, "What does");
    assert!(
        question.contains(&format!("{RAW_ALMOND}mnotes.txt")),
        "{question:?}"
    );

    // The model got the tool's result before answering.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("Hello from the demo.")
    );

    // Helix saves the conversation like any file.
    helix.keys(&["Escape"]);
    helix.type_text(":w");
    helix.keys(&["Enter"]);
    let deadline = Instant::now() + HX_TIMEOUT;
    let saved = loop {
        let text = sb.read(".cairn/chats/test.md");
        if text.contains("The notes say hello") || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        saved.starts_with("## You\n\nWhat does `notes.txt` say?\n\n## cairn\n"),
        "{saved}"
    );
    for part in [
        "## cairn\n\n```tool-call read_file\n{\"path\":\"notes.txt\"}\n```\n\n```tool-result ok\n",
        "The answer is 42.\n```\n\nThe notes say",
        "Hello from the demo.",
        "The notes say hello, and that the answer is 42.",
    ] {
        assert!(
            saved.contains(part),
            "{part:?} not in the saved document:\n{saved}"
        );
    }
    assert!(saved.trim_end().ends_with("## You"), "{saved}");
}

/// Explain on a selection in a source file: cairn creates a chat document, Helix shows it, and
/// the explanation streams into it.
#[test]
fn helix_explain_opens_a_chat_document_with_the_explanation() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![Reply::text("This function adds two numbers.")],
    );
    sb.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );

    let helix = Helix::start(&sb, &hx, "src/lib.rs");
    helix.wait("Helix showing the file", |p| p.contains("pub fn add"));
    helix.keys(&["%"]);
    helix.code_action("Explain");
    let pane = helix.wait("the explanation in a new chat document", |p| {
        p.contains("This function adds two numbers.")
    });
    assert!(pane.contains(".cairn/chats/chat-"), "{pane}");
    assert!(pane.contains("Explain this code."), "{pane}");
    assert!(pane.contains("Context: `src/lib.rs`"), "{pane}");
    assert!(pane.contains("a + b"), "{pane}");
    assert!(pane.contains("cairn-chat"), "{pane}");
    let prompt = sb.model.requests()[0].body["messages"].to_string();
    assert!(prompt.contains("a + b"), "{prompt}");
    // The document exists on disk (created through workspace/applyEdit).
    let chats: Vec<_> = std::fs::read_dir(sb.ws().join(".cairn/chats"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        chats
            .iter()
            .any(|n| n.starts_with("chat-") && n.ends_with(".md")),
        "{chats:?}"
    );
}

/// Fix asks before `edit_file` runs: Helix shows cairn's question as a prompt, "Allow once"
/// lets the edit into the buffer, and `:wa` saves it.
#[test]
fn helix_fix_asks_for_approval_and_edits_the_buffer() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "a.wrapping_add(b)"}),
            ),
            Reply::text("The addition wraps now."),
        ],
    );
    sb.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );

    let helix = Helix::start(&sb, &hx, "src/lib.rs");
    helix.wait("Helix showing the file", |p| p.contains("pub fn add"));
    helix.keys(&["%"]);
    helix.code_action("Fix");
    let pane = helix.wait("the approval prompt", |p| {
        p.contains("cairn: allow `edit_file`") && p.contains("Allow once")
    });
    assert!(pane.contains("Deny"), "{pane}");
    // Nothing is edited before the answer.
    assert!(sb.read("src/lib.rs").contains("a + b"));
    helix.keys(&["Enter"]);
    let pane = helix.wait("the answer after the edit", |p| {
        p.contains("The addition wraps now.")
    });
    assert!(pane.contains("> allowed once"), "{pane}");
    assert!(pane.contains("> edited file://"), "{pane}");
    helix.type_text(":wa");
    helix.keys(&["Enter"]);
    let deadline = Instant::now() + HX_TIMEOUT;
    while !sb.read("src/lib.rs").contains("wrapping_add") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        sb.read("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a.wrapping_add(b)\n}\n"
    );
}

/// A provider error ends the run with an `> error:` line in the chat document, which keeps
/// the conversation so far.
#[test]
fn helix_provider_error_is_shown_in_the_chat_document() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
            Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
        ],
    );
    sb.write(".cairn/chats/test.md", "## You\n\nHello?\n");
    let helix = Helix::start(&sb, &hx, ".cairn/chats/test.md");
    helix.wait("Helix showing the chat document", |p| p.contains("Hello?"));
    helix.code_action("Send");
    let pane = helix.wait("the error line", |p| p.contains("> error:"));
    let line = pane
        .lines()
        .find(|l| l.contains("> error:"))
        .unwrap_or_default();
    assert!(line.contains("401"), "{pane}");
    assert!(pane.contains("Hello?"), "{pane}");
}

/// `:lsp-workspace-command cairn.cancel` stops a run half way: the document keeps what was
/// written, says `> cancelled`, and offers a fresh `## You`.
#[test]
fn helix_cancel_stops_the_run_and_keeps_the_chat() {
    let Some(hx) = helix() else { return };
    let words: Vec<String> = (1..=60).map(|i| format!("word{i}")).collect();
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![Reply::text(words.join(" ")).with_delay_ms(200)],
    );
    sb.write(".cairn/chats/test.md", "## You\n\nCount, slowly.\n");
    let helix = Helix::start(&sb, &hx, ".cairn/chats/test.md");
    helix.wait("Helix showing the chat document", |p| {
        p.contains("Count, slowly.")
    });
    helix.code_action("Send");
    helix.wait("the answer streaming", |p| p.contains("word2"));
    helix.type_text(":lsp-workspace-command cairn.cancel");
    helix.keys(&["Enter"]);
    let pane = helix.wait("the run cancelled", |p| p.contains("> cancelled"));
    assert!(!pane.contains("word60"), "{pane}");
    assert!(pane.contains("Count, slowly."), "{pane}");
    let after = pane.split("> cancelled").nth(1).unwrap_or_default();
    assert!(after.contains("## You"), "{pane}");
}

/// The server crashes mid-run: Helix says the language server exited, the document keeps the
/// answer so far, and after `:lsp-restart` Send works again.
#[test]
fn helix_server_crash_then_lsp_restart() {
    let Some(hx) = helix() else { return };
    let words: Vec<String> = (1..=60).map(|i| format!("word{i}")).collect();
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::text(words.join(" ")).with_delay_ms(200),
            Reply::text("Back after the restart."),
        ],
    );
    sb.write(".cairn/chats/test.md", "## You\n\nCount, slowly.\n");
    let helix = Helix::start(&sb, &hx, ".cairn/chats/test.md");
    helix.wait("Helix showing the chat document", |p| {
        p.contains("Count, slowly.")
    });
    helix.code_action("Send");
    helix.wait("the answer streaming", |p| p.contains("word2"));
    let server = cairn_of(&helix.home).expect("the cairn server Helix started");
    // The shell's own `kill`: procps may be missing on a minimal machine.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -9 {server}")])
        .status()
        .unwrap();
    assert!(status.success());
    let pane = helix.wait("Helix reporting the exit", |p| {
        p.contains("Language server exited")
    });
    assert!(pane.contains("word2"), "{pane}");
    assert!(!pane.contains("word60"), "{pane}");

    helix.type_text(":lsp-restart");
    helix.keys(&["Enter"]);
    // The last section is cairn's cut-off answer: write the next message under a new heading.
    helix.keys(&["g", "e", "o", "Enter"]);
    helix.type_text("## You");
    helix.keys(&["Enter", "Enter"]);
    helix.type_text("Go on.");
    helix.keys(&["Escape"]);
    helix.code_action("Send");
    let pane = helix.wait("the answer after the restart", |p| {
        p.contains("Back after the restart.")
    });
    assert!(pane.contains("word2"), "{pane}");
    assert!(pane.contains("Go on."), "{pane}");
    assert_ne!(cairn_of(&helix.home), Some(server));
}

/// The pid of the `cairn` process started with this home (read from /proc), if any.
fn cairn_of(home: &Path) -> Option<u32> {
    let want = format!("HOME={}", home.display());
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_cairn")).ok()?;
    std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let entry = entry.ok()?;
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        if std::fs::read_link(entry.path().join("exe")).ok()? != exe {
            return None;
        }
        let environ = std::fs::read(entry.path().join("environ")).ok()?;
        environ
            .split(|b| *b == 0)
            .any(|v| v == want.as_bytes())
            .then_some(pid)
    })
}

/// Helix only logs a failed command; cairn also shows the error, so Send with nothing to send
/// says what to do on the screen.
#[test]
fn helix_shows_why_a_command_failed() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write(".cairn/chats/test.md", "# Notes\n\n## You\n\n");
    let helix = Helix::start(&sb, &hx, ".cairn/chats/test.md");
    helix.wait("Helix showing the chat document", |p| p.contains("# Notes"));
    // Sending nothing changes nothing, so a Send that a loaded machine lost is sent again.
    let shown =
        |p: &str| p.contains("nothing to send: write your message under the last `## You` heading");
    for _ in 0..3 {
        helix.code_action("Send");
        if helix.wait_for(Duration::from_secs(15), shown).is_some() {
            break;
        }
    }
    helix.wait("the error on the screen", shown);
    assert!(sb.model.requests().is_empty());
}

/// The server's side of that: a failed command from a client named `helix` is also a
/// `window/showMessage` error; other clients show the reply themselves and get no message.
#[test]
fn failed_commands_are_shown_to_helix_only() {
    for (client, shown) in [("helix", true), ("Neovim", false)] {
        let sb = Sandbox::new(Format::OpenAi, vec![]);
        let doc = sb.write(".cairn/chats/test.md", "## You\n\n");
        let u = uri(&doc);
        let mut ed = Editor::spawn(&sb, &[]);
        ed.call(
            "initialize",
            json!({
                "processId": null,
                "clientInfo": {"name": client},
                "rootUri": uri(&sb.ws()),
                "capabilities": {"workspace": {"applyEdit": true}}
            }),
        );
        ed.notify("initialized", json!({}));
        ed.open(&u, "## You\n\n");
        let reply = ed.request(
            "workspace/executeCommand",
            json!({"command": "cairn.send", "arguments": [{"uri": u}]}),
        );
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        // A request after it: its reply comes after any message the failure sent.
        ed.call("cairn/sessions", json!({}));
        let messages: Vec<String> = ed
            .notifications
            .iter()
            .filter(|n| n["method"] == "window/showMessage")
            .map(|n| {
                n["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        let found = messages.iter().any(|m| {
            m == "cairn: cairn.send: nothing to send: write your message under the last `## You` heading"
        });
        assert_eq!(found, shown, "{client}: {messages:?}");
    }
}

/// `cairn` not installed: with the shipped languages.toml (`command = "cairn"`) and no cairn on
/// the PATH, Helix says no server offers code actions (and `hx --health`, tested below, why).
#[test]
fn helix_without_cairn_on_the_path() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write(".cairn/chats/test.md", "## You\n\nHello?\n");
    let home = configure(&sb);
    let shipped = std::fs::read_to_string(repo().join("editors/helix/languages.toml")).unwrap();
    std::fs::write(home.join("config/helix/languages.toml"), shipped).unwrap();
    let helix = Helix::launch(&sb, &hx, ".cairn/chats/test.md");
    helix.wait("Helix showing the chat document", |p| p.contains("Hello?"));
    helix.keys(&["Space", "a"]);
    helix.wait("Helix saying no server offers code actions", |p| {
        p.contains("No configured language server supports code actions")
    });
    assert!(sb.model.requests().is_empty());
}

/// The health check finds the cairn-chat queries, and says plainly when `cairn` is not on
/// the PATH (what a user without cairn installed sees).
#[test]
fn helix_health_loads_the_cairn_chat_queries() {
    let Some(hx) = helix() else { return };
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let home = configure(&sb);
    let health = |languages: Option<&str>| {
        if let Some(text) = languages {
            std::fs::write(home.join("config/helix/languages.toml"), text).unwrap();
        }
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{hx} --health cairn-chat"))
            .env_clear()
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        strip_sgr(&String::from_utf8_lossy(&out.stdout))
    };
    let report = health(None);
    assert!(report.contains("Tree-sitter parser: ✓"), "{report}");
    assert!(report.contains("Highlight queries: ✓"), "{report}");
    assert!(report.contains(env!("CARGO_BIN_EXE_cairn")), "{report}");
    let shipped = std::fs::read_to_string(repo().join("editors/helix/languages.toml")).unwrap();
    let report = health(Some(&shipped));
    assert!(report.contains("'cairn' not found in $PATH"), "{report}");
}

/// Helix sends only `rootPath` (no `rootUri`, no workspace folders) when the language's root
/// markers are missing; cairn takes it as the workspace, so Ask cairn has where to put the chat.
#[test]
fn root_path_alone_is_the_workspace() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let src = sb.write("src/lib.rs", "pub fn add() {}\n");
    let u = uri(&src);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.call(
        "initialize",
        json!({
            "processId": null,
            "rootPath": sb.ws().display().to_string(),
            "rootUri": null,
            "workspaceFolders": [],
            "capabilities": {
                "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}},
                "window": {"showDocument": {"support": true}}
            }
        }),
    );
    ed.notify("initialized", json!({}));
    ed.open(&u, "pub fn add() {}\n");
    ed.call(
        "workspace/executeCommand",
        json!({"command": "cairn.ask", "arguments": [{"uri": u}]}),
    );
    let show = ed.pump_until(
        |ed| {
            ed.server_requests
                .iter()
                .find(|r| r["method"] == "window/showDocument")
                .cloned()
        },
        "window/showDocument",
    );
    let doc = show["params"]["uri"].as_str().unwrap();
    assert!(
        doc.starts_with(&format!("{}/.cairn/chats/chat-", uri(&sb.ws()))),
        "{doc}"
    );
}
