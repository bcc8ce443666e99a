//! From `[comms.email]` to a connected stream: the server URL read strictly, the connection
//! dialled by the web guard (its address checks and rate limits), TLS from the first byte or
//! after STARTTLS (verified against the Mozilla roots and the config's `ca_file`), plain text
//! only to loopback, and the password taken from the vault for that host.

use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use cairn_config::EmailConfig;
use cairn_toolkit::{CallContext, ToolError};
use cairn_vault::Secret;
use cairn_web::{WebError, WebGuard};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::comms::{Comms, cancelled};

/// The most one SMTP or IMAP exchange may take, start to end.
const SESSION: Duration = Duration::from_secs(60);
/// The largest CA file read.
const MAX_CA_FILE: u64 = 1024 * 1024;

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Security {
    /// TLS from the first byte (`smtps`, `imaps`).
    Tls,
    /// Plain, then STARTTLS before anything else; a server that does not offer it is refused.
    StartTls,
    /// No TLS at all: loopback only (`smtp+insecure`, `imap+insecure`).
    Insecure,
}

/// One server of `[comms.email]`.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub host: String,
    pub port: u16,
    pub security: Security,
}

impl Server {
    /// Reads `url` for `proto` (`smtp` or `imap`): `PROTOs://`, `PROTO://` or
    /// `PROTO+insecure://`, a host, an optional port, nothing else.
    pub fn parse(url: &str, proto: &str) -> Result<Server, ToolError> {
        let shown = |why: &str| format!("`[comms.email] {proto}` = {url:?} is not usable: {why}");
        let bad = |why: &str| ToolError::invalid(shown(why));
        let parsed = url::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
        let (security, default_port) = match (proto, parsed.scheme()) {
            ("smtp", "smtps") => (Security::Tls, 465),
            ("smtp", "smtp") => (Security::StartTls, 587),
            ("smtp", "smtp+insecure") => (Security::Insecure, 25),
            ("imap", "imaps") => (Security::Tls, 993),
            ("imap", "imap") => (Security::StartTls, 143),
            ("imap", "imap+insecure") => (Security::Insecure, 143),
            _ => {
                return Err(bad(&format!(
                    "the scheme must be {proto}s://, {proto}:// (STARTTLS) or {proto}+insecure:// (loopback only)"
                )));
            }
        };
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad(
                "no user name or password in the URL (`username` and `password_secret` say them)",
            ));
        }
        if !matches!(parsed.path(), "" | "/") || parsed.query().is_some() {
            return Err(bad("only a host and a port"));
        }
        let host = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let server = Server {
            port: parsed.port().unwrap_or(default_port),
            host,
            security,
        };
        if security == Security::Insecure && !server.is_loopback() {
            // A rule, not a mistake in the URL: plain text only to loopback.
            return Err(ToolError::refused(shown(&format!(
                "{proto}+insecure:// sends the password in plain text, so it is allowed only to \
                 loopback (localhost, 127.0.0.1, ::1); use {proto}s:// or {proto}:// (STARTTLS)"
            ))));
        }
        Ok(server)
    }

    fn is_loopback(&self) -> bool {
        self.host == "localhost" || self.host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// A connection: plain until TLS is on it.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// What a mail tool needs: the mailbox settings, the guard and who the limits count against.
pub(crate) struct Mail<'a> {
    pub settings: &'a EmailConfig,
    pub guard: &'a Arc<WebGuard>,
    comms: &'a Comms,
    ca: Option<Vec<u8>>,
}

