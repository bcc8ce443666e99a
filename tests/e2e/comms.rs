//! Approvals of messages through the real binary, against the real mail system on loopback
//! (`scripts/mail-server`, gated by `CAIRN_COMMS_TESTS`): the editor declines a send and no mail
//! arrives; it approves one message and a second, different one (the same text with a recipient
//! added) is asked again and, declined, never arrives.

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{
    Editor, Sandbox, answer_in_turn, assert_absent, of_kind, tool_results, vault_set,
};

/// What `scripts/mail-server` printed that this test needs.
struct Mail {
    smtp: String,
    user: String,
    password: String,
    ca: String,
    imap: String,
    maildir: std::path::PathBuf,
}

fn mail() -> Option<Mail> {
    if !cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the mail, chat and API peers (eval \"$(scripts/mail-server)\")",
    ) {
        return None;
    }
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/mail-server"))
    };
    Some(Mail {
        smtp: var("CAIRN_SMTP_TEST_URL"),
        user: var("CAIRN_MAIL_TEST_USER"),
        password: var("CAIRN_MAIL_TEST_PASSWORD"),
        ca: var("CAIRN_MAIL_TEST_CA"),
        imap: var("CAIRN_IMAP_TEST_URL"),
        maildir: var("CAIRN_MAIL_TEST_MAILDIR").into(),
    })
}

/// The delivered mails (new and seen, top folder) whose text contains `needle`.
fn delivered(m: &Mail, needle: &str) -> Vec<String> {
    ["new", "cur"]
        .iter()
        .flat_map(|sub| std::fs::read_dir(m.maildir.join(sub)).unwrap())
        .map(|e| std::fs::read(e.unwrap().path()).unwrap_or_default())
        .map(|b| String::from_utf8_lossy(&b).replace("\r\n", "\n"))
        .filter(|t| t.contains(needle))
        .collect()
}

#[test]
fn a_declined_send_never_arrives_and_one_approval_lets_one_message_through() {
    let Some(m) = mail() else { return };
    let t = format!("t{}", uuid::Uuid::new_v4().simple());
    let send = |to: &[&str], body: &str| {
        Reply::tool_call(
            "email_send",
            json!({"to": to, "subject": format!("{t} {body}"), "body": format!("{body}\n")}),
        )
    };
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            send(&["bob@example.com"], "declined"),
            send(&["bob@example.com"], "approved"),
            send(&["bob@example.com", "carol@example.org"], "approved"),
            Reply::text("One mail went out."),
        ],
    );
    sb.user_config(&format!(
        // The tool itself is allowed, so the only question is the strict one about the message.
        "[web]\nallow_loopback = true\n\n[policy.tools]\nemail_send = \"allow\"\n\n\
         [comms.email]\nsmtp = \"{}\"\nusername = \"{}\"\npassword_secret = \"mail\"\n\
         from = \"Cairn <cairn@example.com>\"\nallow_to = [\"*@example.com\", \"carol@example.org\"]\n\
         ca_file = \"{}\"\n",
        m.smtp, m.user, m.ca
    ));
    vault_set(&sb, "mail", "localhost", &m.password);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = answer_in_turn(&["Deny", "Allow once", "Deny"]);
    let (run, _) = ed.chat(json!({"message": "mail bob", "mode": "agent"}));
    let events = ed.finish(&run);
    assert_eq!(events.last().unwrap()["kind"], "done", "{events:#?}");

    // The user was asked three times, each about that exact message and its recipients.
    let asks = ed.question_texts();
    assert_eq!(asks.len(), 3, "{asks:?}");
    let shown = |recipients: &str, body: &str| {
        format!("`email to {recipients}: Subject: {t} {body}\n\n{body}\n`")
    };
    assert!(
        asks[0].contains(&shown("bob@example.com", "declined")),
        "{asks:?}"
    );
    assert!(
        asks[1].contains(&shown("bob@example.com", "approved")),
        "{asks:?}"
    );
    assert!(
        asks[2].contains(&shown("bob@example.com, carol@example.org", "approved")),
        "the added recipient is in the question: {asks:?}"
    );

    // Only the approved message arrived, once, to bob alone.
    let found = delivered(&m, &t);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains(&format!("Subject: {t} approved")),
        "{}",
        found[0]
    );
    let envelope: Vec<&str> = found[0]
        .lines()
        .filter(|l| l.starts_with("X-Envelope-To:"))
        .collect();
    assert_eq!(
        envelope,
        ["X-Envelope-To: <bob@example.com>"],
        "{}",
        found[0]
    );

    // The model read that the declined sends were not sent, and that the approved one was.
    let requests = sb.model.requests();
    let results = tool_results(&requests.last().unwrap().body);
    assert_eq!(results.len(), 3, "{results:?}");
    for declined in [&results[0], &results[2]] {
        assert!(declined.contains("not sent yet"), "{results:?}");
    }
    assert!(results[1].contains("sent \""), "{results:?}");
    let outcomes: Vec<bool> = of_kind(&events, "toolResult")
        .iter()
        .map(|r| r["isError"].as_bool().unwrap())
        .collect();
    assert_eq!(outcomes, [true, false, true]);
    ed.shutdown();
}

