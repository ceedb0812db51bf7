//! The `/version` document of a simulated member: its control plane's Kubernetes version, as
//! an AKS cluster's API server reports it.

use serde_json::{Value, json};

use crate::node_pool::git_version;

/// `/version` for a control plane at `kubernetes_version` (`1.30.3` or `v1.30.3`).
pub fn document(kubernetes_version: &str) -> Value {
    let git = git_version(kubernetes_version);
    let mut parts = git.trim_start_matches('v').split('.');
    let major = parts.next().unwrap_or_default();
    let minor = parts.next().unwrap_or_default();
    let previous = minor
        .parse::<u32>()
        .map_or(String::new(), |m| m.saturating_sub(1).to_string());
    json!({
        "major": major,
        "minor": minor,
        // As kube-apiserver 1.31+ reports: it emulates its own version and is compatible one
        // minor back.
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": previous,
        "gitVersion": git,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "go1.22.5",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_the_control_plane_version() {
        let doc = document("1.30.3");
        assert_eq!(doc["gitVersion"], "v1.30.3");
        assert_eq!(
            (doc["major"].as_str(), doc["minor"].as_str()),
            (Some("1"), Some("30"))
        );
        assert_eq!(document("v1.31.1")["gitVersion"], "v1.31.1");
        assert_eq!(
            (
                doc["emulationMinor"].as_str(),
                doc["minCompatibilityMinor"].as_str()
            ),
            (Some("30"), Some("29"))
        );
        let info: k8s_openapi::apimachinery::pkg::version::Info =
            serde_json::from_value(doc).expect("kube-rs can read it");
        assert_eq!(info.git_version, "v1.30.3");
    }
}
