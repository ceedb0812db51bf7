//! The audit log: one JSON line per mutating request (who, verb, resource, name, result),
//! appended to a file. Lines are written whole and in the order they were recorded, so
//! concurrent requests never interleave inside a line. Concurrent requests share `write`
//! calls: a request queues its line and, unless another request is writing at that moment
//! (which then writes it too), writes every queued line in one call. Under load that is one
//! system call for many lines instead of one each; alone, a line is written before `record`
//! returns.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;

use crate::auth::UserInfo;
use crate::rbac::Attributes;

/// An append-only audit file.
#[derive(Debug)]
pub struct AuditLog {
    /// Lines recorded and not yet written, in order.
    queued: Mutex<Vec<u8>>,
    /// The file, and the buffer that swaps places with the queue; whoever holds them writes
    /// the queue out.
    file: Mutex<(File, Vec<u8>)>,
}

/// What the audit log records about one request.
#[derive(Debug)]
pub struct AuditEntry<'a> {
    /// When the request finished (RFC 3339).
    pub time: &'a str,
    /// Who it ran as; `None` when authentication failed.
    pub user: Option<&'a UserInfo>,
    /// Who made it, when it impersonated `user`.
    pub impersonator: Option<&'a UserInfo>,
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
            queued: Mutex::new(Vec::new()),
            file: Mutex::new((file, Vec::new())),
        })
    }

    /// Appends one entry. A failing disk is logged, never fails the request.
    pub fn record(&self, entry: &AuditEntry<'_>) {
        let mut line = serde_json::to_vec(&Line::of(entry)).unwrap_or_default();
        line.push(b'\n');
        lock(&self.queued).extend_from_slice(&line);
        self.write_queued();
    }

    /// Writes the queue out unless another request is doing so. Whoever writes checks the
    /// queue again after letting go of the file, so a line queued while it was writing is
    /// never left behind: either it sees the line, or the line's own request takes the file.
    fn write_queued(&self) {
        loop {
            let Some(mut writer) = try_lock(&self.file) else {
                return;
            };
            let (file, batch) = &mut *writer;
            loop {
                std::mem::swap(batch, &mut *lock(&self.queued));
                if batch.is_empty() {
                    break;
                }
                if let Err(e) = file.write_all(batch) {
                    tracing::warn!(error = %e, "writing the audit log failed");
                }
                batch.clear();
            }
            drop(writer);
            if lock(&self.queued).is_empty() {
                return;
            }
        }
    }
}

/// Locks `mutex`, even if a panicking thread poisoned it (the data stays usable).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Locks `mutex` if no one holds it (a poisoned lock counts as free).
fn try_lock<T>(mutex: &Mutex<T>) -> Option<std::sync::MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// One audit line, serialized straight from the request's data (no intermediate JSON value),
/// with its fields in a fixed order: `time`, `user`, `groups` (who made the request), the user
/// it impersonated if it did, `verb`, `code`, `result`, then what was asked, then `reason`.
#[derive(Serialize)]
struct Line<'a> {
    time: &'a str,
    user: &'a str,
    groups: &'a [String],
    #[serde(rename = "impersonatedUser", skip_serializing_if = "Option::is_none")]
    impersonated_user: Option<Impersonated<'a>>,
    verb: &'a str,
    code: u16,
    result: &'static str,
    #[serde(rename = "apiGroup", skip_serializing_if = "Option::is_none")]
    api_group: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subresource: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
}

/// The user an impersonating request ran as.
#[derive(Serialize)]
struct Impersonated<'a> {
    username: &'a str,
    groups: &'a [String],
}

