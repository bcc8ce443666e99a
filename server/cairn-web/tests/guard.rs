//! The web guard against the SSRF catalogue (SECURITY.md §7 (c) C1–C8).
//!
//! Every blocked case asserts the denial and that a loopback listener accepted nothing, so a
//! refusal that still opened a connection fails. Servers are hand-written HTTP/1.1 on
//! 127.0.0.1 so the tests need no network; where a test must reach them it sets
//! `allow_loopback`, the switch the guard offers for exactly this.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn_web::{
    AddressClass, Blocklist, BoxFuture, GuardConfig, Resolver, WebError, WebGuard, WebRequest,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A listener that only counts connections: it must stay at zero in blocked cases.
struct Tripwire {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl Tripwire {
    async fn bind(ip: &str) -> Option<Self> {
        let listener = TcpListener::bind((ip, 0)).await.ok()?;
        let addr = listener.local_addr().ok()?;
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((_stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
            }
        });
        Some(Self { addr, accepted })
    }

    async fn v4() -> Self {
        match Self::bind("127.0.0.1").await {
            Some(t) => t,
            None => panic!("cannot bind 127.0.0.1"),
        }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// No connection arrived, allowing time for a late one to show up.
    async fn assert_untouched(&self, case: &str) {
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(
            self.accepted.load(Ordering::SeqCst),
            0,
            "{case}: the listener was reached"
        );
    }
}

/// What the test server answers to one request (given its path).
#[derive(Clone)]
enum Reply {
    /// Status line code, extra header lines, body.
    Text(u16, Vec<String>, String),
    /// A 200 with `Content-Length: n`, streamed in 64 KiB pieces for as long as the peer reads.
    Big(usize),
    /// Headers, then one byte every `Duration`.
    Trickle(Duration),
    /// A 200 whose body is the request head, so tests can see the headers that arrived.
    EchoHead,
}

struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    /// The head of every request, as it arrived.
    heads: Arc<std::sync::Mutex<Vec<String>>>,
    /// Body bytes the server managed to write (for the size cap).
    written: Arc<AtomicUsize>,
}

impl Server {
    async fn start(respond: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Self {
        let listener = match TcpListener::bind("127.0.0.1:0").await {
            Ok(l) => l,
            Err(e) => panic!("bind: {e}"),
        };
        let addr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => panic!("local_addr: {e}"),
        };
        let hits = Arc::new(AtomicUsize::new(0));
        let written = Arc::new(AtomicUsize::new(0));
        let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
        let respond = Arc::new(respond);
        let (h, w, seen) = (hits.clone(), written.clone(), heads.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
                let (respond, w, seen) = (respond.clone(), w.clone(), seen.clone());
                tokio::spawn(async move {
                    let _ = handle(stream, &*respond, &w, &seen).await;
                });
            }
        });
        Self {
            addr,
            hits,
            heads,
            written,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The last request head that arrived, lower-cased.
    fn last_head(&self) -> String {
        let heads = self
            .heads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        heads.last().cloned().unwrap_or_default().to_lowercase()
    }
}

async fn handle(
    mut stream: TcpStream,
    respond: &(dyn Fn(&str) -> Reply + Send + Sync),
    written: &AtomicUsize,
    heads: &std::sync::Mutex<Vec<String>>,
) -> io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    heads
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(head.to_string());
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let reply = match respond(&path) {
        Reply::EchoHead => ok(&head),
        other => other,
    };
    match reply {
        Reply::Text(code, extra, body) => {
            let mut out = format!("HTTP/1.1 {code} X\r\nContent-Length: {}\r\n", body.len());
            for line in extra {
                out.push_str(&line);
                out.push_str("\r\n");
            }
            out.push_str("Connection: close\r\n\r\n");
            out.push_str(&body);
            stream.write_all(out.as_bytes()).await?;
        }
        Reply::Big(n) => {
            let header = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n");
            stream.write_all(header.as_bytes()).await?;
            let piece = vec![b'x'; 64 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(piece.len());
                stream.write_all(&piece[..k]).await?;
                written.fetch_add(k, Ordering::SeqCst);
                left -= k;
            }
        }
        Reply::EchoHead => {}
        Reply::Trickle(every) => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                .await?;
            loop {
                stream.write_all(b"x").await?;
                tokio::time::sleep(every).await;
            }
        }
    }
    stream.shutdown().await
}

fn ok(body: &str) -> Reply {
    Reply::Text(200, vec![], body.to_string())
}

fn redirect(to: &str) -> Reply {
    Reply::Text(302, vec![format!("Location: {to}")], String::new())
}

/// DNS answers scripted per name; the n-th query gets the n-th answer (the last repeats).
#[derive(Default)]
struct Script {
    answers: HashMap<String, Vec<Vec<IpAddr>>>,
    calls: AtomicUsize,
}

impl Script {
    fn with(mut self, name: &str, answers: &[&[&str]]) -> Self {
        let parsed = answers
            .iter()
            .map(|a| {
                a.iter()
                    .map(|ip| ip.parse().unwrap_or(IpAddr::from([0, 0, 0, 0])))
                    .collect()
            })
            .collect();
        self.answers.insert(name.to_string(), parsed);
        self
    }
}

impl Resolver for Script {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let answer = self.answers.get(host).map(|all| {
            let pick = &all[n.min(all.len() - 1)];
            pick.iter().map(|ip| SocketAddr::new(*ip, port)).collect()
        });
        Box::pin(async move {
            answer.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such name"))
        })
    }
}

