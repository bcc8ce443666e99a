//! `tls_certificate`: a certificate's details and expiry, from a file in the workspace (PEM or
//! DER, a whole chain) or from a host's TLS handshake through the web guard.

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

use crate::DevOps;

/// The `tls_certificate` tool.
pub struct TlsCertificate;

/// Arguments of `tls_certificate`: a `path` or a `host`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A certificate file in the workspace (PEM with one or more certificates, or DER).
    path: Option<String>,
    /// A host name or address to connect to (through the web guard) and read the chain it sends.
    host: Option<String>,
    /// The port for `host`. Default: 443.
    port: Option<u16>,
    /// Warn when a certificate expires within this many days. Default: 30.
    warn_days: Option<u32>,
}

/// Largest certificate file read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most certificates shown from one file or chain.
const MAX_CERTS: usize = 10;

impl Tool for TlsCertificate {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "tls_certificate";
    const TITLE: &'static str = "TLS certificate details";
    const DESCRIPTION: &'static str = "Show a TLS certificate's subject, issuer, names, validity, days until expiry, key and fingerprint, from a PEM/DER file in the workspace (`path`) or from the chain a host sends (`host`, `port`; through the web guard, also when the chain does not verify, which is reported).";
    const CATEGORY: Category = Category::Devops;
    // A host is contacted; a file is only read. The effect is the larger of the two.
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        let warn_days = i64::from(args.warn_days.unwrap_or(30));
        match (&args.path, &args.host) {
            (Some(path), None) => from_file(host, path, warn_days).await,
            (None, Some(name)) => {
                from_host(host, name, args.port.unwrap_or(443), warn_days, &cx).await
            }
            _ => error(
                "give exactly one of `path` (a certificate file in the workspace) and `host` (a server to read the certificate from)",
            ),
        }
    }
}

async fn from_file(host: &DevOps, path: &str, warn_days: i64) -> CallToolResult {
    let Some(ws) = host.workspace.as_ref() else {
        return error("tls_certificate reads `path` in the workspace, and no workspace is open");
    };
    let path = path.to_owned();
    let read = cairn_workspace::off_thread(ws, move |ws| -> Result<(String, Vec<u8>), String> {
        let resolved = ws.resolve(&path).map_err(|e| e.to_string())?;
        let file = ws.open_read(&resolved).map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading {path}: {e}"))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "{path} is larger than {MAX_FILE_BYTES} bytes: not a certificate file"
            ));
        }
        Ok((resolved.display_path(), bytes))
    })
    .await;
    let (shown, bytes) = match read {
        Ok(Ok(r)) => r,
        Ok(Err(e)) | Err(e) => return error(e),
    };
    let ders = match ders_of(&bytes) {
        Ok(d) => d,
        Err(e) => return error(format!("{shown}: {e}")),
    };
    let mut out = format!("{shown}: {} certificate(s)\n", ders.len());
    describe_all(&mut out, &ders, warn_days);
    text(out)
}

async fn from_host(
    host: &DevOps,
    name: &str,
    port: u16,
    warn_days: i64,
    cx: &CallContext,
) -> CallToolResult {
    let Some(guard) = host.guard.as_ref() else {
        return error(
            "the web tools are off (`[web] enabled = false`), so no host can be contacted; read the certificate from a file with `path`",
        );
    };
    let fetch = guard.peer_certificates(&host.user, name, port);
    let peer = tokio::select! {
        r = fetch => r,
        () = cx.cancel.cancelled() => return error("cancelled"),
    };
    let peer = match peer {
        Ok(p) => p,
        Err(e) => return error(e.to_string()),
    };
    let mut out = format!(
        "{name}:{port} ({}): {}, {}\n",
        peer.address, peer.protocol, peer.cipher_suite
    );
    match &peer.verified {
        Ok(()) => out.push_str(&format!(
            "chain: verifies for {name} against the Mozilla roots\n"
        )),
        Err(why) => out.push_str(&format!("chain: DOES NOT VERIFY for {name}: {why}\n")),
    }
    out.push_str(&format!(
        "{} certificate(s) sent, leaf first\n",
        peer.chain.len()
    ));
    describe_all(&mut out, &peer.chain, warn_days);
    text(out)
}

/// The DER certificates in a file: PEM blocks of type CERTIFICATE, or the whole file as DER.
fn ders_of(bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    if bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        let mut ders = Vec::new();
        let mut private_key = false;
        for pem in x509_parser::pem::Pem::iter_from_buffer(bytes) {
            let pem = pem.map_err(|e| format!("not valid PEM: {e}"))?;
            match pem.label.as_str() {
                "CERTIFICATE" | "TRUSTED CERTIFICATE" => ders.push(pem.contents),
                label if label.contains("PRIVATE KEY") => private_key = true,
                _ => {}
            }
        }
        if ders.is_empty() {
            return Err(if private_key {
                "the file holds a private key and no certificate (nothing of the key is shown)"
                    .into()
            } else {
                "no CERTIFICATE block in the PEM file".into()
            });
        }
        return Ok(ders);
    }
    X509Certificate::from_der(bytes)
        .map(|_| vec![bytes.to_vec()])
        .map_err(|e| format!("neither PEM nor a DER certificate ({e})"))
}

