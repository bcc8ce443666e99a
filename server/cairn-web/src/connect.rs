//! Raw TCP connections through the guard, for protocols it does not speak itself (SMTP, IMAP):
//! the URL, deny-list, blocklist, address and rate-limit checks of a fetch, then one vetted
//! address dialled with the connect timeout; and the TLS client those protocols wrap it in
//! (the Mozilla roots, plus CA certificates the user's config names), for TLS from the first
//! byte or after STARTTLS.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use url::Url;

use crate::error::WebError;
use crate::guard::WebGuard;

/// `host:port` as shown in messages (IPv6 in brackets).
fn shown(host: &str, port: u16) -> String {
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
        _ => format!("{host}:{port}"),
    }
}

impl WebGuard {
    /// A TCP connection to `host:port` for `user`, after the checks every fetch passes (deny
    /// list, blocklist, every resolved address's class, the user's and the host's rate
    /// limits). The first vetted address that answers within the connect timeout is used.
    /// Refused when a proxy is configured: a raw connection would go around it.
    pub async fn connect(&self, user: &str, host: &str, port: u16) -> Result<TcpStream, WebError> {
        let (shown, _, addrs) = self
            .vet_host_port(user, host, port, |shown| WebError::Connect {
                host: shown,
                reason: "the web guard sends through a proxy, and this protocol needs a direct \
                         connection, which would go around it"
                    .into(),
            })
            .await?;
        self.dial(&shown, &addrs).await
    }

    /// The checks a raw connection to `host:port` passes, shared by [`WebGuard::connect`] and
    /// [`WebGuard::peer_certificates`]: refused (as `proxied` says) when a proxy is configured,
    /// since a direct connection would go around it; else the URL, deny-list, blocklist,
    /// address and rate-limit checks of a fetch. The host as shown (`[v6]:port`), its URL, and
    /// the vetted addresses.
    pub(crate) async fn vet_host_port(
        &self,
        user: &str,
        host: &str,
        port: u16,
        proxied: impl FnOnce(String) -> WebError,
    ) -> Result<(String, Url, Vec<SocketAddr>), WebError> {
        let host = host.trim().trim_start_matches('[').trim_end_matches(']');
        let shown = shown(host, port);
        if self.config().proxy.is_some() {
            return Err(proxied(shown));
        }
        let url = Url::parse(&format!("https://{shown}/")).map_err(|e| WebError::InvalidUrl {
            url: shown.clone(),
            reason: e.to_string(),
        })?;
        let addrs = self.vet_for(user, &url).await?;
        Ok((shown, url, addrs))
    }

    // The guard's raw connection (clippy.toml bans it elsewhere): only to addresses `vet_for`
    // passed.
    #[allow(clippy::disallowed_methods)]
    async fn dial(&self, shown: &str, addrs: &[SocketAddr]) -> Result<TcpStream, WebError> {
        let mut last = String::from("no address to connect to");
        for addr in addrs {
            match tokio::time::timeout(self.config().connect_timeout, TcpStream::connect(addr))
                .await
            {
                Ok(Ok(tcp)) => return Ok(tcp),
                Ok(Err(e)) => last = format!("{addr}: {e}"),
                Err(_) => last = format!("{addr}: no answer in time"),
            }
        }
        Err(WebError::Connect {
            host: shown.to_owned(),
            reason: last,
        })
    }

    /// `stream` (connected to `host` through [`WebGuard::connect`]) with TLS on it: the
    /// certificate must verify for `host` against the Mozilla roots or a CA in `extra_ca_pem`
    /// (PEM, from the user's config); the handshake gets the connect timeout.
    pub async fn tls<S>(
        &self,
        stream: S,
        host: &str,
        extra_ca_pem: Option<&[u8]>,
    ) -> Result<TlsStream<S>, WebError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let host = host.trim().trim_start_matches('[').trim_end_matches(']');
        let fail = |reason: String| WebError::Tls {
            host: host.to_owned(),
            reason,
        };
        let connector = tls_connector(extra_ca_pem).map_err(|e| fail(e.to_string()))?;
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| fail(format!("not a name TLS accepts: {e}")))?;
        match tokio::time::timeout(
            self.config().connect_timeout,
            connector.connect(name, stream),
        )
        .await
        {
            Ok(Ok(tls)) => Ok(tls),
            Ok(Err(e)) => Err(fail(e.to_string())),
            Err(_) => Err(fail("no handshake in time".into())),
        }
    }
}