fn guard(config: GuardConfig) -> WebGuard {
    match WebGuard::new(config) {
        Ok(g) => g,
        Err(e) => panic!("guard: {e}"),
    }
}

fn scripted(config: GuardConfig, script: Arc<Script>) -> WebGuard {
    match WebGuard::with_resolver(config, script) {
        Ok(g) => g,
        Err(e) => panic!("guard: {e}"),
    }
}

fn loopback_ok() -> GuardConfig {
    GuardConfig {
        allow_loopback: true,
        per_user_per_minute: 0,
        ..GuardConfig::default()
    }
}

fn unlimited() -> GuardConfig {
    GuardConfig {
        per_user_per_minute: 0,
        per_host_per_minute: 0,
        ..GuardConfig::default()
    }
}

async fn refused(guard: &WebGuard, url: &str) -> WebError {
    match guard.fetch(WebRequest::get(url)).await {
        Ok(r) => panic!("{url} was fetched (status {})", r.status),
        Err(e) => {
            assert!(e.is_denial(), "{url}: not a denial: {e}");
            e
        }
    }
}

fn class_of(e: &WebError) -> Option<AddressClass> {
    match e.root() {
        WebError::AddressRefused { class, .. } => Some(*class),
        _ => None,
    }
}

// C1: direct addresses.
#[tokio::test(flavor = "multi_thread")]
async fn loopback_is_refused_by_default() {
    let wire = Tripwire::v4().await;
    let g = guard(unlimited());
    for url in [
        format!("http://127.0.0.1:{}/", wire.port()),
        format!("http://localhost:{}/", wire.port()),
    ] {
        let e = refused(&g, &url).await;
        assert_eq!(class_of(&e), Some(AddressClass::Loopback), "{url}: {e}");
        assert!(e.to_string().contains("loopback"), "{e}");
    }
    wire.assert_untouched("loopback").await;
}

// C2: other spellings of loopback, which `url` normalises before the guard decides.
#[tokio::test(flavor = "multi_thread")]
async fn encoded_loopback_spellings_are_refused() {
    let wire = Tripwire::v4().await;
    let v6 = Tripwire::bind("::1").await;
    let p = wire.port();
    let mut urls = vec![
        format!("http://2130706433:{p}/"),
        format!("http://0x7f.1:{p}/"),
        format!("http://017700000001:{p}/"),
        format!("http://127.1:{p}/"),
        format!("http://0x7f000001:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://[::ffff:7f00:1]:{p}/"),
        format!("http://[::127.0.0.1]:{p}/"),
        format!("http://[64:ff9b::7f00:1]:{p}/"),
        format!("http://[2002:7f00:1::1]:{p}/"),
        format!("HTTP://LocalHost.:{p}/"),
    ];
    urls.push(format!(
        "http://[::1]:{}/",
        v6.as_ref().map_or(p, Tripwire::port)
    ));
    let g = guard(unlimited());
    for url in &urls {
        let e = refused(&g, url).await;
        assert_eq!(class_of(&e), Some(AddressClass::Loopback), "{url}: {e}");
    }
    wire.assert_untouched("encoded loopback").await;
    if let Some(v6) = v6 {
        v6.assert_untouched("[::1]").await;
    }
}

// C1/C2: private, metadata, CGNAT, broadcast, unspecified and embedded forms.
#[tokio::test(flavor = "multi_thread")]
async fn private_and_metadata_addresses_are_refused() {
    let wire = Tripwire::v4().await;
    let p = wire.port();
    let cases = [
        (format!("http://0.0.0.0:{p}/"), AddressClass::Unspecified),
        (format!("http://[::]:{p}/"), AddressClass::Unspecified),
        (
            "http://169.254.169.254/latest/meta-data/".into(),
            AddressClass::LinkLocal,
        ),
        ("http://[fe80::1]/".into(), AddressClass::LinkLocal),
        (
            "http://[64:ff9b::a9fe:a9fe]/".into(),
            AddressClass::LinkLocal,
        ),
        (
            "http://[2002:a9fe:a9fe::1]/".into(),
            AddressClass::LinkLocal,
        ),
        (
            "http://[::ffff:169.254.169.254]/".into(),
            AddressClass::LinkLocal,
        ),
        ("http://10.0.0.1/".into(), AddressClass::Private),
        ("http://172.16.0.1/".into(), AddressClass::Private),
        ("http://192.168.1.1/".into(), AddressClass::Private),
        ("http://100.64.0.1/".into(), AddressClass::Cgnat),
        ("http://[fd00::1]/".into(), AddressClass::UniqueLocal),
        ("http://255.255.255.255/".into(), AddressClass::Broadcast),
        ("http://224.0.0.1/".into(), AddressClass::Multicast),
        (
            "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/".into(),
            AddressClass::Tunnel,
        ),
    ];
    let g = guard(GuardConfig {
        allow_loopback: true,
        ..unlimited()
    });
    for (url, class) in &cases {
        let started = Instant::now();
        let e = refused(&g, url).await;
        assert_eq!(class_of(&e), Some(*class), "{url}: {e}");
        // Refused before any connect attempt (a connect to 10.0.0.1 would hang or fail slowly).
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "{url} took {:?}",
            started.elapsed()
        );
    }
    wire.assert_untouched("0.0.0.0 / ::").await;
}

