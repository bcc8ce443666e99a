//! The TLS connection to a remote engine. Mutual TLS that trusts only the configured CA (as
//! `docker --tlsverify` does, not the machine's public roots), with connections kept between
//! requests and Nagle's algorithm off: a request then costs a round trip, not a handshake and a
//! delayed acknowledgement (about 40 ms a request otherwise).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bollard::{BollardRequest, Docker};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The files of a TLS engine, as `[sandbox]` names them.
pub(crate) struct TlsFiles<'a> {
    pub ca: &'a Path,
    pub cert: &'a Path,
    pub key: &'a Path,
}

/// A client of the engine at `address` (`host:port`), or why the files cannot make one.
pub(crate) fn connect(address: &str, files: &TlsFiles<'_>, timeout: u64) -> Result<Docker, String> {
    let read = |key: &str, path: &Path| {
        std::fs::read(path)
            .map_err(|e| format!("sandbox.{key} `{}` cannot be read ({e})", path.display()))
    };
    let not_pem = |key: &str, path: &Path, what: &str| {
        format!("sandbox.{key} `{}` holds no PEM {what}", path.display())
    };
    let certs = |key: &str, path: &Path| -> Result<Vec<CertificateDer<'static>>, String> {
        let pem = read(key, path)?;
        let certs: Vec<_> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{} ({e})", not_pem(key, path, "certificate")))?;
        if certs.is_empty() {
            return Err(not_pem(key, path, "certificate"));
        }
        Ok(certs)
    };
    let mut roots = rustls::RootCertStore::empty();
    for ca in certs("tls_ca", files.ca)? {
        roots
            .add(ca)
            .map_err(|e| format!("sandbox.tls_ca `{}`: {e}", files.ca.display()))?;
    }
    let chain = certs("tls_cert", files.cert)?;
    let key = PrivateKeyDer::from_pem_slice(&read("tls_key", files.key)?)
        .map_err(|e| format!("{} ({e})", not_pem("tls_key", files.key, "private key")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| {
            format!("sandbox.tls_cert and sandbox.tls_key do not make a client certificate ({e})")
        })?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(Duration::from_secs(5)));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .wrap_connector(http);
    let client = Arc::new(
        Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https),
    );
    Docker::connect_with_custom_transport(
        move |request: BollardRequest| {
            let client = client.clone();
            async move {
                client
                    .request(request)
                    .await
                    .map_err(bollard::errors::Error::from)
            }
        },
        Some(format!("https://{address}")),
        timeout,
        bollard::API_DEFAULT_VERSION,
    )
    .map_err(|e| e.to_string())
}
