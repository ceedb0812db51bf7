//! A differential case: steps (raw requests or kubectl runs) sent to every target in the same
//! order, each answer reduced to what must agree with the real kube-apiserver.

use regex::Regex;
use serde_json::{Value, json};

use crate::target::{Answer, Target};

/// What one step sends.
pub enum Send {
    /// A raw HTTP request: method, path (`{ns}` is the case's namespace), content type, body.
    Http {
        method: &'static str,
        path: String,
        content_type: &'static str,
        body: Vec<u8>,
        headers: Vec<(&'static str, &'static str)>,
    },
    /// kubectl with these arguments (`{ns}` substituted) and this stdin.
    Kubectl { args: Vec<String>, stdin: String },
}

/// What of a step's answer is compared.
#[derive(Clone)]
pub enum Observe {
    /// Code, reason, `details` (kind, group, name) and the causes' fields and reasons.
    Status,
    /// [`Observe::Status`] plus the body values at these JSON pointers.
    Fields(Vec<&'static str>),
    /// [`Observe::Status`] plus the keys of the objects at these JSON pointers (shapes).
    Keys(Vec<&'static str>),
    /// [`Observe::Status`] plus how many `Warning` headers came back.
    Warnings,
    /// The types of the events of a watch stream, in order.
    WatchEvents,
    /// A Table's column definitions: name, type, format, priority.
    Columns,
    /// In a discovery document, the entries of this resource and of its subresources: scope,
    /// kind (and group/version for subresources of another group), verbs, short names and
    /// categories.
    Discovery(String),
    /// In an aggregated discovery document (`apidiscovery.k8s.io/v2`), the entry of this
    /// group, version and resource: its response kind, scope, names, verbs and subresources.
    Aggregated(&'static str, &'static str, &'static str),
    /// In an OpenAPI v3 document, of this path: the names of its path parameters (what a
    /// client generator fills in) and, per operation, the kind its 200 answer is.
    OpenApiPath(&'static str),
    /// kubectl's exit status and normalized stdout.
    Stdout,
    /// kubectl's exit status only.
    Exit,
    /// kubectl's exit status and the normalized first line of stderr.
    Stderr,
}

/// One step of a case.
pub struct Step {
    /// The request.
    pub send: Send,
    /// What of its answer must agree.
    pub observe: Observe,
}

/// A named sequence of steps run in a fresh namespace on each target.
pub struct Case {
    /// The id departures name.
    pub id: String,
    /// The steps.
    pub steps: Vec<Step>,
}

impl Case {
    /// A case with no steps yet.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            steps: Vec::new(),
        }
    }

    /// Adds a JSON request.
    pub fn http(
        mut self,
        method: &'static str,
        path: &str,
        body: Option<Value>,
        observe: Observe,
    ) -> Self {
        let body = body
            .map(|b| serde_json::to_vec(&b).unwrap())
            .unwrap_or_default();
        let content_type = if body.is_empty() {
            ""
        } else {
            "application/json"
        };
        self.steps.push(Step {
            send: Send::Http {
                method,
                path: path.to_string(),
                content_type,
                body,
                headers: Vec::new(),
            },
            observe,
        });
        self
    }

    /// Adds a request with a raw body of the given content type.
    pub fn raw(
        mut self,
        method: &'static str,
        path: &str,
        content_type: &'static str,
        body: &str,
        observe: Observe,
    ) -> Self {
        self.steps.push(Step {
            send: Send::Http {
                method,
                path: path.to_string(),
                content_type,
                body: body.as_bytes().to_vec(),
                headers: Vec::new(),
            },
            observe,
        });
        self
    }

    /// Adds a GET with extra headers (an `Accept` for Tables, say).
    pub fn get_with(
        mut self,
        path: &str,
        headers: Vec<(&'static str, &'static str)>,
        observe: Observe,
    ) -> Self {
        self.steps.push(Step {
            send: Send::Http {
                method: "GET",
                path: path.to_string(),
                content_type: "",
                body: Vec::new(),
                headers,
            },
            observe,
        });
        self
    }

    /// Adds a kubectl run.
    pub fn kubectl(mut self, args: &[&str], stdin: &str, observe: Observe) -> Self {
        self.steps.push(Step {
            send: Send::Kubectl {
                args: args.iter().map(|a| a.to_string()).collect(),
                stdin: stdin.to_string(),
            },
            observe,
        });
        self
    }

    /// Runs the case on `target` in namespace `ns` (already created) and returns one
    /// observation per step.
    pub async fn run(&self, target: &Target, ns: &str) -> Vec<Value> {
        let mut seen = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let observation = match &step.send {
                Send::Http {
                    method,
                    path,
                    content_type,
                    body,
                    headers,
                } => {
                    let path = path.replace("{ns}", ns);
                    let body = String::from_utf8_lossy(body).replace("{ns}", ns);
                    let mut answer = target
                        .request(method, &path, content_type, body.as_bytes(), headers)
                        .await;
                    // A just-started kube-apiserver's watch cache may still be initializing
                    // and end a watch with an ERROR event: ask again (every target alike).
                    for _ in 0..5 {
                        if !matches!(step.observe, Observe::WatchEvents)
                            || !answer.text.contains(r#""type":"ERROR""#)
                        {
                            break;
                        }
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                        answer = target
                            .request(method, &path, content_type, body.as_bytes(), headers)
                            .await;
                    }
                    observe_http(&step.observe, &answer)
                }
                Send::Kubectl { args, stdin } => {
                    let args: Vec<String> = args.iter().map(|a| a.replace("{ns}", ns)).collect();
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let out = target.kubectl(&args, &stdin.replace("{ns}", ns));
                    observe_kubectl(&step.observe, &out)
                }
            };
            seen.push(observation);
        }
        seen
    }
}

/// The agreed-upon part of a raw answer.
fn observe_http(observe: &Observe, answer: &Answer) -> Value {
    let mut status = json!({"code": answer.code});
    if answer.body["kind"] == "Status" {
        let mut causes: Vec<Value> = answer.body["details"]["causes"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| json!({"field": c["field"], "reason": c["reason"]}))
                    .collect()
            })
            .unwrap_or_default();
        causes.sort_by_key(|c| c.to_string());
        status["reason"] = answer.body["reason"].clone();
        status["details"] = json!({
            "kind": answer.body["details"]["kind"],
            "group": answer.body["details"]["group"],
            "name": answer.body["details"]["name"],
            "causes": causes,
        });
    }
    match observe {
        Observe::Fields(pointers) => {
            for p in pointers {
                status[*p] = answer.body.pointer(p).cloned().unwrap_or(Value::Null);
            }
        }
        Observe::Keys(pointers) => {
            for p in pointers {
                let keys: Vec<String> = answer
                    .body
                    .pointer(p)
                    .and_then(Value::as_object)
                    .map(|m| {
                        let mut k: Vec<String> = m.keys().cloned().collect();
                        k.sort();
                        k
                    })
                    .unwrap_or_default();
                status[*p] = json!(keys);
            }
        }
        Observe::Warnings => status["warnings"] = json!(answer.warnings.len()),
        Observe::WatchEvents => {
            let types: Vec<Value> = answer
                .text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|e| match e["type"].as_str() {
                    // An ERROR's reason says which error (an expired version, a timeout).
                    Some("ERROR") => json!(format!("ERROR {}", e["object"]["reason"])),
                    _ => e["type"].clone(),
                })
                .collect();
            status["events"] = json!(types);
        }
        Observe::Discovery(resource) => {
            let prefix = format!("{resource}/");
            let mut entries: Vec<Value> = answer.body["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| {
                    let name = r["name"].as_str().unwrap_or_default();
                    name == resource || name.starts_with(&prefix)
                })
                .map(|r| {
                    let sorted = |v: &Value| {
                        let mut items: Vec<String> = v
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|s| s.as_str().map(String::from))
                            .collect();
                        items.sort();
                        json!(items)
                    };
                    json!({"name": r["name"], "namespaced": r["namespaced"], "kind": r["kind"],
                        "group": r["group"], "version": r["version"], "verbs": sorted(&r["verbs"]),
                        "shortNames": sorted(&r["shortNames"]), "categories": sorted(&r["categories"])})
                })
                .collect();
            entries.sort_by_key(|e| e["name"].to_string());
            status["resources"] = json!(entries);
        }
        Observe::Aggregated(group, version, resource) => {
            let entry = answer.body["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|item| item["metadata"]["name"].as_str().unwrap_or_default() == *group)
                .flat_map(|item| item["versions"].as_array().cloned().unwrap_or_default())
                .filter(|v| v["version"] == *version)
                .flat_map(|v| v["resources"].as_array().cloned().unwrap_or_default())
                .find(|r| r["resource"] == *resource)
                .unwrap_or(Value::Null);
            status["kind"] = answer.body["kind"].clone();
            status["entry"] = entry;
        }
        Observe::OpenApiPath(path) => {
            let item = &answer.body["paths"][*path];
            let operations = ["get", "put", "post", "patch", "delete"];
            let mut parameters: Vec<&str> = std::iter::once(&item["parameters"])
                .chain(operations.iter().map(|op| &item[*op]["parameters"]))
                .filter_map(Value::as_array)
                .flatten()
                .filter(|p| p["in"] == "path")
                .filter_map(|p| p["name"].as_str())
                .collect();
            parameters.sort();
            parameters.dedup();
            let answers: serde_json::Map<String, Value> = operations
                .iter()
                .filter(|op| item[**op].is_object())
                .map(|op| {
                    let reference = item[*op]["responses"]["200"]["content"]["application/json"]
                        ["schema"]["$ref"]
                        .as_str()
                        .unwrap_or_default();
                    let name = reference.trim_start_matches("#/components/schemas/");
                    let kind = &answer.body["components"]["schemas"][name]
                        ["x-kubernetes-group-version-kind"][0]["kind"];
                    (op.to_string(), kind.clone())
                })
                .collect();
            status["pathParameters"] = json!(parameters);
            status["answers"] = Value::Object(answers);
        }
        Observe::Columns => {
            let columns: Vec<Value> = answer.body["columnDefinitions"]
                .as_array()
                .map(|cs| {
                    cs.iter()
                        .map(|c| json!([c["name"], c["type"], c["format"], c["priority"]]))
                        .collect()
                })
                .unwrap_or_default();
            status["columns"] = json!(columns);
        }
        _ => {}
    }
    status
}

