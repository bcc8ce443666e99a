//! The email tools against a real mail system on loopback (`scripts/mail-server`: aiosmtpd with
//! STARTTLS and AUTH delivering into a Maildir that Dovecot serves over IMAP with STARTTLS): a
//! mail sent is found, read back and moved over IMAP; header injection, recipients not allowed
//! and 10,000 recipients are refused with nothing delivered; a wrong password is a clear error;
//! an HTML mail's remote image is never requested.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_agent::tools::protected_of;
use cairn_comms::{Comms, comms_tools};
use cairn_config::{CommsConfig, EmailConfig};
use cairn_test_support::tools::{Seen, call, call_with};
use cairn_toolkit::ToolSet;
use cairn_vault::Secret;
use cairn_web::{CredentialRefusal, Credentials, GuardConfig, WebGuard};
use cairn_workspace::{AccessRules, ExactApprovals, Operation, Workspace};
use serde_json::{Value, json};

/// What `scripts/mail-server` printed.
struct Peers {
    smtp: String,
    smtps: String,
    imap: String,
    imap_nomove: String,
    user: String,
    password: String,
    ca: PathBuf,
    maildir: PathBuf,
}

fn peers() -> Option<Peers> {
    if !cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the mail, chat and API peers (eval \"$(scripts/mail-server)\")",
    ) {
        return None;
    }
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/mail-server"))
    };
    Some(Peers {
        smtp: var("CAIRN_SMTP_TEST_URL"),
        smtps: var("CAIRN_SMTPS_TEST_URL"),
        imap: var("CAIRN_IMAP_TEST_URL"),
        imap_nomove: var("CAIRN_IMAP_NOMOVE_TEST_URL"),
        user: var("CAIRN_MAIL_TEST_USER"),
        password: var("CAIRN_MAIL_TEST_PASSWORD"),
        ca: var("CAIRN_MAIL_TEST_CA").into(),
        maildir: var("CAIRN_MAIL_TEST_MAILDIR").into(),
    })
}

/// The vault: secret name -> (value, hosts it is bound to).
struct Vault(HashMap<String, (String, Vec<String>)>);

impl Credentials for Vault {
    fn for_host(&self, name: &str, host: &str) -> Result<Secret, CredentialRefusal> {
        match self.0.get(name) {
            Some((value, hosts)) if hosts.iter().any(|h| h == host) => {
                Ok(Secret::new(value.clone()))
            }
            Some(_) => Err(CredentialRefusal {
                reason: format!("secret `{name}` is not bound to {host}"),
            }),
            None => Err(CredentialRefusal {
                reason: format!("no secret `{name}` in the vault"),
            }),
        }
    }
}

/// The tools over one mailbox, and the approvals the agent would hold.
struct Mailbox {
    tools: ToolSet<Comms>,
    approvals: Arc<ExactApprovals>,
    _dir: tempfile::TempDir,
    dir: PathBuf,
}

fn mailbox(p: &Peers, smtp: &str, password: &str) -> Mailbox {
    mailbox_at(p, smtp, &p.imap, password)
}

fn mailbox_at(p: &Peers, smtp: &str, imap: &str, password: &str) -> Mailbox {
    mailbox_with(p, smtp, imap, password, &["localhost", "127.0.0.2"])
}