// C2/C5: schemes and URL confusion.
#[tokio::test(flavor = "multi_thread")]
async fn other_schemes_and_userinfo_are_refused() {
    let wire = Tripwire::v4().await;
    let p = wire.port();
    let g = guard(loopback_ok());
    for url in [
        "file:///etc/passwd".to_string(),
        format!("gopher://127.0.0.1:{p}/_GET"),
        format!("ftp://127.0.0.1:{p}/"),
        "data:text/plain,hello".into(),
    ] {
        let e = refused(&g, &url).await;
        assert!(matches!(e, WebError::SchemeNotAllowed { .. }), "{url}: {e}");
    }
    let e = refused(&g, &format!("http://allowed.com@127.0.0.1:{p}/")).await;
    assert!(matches!(e, WebError::UserinfoInUrl { .. }), "{e}");
    wire.assert_untouched("schemes").await;
}

// C5: each redirect hop is checked again.
#[tokio::test(flavor = "multi_thread")]
async fn redirects_to_internal_targets_are_refused_at_the_hop() {
    let script = Arc::new(Script::default().with("inner.test", &[&["10.0.0.5"]]));
    let server = Server::start(|path| match path {
        "/meta" => redirect("http://169.254.169.254/latest/meta-data/"),
        "/ten" => redirect("http://10.0.0.1/"),
        "/inner" => redirect("http://inner.test/admin"),
        "/file" => redirect("file:///etc/passwd"),
        "/gopher" => redirect("gopher://127.0.0.1:70/"),
        "/decimal" => redirect("http://2852039166/"),
        _ => ok("fine"),
    })
    .await;
    let g = scripted(loopback_ok(), script);
    let cases = [
        ("/meta", Some(AddressClass::LinkLocal)),
        ("/ten", Some(AddressClass::Private)),
        ("/inner", Some(AddressClass::Private)),
        ("/decimal", Some(AddressClass::LinkLocal)),
        ("/file", None),
        ("/gopher", None),
    ];
    for (path, class) in cases {
        let e = refused(&g, &server.url(path)).await;
        let WebError::RedirectRefused { hop, .. } = &e else {
            panic!("{path}: expected a refused hop, got {e}");
        };
        assert_eq!(*hop, 1);
        assert_eq!(class_of(&e), class, "{path}: {e}");
        if class.is_none() {
            assert!(
                matches!(e.root(), WebError::SchemeNotAllowed { .. }),
                "{path}: {e}"
            );
        }
        assert!(e.to_string().starts_with("redirect 1 from"), "{e}");
    }
    assert_eq!(
        server.hits(),
        cases.len(),
        "only the first hop of each chain was sent"
    );
}

// C5: at most five redirects.
#[tokio::test(flavor = "multi_thread")]
async fn more_than_five_redirects_are_refused() {
    // /r/N redirects to /r/N+1, forever.
    let server = Server::start(|path| {
        let n: usize = path.trim_start_matches("/r/").parse().unwrap_or(0);
        redirect(&format!("/r/{}", n + 1))
    })
    .await;
    let g = guard(loopback_ok());
    let e = refused(&g, &server.url("/r/0")).await;
    assert!(
        matches!(e, WebError::TooManyRedirects { limit: 5, .. }),
        "{e}"
    );
    assert_eq!(server.hits(), 6, "the first request and five redirects");

    // Exactly five is fine.
    let five = Server::start(|path| {
        let n: usize = path.trim_start_matches("/r/").parse().unwrap_or(0);
        if n == 5 {
            ok("arrived")
        } else {
            redirect(&format!("/r/{}", n + 1))
        }
    })
    .await;
    let response = match g.fetch(WebRequest::get(five.url("/r/0"))).await {
        Ok(r) => r,
        Err(e) => panic!("five redirects: {e}"),
    };
    assert_eq!(response.body, b"arrived");
    assert_eq!(response.redirects, 5);
    assert!(response.final_url.path().ends_with("/r/5"));
}

// C6: a 50 MB answer stops at 1 MiB, and the rest is not downloaded.
#[tokio::test(flavor = "multi_thread")]
async fn a_50_mb_answer_stops_at_1_mib() {
    const FIFTY_MB: usize = 50 * 1024 * 1024;
    let server = Server::start(|_| Reply::Big(FIFTY_MB)).await;
    let g = guard(loopback_ok());
    let response = match g.fetch(WebRequest::get(server.url("/big"))).await {
        Ok(r) => r,
        Err(e) => panic!("big: {e}"),
    };
    assert_eq!(response.body.len(), 1024 * 1024);
    assert!(response.truncated);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let written = server.written.load(Ordering::SeqCst);
    // Socket buffers hold a few MB at most; the server must have hit a closed connection.
    assert!(written < 16 * 1024 * 1024, "server wrote {written} bytes");

    // Small bodies come back whole and untruncated.
    let small = Server::start(|_| ok("hello")).await;
    let response = match g.fetch(WebRequest::get(small.url("/"))).await {
        Ok(r) => r,
        Err(e) => panic!("small: {e}"),
    };
    assert_eq!(
        (
            response.status.as_u16(),
            response.body.as_slice(),
            response.truncated
        ),
        (200, &b"hello"[..], false)
    );
}

