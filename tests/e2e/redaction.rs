//! Redaction end to end: a vault value, its base64 form and a credential pattern in a workspace
//! file never reach the model; `[REDACTED:…]` markers do; nor does a credential an API echoes
//! back in any encoding.

use std::process::Stdio;

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{HttpStub, Sandbox, StubReply, text, tool_results, vault_set};

const VALUE: &str = "Tr0ub4dor-e2e-vault-value";
const VALUE_BASE64: &str = "VHIwdWI0ZG9yLWUyZS12YXVsdC12YWx1ZQ==";
const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";

#[test]
fn vault_values_and_credential_patterns_do_not_reach_the_model() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text("The notes hold credentials."),
        ],
    );
    vault_set(&sb, "deploy_token", "example.com", VALUE);

    sb.write(
        "notes.txt",
        &format!("deploy with {VALUE}\nbackup copy {VALUE_BASE64}\naws id {AWS_KEY_ID}\n"),
    );
    let ws = sb.ws();
    let out = sb
        .command()
        .args([
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "what is in notes.txt?",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "The notes hold credentials.");

    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2, "one request per step");
    for r in &requests {
        let body = r.body.to_string();
        for leak in [
            VALUE,
            VALUE_BASE64,
            VALUE_BASE64.trim_end_matches('='),
            AWS_KEY_ID,
        ] {
            assert!(!body.contains(leak), "{leak} reached the model: {body}");
        }
    }
    let after_read = requests[1].body.to_string();
    assert!(
        after_read.contains("deploy with [REDACTED:deploy_token]")
            && after_read.contains("backup copy [REDACTED:deploy_token]")
            && after_read.contains("aws id [REDACTED:aws-access-key-id]"),
        "{after_read}"
    );
}

/// SECURITY.md D2 in the editor: a tool result carrying a vault value and a model answer
/// carrying a credential pattern reach the editor redacted; no message the server sends (run
/// events, status, questions) holds either.
#[test]
fn the_editor_is_shown_redacted_results_and_answers() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("read_file", json!({"path": "notes.txt"})),
            Reply::text(format!("The key id is {AWS_KEY_ID}.")),
        ],
    );
    vault_set(&sb, "deploy_token", "example.com", VALUE);
    sb.write("notes.txt", &format!("deploy with {VALUE}\n"));
    let mut ed = crate::support::Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "what is in notes.txt?"}));
    let events = ed.finish(&run);
    let result = events
        .iter()
        .find(|e| e["kind"] == "toolResult")
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(
        result.contains("deploy with [REDACTED:deploy_token]"),
        "{result}"
    );
    let answer: String = events
        .iter()
        .filter(|e| e["kind"] == "text")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(answer, "The key id is [REDACTED:aws-access-key-id].");
    let everything = serde_json::to_string(&ed.all).unwrap();
    for leak in [VALUE, VALUE_BASE64, AWS_KEY_ID] {
        assert!(!everything.contains(leak), "{leak} reached the editor");
    }
}

/// A Basic credential the guard attaches, for user `deploy`, with what encodings change.
const ECHOED: &str = "Zx9/Echo+Key=\"q\" 7f3e~";

/// `ECHOED` as a server might send it back, written by independent encoders (Python 3,
/// pasted here): `json.dumps(V)[1:-1]`, the same with `/` as `\/` and with every character as
/// `\uXXXX`; `urllib.parse.quote_plus(V)`; `base64.b64encode` of `deploy:V` (what was sent),
/// `admin:V` and `root:V` (the value at all three alignments); `html.escape(V)`; `V.upper()`;
/// `V` split by `\r\n`; `base64.b64encode(V)` wrapped after 20 columns.
const ECHOES: [(&str, &str); 11] = [
    ("json", "Zx9/Echo+Key=\\\"q\\\" 7f3e~"),
    ("json \\/", "Zx9\\/Echo+Key=\\\"q\\\" 7f3e~"),
    (
        "json \\u",
        "\\u005a\\u0078\\u0039\\u002f\\u0045\\u0063\\u0068\\u006f\\u002b\\u004b\\u0065\\u0079\\u003d\\u0022\\u0071\\u0022\\u0020\\u0037\\u0066\\u0033\\u0065\\u007e",
    ),
    ("form", "Zx9%2FEcho%2BKey%3D%22q%22+7f3e~"),
    ("basic deploy", "ZGVwbG95Olp4OS9FY2hvK0tleT0icSIgN2YzZX4="),
    ("basic admin", "YWRtaW46Wng5L0VjaG8rS2V5PSJxIiA3ZjNlfg=="),
    ("basic root", "cm9vdDpaeDkvRWNobytLZXk9InEiIDdmM2V+"),
    ("html", "Zx9/Echo+Key=&quot;q&quot; 7f3e~"),
    ("upper", "ZX9/ECHO+KEY=\"Q\" 7F3E~"),
    ("split", "Zx9/Echo\r\n+Key=\"q\" 7f3e~"),
    ("wrapped base64", "Wng5L0VjaG8rS2V5PSJx\r\nIiA3ZjNlfg=="),
];