/// Why a TLS client cannot be set up: the CA file given for a peer cannot be trusted, or rustls
/// refuses the protocol versions.
#[derive(Debug, thiserror::Error)]
enum TlsSetupError {
    #[error("the CA file does not parse as PEM: {0}")]
    NotPem(rustls::pki_types::pem::Error),
    #[error("a certificate in the CA file is not usable: {0}")]
    Unusable(rustls::Error),
    #[error("the CA file holds no PEM certificate")]
    Empty,
    #[error("{0}")]
    Protocols(rustls::Error),
}

/// A TLS client trusting the Mozilla roots and every certificate in `extra_ca_pem`.
fn tls_connector(extra_ca_pem: Option<&[u8]>) -> Result<tokio_rustls::TlsConnector, TlsSetupError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(pem) = extra_ca_pem {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(TlsSetupError::NotPem)?;
            roots.add(cert).map_err(TlsSetupError::Unusable)?;
            added += 1;
        }
        if added == 0 {
            return Err(TlsSetupError::Empty);
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsSetupError::Protocols)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::*;
    use crate::classify::AddressClass;
    use crate::config::GuardConfig;
    use crate::resolve::{BoxFuture, Resolver};

    /// Answers every name with one private address, as a hostile DNS server would.
    struct Private;

    impl Resolver for Private {
        fn resolve<'a>(
            &'a self,
            _host: &'a str,
            port: u16,
        ) -> BoxFuture<'a, std::io::Result<Vec<SocketAddr>>> {
            Box::pin(async move { Ok(vec![SocketAddr::from(([10, 0, 0, 7], port))]) })
        }
    }

    fn guard(config: GuardConfig) -> WebGuard {
        WebGuard::with_resolver(config, Arc::new(Private)).unwrap()
    }

    #[tokio::test]
    async fn a_private_address_is_refused_before_any_connection() {
        let g = guard(GuardConfig::default());
        let e = g.connect("u", "mail.example.com", 587).await.unwrap_err();
        assert!(
            matches!(
                e,
                WebError::AddressRefused {
                    class: AddressClass::Private,
                    ..
                }
            ),
            "{e}"
        );
        let e = g.connect("u", "192.168.1.5", 993).await.unwrap_err();
        assert!(matches!(e, WebError::AddressRefused { .. }), "{e}");
        // Loopback only when allowed.
        let e = g.connect("u", "127.0.0.1", 25).await.unwrap_err();
        assert!(matches!(e, WebError::AddressRefused { .. }), "{e}");
        assert!(e.is_denial());
    }

    #[tokio::test]
    async fn a_denied_host_and_a_proxy_are_refused() {
        let g = guard(GuardConfig {
            deny_hosts: vec!["example.com".into()],
            ..GuardConfig::default()
        });
        let e = g.connect("u", "smtp.EXAMPLE.com", 465).await.unwrap_err();
        assert!(matches!(e, WebError::DeniedHost { .. }), "{e}");
        let g = guard(GuardConfig {
            proxy: Some(Url::parse("http://proxy.example.org:3128").unwrap()),
            ..GuardConfig::default()
        });
        let e = g.connect("u", "mail.example.net", 465).await.unwrap_err();
        assert!(e.to_string().contains("proxy"), "{e}");
    }

    #[tokio::test]
    async fn loopback_connects_when_allowed() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let g = guard(GuardConfig {
            allow_loopback: true,
            ..GuardConfig::default()
        });
        let tcp = g.connect("u", "localhost", port).await.unwrap();
        assert_eq!(tcp.peer_addr().unwrap().port(), port);
    }

    #[test]
    fn a_ca_file_without_certificates_is_an_error() {
        let e = tls_connector(Some(b"not a certificate")).err().unwrap();
        assert!(e.to_string().contains("no PEM certificate"), "{e}");
        assert!(tls_connector(None).is_ok());
    }
}