// C6: a byte every few seconds hits the total deadline.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_answer_hits_the_total_timeout() {
    let server = Server::start(|_| Reply::Trickle(Duration::from_secs(5))).await;
    let g = guard(GuardConfig {
        total_timeout: Duration::from_millis(700),
        ..loopback_ok()
    });
    let started = Instant::now();
    match g.fetch(WebRequest::get(server.url("/slow"))).await {
        Err(WebError::Timeout { .. }) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
}

// C8: ten a minute per user, then a message that says when.
#[tokio::test(flavor = "multi_thread")]
async fn the_eleventh_request_in_a_minute_is_rate_limited() {
    let server = Server::start(|_| ok("x")).await;
    let g = guard(GuardConfig {
        allow_loopback: true,
        ..GuardConfig::default()
    });
    for i in 0..10 {
        if let Err(e) = g.fetch(WebRequest::get(server.url("/"))).await {
            panic!("request {i}: {e}");
        }
    }
    let e = refused(&g, &server.url("/")).await;
    let WebError::RateLimited { retry_after, scope } = &e else {
        panic!("expected RateLimited, got {e}");
    };
    assert_eq!(scope, "user local");
    assert!(*retry_after > Duration::ZERO && *retry_after <= Duration::from_secs(60));
    assert!(e.to_string().contains("try again in"), "{e}");
    assert_eq!(server.hits(), 10);
    // Another user is not held up by this one.
    assert!(
        g.fetch(WebRequest::get(server.url("/")).for_user("other"))
            .await
            .is_ok()
    );
}

// C8: the per-host bucket.
#[tokio::test(flavor = "multi_thread")]
async fn the_per_host_limit_holds_across_users() {
    let server = Server::start(|_| ok("x")).await;
    let g = guard(GuardConfig {
        per_host_per_minute: 3,
        ..loopback_ok()
    });
    for user in ["a", "b", "c"] {
        assert!(
            g.fetch(WebRequest::get(server.url("/")).for_user(user))
                .await
                .is_ok()
        );
    }
    let e = match g
        .fetch(WebRequest::get(server.url("/")).for_user("d"))
        .await
    {
        Err(e) => e,
        Ok(_) => panic!("fourth request to the host went through"),
    };
    assert!(
        matches!(&e, WebError::RateLimited { scope, .. } if scope == "host 127.0.0.1"),
        "{e}"
    );
    assert_eq!(server.hits(), 3);
}

// Malicious-URL filter and the user's lists.
#[tokio::test(flavor = "multi_thread")]
async fn blocklisted_hosts_and_their_subdomains_are_refused() {
    let wire = Tripwire::v4().await;
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    };
    let file = dir.path().join("urlhaus.txt");
    if let Err(e) = std::fs::write(
        &file,
        "# URLhaus\nevil.test\nhttp://shared.test/bins/x.sh\n",
    ) {
        panic!("write: {e}");
    }
    let blocklist = match Blocklist::load(&[&file]) {
        Ok(b) => b,
        Err(e) => panic!("load: {e}"),
    };
    let names = [
        "evil.test",
        "cdn.evil.test",
        "shared.test",
        "fine.test",
        "deny.test",
    ];
    let mut script = Script::default();
    for name in names {
        script = script.with(name, &[&["127.0.0.1"]]);
    }
    let script = Arc::new(script);
    let config = GuardConfig {
        blocklist,
        deny_hosts: vec!["deny.test".into()],
        ..loopback_ok()
    };
    let g = scripted(config.clone(), script.clone());
    let p = wire.port();
    for url in [
        format!("http://evil.test:{p}/"),
        format!("https://CDN.Evil.Test.:{p}/a"),
    ] {
        let e = refused(&g, &url).await;
        assert!(
            matches!(&e, WebError::Blocklisted { entry, .. } if entry == "evil.test"),
            "{url}: {e}"
        );
    }
    let e = refused(&g, &format!("http://shared.test:{p}/bins/x.sh")).await;
    assert!(matches!(e, WebError::Blocklisted { .. }), "{e}");
    let e = refused(&g, &format!("http://sub.deny.test:{p}/")).await;
    assert!(matches!(e, WebError::DeniedHost { .. }), "{e}");
    wire.assert_untouched("blocklist").await;
    assert_eq!(
        script.calls.load(Ordering::SeqCst),
        0,
        "refused before any DNS query"
    );

    // The allow list lifts a blocklist entry, but not the address checks.
    let lifted = scripted(
        GuardConfig {
            allow_hosts: vec!["evil.test".into()],
            allow_loopback: false,
            ..config
        },
        script,
    );
    let e = refused(&lifted, &format!("http://evil.test:{p}/")).await;
    assert_eq!(class_of(&e), Some(AddressClass::Loopback), "{e}");
    wire.assert_untouched("allow list").await;
}

// C3: a name that resolves inward, or partly inward.
#[tokio::test(flavor = "multi_thread")]
async fn names_resolving_to_private_addresses_are_refused_before_connecting() {
    let wire = Tripwire::v4().await;
    let script = Arc::new(
        Script::default()
            .with("rebind.test", &[&["127.0.0.1"]])
            .with("mixed.test", &[&["93.184.216.34", "10.0.0.5"]])
            .with("aaaa.test", &[&["93.184.216.34", "fd00::5"]]),
    );
    let g = scripted(unlimited(), script);
    let e = refused(&g, &format!("http://rebind.test:{}/", wire.port())).await;
    assert_eq!(class_of(&e), Some(AddressClass::Loopback), "{e}");
    assert!(e.to_string().contains("rebind.test"), "{e}");
    let e = refused(&g, "http://mixed.test/").await;
    assert_eq!(class_of(&e), Some(AddressClass::Private), "{e}");
    let e = refused(&g, "http://aaaa.test/").await;
    assert_eq!(class_of(&e), Some(AddressClass::UniqueLocal), "{e}");
    wire.assert_untouched("rebind.test").await;
}