/// The tools over a mailbox whose password secret is bound to `bound`.
fn mailbox_with(p: &Peers, smtp: &str, imap: &str, password: &str, bound: &[&str]) -> Mailbox {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(vec![dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let guard = WebGuard::new(GuardConfig {
        allow_loopback: true,
        per_user_per_minute: 1000,
        per_host_per_minute: 1000,
        ..GuardConfig::default()
    })
    .unwrap();
    let vault = Vault(HashMap::from([(
        "mail".to_owned(),
        (
            password.to_owned(),
            bound.iter().map(|h| (*h).to_owned()).collect(),
        ),
    )]));
    let settings = CommsConfig {
        sends_per_minute: 100,
        email: Some(EmailConfig {
            smtp: Some(smtp.to_owned()),
            imap: Some(imap.to_owned()),
            username: p.user.clone(),
            password_secret: "mail".into(),
            from: "Cairn Test <cairn@example.com>".into(),
            allow_to: vec!["*@example.com".into(), "carol@example.org".into()],
            ca_file: Some(p.ca.clone()),
        }),
        ..CommsConfig::default()
    };
    let approvals = ExactApprovals::new();
    let comms = Comms::new(
        settings,
        Some(Arc::new(guard)),
        Arc::new(vault),
        approvals.clone(),
    )
    .with_workspace(Some(Arc::new(ws)));
    Mailbox {
        tools: comms_tools(comms),
        approvals,
        dir: dir.path().to_path_buf(),
        _dir: dir,
    }
}

impl Mailbox {
    async fn call(&self, name: &str, args: Value) -> Seen {
        call(&self.tools, name, args).await
    }

    /// Sends as the agent does: the strict question first, then the same call with the user's
    /// approval of that exact message held. Returns the question's text and the result.
    async fn send_approved(&self, args: Value) -> (String, Seen) {
        let first = self.call("email_send", args.clone()).await;
        assert!(first.is_error, "sent without asking: {}", first.text);
        let asked = protected_of(&first.result);
        assert_eq!(asked.len(), 1, "{}", first.text);
        let key = PathBuf::from(&asked[0].key);
        self.approvals.hold(&key, Operation::Write);
        let done = self.call("email_send", args).await;
        self.approvals.release(&key, Operation::Write);
        (asked[0].path.clone(), done)
    }

    /// The uids `email_search` lists for `args`, newest first.
    async fn uids(&self, args: Value) -> Vec<u64> {
        let found = self.call("email_search", args).await;
        assert!(!found.is_error, "{}", found.text);
        let Some(rows) = found.result.structured_content else {
            assert!(found.text.starts_with("no message in "), "{}", found.text);
            return Vec::new();
        };
        rows["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[0].as_str().unwrap().parse().unwrap())
            .collect()
    }
}

/// A word no other test or run uses.
fn token() -> String {
    format!("t{}", uuid::Uuid::new_v4().simple())
}

/// The delivered files of the Maildir that contain `needle`.
fn delivered(p: &Peers, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for sub in ["new", "cur"] {
        for entry in std::fs::read_dir(p.maildir.join(sub)).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if text.contains(needle) {
                found.push(text);
            }
        }
    }
    // Folders are `.Name` Maildirs beside `new` and `cur`.
    for folder in std::fs::read_dir(&p.maildir).unwrap() {
        let folder = folder.unwrap().path();
        if folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with('.')
            && folder.is_dir()
        {
            for sub in ["new", "cur"] {
                let Ok(entries) = std::fs::read_dir(folder.join(sub)) else {
                    continue;
                };
                for entry in entries {
                    let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    if text.contains(needle) {
                        found.push(text);
                    }
                }
            }
        }
    }
    found
}

#[tokio::test]
async fn a_mail_sent_is_found_read_and_moved_over_imap() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtp, &p.password);
    let t = token();
    std::fs::write(m.dir.join("notes.txt"), "the attached notes\n").unwrap();
    let subject = format!("Grüße {t}: the build is green");
    let args = json!({
        "to": ["bob@example.com"],
        "cc": ["dave@example.com"],
        "bcc": ["carol@example.org"],
        "subject": subject,
        "body": "Hello Bob,\n\nthe build is green.\n.\nA line with only a dot stays.\n",
        "attachments": ["notes.txt"],
    });

    let (asked, sent) = m.send_approved(args).await;
    for part in [
        "bob@example.com",
        "dave@example.com",
        "carol@example.org",
        subject.as_str(),
        "notes.txt",
        "the build is green",
    ] {
        assert!(asked.contains(part), "the question lacks {part:?}: {asked}");
    }
    assert!(!sent.is_error, "{}", sent.text);
    assert!(sent.text.contains("sent \"Grüße"), "{}", sent.text);

    // Delivered once, to the whole envelope, with no header naming the blind copy.
    let found = m.uids(json!({"subject": t})).await;
    assert_eq!(found.len(), 1, "{found:?}");
    let uid = found[0];

    let read = m.call("email_read", json!({"uid": uid})).await;
    assert!(!read.is_error, "{}", read.text);
    for part in [
        "From: Cairn Test <cairn@example.com>",
        "To: bob@example.com",
        "Cc: dave@example.com",
        subject.as_str(),
        "the build is green.",
        "A line with only a dot stays.",
        "- notes.txt (text/plain, 19 bytes)",
        "Message-ID: <",
        "Date: ",
    ] {
        assert!(read.text.contains(part), "{part:?} not in: {}", read.text);
    }
    assert!(!read.text.contains("carol"), "{}", read.text);
    // Reading did not mark it seen (the folder is examined read-only, the body peeked).
    assert_eq!(
        m.uids(json!({"subject": t, "unseen": true})).await,
        vec![uid]
    );
    assert!(
        !read.text.contains("the attached notes"),
        "attachment inlined: {}",
        read.text
    );
    let envelope = delivered(&p, "Message-ID: <")
        .into_iter()
        .find(|f| f.contains(&format!("Message-ID: <{}", message_id(&read.text))))
        .expect("the delivered file");
    let (head, _) = envelope.split_once("\r\n\r\n").unwrap();
    assert!(
        head.contains("X-Envelope-To: <bob@example.com>, <dave@example.com>, <carol@example.org>"),
        "{head}"
    );
    assert_eq!(head.matches("carol").count(), 1, "{head}");

    let missing = m.call("email_read", json!({"uid": 999_999})).await;
    assert!(missing.is_error);
    assert!(
        missing.text.contains("no message with uid 999999 in INBOX"),
        "{}",
        missing.text
    );

    // The folders, with counts.
    let folders = m.call("email_folders", json!({})).await;
    assert!(!folders.is_error, "{}", folders.text);
    assert!(folders.text.contains("| INBOX |"), "{}", folders.text);
    assert!(folders.text.contains("| Archive |"), "{}", folders.text);

    // Moved to the archive: gone from the inbox, there in the archive.
    let moved = m
        .call(
            "email_move",
            json!({"uids": [uid, 999_999], "to_folder": "Archive"}),
        )
        .await;
    assert!(!moved.is_error, "{}", moved.text);
    assert!(
        moved
            .text
            .contains("moved 1 message(s) from INBOX to Archive"),
        "{}",
        moved.text
    );
    assert!(moved.text.contains("left alone): 999999"), "{}", moved.text);
    assert!(m.uids(json!({"subject": t})).await.is_empty());
    let archived = m.uids(json!({"subject": t, "folder": "Archive"})).await;
    assert_eq!(archived.len(), 1);
    let read = m
        .call(
            "email_read",
            json!({"uid": archived[0], "folder": "Archive"}),
        )
        .await;
    assert!(read.text.contains(&subject), "{}", read.text);

    // A folder that does not exist is refused, and nothing moves.
    let refused = m
        .call(
            "email_move",
            json!({"uids": [archived[0]], "folder": "Archive", "to_folder": "Archve"}),
        )
        .await;
    assert!(refused.is_error);
    assert!(
        refused.text.contains("no folder \"Archve\""),
        "{}",
        refused.text
    );
    assert_eq!(
        m.uids(json!({"subject": t, "folder": "Archive"}))
            .await
            .len(),
        1
    );
}