impl<'a> Mail<'a> {
    /// The mailbox of `comms`, or why there is none.
    pub fn of(comms: &'a Comms) -> Result<Mail<'a>, ToolError> {
        let settings = comms.settings.email.as_ref().ok_or_else(|| {
            ToolError::not_found(
                "no mailbox is configured: add `[comms.email]` (smtp, imap, username, \
                 password_secret, from, allow_to) to your config",
            )
        })?;
        let guard = comms.guard.as_ref().ok_or_else(|| {
            ToolError::refused(
                "the web tools are off (`[web] enabled = false`), and mail goes through the web \
                 guard, so nothing can be sent or read",
            )
        })?;
        let ca = match &settings.ca_file {
            None => None,
            Some(path) => {
                // A file the user named in their config (never a path the model wrote).
                use std::io::Read;
                let mut bytes = Vec::new();
                std::fs::File::open(path)
                    .and_then(|f| f.take(MAX_CA_FILE).read_to_end(&mut bytes))
                    .map_err(|e| {
                        ToolError::peer(format!(
                            "`[comms.email] ca_file` {} cannot be read: {e}",
                            path.display()
                        ))
                    })?;
                Some(bytes)
            }
        };
        Ok(Mail {
            settings,
            guard,
            comms,
            ca,
        })
    }

    /// The server `[comms.email] proto` names (`smtp` or `imap`).
    pub fn server(&self, proto: &str) -> Result<Server, ToolError> {
        let url = match proto {
            "smtp" => self.settings.smtp.as_deref(),
            _ => self.settings.imap.as_deref(),
        };
        let url = url.ok_or_else(|| {
            ToolError::not_found(format!(
                "`[comms.email]` has no `{proto}` server: add one to your config"
            ))
        })?;
        Server::parse(url, proto)
    }

    /// The password for `server`, from the vault, only if its secret is bound to that host.
    pub fn password(&self, server: &Server) -> Result<Secret, ToolError> {
        let name = &self.settings.password_secret;
        self.comms.secrets.for_host(name, &server.host).map_err(|e| {
            ToolError::refused(format!(
                "the password `{name}` cannot be used for {}: {e} (bind the vault secret to that host)",
                server.host
            ))
        })
    }

    /// The user the guard's limits count against.
    pub fn user(&self) -> &str {
        &self.comms.user
    }

    /// A connection to `server` through the guard, with TLS on it when `Security::Tls`.
    pub async fn dial(&self, server: &Server) -> Result<Stream, ToolError> {
        let tcp = self
            .guard
            .connect(self.user(), &server.host, server.port)
            .await
            .map_err(web_error)?;
        match server.security {
            Security::Tls => self.tls(tcp, server).await,
            Security::StartTls | Security::Insecure => Ok(Stream::Plain(tcp)),
        }
    }

    /// TLS on `tcp`, verified for `server`'s host.
    pub async fn tls(&self, tcp: TcpStream, server: &Server) -> Result<Stream, ToolError> {
        self.guard
            .tls(tcp, &server.host, self.ca.as_deref())
            .await
            .map(|s| Stream::Tls(Box::new(s)))
            .map_err(web_error)
    }
}

/// The guard's failure, in its own words: a refusal (an address, a rate) stays a refusal, a
/// failed connection or handshake is the server's.
pub(crate) fn web_error(e: WebError) -> ToolError {
    if e.is_denial() {
        ToolError::refused(e)
    } else {
        ToolError::peer(e)
    }
}

/// `work` under the session time limit and the run's cancellation.
pub(crate) async fn bounded<T>(
    cx: &CallContext,
    what: &str,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    tokio::select! {
        r = tokio::time::timeout(SESSION, work) => r.unwrap_or_else(|_| {
            Err(ToolError::limit(format!(
                "{what}: the server did not finish within {} s",
                SESSION.as_secs()
            )))
        }),
        () = cx.cancel.cancelled() => Err(cancelled()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_read_strictly() {
        let s = Server::parse("smtp://Mail.Example.com", "smtp").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.host.as_str(), s.port), ("mail.example.com", 587));
        assert_eq!(s.security, Security::StartTls);
        let s = Server::parse("imaps://[::1]:1993", "imap").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.host.as_str(), s.port, s.security),
            ("::1", 1993, Security::Tls)
        );
        assert!(Server::parse("smtp+insecure://localhost:2525", "smtp").is_ok());
        for bad in [
            "smtp+insecure://mail.example.com:25",
            "smtp+insecure://10.0.0.1:25",
            "http://mail.example.com",
            "imap://mail.example.com",
            "smtp://user:pw@mail.example.com",
            "smtp://mail.example.com/path",
        ] {
            assert!(Server::parse(bad, "smtp").is_err(), "{bad}");
        }
    }
}