// C4: the connection goes to the address that was checked.
#[tokio::test(flavor = "multi_thread")]
async fn the_connection_is_pinned_to_the_checked_address() {
    let server = Server::start(|_| ok("pinned")).await;
    // The first answer passes (loopback allowed), every later one points elsewhere; a client
    // that resolved again would not reach the server (and `pinned.test` is not in real DNS).
    let script = Arc::new(Script::default().with("pinned.test", &[&["127.0.0.1"], &["10.0.0.1"]]));
    let g = scripted(loopback_ok(), script.clone());
    let url = format!("http://pinned.test:{}/", server.addr.port());
    let response = match g.fetch(WebRequest::get(&url)).await {
        Ok(r) => r,
        Err(e) => panic!("pinned: {e}"),
    };
    assert_eq!(response.body, b"pinned");
    assert_eq!(server.hits(), 1);
    assert_eq!(
        script.calls.load(Ordering::SeqCst),
        1,
        "resolved once, by the guard"
    );
    // A trailing dot is the same name to DNS; the pin must still hold (the client has no
    // DNS of its own, so an unpinned name would fail rather than be looked up).
    let dotted = Arc::new(Script::default().with("pinned.test.", &[&["127.0.0.1"]]));
    let g2 = scripted(loopback_ok(), dotted);
    let dotted_url = format!("http://Pinned.Test.:{}/", server.addr.port());
    match g2.fetch(WebRequest::get(&dotted_url)).await {
        Ok(r) => assert_eq!(r.body, b"pinned"),
        Err(e) => panic!("{dotted_url}: {e}"),
    }
    assert_eq!(server.hits(), 2);
    // The next fetch resolves again and sees the rebound answer: refused.
    let e = refused(&g, &url).await;
    assert_eq!(class_of(&e), Some(AddressClass::Private), "{e}");
    assert_eq!(server.hits(), 2);
}

// C5: credentials for one origin do not follow a redirect to another.
#[tokio::test(flavor = "multi_thread")]
async fn credentials_are_dropped_when_a_redirect_changes_origin() {
    let echo = Server::start(|_| Reply::EchoHead).await;
    let target = echo.url("/landing");
    let hop = Server::start(move |path| match path {
        "/same" => redirect("/echo"),
        "/echo" => Reply::EchoHead,
        _ => redirect(&target),
    })
    .await;
    let g = guard(loopback_ok());
    let with_auth = |url: String| {
        let mut request = WebRequest::get(url);
        request.headers.insert(
            cairn_web::header::AUTHORIZATION,
            cairn_web::header::HeaderValue::from_static("Bearer sekrit"),
        );
        request
    };
    let same = match g.fetch(with_auth(hop.url("/same"))).await {
        Ok(r) => String::from_utf8_lossy(&r.body).to_lowercase(),
        Err(e) => panic!("same origin: {e}"),
    };
    assert!(same.contains("authorization: bearer sekrit"), "{same}");
    let other = match g.fetch(with_auth(hop.url("/away"))).await {
        Ok(r) => String::from_utf8_lossy(&r.body).to_lowercase(),
        Err(e) => panic!("other origin: {e}"),
    };
    assert!(other.starts_with("get /landing"), "{other}");
    assert!(!other.contains("sekrit"), "{other}");
}

// C8: a 429 is handed back as it is, never retried in a loop.
#[tokio::test(flavor = "multi_thread")]
async fn a_429_is_surfaced_not_retried() {
    let server =
        Server::start(|_| Reply::Text(429, vec!["Retry-After: 0".into()], "slow down".into()))
            .await;
    let g = guard(loopback_ok());
    let response = match g.fetch(WebRequest::get(server.url("/"))).await {
        Ok(r) => r,
        Err(e) => panic!("429: {e}"),
    };
    assert_eq!(response.status.as_u16(), 429);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.hits(), 1);
}

// C7: with a proxy configured, the target is still checked, and the proxy sees nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_configured_proxy_does_not_bypass_the_checks() {
    let proxy = Tripwire::v4().await;
    let proxy_url = match format!("http://127.0.0.1:{}/", proxy.port()).parse() {
        Ok(u) => u,
        Err(e) => panic!("proxy url: {e}"),
    };
    let g = guard(GuardConfig {
        proxy: Some(proxy_url),
        ..unlimited()
    });
    for url in [
        "http://169.254.169.254/",
        "http://10.0.0.1/",
        "http://127.0.0.1/",
    ] {
        let e = refused(&g, url).await;
        assert!(class_of(&e).is_some(), "{url}: {e}");
    }
    proxy.assert_untouched("proxy").await;
}

