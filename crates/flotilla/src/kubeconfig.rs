//! Kubeconfig files for kubectl and kube-rs, written by `up`.

use std::path::Path;

use anyhow::Result;
use base64::Engine as _;

/// How a kubeconfig's user proves who it is.
#[derive(Debug, Clone)]
pub enum Credentials {
    /// A bearer token.
    Token(String),
    /// A client certificate and its key (PEM).
    Certificate {
        /// Certificate PEM.
        cert: String,
        /// Key PEM.
        key: String,
    },
}

impl Credentials {
    /// The kubeconfig `user:` lines.
    fn user_lines(&self) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        match self {
            Credentials::Token(token) => format!("    token: {token}\n"),
            Credentials::Certificate { cert, key } => format!(
                "    client-certificate-data: {}\n    client-key-data: {}\n",
                b64(cert),
                b64(key)
            ),
        }
    }
}

/// The kubeconfig text for a hub at `server` (e.g. `https://127.0.0.1:6443`).
pub fn render(server: &str, ca_pem: &str, credentials: &Credentials) -> String {
    render_for(server, ca_pem, "flotilla-admin", credentials)
}

/// [`render`] with the kubeconfig user named `user`.
pub fn render_for(server: &str, ca_pem: &str, user: &str, credentials: &Credentials) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let user_lines = credentials.user_lines();
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: flotilla
  cluster:
    server: {server}
    certificate-authority-data: {ca}
contexts:
- name: flotilla
  context:
    cluster: flotilla
    user: {user}
current-context: flotilla
users:
- name: {user}
  user:
{user_lines}"
    )
}

/// Writes the kubeconfig atomically (readers never see a half-written file).
pub fn write(path: &Path, content: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(".kubeconfig.tmp");
    crate::tls::write_private(dir, ".kubeconfig.tmp", content)?;
    std::fs::rename(tmp, path)?;
    Ok(())
}

/// A kubeconfig for simulated member `member`: the hub's current context, with the server
/// moved to `/clusters/<member>` and everything renamed after the member.
pub fn for_member(
    hub: &kube::config::Kubeconfig,
    member: &str,
) -> Result<kube::config::Kubeconfig> {
    use anyhow::Context as _;
    let current = hub
        .current_context
        .as_deref()
        .context("the hub's kubeconfig has no current-context")?;
    let context = hub
        .contexts
        .iter()
        .find(|c| c.name == current)
        .and_then(|c| c.context.clone())
        .with_context(|| format!("the hub's kubeconfig has no context {current:?}"))?;
    let mut cluster = hub
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .cloned()
        .with_context(|| format!("the hub's kubeconfig has no cluster {:?}", context.cluster))?;
    let user = context
        .user
        .as_deref()
        .and_then(|u| hub.auth_infos.iter().find(|a| a.name == u))
        .cloned()
        .context("the hub's kubeconfig has no user for its current context")?;
    let details = cluster
        .cluster
        .as_mut()
        .context("the hub's kubeconfig cluster has no server")?;
    let server = details
        .server
        .as_deref()
        .context("the hub's kubeconfig cluster has no server")?;
    details.server = Some(format!(
        "{}/clusters/{member}",
        server.trim_end_matches('/')
    ));
    cluster.name = member.to_string();
    let mut context = context;
    context.cluster = member.to_string();
    context.namespace = None;
    Ok(kube::config::Kubeconfig {
        clusters: vec![cluster],
        auth_infos: vec![user],
        contexts: vec![kube::config::NamedContext {
            name: member.to_string(),
            context: Some(context),
            other: Default::default(),
        }],
        current_context: Some(member.to_string()),
        api_version: Some("v1".into()),
        kind: Some("Config".into()),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_kubeconfig_points_under_clusters_with_hub_credentials() {
        let hub = kube::config::Kubeconfig::from_yaml(&render(
            "https://127.0.0.1:6443",
            "CA",
            &Credentials::Token("tok".into()),
        ))
        .unwrap();
        let m = for_member(&hub, "member-cluster-01").unwrap();
        let server = m.clusters[0].cluster.as_ref().unwrap().server.as_deref();
        assert_eq!(
            server,
            Some("https://127.0.0.1:6443/clusters/member-cluster-01")
        );
        assert_eq!(m.current_context.as_deref(), Some("member-cluster-01"));
        assert_eq!(m.auth_infos[0].name, "flotilla-admin");
        let text = serde_saphyr::to_string(&m).unwrap();
        let back = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(
            back.clusters[0].cluster.as_ref().unwrap().server,
            m.clusters[0].cluster.as_ref().unwrap().server
        );
    }
}
