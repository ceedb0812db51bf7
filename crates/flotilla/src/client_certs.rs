//! Client certificates judged after the TLS handshake, as kube-apiserver does. The handshake
//! only checks that the client holds the key of the certificate it presents. Whether the
//! hub's CA signed it, and whether it is valid now, is decided afterwards, per connection.
//! A refused certificate then gets a 401 naming the reason on every request. Refusing it in the
//! handshake instead sends a TLS alert that races the client's first write (TLS 1.3 clients
//! consider the handshake done before the server has judged them), so the client often sees
//! only a "broken pipe".

use std::sync::Arc;

use anyhow::{Context, Result};
use flotilla_apiserver::auth::{PeerIdentity, x509};
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, UnixTime, pem::PemObject};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// The hub's judge of client certificates: the CA it trusts, and the handshake verifier that
/// defers to it.
#[derive(Debug, Clone)]
pub struct ClientCerts {
    /// Verifies chains against the hub's CA; certificates are optional (tokens are the other way in).
    ca: Arc<dyn ClientCertVerifier>,
}

impl ClientCerts {
    /// A judge trusting the CA certificates in `ca_pem`, using `provider`'s algorithms.
    pub fn new(ca_pem: &str, provider: Arc<CryptoProvider>) -> Result<Self> {
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots
                .add(ca.context("parsing CA certificate")?)
                .context("adding the CA as a client-certificate root")?;
        }
        let ca =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .context("building the client-certificate verifier")?;
        Ok(Self { ca })
    }

    /// The verifier for the TLS server configuration: it checks the handshake's signatures
    /// and accepts any chain, leaving the chain to [`ClientCerts::judge`].
    pub fn handshake_verifier(&self) -> Arc<dyn ClientCertVerifier> {
        Arc::new(Deferred(self.ca.clone()))
    }

    /// What the chain a client presented (leaf first) says: its user, or why it is refused.
    pub fn judge(&self, chain: &[CertificateDer<'_>]) -> Option<PeerIdentity> {
        let (leaf, intermediates) = chain.split_first()?;
        let refused = |why: String| Some(PeerIdentity::Refused(why.into()));
        if let Err(e) = self
            .ca
            .verify_client_cert(leaf, intermediates, UnixTime::now())
        {
            return refused(e.to_string());
        }
        match x509::identity(leaf) {
            Some(user) => Some(PeerIdentity::Verified(Arc::new(user))),
            None => refused("the certificate names no user (no subject common name)".into()),
        }
    }
}

/// A handshake verifier that proves possession of the key and defers the chain.
#[derive(Debug)]
struct Deferred(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for Deferred {
    fn offer_client_auth(&self) -> bool {
        self.0.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.0.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, Issuer, KeyPair};

    use super::*;
    use crate::tls;

    /// A judge trusting the CA of a fresh hub data directory.
    fn hub() -> (tempfile::TempDir, ClientCerts) {
        let dir = tempfile::tempdir().unwrap();
        let pki = tls::load_or_create(dir.path(), None).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let certs = ClientCerts::new(&pki.ca_pem, provider).unwrap();
        (dir, certs)
    }

    fn der(pem: &str) -> CertificateDer<'static> {
        CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
    }

    /// A certificate for `cn` signed by the CA in `dir`, valid from `days_from` to `days_to`
    /// days from now.
    fn signed(dir: &std::path::Path, cn: Option<&str>, days_from: i64, days_to: i64) -> String {
        let ca_key =
            KeyPair::from_pem(&std::fs::read_to_string(dir.join("ca.key")).unwrap()).unwrap();
        let issuer = Issuer::new(tls::ca_params().unwrap(), ca_key);
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        if let Some(cn) = cn {
            params.distinguished_name.push(DnType::CommonName, cn);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now + time::Duration::days(days_from);
        params.not_after = now + time::Duration::days(days_to);
        let key = KeyPair::generate().unwrap();
        params.signed_by(&key, &issuer).unwrap().pem()
    }

    fn refusal(identity: Option<PeerIdentity>) -> String {
        match identity {
            Some(PeerIdentity::Refused(why)) => why.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_certificate_from_the_hubs_ca_names_its_user_and_groups() {
        let (dir, certs) = hub();
        let (pem, _) = tls::issue_client_cert(
            dir.path(),
            "val",
            Some("fleet:viewers"),
            Duration::from_secs(3600),
        )
        .unwrap();
        match certs.judge(&[der(&pem)]) {
            Some(PeerIdentity::Verified(user)) => {
                assert_eq!(user.name, "val");
                assert!(user.groups.iter().any(|g| g == "fleet:viewers"));
            }
            other => panic!("expected the user, got {other:?}"),
        }
    }

    #[test]
    fn expired_foreign_and_nameless_certificates_are_refused_with_the_reason() {
        let (dir, certs) = hub();
        let expired = refusal(certs.judge(&[der(&signed(dir.path(), Some("late"), -30, -1))]));
        assert!(expired.to_lowercase().contains("expired"), "{expired}");
        let early = refusal(certs.judge(&[der(&signed(dir.path(), Some("early"), 1, 30))]));
        assert!(early.to_lowercase().contains("not valid yet"), "{early}");

        let (other_dir, _) = hub();
        let (foreign, _) =
            tls::issue_client_cert(other_dir.path(), "mallory", None, Duration::from_secs(60))
                .unwrap();
        // (Every hub's CA is called flotilla-ca, so the name matches and the signature fails.)
        let foreign = refusal(certs.judge(&[der(&foreign)]));
        assert!(foreign.contains("BadSignature"), "{foreign}");

        let nameless = refusal(certs.judge(&[der(&signed(dir.path(), None, -1, 1))]));
        assert!(nameless.contains("names no user"), "{nameless}");

        assert!(certs.judge(&[]).is_none(), "no certificate, no identity");
    }
}