/// Class 2 of issue 14 through the binary: an API echoes the Basic credential the guard sent
/// (and the vault value inside it) back in every encoding a server plausibly uses; no request
/// the model server received carries any of them, and the run still completes with the
/// answer read.
#[test]
fn a_credential_echoed_back_encoded_never_reaches_the_model() {
    let api = HttpStub::start(|head| {
        let received = head
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("authorization:"))
            .unwrap_or("");
        let mut body = format!("status: ok\nyou sent: {received}\n");
        for (what, form) in ECHOES {
            body.push_str(&format!("{what}: {form}\n"));
        }
        StubReply::Status(200, vec![], body)
    });
    let port = api.port;
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "api_request",
                json!({
                    "url": format!("http://localhost:{port}/whoami"),
                    "auth": {"secret": "svc", "scheme": "basic", "name": "deploy"}
                }),
            ),
            Reply::text("The service answered."),
        ],
    );
    vault_set(&sb, "svc", "localhost", ECHOED);
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "ask the service who I am",
        ],
        &[("CAIRN_WEB__ALLOW_LOOPBACK", "true")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "The service answered.");

    // The credential went out as the Basic pair.
    let heads = api.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(
        heads[0].contains("authorization: Basic ZGVwbG95Olp4OS9FY2hvK0tleT0icSIgN2YzZX4="),
        "{}",
        heads[0]
    );

    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2, "one request per step");
    for r in &requests {
        // The wire body, and the tool results as the model reads them (JSON decoded once).
        let mut seen = vec![r.body.to_string()];
        seen.extend(tool_results(&r.body));
        for s in &seen {
            for (what, form) in ECHOES {
                assert!(!s.contains(form), "{what} reached the model: {s}");
            }
            let lower = s.to_ascii_lowercase();
            for piece in [
                "echo+key",
                "zx9/echo",
                "7f3e~",
                "wng5l0vjag8rs2v5",
                "y2hvk0tlet0i",
                "rwnobytlzxk9",
            ] {
                assert!(!lower.contains(piece), "{piece} reached the model: {s}");
            }
        }
    }
    // The answer did reach it, with markers where the credential was.
    let result = tool_results(&requests[1].body).join("\n");
    assert!(result.contains("status: ok"), "{result}");
    for (what, _) in ECHOES {
        assert!(
            result.contains(&format!("{what}: ")) && result.contains("[REDACTED:svc]"),
            "{what}: {result}"
        );
    }
    for shown in [text(&out.stdout), text(&out.stderr)] {
        assert!(!shown.contains(ECHOED), "{shown}");
    }
}

/// A vault value in a download, in the encodings of [`ECHOES`] (for [`VALUE`], from Python 3:
/// every character as `\uXXXX`, `base64.b64encode(b'user:' + V)`, every character as `&#N;`,
/// `V.upper()`, `V` split by `\n`), is not written into the workspace: the file has markers in
/// its place, the rest as it was, and the result says so.
#[test]
fn a_vault_value_in_a_download_is_not_written_to_the_file() {
    let forms = [
        "\\u0054\\u0072\\u0030\\u0075\\u0062\\u0034\\u0064\\u006f\\u0072\\u002d\\u0065\\u0032\\u0065\\u002d\\u0076\\u0061\\u0075\\u006c\\u0074\\u002d\\u0076\\u0061\\u006c\\u0075\\u0065",
        "dXNlcjpUcjB1YjRkb3ItZTJlLXZhdWx0LXZhbHVl",
        "&#84;&#114;&#48;&#117;&#98;&#52;&#100;&#111;&#114;&#45;&#101;&#50;&#101;&#45;&#118;&#97;&#117;&#108;&#116;&#45;&#118;&#97;&#108;&#117;&#101;",
        "TR0UB4DOR-E2E-VAULT-VALUE",
        "Tr0ub4dor-e2e-\nvault-value",
    ];
    let page: String = forms.iter().map(|f| format!("config: {f}\n")).collect();
    let server_page = page.clone();
    let stub = HttpStub::start(move |_| StubReply::Status(200, vec![], server_page.clone()));
    let url = stub.url("/config.txt");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("web_download", json!({"url": url, "path": "config.txt"})),
            Reply::text("Saved."),
        ],
    );
    vault_set(&sb, "deploy_token", "example.com", VALUE);
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--agent",
            "--yes",
            "download the config",
        ],
        &[("CAIRN_WEB__ALLOW_LOOPBACK", "true")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Saved.");
    let saved = sb.read("config.txt");
    let want: String = [
        "[REDACTED:deploy_token]",
        "dXNlcj[REDACTED:deploy_token]",
        "[REDACTED:deploy_token]",
        "[REDACTED:deploy_token]",
        "[REDACTED:deploy_token]",
    ]
    .iter()
    .map(|f| format!("config: {f}\n"))
    .collect();
    assert_eq!(saved, want);
    for form in forms {
        assert!(!saved.contains(form), "{form} was written");
    }
    let requests = sb.model.requests();
    let result = tool_results(&requests[1].body).join("\n");
    assert!(
        result.contains("saved config.txt") && result.contains("carried a secret from your vault"),
        "{result}"
    );
    for r in &requests {
        assert!(
            !r.body
                .to_string()
                .to_ascii_lowercase()
                .contains("tr0ub4dor-e2e"),
            "{}",
            r.body
        );
    }
}