/// The agreed-upon part of a kubectl run.
fn observe_kubectl(observe: &Observe, out: &std::process::Output) -> Value {
    let mut seen = json!({"exit": out.status.code()});
    match observe {
        Observe::Stdout => seen["stdout"] = json!(normalize(&String::from_utf8_lossy(&out.stdout))),
        Observe::Stderr => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr
                .lines()
                .find(|l| {
                    !l.starts_with("Warning:") && !l.starts_with("W1") && !l.starts_with("I1")
                })
                .unwrap_or_default();
            seen["stderr"] = json!(normalize(first));
        }
        _ => {}
    }
    seen
}

/// kubectl output without what legitimately differs between two servers: ages, timestamps,
/// uids, resource versions, generated name suffixes and column padding.
pub fn normalize(text: &str) -> String {
    let rules: &[(&str, &str)] = &[
        (r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>"),
        (
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            "<uid>",
        ),
        (r#"resourceVersion: "?\d+"?"#, "resourceVersion: <rv>"),
        (
            r#""resourceVersion": "\d+""#,
            r#""resourceVersion": "<rv>""#,
        ),
        (
            r"\b(\d+y)?(\d+d)?(\d+h)?(\d+m)?\d+s\b|\b\d+[mhd]\b",
            "<age>",
        ),
        (r"[ \t]+", " "),
    ];
    let mut out = text.trim_end().to_string();
    for (pattern, replacement) in rules {
        out = Regex::new(pattern)
            .expect("pattern")
            .replace_all(&out, *replacement)
            .into_owned();
    }
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_keeps_what_matters() {
        assert_eq!(
            normalize("NAME   READY   AGE\nweb    1/1     5m10s\n"),
            "NAME READY AGE\nweb 1/1 <age>"
        );
        assert_eq!(
            normalize("uid: 0b0f0f0e-1111-2222-3333-444455556666\nresourceVersion: \"812\""),
            "uid: <uid>\nresourceVersion: <rv>"
        );
    }
}
