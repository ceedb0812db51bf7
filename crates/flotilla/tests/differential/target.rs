//! The servers a differential case runs against: the real kube-apiserver (the reference),
//! Flotilla's hub, and one of the hub's simulated members (through the hub's proxy). Each is
//! driven the same way: raw HTTP through a kube-rs client built from its kubeconfig, and the
//! real kubectl.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// One server under comparison.
pub struct Target {
    /// `kube`, `hub` or `member`: the name departures are keyed by.
    pub name: &'static str,
    /// Its admin kubeconfig.
    pub kubeconfig: PathBuf,
    /// kubectl's private discovery cache for it.
    pub cache: tempfile::TempDir,
    client: kube::Client,
}

/// What a raw request got back.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status code.
    pub code: u16,
    /// `Warning` headers, in order.
    pub warnings: Vec<String>,
    /// The body, parsed as JSON (`Value::Null` when empty or not JSON).
    pub body: Value,
    /// The body as text, when it is not JSON (watch streams are JSON lines).
    pub text: String,
}

impl Target {
    /// A target served at `kubeconfig`.
    pub async fn new(name: &'static str, kubeconfig: &Path) -> Self {
        let config = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(config, &Default::default())
            .await
            .expect("client config");
        Self {
            name,
            kubeconfig: kubeconfig.to_path_buf(),
            cache: tempfile::tempdir().expect("tempdir"),
            client: kube::Client::try_from(config).expect("client"),
        }
    }

    /// Sends one request: `path` (with its query), a content type, a body and extra headers.
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &[u8],
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut builder = http::Request::builder().method(method).uri(path);
        if !content_type.is_empty() {
            builder = builder.header(http::header::CONTENT_TYPE, content_type);
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder
            .body(kube::client::Body::from(body.to_vec()))
            .expect("request");
        let response = self
            .client
            .send(request)
            .await
            .unwrap_or_else(|e| panic!("{} {method} {path}: {e}", self.name));
        let code = response.status().as_u16();
        let warnings = response
            .headers()
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok().map(String::from))
            .collect();
        let bytes = response
            .into_body()
            .collect_bytes()
            .await
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Answer {
            code,
            warnings,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            text,
        }
    }

    /// Runs kubectl against this target, `stdin` as its input.
    pub fn kubectl(&self, args: &[&str], stdin: &str) -> Output {
        let cmd = flotilla_testkit::kubectl::command(&self.kubeconfig, self.cache.path(), args);
        flotilla_testkit::kubectl::run_with_stdin(cmd, stdin)
    }
}
