//! A Deployment's container run as a local process with exactly what a pod of it would get
//! on a [`RealCluster`]: kwok's pods run no process, so this is how a test runs an in-cluster
//! program against a real cluster.
//!
//! The process gets the container's `args`, its `env` with every `secretKeyRef` and
//! `configMapKeyRef` resolved from the cluster (so the objects must have been applied), its
//! secret and ConfigMap volumes written to directories that stand in for their mount paths,
//! a service account token minted by the cluster's TokenRequest API for the pod's service
//! account (as the kubelet's projected token), the `kube-root-ca.crt` the controller-manager
//! publishes in the namespace, and `KUBERNETES_SERVICE_HOST` / `KUBERNETES_SERVICE_PORT`
//! pointing at the cluster's kube-apiserver. Mount paths in the args are rewritten to those
//! directories; the caller says where the service account directory is expected.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use serde_json::Value;

use crate::RealCluster;

/// A Deployment's first container, ready to run locally; its mounted files live as long as
/// it does.
pub struct InClusterProcess {
    /// The directory standing in for `/var/run/secrets/kubernetes.io/serviceaccount`.
    pub service_account_dir: PathBuf,
    /// The container's args as the Deployment has them, mount paths rewritten.
    pub args: Vec<String>,
    /// The container's environment, resolved, with the service host and port variables.
    pub env: Vec<(String, String)>,
    _mounts: tempfile::TempDir,
}

impl InClusterProcess {
    /// `program` with [`Self::args`] and only [`Self::env`] (and `PATH`).
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .args(&self.args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }
}

impl RealCluster {
    /// Prepares the process of Deployment `namespace/name`'s first container, to run in
    /// place of its image's entrypoint (see the module docs).
    pub fn in_cluster_process(&self, namespace: &str, name: &str) -> InClusterProcess {
        let deployment: Value = serde_json::from_str(&self.kubectl_ok(&[
            "get",
            "deployment",
            name,
            "-n",
            namespace,
            "-o",
            "json",
        ]))
        .expect("deployment JSON");
        let pod = &deployment["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        let mounts = tempfile::tempdir().expect("tempdir");
        let mut rewrites: Vec<(String, PathBuf)> = Vec::new();
        for mount in container["volumeMounts"].as_array().into_iter().flatten() {
            let volume_name = mount["name"].as_str().unwrap_or_default();
            let volume = pod["volumes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|v| v["name"] == volume_name)
                .unwrap_or_else(|| panic!("volume {volume_name} of the mount"));
            let dir = mounts.path().join(volume_name);
            std::fs::create_dir_all(&dir).expect("mount dir");
            let (kind, object) = if let Some(secret) = volume["secret"]["secretName"].as_str() {
                ("secret", secret)
            } else if let Some(cm) = volume["configMap"]["name"].as_str() {
                ("configmap", cm)
            } else {
                panic!("volume {volume_name}: only secret and configMap volumes are supported");
            };
            let data = self.data_of(kind, namespace, object);
            let items: Vec<(String, String)> = match volume[if kind == "secret" {
                "secret"
            } else {
                "configMap"
            }]["items"]
                .as_array()
            {
                Some(items) => items
                    .iter()
                    .map(|i| {
                        (
                            i["key"].as_str().unwrap().to_string(),
                            i["path"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect(),
                None => data.keys().map(|k| (k.clone(), k.clone())).collect(),
            };
            for (key, path) in items {
                let value = data
                    .get(&key)
                    .unwrap_or_else(|| panic!("{kind} {object} has no key {key}"));
                std::fs::write(dir.join(path), value).expect("write mounted file");
            }
            rewrites.push((mount["mountPath"].as_str().unwrap().to_string(), dir));
        }
        let args: Vec<String> = container["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                let mut arg = a.as_str().unwrap().to_string();
                for (from, to) in &rewrites {
                    if let Some(rest) = arg.strip_prefix(from.as_str()) {
                        arg = format!("{}{rest}", to.display());
                    }
                }
                arg
            })
            .collect();

        let account = pod["serviceAccountName"].as_str().unwrap_or("default");
        let service_account_dir = mounts.path().join("serviceaccount");
        std::fs::create_dir_all(&service_account_dir).expect("service account dir");
        let token = self.kubectl_ok(&[
            "create",
            "token",
            account,
            "-n",
            namespace,
            "--duration",
            "2h",
        ]);
        std::fs::write(service_account_dir.join("token"), token.trim()).expect("token");
        let root_ca = self.data_of("configmap", namespace, "kube-root-ca.crt");
        std::fs::write(service_account_dir.join("ca.crt"), &root_ca["ca.crt"]).expect("ca.crt");
        std::fs::write(service_account_dir.join("namespace"), namespace).expect("namespace");

        let server = self.server();
        let (host, port) = server
            .trim_start_matches("https://")
            .rsplit_once(':')
            .expect("host:port");
        let mut env = vec![
            ("KUBERNETES_SERVICE_HOST".to_string(), host.to_string()),
            ("KUBERNETES_SERVICE_PORT".to_string(), port.to_string()),
        ];
        for var in container["env"].as_array().into_iter().flatten() {
            let name = var["name"].as_str().unwrap();
            let value = if let Some(value) = var["value"].as_str() {
                value.to_string()
            } else if let Some(r) = var["valueFrom"]["secretKeyRef"].as_object() {
                self.data_of("secret", namespace, r["name"].as_str().unwrap())
                    [r["key"].as_str().unwrap()]
                .clone()
            } else if let Some(r) = var["valueFrom"]["configMapKeyRef"].as_object() {
                self.data_of("configmap", namespace, r["name"].as_str().unwrap())
                    [r["key"].as_str().unwrap()]
                .clone()
            } else {
                panic!("env {name}: unsupported source {var}");
            };
            env.push((name.to_string(), value));
        }
        InClusterProcess {
            service_account_dir,
            args,
            env,
            _mounts: mounts,
        }
    }

    /// The data of Secret or ConfigMap `namespace/name`, decoded.
    fn data_of(&self, kind: &str, namespace: &str, name: &str) -> BTreeMap<String, String> {
        let object: Value = serde_json::from_str(
            &self.kubectl_ok(&["get", kind, name, "-n", namespace, "-o", "json"]),
        )
        .expect("object JSON");
        object["data"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                let text = v.as_str().unwrap_or_default();
                let value = if kind == "secret" {
                    String::from_utf8(
                        base64::engine::general_purpose::STANDARD
                            .decode(text)
                            .expect("base64"),
                    )
                    .expect("UTF-8")
                } else {
                    text.to_string()
                };
                (k.clone(), value)
            })
            .collect()
    }
}
