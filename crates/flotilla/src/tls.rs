//! The hub's PKI: a CA and a serving certificate generated once into the data directory and
//! reused on restart, so kubeconfigs stay valid.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

use crate::client_certs::ClientCerts;

/// PEM material of the hub's CA and serving certificate.
#[derive(Debug, Clone)]
pub struct Pki {
    /// CA certificate (PEM), embedded in kubeconfigs.
    pub ca_pem: String,
    /// Serving certificate (PEM).
    pub cert_pem: String,
    /// Serving key (PEM).
    pub key_pem: String,
}

const CA_CERT: &str = "ca.crt";
const CA_KEY: &str = "ca.key";
const SERVER_CERT: &str = "server.crt";
const SERVER_KEY: &str = "server.key";

/// Loads the PKI from `dir`, generating what is missing. The serving certificate covers
/// localhost, 127.0.0.1, ::1 and `extra_ip` (the listen address), and is re-issued if it does
/// not cover `extra_ip`.
pub fn load_or_create(dir: &Path, extra_ip: Option<IpAddr>) -> Result<Pki> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let (ca_pem, ca_key_pem) = match (read(CA_CERT), read(CA_KEY)) {
        (Some(c), Some(k)) => (c, k),
        _ => {
            let key = KeyPair::generate().context("generating CA key")?;
            let cert = ca_params()?.self_signed(&key).context("self-signing CA")?;
            write_private(dir, CA_KEY, &key.serialize_pem())?;
            std::fs::write(dir.join(CA_CERT), cert.pem())?;
            // A new CA invalidates any serving certificate signed by an old one.
            let _ = std::fs::remove_file(dir.join(SERVER_CERT));
            (cert.pem(), key.serialize_pem())
        }
    };
    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if let Some(ip) = extra_ip.filter(|ip| !ip.is_unspecified()) {
        names.push(ip.to_string());
    }
    let marker = names.join(",");
    let covered = read("server.names").is_some_and(|n| n == marker);
    let (cert_pem, key_pem) = match (read(SERVER_CERT), read(SERVER_KEY)) {
        (Some(c), Some(k)) if covered => (c, k),
        _ => {
            let ca_key = KeyPair::from_pem(&ca_key_pem).context("reading CA key")?;
            // The issuer is rebuilt from the CA's parameters: same subject, same key.
            let issuer = Issuer::new(ca_params()?, ca_key);
            let key = KeyPair::generate()?;
            let mut params = CertificateParams::new(names.clone())?;
            params
                .distinguished_name
                .push(DnType::CommonName, "flotilla-hub");
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
            params.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ];
            params.not_after = rcgen::date_time_ymd(2126, 1, 1);
            let cert = params
                .signed_by(&key, &issuer)
                .context("signing serving certificate")?;
            write_private(dir, SERVER_KEY, &key.serialize_pem())?;
            std::fs::write(dir.join(SERVER_CERT), cert.pem())?;
            std::fs::write(dir.join("server.names"), &marker)?;
            (cert.pem(), key.serialize_pem())
        }
    };
    Ok(Pki {
        ca_pem,
        cert_pem,
        key_pem,
    })
}

/// The CA's certificate parameters (also used to rebuild its issuer identity on restart).
pub(crate) fn ca_params() -> Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "flotilla-ca");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_after = rcgen::date_time_ymd(2126, 1, 1);
    Ok(params)
}

/// Writes a secret file readable only by its owner.
pub fn write_private(dir: &Path, name: &str, content: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(dir.join(name))
        .with_context(|| format!("writing {name}"))?;
    f.write_all(content.as_bytes())?;
    Ok(())
}

/// What the TLS listener needs: the server configuration and the judge of client certificates.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// The rustls configuration: the serving certificate, HTTP/2 and HTTP/1.1 offered.
    pub config: Arc<rustls::ServerConfig>,
    /// Decides, after the handshake, what a client certificate is worth.
    pub client_certs: ClientCerts,
}

/// The TLS serving set-up for `pki`. Clients may present a certificate signed by the hub's CA
/// (it is then their identity); an invalid or expired one gets 401s saying why. Clients without
/// one authenticate with tokens.
pub fn server_config(pki: &Pki) -> Result<ServerTls> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pki.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .context("parsing certificate")?;
    let key = PrivateKeyDer::from_pem_slice(pki.key_pem.as_bytes()).context("parsing key")?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let client_certs = ClientCerts::new(&pki.ca_pem, provider.clone())?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(client_certs.handshake_verifier())
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ServerTls {
        config: Arc::new(config),
        client_certs,
    })
}

/// A client certificate and key (PEM) for `user` in `group`, signed by the hub's CA in `dir`,
/// valid from five minutes ago for `valid_for`. kube-apiserver's convention: the common name is
/// the user, the organization the group.
pub fn issue_client_cert(
    dir: &Path,
    user: &str,
    group: Option<&str>,
    valid_for: std::time::Duration,
) -> Result<(String, String)> {
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f)).with_context(|| {
            format!(
                "reading the hub's CA {} (run this on the hub, or pass --data-dir)",
                dir.join(f).display()
            )
        })
    };
    let ca_key = KeyPair::from_pem(&read(CA_KEY)?).context("reading CA key")?;
    read(CA_CERT)?;
    let issuer = Issuer::new(ca_params()?, ca_key);
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, user);
    if let Some(g) = group {
        params.distinguished_name.push(DnType::OrganizationName, g);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::minutes(5);
    params.not_after = now + valid_for;
    let cert = params
        .signed_by(&key, &issuer)
        .context("signing client certificate")?;
    Ok((cert.pem(), key.serialize_pem()))
}