/// The Message-ID `email_read` showed (without brackets).
fn message_id(read: &str) -> String {
    read.lines()
        .find_map(|l| l.strip_prefix("Message-ID: <"))
        .and_then(|l| l.strip_suffix('>'))
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn mail_over_tls_from_the_first_byte_arrives_and_search_filters() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtps, &p.password);
    let t = token();
    let (_, sent) = m
        .send_approved(json!({
            "to": ["bob@example.com"],
            "subject": format!("over smtps {t}"),
            "body": format!("body word {t}"),
        }))
        .await;
    assert!(!sent.is_error, "{}", sent.text);
    let by_text = m
        .uids(json!({"text": t, "from": "cairn@example.com"}))
        .await;
    assert_eq!(by_text.len(), 1);
    let today = chrono::Utc::now().date_naive().pred_opt().unwrap();
    let since = m
        .uids(json!({"subject": t, "since": today.format("%Y-%m-%d").to_string(), "unseen": true}))
        .await;
    assert_eq!(since, by_text);
    assert!(
        m.uids(json!({"subject": t, "to": "nobody-else@example.com"}))
            .await
            .is_empty()
    );
    let bad = m.call("email_search", json!({"since": "yesterday"})).await;
    assert!(
        bad.is_error && bad.text.contains("YYYY-MM-DD"),
        "{}",
        bad.text
    );
    let injected = m
        .call("email_search", json!({"subject": "x\r\nA1 DELETE INBOX"}))
        .await;
    assert!(injected.is_error, "{}", injected.text);
    assert!(
        injected.text.contains("would end the IMAP command"),
        "{}",
        injected.text
    );
}