// C6: the guard never decompresses, so a "gzip" body is returned as received, still capped.
#[tokio::test(flavor = "multi_thread")]
async fn compressed_bodies_are_not_expanded() {
    let server = Server::start(|_| {
        Reply::Text(
            200,
            vec!["Content-Encoding: gzip".into()],
            "x".repeat(2 * 1024 * 1024),
        )
    })
    .await;
    let g = guard(loopback_ok());
    let response = match g.fetch(WebRequest::get(server.url("/bomb"))).await {
        Ok(r) => r,
        Err(e) => panic!("gzip: {e}"),
    };
    assert_eq!(response.body.len(), 1024 * 1024);
    assert!(response.truncated);
}

/// Secrets by name, each with the one host it is bound to.
struct Bound(Vec<(&'static str, &'static str, &'static str)>);

impl cairn_web::Credentials for Bound {
    fn for_host(
        &self,
        name: &str,
        host: &str,
    ) -> Result<cairn_vault::Secret, cairn_web::CredentialRefusal> {
        match self.0.iter().find(|(n, _, _)| *n == name) {
            Some((_, value, bound)) if *bound == host => {
                Ok(cairn_vault::Secret::new((*value).to_string()))
            }
            Some((_, _, bound)) => Err(cairn_web::CredentialRefusal {
                reason: format!("it is bound to {bound}"),
            }),
            None => Err(cairn_web::CredentialRefusal {
                reason: "no such secret".into(),
            }),
        }
    }
}

fn with_secrets(script: Arc<Script>) -> WebGuard {
    scripted(loopback_ok(), script)
        .with_credentials(Arc::new(Bound(vec![("github", "tok-123", "api.test")])))
}

async fn body_of(guard: &WebGuard, request: WebRequest) -> String {
    match guard.fetch(request).await {
        Ok(r) => String::from_utf8_lossy(&r.body).to_lowercase(),
        Err(e) => panic!("fetch: {e}"),
    }
}

// D5: the guard attaches a secret itself, per hop, only for the host it is bound to.
#[tokio::test(flavor = "multi_thread")]
async fn a_secret_goes_only_to_its_bound_host() {
    let echo = Server::start(|_| Reply::EchoHead).await;
    let port = echo.addr.port();
    let script = Arc::new(
        Script::default()
            .with("api.test", &[&["127.0.0.1"]])
            .with("evil.test", &[&["127.0.0.1"]]),
    );
    let g = with_secrets(script);
    let use_github = |placement| cairn_web::CredentialUse {
        secret: "github".into(),
        placement,
    };

    // What arrived carries the value; what came back (the head, echoed) does not: the guard
    // scrubs what it sent from the response.
    let bearer = WebRequest::get(format!("http://api.test:{port}/user"))
        .with_credential(use_github(cairn_web::Placement::Bearer));
    let seen = body_of(&g, bearer).await;
    assert!(echo.last_head().contains("authorization: bearer tok-123"));
    assert!(seen.contains("authorization: [redacted:github]"), "{seen}");

    let header = WebRequest::get(format!("http://api.test:{port}/user"))
        .with_credential(use_github(cairn_web::Placement::Header("X-Api-Key".into())));
    let seen = body_of(&g, header).await;
    assert!(echo.last_head().contains("x-api-key: tok-123"));
    assert!(seen.contains("x-api-key: [redacted:github]"), "{seen}");

    let basic = WebRequest::get(format!("http://api.test:{port}/user")).with_credential(
        use_github(cairn_web::Placement::Basic {
            username: "me".into(),
        }),
    );
    let seen = body_of(&g, basic).await;
    // base64("me:tok-123")
    assert!(
        echo.last_head()
            .contains("authorization: basic bwu6dg9rlteymw==")
    );
    assert!(seen.contains("authorization: [redacted:github]"), "{seen}");

    // In the query: sent, but neither the URL reported back nor the echo carries it.
    let query = WebRequest::get(format!("http://api.test:{port}/user?page=2"))
        .with_credential(use_github(cairn_web::Placement::Query("key".into())));
    let response = match g.fetch(query).await {
        Ok(r) => r,
        Err(e) => panic!("query: {e}"),
    };
    let seen = String::from_utf8_lossy(&response.body).into_owned();
    assert!(
        echo.last_head()
            .starts_with("get /user?page=2&key=tok-123 ")
    );
    assert!(
        seen.starts_with("GET /user?page=2&key=[REDACTED:github] "),
        "{seen}"
    );
    assert!(!response.final_url.as_str().contains("tok-123"));

    // Another host: refused before any connection.
    let before = echo.hits();
    let evil = WebRequest::get(format!("http://evil.test:{port}/?steal=1"))
        .with_credential(use_github(cairn_web::Placement::Bearer));
    match g.fetch(evil).await {
        Err(WebError::CredentialRefused { secret, host, .. }) => {
            assert_eq!((secret.as_str(), host.as_str()), ("github", "evil.test"));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(echo.hits(), before, "evil.test received a connection");

    // An unknown secret is refused the same way.
    let unknown = WebRequest::get(format!("http://api.test:{port}/"))
        .with_credential(cairn_web::CredentialUse::bearer("aws"));
    assert!(matches!(
        g.fetch(unknown).await,
        Err(WebError::CredentialRefused { .. })
    ));
    assert_eq!(echo.hits(), before);
}

// D5: a redirect from the bound host to another goes on without the secret.
#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_another_host_loses_the_secret() {
    let echo = Server::start(|_| Reply::EchoHead).await;
    let landing = format!("http://evil.test:{}/landing", echo.addr.port());
    let hop = Server::start(move |_| redirect(&landing)).await;
    let script = Arc::new(
        Script::default()
            .with("api.test", &[&["127.0.0.1"]])
            .with("evil.test", &[&["127.0.0.1"]]),
    );
    let g = with_secrets(script);
    let request = WebRequest::get(format!("http://api.test:{}/go", hop.addr.port()))
        .with_credential(cairn_web::CredentialUse::bearer("github"));
    let seen = body_of(&g, request).await;
    assert!(seen.starts_with("get /landing"), "{seen}");
    assert!(!seen.contains("tok-123"), "{seen}");
    assert_eq!(hop.hits(), 1);
}

/// Fixed encodings of what the guard sends for secret `github` = `tok-123` with Basic user
/// `me`, from Python 3: `base64.b64encode(b'me:tok-123')`, `json.dumps` with every character
/// as `\uXXXX`, `urllib.parse.quote_plus`, `html.escape`, `.upper()`, and the encoded pair
/// split by MIME's `\r\n`.
const ECHOES: [&str; 7] = [
    "bWU6dG9rLTEyMw==",
    "\\u0074\\u006f\\u006b\\u002d\\u0031\\u0032\\u0033",
    "me%3Atok-123",
    "&#116;&#111;&#107;&#45;&#49;&#50;&#51;",
    "TOK-123",
    "bWU6dG9rL\r\nTEyMw==",
    "tok-\n123",
];

// A server echoing back what it received, in any encoding, in the body, a header or the final
// URL, hands the tool none of it.
#[tokio::test(flavor = "multi_thread")]
async fn a_credential_echoed_back_in_any_encoding_is_scrubbed() {
    let body = ECHOES.join(" | ");
    let header = format!("X-Echo: {}", ECHOES[0]);
    let echo = Server::start(move |_| Reply::Text(200, vec![header.clone()], body.clone())).await;
    let port = echo.addr.port();
    let script = Arc::new(Script::default().with("api.test", &[&["127.0.0.1"]]));
    let g = with_secrets(script);
    let basic = WebRequest::get(format!("http://api.test:{port}/user")).with_credential(
        cairn_web::CredentialUse {
            secret: "github".into(),
            placement: cairn_web::Placement::Basic {
                username: "me".into(),
            },
        },
    );
    let response = match g.fetch(basic).await {
        Ok(r) => r,
        Err(e) => panic!("fetch: {e}"),
    };
    assert!(
        echo.last_head()
            .contains("authorization: basic bwu6dg9rlteymw==")
    );
    let seen = String::from_utf8_lossy(&response.body).into_owned();
    assert_eq!(seen, vec!["[REDACTED:github]"; ECHOES.len()].join(" | "));
    assert_eq!(
        response.headers.get("x-echo").map(|v| v.as_bytes()),
        Some(&b"[REDACTED:github]"[..])
    );
}

// A redirect whose address carries the credential to another host is not followed, and the
// refusal does not repeat the credential.
#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_carrying_the_credential_elsewhere_is_refused() {
    let evil = Server::start(|_| Reply::EchoHead).await;
    let landing = format!("http://evil.test:{}/steal?k=tok-123", evil.addr.port());
    let hop = Server::start(move |_| redirect(&landing)).await;
    let script = Arc::new(
        Script::default()
            .with("api.test", &[&["127.0.0.1"]])
            .with("evil.test", &[&["127.0.0.1"]]),
    );
    let g = with_secrets(script);
    let request = WebRequest::get(format!("http://api.test:{}/go", hop.addr.port()))
        .with_credential(cairn_web::CredentialUse::bearer("github"));
    match g.fetch(request).await {
        Err(e @ WebError::RedirectRefused { .. }) => {
            let message = e.to_string();
            assert!(
                matches!(e.root(), WebError::CredentialRefused { secret, .. } if secret == "github"),
                "{message}"
            );
            assert!(!message.contains("tok-123"), "{message}");
            assert!(message.contains("carries the credential"), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(hop.hits(), 1);
    assert_eq!(evil.hits(), 0, "the credential went to another host");
}

// A body cut at the size cap in the middle of an echo does not end in its first part.
#[tokio::test(flavor = "multi_thread")]
async fn an_echo_cut_at_the_size_cap_leaves_no_part_of_the_credential() {
    // 1,000 bytes of padding, then the value JSON-escaped character by character (from
    // Python 3: ''.join('\\u%04x' % ord(c) for c in 'tok-123')), cut after its fourth escape.
    let body = format!(
        "{}\\u0074\\u006f\\u006b\\u002d\\u0031\\u0032\\u0033 more",
        "x".repeat(1000)
    );
    let echo = Server::start(move |_| Reply::Text(200, vec![], body.clone())).await;
    let port = echo.addr.port();
    let script = Arc::new(Script::default().with("api.test", &[&["127.0.0.1"]]));
    let config = GuardConfig {
        max_bytes: 1000 + 4 * 6,
        ..loopback_ok()
    };
    let g = scripted(config, script)
        .with_credentials(Arc::new(Bound(vec![("github", "tok-123", "api.test")])));
    let request = WebRequest::get(format!("http://api.test:{port}/user"))
        .with_credential(cairn_web::CredentialUse::bearer("github"));
    let response = match g.fetch(request).await {
        Ok(r) => r,
        Err(e) => panic!("fetch: {e}"),
    };
    assert!(response.truncated);
    let seen = String::from_utf8_lossy(&response.body).into_owned();
    assert!(!seen.contains("\\u0074"), "{seen}");
    assert!(seen.chars().all(|c| c == 'x'), "{seen}");
    // Only as much as an encoding of the longest thing sent (the header value) could take
    // went, beyond the cap's cut.
    assert_eq!(
        response.body.len(),
        1000 + 4 * 6 - 10 * "Bearer tok-123".len()
    );
}

// `fetch_to` writes a success's body past the in-memory cap, up to its own cap, and stops
// reading there.
#[tokio::test(flavor = "multi_thread")]
async fn fetch_to_streams_past_the_memory_cap_and_stops_at_its_own() {
    const FIVE_MB: usize = 5 * 1024 * 1024;
    let server = Server::start(|_| Reply::Big(FIVE_MB)).await;
    let g = guard(loopback_ok());
    let mut out: Vec<u8> = Vec::new();
    let r = match g
        .fetch_to(
            WebRequest::get(server.url("/big")),
            8 * 1024 * 1024,
            &mut out,
        )
        .await
    {
        Ok(r) => r,
        Err(e) => panic!("fetch_to: {e}"),
    };
    assert_eq!(
        (r.status.as_u16(), r.written, r.truncated),
        (200, FIVE_MB as u64, false)
    );
    assert_eq!(out.len(), FIVE_MB);
    assert!(out.iter().all(|b| *b == b'x'));

    const FIFTY_MB: usize = 50 * 1024 * 1024;
    let huge = Server::start(|_| Reply::Big(FIFTY_MB)).await;
    let mut out: Vec<u8> = Vec::new();
    let r = match g
        .fetch_to(WebRequest::get(huge.url("/big")), 2 * 1024 * 1024, &mut out)
        .await
    {
        Ok(r) => r,
        Err(e) => panic!("fetch_to: {e}"),
    };
    assert_eq!((r.written, r.truncated), (2 * 1024 * 1024, true));
    assert_eq!(out.len(), 2 * 1024 * 1024);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let written = huge.written.load(Ordering::SeqCst);
    assert!(written < 16 * 1024 * 1024, "server wrote {written} bytes");

    // An error status: its body comes back in memory, nothing is written.
    let missing = Server::start(|_| Reply::Text(404, vec![], "<Error>gone</Error>".into())).await;
    let mut out: Vec<u8> = Vec::new();
    let r = match g
        .fetch_to(WebRequest::get(missing.url("/x")), 1024, &mut out)
        .await
    {
        Ok(r) => r,
        Err(e) => panic!("fetch_to: {e}"),
    };
    assert_eq!((r.status.as_u16(), r.written), (404, 0));
    assert_eq!(r.body, b"<Error>gone</Error>");
    assert!(out.is_empty());

    // The hops pass the same checks as `fetch`: a redirect inward is refused.
    let inward = Server::start(|_| redirect("http://10.0.0.1/")).await;
    let mut out: Vec<u8> = Vec::new();
    match g
        .fetch_to(WebRequest::get(inward.url("/r")), 1024, &mut out)
        .await
    {
        Err(e @ WebError::RedirectRefused { .. }) => {
            assert_eq!(class_of(&e), Some(AddressClass::Private), "{e}");
        }
        other => panic!("expected a refused redirect, got {other:?}"),
    }
    assert!(out.is_empty());
}

// A credential sent as itself (here Basic) is not streamed: the body is read as `fetch` reads
// it, capped at `max_bytes` and scrubbed of the echo, then written.
#[tokio::test(flavor = "multi_thread")]
async fn fetch_to_does_not_stream_a_secret_placed_as_itself() {
    let body = ECHOES.join(" | ");
    let echo = Server::start(move |_| ok(&body)).await;
    let port = echo.addr.port();
    let script = Arc::new(Script::default().with("api.test", &[&["127.0.0.1"]]));
    let g = with_secrets(script.clone());
    let basic = |path: &str| {
        WebRequest::get(format!("http://api.test:{port}{path}")).with_credential(
            cairn_web::CredentialUse {
                secret: "github".into(),
                placement: cairn_web::Placement::Basic {
                    username: "me".into(),
                },
            },
        )
    };
    let mut out: Vec<u8> = Vec::new();
    let r = match g.fetch_to(basic("/user"), 1 << 30, &mut out).await {
        Ok(r) => r,
        Err(e) => panic!("fetch_to: {e}"),
    };
    assert!(!r.truncated);
    assert_eq!(
        String::from_utf8_lossy(&out),
        vec!["[REDACTED:github]"; ECHOES.len()].join(" | ")
    );

    // A large body under such a credential stops at the web size cap (1 MiB), whatever the
    // caller's cap.
    let big = Server::start(|_| Reply::Big(5 * 1024 * 1024)).await;
    let g = with_secrets(script);
    let request = WebRequest::get(format!("http://api.test:{}/big", big.addr.port()))
        .with_credential(cairn_web::CredentialUse::bearer("github"));
    let mut out: Vec<u8> = Vec::new();
    let r = match g.fetch_to(request, 1 << 30, &mut out).await {
        Ok(r) => r,
        Err(e) => panic!("fetch_to: {e}"),
    };
    assert!(r.truncated);
    assert!(out.len() <= 1024 * 1024, "{} bytes written", out.len());
}
