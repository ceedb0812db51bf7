//! Users from x509 client certificates, as kube-apiserver reads them: the subject's common
//! name is the user, each organization is a group.

use x509_parser::prelude::{FromDer, X509Certificate};

use super::UserInfo;

/// The user a DER certificate names; `None` when it does not parse or has no common name.
pub fn identity(der: &[u8]) -> Option<UserInfo> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()?
        .as_str()
        .ok()?
        .to_string();
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(String::from));
    Some(UserInfo::new(name, groups))
}