#[tokio::test]
async fn without_imap_move_only_the_messages_named_are_copied_and_expunged() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtp, &p.password);
    let t = token();
    for which in ["first", "second"] {
        let (_, sent) = m
            .send_approved(
                json!({"to": ["bob@example.com"], "subject": format!("{which} {t}"), "body": t}),
            )
            .await;
        assert!(!sent.is_error, "{}", sent.text);
    }
    let both = m.uids(json!({"subject": t})).await;
    assert_eq!(both.len(), 2);

    // The same mailbox through the listener that does not advertise MOVE.
    let old = mailbox_at(&p, &p.smtp, &p.imap_nomove, &p.password);
    let moved = old
        .call(
            "email_move",
            json!({"uids": [both[0]], "to_folder": "Archive"}),
        )
        .await;
    assert!(!moved.is_error, "{}", moved.text);
    assert!(
        moved.text.contains("COPY, then the originals expunged"),
        "{}",
        moved.text
    );
    assert_eq!(m.uids(json!({"subject": t})).await, vec![both[1]]);
    let archived = m.uids(json!({"subject": t, "folder": "Archive"})).await;
    assert_eq!(archived.len(), 1);
    let read = m
        .call(
            "email_read",
            json!({"uid": archived[0], "folder": "Archive"}),
        )
        .await;
    assert!(
        read.text.contains(&format!("Subject: second {t}")),
        "{}",
        read.text
    );
}

#[tokio::test]
async fn header_injection_is_refused_and_nothing_is_delivered() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtp, &p.password);
    let t = token();
    for args in [
        json!({"to": ["bob@example.com"], "subject": format!("Hi {t}\r\nBcc: eve@evil.org"), "body": t}),
        json!({"to": ["bob@example.com"], "subject": format!("Hi {t}\nX-Evil: 1"), "body": t}),
        json!({"to": [format!("bob@example.com\r\nBcc: eve@evil.org")], "subject": t, "body": t}),
        json!({"to": ["bob@example.com"], "cc": ["Eve <eve@example.com>"], "subject": t, "body": t}),
    ] {
        let r = m.call("email_send", args.clone()).await;
        assert!(r.is_error, "{args}: {}", r.text);
        assert!(protected_of(&r.result).is_empty(), "asked about {args}");
        assert!(
            r.text.contains("control character") || r.text.contains("bare address"),
            "{}",
            r.text
        );
    }
    let r = m
        .call("email_send", json!({"to": ["bob@example.com"], "subject": format!("Hi {t}\r\nBcc: x@example.com"), "body": t}))
        .await;
    assert!(r.text.contains("header injection"), "{}", r.text);
    assert!(delivered(&p, &t).is_empty());
    assert!(m.uids(json!({"text": t})).await.is_empty());
}

#[tokio::test]
async fn recipients_not_allowed_or_too_many_are_refused_and_nothing_is_delivered() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtp, &p.password);
    let t = token();
    let r = m
        .call(
            "email_send",
            json!({"to": ["bob@example.com"], "bcc": ["eve@evil.org"], "subject": t, "body": t}),
        )
        .await;
    assert!(r.is_error);
    assert!(
        protected_of(&r.result).is_empty(),
        "asked about a recipient not allowed"
    );
    assert!(
        r.text.contains("eve@evil.org is not an allowed recipient"),
        "{}",
        r.text
    );
    assert!(r.text.contains("comms.email.allow_to"), "{}", r.text);
    // A look-alike of an allowed domain is not allowed.
    let r = m
        .call(
            "email_send",
            json!({"to": ["bob@example.com.evil.org"], "subject": t, "body": t}),
        )
        .await;
    assert!(r.text.contains("not an allowed recipient"), "{}", r.text);

    let many: Vec<String> = (0..10_000).map(|i| format!("u{i}@example.com")).collect();
    let r = m
        .call("email_send", json!({"to": many, "subject": t, "body": t}))
        .await;
    assert!(r.is_error);
    assert!(protected_of(&r.result).is_empty());
    assert!(
        r.text.contains("10000 recipients, more than the 20"),
        "{}",
        r.text
    );

    assert!(delivered(&p, &t).is_empty());
    assert!(m.uids(json!({"text": t})).await.is_empty());
}