fn describe_all(out: &mut String, ders: &[Vec<u8>], warn_days: i64) {
    for (i, der) in ders.iter().take(MAX_CERTS).enumerate() {
        out.push_str(&format!("\n[{}] ", i + 1));
        match X509Certificate::from_der(der) {
            Ok((_, cert)) => describe(out, &cert, der, warn_days),
            Err(e) => out.push_str(&format!("not a readable certificate: {e}\n")),
        }
    }
    if ders.len() > MAX_CERTS {
        out.push_str(&format!(
            "\n... {} more not shown\n",
            ders.len() - MAX_CERTS
        ));
    }
}

fn describe(out: &mut String, cert: &X509Certificate<'_>, der: &[u8], warn_days: i64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let validity = cert.validity();
    let not_before = validity.not_before.timestamp();
    let not_after = validity.not_after.timestamp();
    let days_left = (not_after - now).div_euclid(86_400);
    let status = if now < not_before {
        format!("NOT YET VALID (from {})", utc(not_before))
    } else if now > not_after {
        format!("EXPIRED {} days ago", (now - not_after).div_euclid(86_400))
    } else if days_left < warn_days {
        format!("valid, EXPIRES SOON: {days_left} days left")
    } else {
        format!("valid, {days_left} days left")
    };
    out.push_str(&format!("subject: {}\n", cert.subject()));
    out.push_str(&format!("    issuer: {}\n", cert.issuer()));
    if cert.subject() == cert.issuer() {
        out.push_str("    self-issued\n");
    }
    out.push_str(&format!(
        "    valid: {} to {} ({status})\n",
        utc(not_before),
        utc(not_after)
    ));
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        let names: Vec<String> = san
            .value
            .general_names
            .iter()
            .map(|n| match n {
                GeneralName::DNSName(d) => format!("DNS:{d}"),
                GeneralName::IPAddress(ip) => ip_text(ip),
                GeneralName::RFC822Name(m) => format!("email:{m}"),
                GeneralName::URI(u) => format!("URI:{u}"),
                other => format!("{other:?}"),
            })
            .collect();
        let shown = names.len().min(50);
        out.push_str(&format!("    names: {}", names[..shown].join(", ")));
        if names.len() > shown {
            out.push_str(&format!(" (and {} more)", names.len() - shown));
        }
        out.push('\n');
    }
    let ca = cert
        .basic_constraints()
        .ok()
        .flatten()
        .is_some_and(|b| b.value.ca);
    out.push_str(&format!(
        "    key: {}; signature: {}; CA: {}\n",
        key_text(cert),
        oid_name(&cert.signature_algorithm.algorithm),
        if ca { "yes" } else { "no" }
    ));
    out.push_str(&format!("    serial: {}\n", cert.raw_serial_as_string()));
    let digest = Sha256::digest(der);
    let hex: Vec<String> = digest.iter().map(|b| format!("{b:02X}")).collect();
    out.push_str(&format!("    SHA-256 fingerprint: {}\n", hex.join(":")));
}

fn key_text(cert: &X509Certificate<'_>) -> String {
    use x509_parser::public_key::PublicKey;
    match cert.public_key().parsed() {
        Ok(PublicKey::RSA(rsa)) => format!("RSA {} bits", rsa.key_size()),
        Ok(PublicKey::EC(ec)) => format!("EC {} bits", ec.key_size()),
        Ok(other) => format!("{other:?}").chars().take(40).collect(),
        Err(_) => oid_name(&cert.public_key().algorithm.algorithm),
    }
}

fn oid_name(oid: &x509_parser::der_parser::oid::Oid<'_>) -> String {
    x509_parser::objects::oid2sn(oid, x509_parser::objects::oid_registry())
        .map_or_else(|_| oid.to_id_string(), str::to_owned)
}

fn ip_text(bytes: &[u8]) -> String {
    match bytes.len() {
        4 => {
            let a: [u8; 4] = [bytes[0], bytes[1], bytes[2], bytes[3]];
            format!("IP:{}", std::net::Ipv4Addr::from(a))
        }
        16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(bytes);
            format!("IP:{}", std::net::Ipv6Addr::from(a))
        }
        _ => "IP:(malformed)".into(),
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` of Unix seconds.
fn utc(secs: i64) -> String {
    let time = git2::Time::new(secs, 0);
    let rem = secs.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        cairn_tools::git_date(time),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
