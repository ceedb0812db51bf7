//! Kubeconfig files for kubectl and kube-rs, written by `up`.

use std::path::Path;

use anyhow::Result;
use base64::Engine as _;

/// The kubeconfig text for a hub at `server` (e.g. `https://127.0.0.1:6443`).
pub fn render(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
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
    user: flotilla-admin
current-context: flotilla
users:
- name: flotilla-admin
  user:
    token: {token}
"
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