#[tokio::test]
async fn attachments_are_read_through_the_scope_within_a_cap() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtp, &p.password);
    let t = token();
    // A protected file: refused before the tool runs, naming it, so the agent asks about that
    // file (a read), not about the message.
    std::fs::write(m.dir.join(".env"), format!("TOKEN={t}\n")).unwrap();
    let r = m
        .call(
            "email_send",
            json!({"to": ["bob@example.com"], "subject": t, "body": t, "attachments": [".env"]}),
        )
        .await;
    assert!(r.is_error);
    let asked = protected_of(&r.result);
    assert_eq!(asked.len(), 1, "{}", r.text);
    assert_eq!(
        (asked[0].path.as_str(), asked[0].operation.as_str()),
        (".env", "read")
    );
    // Outside the workspace: refused by the scope.
    let r = m
        .call("email_send", json!({"to": ["bob@example.com"], "subject": t, "body": t, "attachments": ["/etc/passwd"]}))
        .await;
    assert!(r.is_error);
    assert!(protected_of(&r.result).is_empty(), "{}", r.text);
    // Larger than the cap: refused before the user is asked.
    let big = std::fs::File::create(m.dir.join("big.bin")).unwrap();
    big.set_len(11 * 1024 * 1024).unwrap();
    let r = m
        .call(
            "email_send",
            json!({"to": ["bob@example.com"], "subject": t, "body": t, "attachments": ["big.bin"]}),
        )
        .await;
    assert!(r.is_error);
    assert!(protected_of(&r.result).is_empty());
    assert!(r.text.contains("larger than 10 MiB together"), "{}", r.text);
    assert!(delivered(&p, &t).is_empty());
    assert!(m.uids(json!({"text": t})).await.is_empty());
}

#[tokio::test]
async fn a_secret_bound_elsewhere_and_a_private_server_are_refused() {
    let Some(p) = peers() else { return };
    // The password is bound to another host: refused before the user is asked.
    let m = mailbox_with(&p, &p.smtp, &p.imap, &p.password, &["mail.example.com"]);
    let t = token();
    let r = m
        .call(
            "email_send",
            json!({"to": ["bob@example.com"], "subject": t, "body": t}),
        )
        .await;
    assert!(r.is_error);
    assert!(
        protected_of(&r.result).is_empty(),
        "asked before the secret was checked"
    );
    assert!(
        r.text
            .contains("the password `mail` cannot be used for localhost"),
        "{}",
        r.text
    );
    assert!(!r.text.contains(&p.password));
    let r = m.call("email_folders", json!({})).await;
    assert!(
        r.text.contains("cannot be used for localhost"),
        "{}",
        r.text
    );

    // A server on a private address: the guard refuses the connection.
    let m = mailbox_with(
        &p,
        "smtp://10.1.2.3:587",
        "imaps://10.1.2.3",
        &p.password,
        &["10.1.2.3"],
    );
    let (_, r) = m
        .send_approved(json!({"to": ["bob@example.com"], "subject": t, "body": t}))
        .await;
    assert!(r.is_error);
    assert!(r.text.contains("not sent: refused 10.1.2.3"), "{}", r.text);
    assert!(r.text.contains("a private network address"), "{}", r.text);
    let r = m.call("email_search", json!({})).await;
    assert!(r.is_error);
    assert!(r.text.contains("a private network address"), "{}", r.text);
    // Plain text to anything but loopback is refused by the config check.
    let m = mailbox_with(
        &p,
        "smtp+insecure://mail.example.com:25",
        &p.imap,
        &p.password,
        &["mail.example.com"],
    );
    let r = m
        .call(
            "email_send",
            json!({"to": ["bob@example.com"], "subject": t, "body": t}),
        )
        .await;
    assert!(r.text.contains("allowed only to loopback"), "{}", r.text);
    assert!(delivered(&p, &t).is_empty());
}

