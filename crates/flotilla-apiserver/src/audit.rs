//! The audit log: one JSON line per mutating request (who, verb, resource, name, result),
//! appended to a file. Lines are written whole with one `write` each, so concurrent requests
//! never interleave inside a line.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde_json::json;

use crate::auth::UserInfo;
use crate::rbac::Attributes;

/// An append-only audit file.
#[derive(Debug)]
pub struct AuditLog {
    file: Mutex<File>,
}

/// What the audit log records about one request.
#[derive(Debug)]
pub struct AuditEntry<'a> {
    /// When the request finished (RFC 3339).
    pub time: &'a str,
    /// Who made it; `None` when authentication failed.
    pub user: Option<&'a UserInfo>,
    /// What it asked.
    pub attributes: &'a Attributes,
    /// The HTTP status code returned.
    pub code: u16,
    /// The authorizer's reason (which binding allowed it), or why it was refused.
    pub reason: &'a str,
}

impl AuditLog {
    /// Opens (creating if needed) the log at `path` for appending; the file is readable by its
    /// owner only.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    /// Appends one entry. A failing disk is logged, never fails the request.
    pub fn record(&self, entry: &AuditEntry<'_>) {
        let mut line = serde_json::to_vec(&entry_json(entry)).unwrap_or_default();
        line.push(b'\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(e) = file.write_all(&line) {
            tracing::warn!(error = %e, "writing the audit log failed");
        }
    }
}

fn entry_json(entry: &AuditEntry<'_>) -> serde_json::Value {
    let (user, groups) = match entry.user {
        Some(u) => (u.name.as_str(), u.groups.clone()),
        None => ("system:anonymous", vec![]),
    };
    let mut line = json!({
        "time": entry.time,
        "user": user,
        "groups": groups,
        "verb": entry.attributes.verb(),
        "code": entry.code,
        "result": if entry.code < 400 { "success" } else { "failure" },
    });
    match entry.attributes {
        Attributes::Resource(r) => {
            line["apiGroup"] = json!(r.group);
            line["resource"] = json!(r.resource);
            if let Some(s) = &r.subresource {
                line["subresource"] = json!(s);
            }
            if let Some(ns) = &r.namespace {
                line["namespace"] = json!(ns);
            }
            if let Some(n) = &r.name {
                line["name"] = json!(n);
            }
        }
        Attributes::NonResource { path, .. } => line["path"] = json!(path),
    }
    if !entry.reason.is_empty() {
        line["reason"] = json!(entry.reason);
    }
    line
}