/// A wrong vault password for the mailbox: the approved send and the search each say the
/// server refused the login, nothing is delivered, and no form of the password is in a model
/// request, a tool result, what the editor was sent, or the log.
#[test]
fn a_failed_mail_login_never_shows_the_password() {
    let Some(m) = mail() else { return };
    let wrong = "Wr0ng/mail+Pass=word~ 91";
    let t = format!("t{}", uuid::Uuid::new_v4().simple());
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "email_send",
                json!({"to": ["bob@example.com"], "subject": t, "body": "hello\n"}),
            ),
            Reply::tool_call("email_search", json!({"text": t})),
            Reply::text("The mail server refused me."),
        ],
    );
    sb.user_config(&format!(
        "[web]\nallow_loopback = true\n\n[policy.tools]\nemail_send = \"allow\"\n\n\
         [comms.email]\nsmtp = \"{}\"\nimap = \"{}\"\nusername = \"{}\"\npassword_secret = \"mail\"\n\
         from = \"Cairn <cairn@example.com>\"\nallow_to = [\"*@example.com\"]\nca_file = \"{}\"\n",
        m.smtp, m.imap, m.user, m.ca
    ));
    vault_set(&sb, "mail", "localhost", wrong);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    ed.responder = answer_in_turn(&["Allow once", "Allow once"]);
    let (run, _) = ed.chat(json!({"message": "mail bob", "mode": "agent"}));
    let events = ed.finish(&run);
    assert_eq!(events.last().unwrap()["kind"], "done", "{events:#?}");
    // The user approved the exact message, and the search (it reaches the network).
    let asks = ed.question_texts();
    assert_eq!(asks.len(), 2, "{asks:?}");
    assert!(asks[0].contains("email_send"), "{asks:?}");
    assert!(asks[1].contains("email_search"), "{asks:?}");

    let requests = sb.model.requests();
    let results = tool_results(&requests.last().unwrap().body);
    assert_eq!(results.len(), 2, "{results:?}");
    for r in &results {
        assert!(
            r.contains(&format!("refused the login of `{}`", m.user)),
            "{r}"
        );
        assert!(r.contains("vault secret `mail`"), "{r}");
    }
    assert!(results[0].contains("not sent"), "{}", results[0]);
    assert!(delivered(&m, &t).is_empty(), "nothing was delivered");

    let sent: String = requests.iter().map(|r| r.body.to_string()).collect();
    assert_absent(wrong, &sent, "a model request");
    for r in &results {
        assert_absent(wrong, r, "a tool result");
    }
    assert_absent(
        wrong,
        &serde_json::to_string(&ed.all).unwrap(),
        "the editor",
    );
    let log = ed.stderr.lock().unwrap().clone();
    assert_absent(wrong, &log, "the log");
    ed.shutdown();
}