#[tokio::test]
async fn a_wrong_password_is_a_clear_error() {
    let Some(p) = peers() else { return };
    let wrong = "not-the-password-0451";
    let m = mailbox(&p, &p.smtp, wrong);
    let t = token();
    let (_, sent) = m
        .send_approved(json!({"to": ["bob@example.com"], "subject": t, "body": t}))
        .await;
    assert!(sent.is_error);
    assert!(sent.text.contains("not sent"), "{}", sent.text);
    assert!(
        sent.text.contains("refused the login of `cairn`"),
        "{}",
        sent.text
    );
    assert!(sent.text.contains("vault secret `mail`"), "{}", sent.text);
    assert!(!sent.text.contains(wrong), "{}", sent.text);
    let read = m.call("email_search", json!({"text": t})).await;
    assert!(read.is_error);
    assert!(
        read.text.contains("refused the login of `cairn`"),
        "{}",
        read.text
    );
    assert!(!read.text.contains(wrong), "{}", read.text);
    assert!(delivered(&p, &t).is_empty());
}

#[tokio::test]
async fn html_mail_is_read_as_text_without_fetching_its_remote_image() {
    let Some(p) = peers() else { return };
    // The image's server: counts every connection made to it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let server = tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });

    let t = token();
    let html = format!(
        "<html><head><link rel=\"stylesheet\" href=\"http://127.0.0.1:{port}/s.css\"></head>\
         <body><p>Hello <b>{t}</b>, your report is ready.</p>\
         <img src=\"http://127.0.0.1:{port}/pixel.png\" width=1 height=1>\
         <p><a href=\"http://127.0.0.1:{port}/track\">details</a></p></body></html>"
    );
    let message = format!(
        "From: Newsletter <news@example.net>\r\nReply-To: help@example.net\r\nTo: cairn@example.com\r\nSubject: html {t}\r\n\
         Date: Wed, 2 Dec 2026 01:00:00 +0000\r\nMessage-ID: <{t}@example.net>\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    );
    let name = format!("{}.{t}.cairn-test", chrono::Utc::now().timestamp());
    let tmp = p.maildir.join("tmp").join(&name);
    std::fs::write(&tmp, message).unwrap();
    std::fs::rename(&tmp, p.maildir.join("new").join(&name)).unwrap();

    let m = mailbox(&p, &p.smtp, &p.password);
    let uids = m.uids(json!({"subject": t})).await;
    assert_eq!(uids.len(), 1);
    let read = m.call("email_read", json!({"uid": uids[0]})).await;
    assert!(!read.is_error, "{}", read.text);
    assert!(
        read.text
            .contains(&format!("Hello {t}, your report is ready.")),
        "{}",
        read.text
    );
    assert!(
        read.text
            .contains("remote images and other content were not loaded"),
        "{}",
        read.text
    );
    assert!(!read.text.contains("<img"), "{}", read.text);
    assert!(
        read.text.contains("From: Newsletter <news@example.net>"),
        "{}",
        read.text
    );
    assert!(
        read.text.contains("Reply-To: help@example.net"),
        "{}",
        read.text
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the image's server was contacted"
    );
    server.abort();
}

#[tokio::test]
async fn a_server_that_never_answers_is_left_when_the_run_is_cancelled() {
    let Some(p) = peers() else { return };
    // Accepts connections and says nothing; cancels the run once the tool has connected.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let silent = format!("smtp://localhost:{port}");
    let m = mailbox(&p, &silent, &p.password);
    let args = json!({"to": ["bob@example.com"], "subject": "silence", "body": "anyone?"});
    let first = m.call("email_send", args.clone()).await;
    let key = PathBuf::from(&protected_of(&first.result)[0].key);
    m.approvals.hold(&key, Operation::Write);
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
            trigger.cancel();
        }
    });
    let r = call_with(&m.tools, "email_send", args, cancel).await;
    assert!(r.is_error);
    assert!(r.text.contains("not sent: cancelled"), "{}", r.text);
    server.abort();
}

