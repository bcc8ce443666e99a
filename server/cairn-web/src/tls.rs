//! A host's TLS certificate chain, read through the guard: the URL, deny-list, blocklist,
//! address and rate-limit checks of a fetch, then one TLS handshake to a vetted address and no
//! HTTP request at all. The chain is kept whatever its validity (an expired or self-signed
//! certificate is exactly what a user asks about), and whether it verifies for the host against
//! the Mozilla roots is reported beside it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::error::WebError;
use crate::guard::WebGuard;

/// Why a server's chain does not verify.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ChainError {
    /// The verifier reqwest uses refused it (expired, another name, an unknown issuer, ...).
    #[error("{0}")]
    Rejected(rustls::Error),
    /// The handshake ended without a certificate to verify.
    #[error("the server sent no certificate")]
    NoCertificate,
}

/// What one handshake showed.
#[derive(Debug, Clone)]
pub struct PeerCertificates {
    /// The chain as the server sent it, leaf first, DER.
    pub chain: Vec<Vec<u8>>,
    /// `Ok` when the chain verifies for the host name against the Mozilla roots now; else why.
    pub verified: Result<(), ChainError>,
    /// The protocol version agreed (`TLSv1_3`).
    pub protocol: String,
    /// The cipher suite agreed.
    pub cipher_suite: String,
    /// The address the handshake was made with.
    pub address: SocketAddr,
}

impl WebGuard {
    /// The certificate chain `host:port` presents, after the checks every fetch passes (the
    /// user's and the host's rate limits included). Refused when a proxy is configured: a raw
    /// handshake would go around it.
    pub async fn peer_certificates(
        &self,
        user: &str,
        host: &str,
        port: u16,
    ) -> Result<PeerCertificates, WebError> {
        let (shown, url, addrs) = self
            .vet_host_port(user, host, port, |shown| WebError::Tls {
                host: shown,
                reason: "the web guard sends through a proxy, and a certificate is read with a \
                         direct handshake; read it from a file instead"
                    .into(),
            })
            .await?;
        let name = url.host_str().unwrap_or(host).trim_matches(['[', ']']);
        let server_name = ServerName::try_from(name.to_owned()).map_err(|e| WebError::Tls {
            host: shown.clone(),
            reason: format!("not a name TLS accepts: {e}"),
        })?;
        let total = self.config().total_timeout;
        match tokio::time::timeout(total, self.handshake(&shown, &addrs, server_name)).await {
            Ok(result) => result,
            Err(_) => Err(WebError::Timeout {
                url: shown,
                after: total,
            }),
        }
    }

    // The guard's one raw connection (clippy.toml bans it elsewhere): only to an address
    // `vet_for` passed, and only for a handshake; no byte of a request is sent.
    #[allow(clippy::disallowed_methods)]
    async fn handshake(
        &self,
        shown: &str,
        addrs: &[SocketAddr],
        server_name: ServerName<'static>,
    ) -> Result<PeerCertificates, WebError> {
        let fail = |reason: String| WebError::Tls {
            host: shown.to_owned(),
            reason,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let recorder = Arc::new(Recorder {
            inner,
            outcome: Mutex::new(None),
        });
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| fail(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(recorder.clone())
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let mut last = String::from("no address to connect to");
        for addr in addrs {
            let tcp = match tokio::time::timeout(
                self.config().connect_timeout,
                tokio::net::TcpStream::connect(addr),
            )
            .await
            {
                Ok(Ok(tcp)) => tcp,
                Ok(Err(e)) => {
                    last = format!("connecting to {addr}: {e}");
                    continue;
                }
                Err(_) => {
                    last = format!("connecting to {addr}: no answer in time");
                    continue;
                }
            };
            let tls = connector
                .connect(server_name.clone(), tcp)
                .await
                .map_err(|e| fail(format!("with {addr}: {e}")))?;
            let (_, session) = tls.get_ref();
            let chain = session
                .peer_certificates()
                .unwrap_or_default()
                .iter()
                .map(|c| c.as_ref().to_vec())
                .collect();
            let protocol = session
                .protocol_version()
                .map_or_else(|| "unknown".into(), |v| format!("{v:?}"));
            let cipher_suite = session
                .negotiated_cipher_suite()
                .map_or_else(|| "unknown".into(), |c| format!("{:?}", c.suite()));
            let verified = recorder
                .outcome
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .unwrap_or_else(|| Err(ChainError::NoCertificate));
            return Ok(PeerCertificates {
                chain,
                verified,
                protocol,
                cipher_suite,
                address: *addr,
            });
        }
        Err(fail(last))
    }
}

/// Verifies the chain as reqwest would, records the outcome, and lets the handshake finish
/// whatever it was: the connection carries no request, only the certificates are read.
#[derive(Debug)]
struct Recorder {
    inner: Arc<WebPkiServerVerifier>,
    outcome: Mutex<Option<Result<(), ChainError>>>,
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let outcome = self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map(|_| ())
            .map_err(ChainError::Rejected);
        *self.outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