impl<'a> Line<'a> {
    fn of(entry: &AuditEntry<'a>) -> Self {
        let (user, groups) = match entry.impersonator.or(entry.user) {
            Some(u) => (u.name.as_str(), u.groups.as_slice()),
            None => ("system:anonymous", &[][..]),
        };
        let impersonated_user = entry.impersonator.and(entry.user).map(|u| Impersonated {
            username: &u.name,
            groups: &u.groups,
        });
        let mut line = Line {
            time: entry.time,
            user,
            groups,
            impersonated_user,
            verb: entry.attributes.verb(),
            code: entry.code,
            result: if entry.code < 400 {
                "success"
            } else {
                "failure"
            },
            api_group: None,
            resource: None,
            subresource: None,
            namespace: None,
            name: None,
            path: None,
            reason: entry.reason,
        };
        match entry.attributes {
            Attributes::Resource(r) => {
                line.api_group = Some(&r.group);
                line.resource = Some(&r.resource);
                line.subresource = r.subresource.as_deref();
                line.namespace = r.namespace.as_deref();
                line.name = r.name.as_deref();
            }
            Attributes::NonResource { path, .. } => line.path = Some(path),
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::attributes::ResourceAttributes;

    fn line(entry: &AuditEntry<'_>) -> String {
        String::from_utf8(serde_json::to_vec(&Line::of(entry)).unwrap()).unwrap()
    }

    #[test]
    fn lines_keep_their_field_order_and_omit_what_is_absent() {
        let alice = UserInfo::new("alice", ["team".to_string()]);
        let created = Attributes::Resource(ResourceAttributes {
            verb: "create".into(),
            group: "".into(),
            resource: "configmaps".into(),
            subresource: None,
            namespace: Some("app".into()),
            name: Some("cm".into()),
        });
        assert_eq!(
            line(&AuditEntry {
                time: "2026-11-22T05:00:00Z",
                user: Some(&alice),
                impersonator: None,
                attributes: &created,
                code: 201,
                reason: "RBAC: allowed by ClusterRoleBinding \"x\"",
            }),
            r#"{"time":"2026-11-22T05:00:00Z","user":"alice","groups":["team","system:authenticated"],"verb":"create","code":201,"result":"success","apiGroup":"","resource":"configmaps","namespace":"app","name":"cm","reason":"RBAC: allowed by ClusterRoleBinding \"x\""}"#
        );
        let probe = Attributes::NonResource {
            verb: "get".into(),
            path: "/metrics".into(),
        };
        assert_eq!(
            line(&AuditEntry {
                time: "t",
                user: None,
                impersonator: None,
                attributes: &probe,
                code: 401,
                reason: "",
            }),
            r#"{"time":"t","user":"system:anonymous","groups":[],"verb":"get","code":401,"result":"failure","path":"/metrics"}"#
        );
    }

    #[test]
    fn concurrent_records_are_all_written_whole_once_and_in_order() {
        const THREADS: usize = 8;
        const EACH: usize = 500;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let log = AuditLog::open(&path).unwrap();
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let log = &log;
                scope.spawn(move || {
                    for i in 0..EACH {
                        let attributes = Attributes::Resource(ResourceAttributes {
                            verb: "create".into(),
                            group: "".into(),
                            resource: "configmaps".into(),
                            subresource: None,
                            namespace: Some(format!("t{thread}")),
                            name: Some(i.to_string()),
                        });
                        log.record(&AuditEntry {
                            time: "t",
                            user: None,
                            impersonator: None,
                            attributes: &attributes,
                            code: 201,
                            reason: "",
                        });
                    }
                });
            }
        });
        // Every record has returned, so every line is in the file.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut next = [0usize; THREADS];
        for line in text.lines() {
            let line: serde_json::Value = serde_json::from_str(line).expect("a whole line");
            let thread: usize = line["namespace"].as_str().unwrap()[1..].parse().unwrap();
            let i: usize = line["name"].as_str().unwrap().parse().unwrap();
            assert_eq!(
                i, next[thread],
                "thread {thread}'s lines in order, once each"
            );
            next[thread] += 1;
        }
        assert_eq!(next, [EACH; THREADS]);
    }
}