#[tokio::test]
async fn without_a_mailbox_the_tools_say_what_to_configure() {
    let comms = Comms::new(
        CommsConfig::default(),
        None,
        Arc::new(cairn_web::NoCredentials),
        ExactApprovals::new(),
    );
    let tools = comms_tools(comms);
    for (name, args) in [
        (
            "email_send",
            json!({"to": ["a@example.com"], "subject": "s", "body": "b"}),
        ),
        ("email_folders", json!({})),
        ("email_search", json!({})),
        ("email_read", json!({"uid": 1})),
        ("email_move", json!({"uids": [1], "to_folder": "Archive"})),
    ] {
        let r = call(&tools, name, args).await;
        assert!(r.is_error, "{name}");
        assert!(r.text.contains("[comms.email]"), "{name}: {}", r.text);
    }
}

/// The question of a send that came back (`not sent yet`, the strict question about the whole
/// message) and the key its approval is held under.
fn question_of(r: &Seen) -> (String, PathBuf) {
    assert!(r.is_error, "sent without asking: {}", r.text);
    assert!(
        r.text
            .starts_with("not sent yet: sending a message needs your approval"),
        "{}",
        r.text
    );
    let asked = protected_of(&r.result);
    assert_eq!(asked.len(), 1, "{}", r.text);
    (asked[0].path.clone(), PathBuf::from(&asked[0].key))
}

/// The user declines a send: nothing reaches the mail server, and the same call again is asked
/// again. The user approves one message: while that approval is held, a different body, a
/// different subject, an added recipient (in `to`, `cc` or `bcc`) and a recipient moved to
/// `bcc` are each asked about again and not sent; only the approved message is delivered, once,
/// to its one recipient.
#[tokio::test]
async fn an_approval_covers_one_exact_message_and_a_declined_one_is_never_sent() {
    let Some(p) = peers() else { return };
    let m = mailbox(&p, &p.smtp, &p.password);
    let t = token();
    let body = format!("approved body {t}\n");
    let args = json!({"to": ["bob@example.com"], "subject": t, "body": body});

    // Declined: the approval is never held, so the call (and a retry) is only a question.
    let first = m.call("email_send", args.clone()).await;
    let (shown, key) = question_of(&first);
    assert!(
        shown.contains("bob@example.com") && shown.contains(&body),
        "the user is shown the recipient and the text: {shown}"
    );
    let retry = m.call("email_send", args.clone()).await;
    assert_eq!(
        question_of(&retry).1,
        key,
        "the same message, the same question"
    );
    assert!(
        delivered(&p, &t).is_empty(),
        "a declined send was delivered"
    );

    // Approved for that exact message: nothing else passes while the approval is held.
    m.approvals.hold(&key, Operation::Write);
    let others = [
        json!({"to": ["bob@example.com"], "subject": t, "body": format!("other body {t}\n")}),
        json!({"to": ["bob@example.com"], "subject": format!("{t} changed"), "body": body}),
        json!({"to": ["bob@example.com", "carol@example.org"], "subject": t, "body": body}),
        json!({"to": ["bob@example.com"], "cc": ["carol@example.org"], "subject": t, "body": body}),
        json!({"to": ["bob@example.com"], "bcc": ["carol@example.org"], "subject": t, "body": body}),
        json!({"to": [], "bcc": ["bob@example.com"], "subject": t, "body": body}),
    ];
    for other in others {
        let r = m.call("email_send", other.clone()).await;
        let (_, other_key) = question_of(&r);
        assert_ne!(
            other_key, key,
            "{other} is covered by another message's approval"
        );
    }
    assert!(
        delivered(&p, &t).is_empty(),
        "a message other than the approved one was delivered"
    );
    let sent = m.call("email_send", args).await;
    m.approvals.release(&key, Operation::Write);
    assert!(!sent.is_error, "{}", sent.text);

    // Delivered once: the approved subject and body, to bob alone.
    let found = delivered(&p, &t);
    assert_eq!(found.len(), 1, "{found:?}");
    let mail = found[0].replace("\r\n", "\n");
    let (head, encoded) = mail.split_once("\n\n").unwrap();
    let envelope: Vec<&str> = head
        .lines()
        .filter(|l| l.starts_with("X-Envelope-To:"))
        .collect();
    assert_eq!(envelope, ["X-Envelope-To: <bob@example.com>"], "{mail}");
    assert!(head.lines().any(|l| l == format!("Subject: {t}")), "{mail}");
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD
        .decode(encoded.split_whitespace().collect::<String>())
        .unwrap();
    assert_eq!(String::from_utf8(text).unwrap().replace("\r\n", "\n"), body);
}
