//! Acting as someone else: `Impersonate-User`, `Impersonate-Group` (repeated),
//! `Impersonate-Uid` and `Impersonate-Extra-<key>` headers, as kube-apiserver honours them
//! (`kubectl --as alice --as-group team`). The caller must be allowed the verb `impersonate` on
//! each part: `users` (or, for `system:serviceaccount:<ns>:<name>`, that `serviceaccounts` in
//! its namespace) and `groups` in the core group, `uids` and `userextras/<key>` in
//! `authentication.k8s.io`, each named by the value asked for. The request then runs as the
//! impersonated user, and the audit log names both.

use http::HeaderMap;

use super::{AUTHENTICATED_GROUP, UserInfo};
use crate::rbac::{Attributes, ResourceAttributes};
use crate::status::{ApiError, ApiResult};

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// Who a request asks to act as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Impersonation {
    /// The user name.
    pub user: String,
    /// The groups asked for (`system:authenticated` is added to the user, not checked).
    pub groups: Vec<String>,
    /// The uid, if asked for.
    pub uid: Option<String>,
    /// Extra fields: key and values.
    pub extra: Vec<(String, Vec<String>)>,
}

/// The impersonation `headers` ask for, if any; 400 when they ask for groups, a uid or extras
/// without a user.
pub fn requested(headers: &HeaderMap) -> ApiResult<Option<Impersonation>> {
    let text = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(String::from)
            .collect()
    };
    let mut extra: Vec<(String, Vec<String>)> = Vec::new();
    for (name, value) in headers {
        let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) else {
            continue;
        };
        // kube-apiserver: extra keys are percent-encoded in header names.
        let key = percent_decode(key);
        let value = value.to_str().unwrap_or_default().to_string();
        match extra.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => extra.push((key, vec![value])),
        }
    }
    let user = text(USER).into_iter().next();
    let groups = text(GROUP);
    let uid = text(UID).into_iter().next();
    let Some(user) = user else {
        if !groups.is_empty() || uid.is_some() || !extra.is_empty() {
            return Err(ApiError::bad_request(
                "requested impersonation of groups, a uid or extra fields without impersonating a user (add Impersonate-User)",
            ));
        }
        return Ok(None);
    };
    Ok(Some(Impersonation {
        user,
        groups,
        uid,
        extra,
    }))
}

impl Impersonation {
    /// What the caller must be allowed (verb `impersonate`) for this impersonation.
    pub fn checks(&self) -> Vec<Attributes> {
        let impersonate = |group: &str, resource: &str, namespace: Option<&str>, name: &str| {
            Attributes::Resource(ResourceAttributes {
                verb: "impersonate".into(),
                group: group.into(),
                resource: resource.into(),
                subresource: None,
                namespace: namespace.map(String::from),
                name: Some(name.into()),
            })
        };
        let mut checks = vec![match service_account(&self.user) {
            Some((namespace, name)) => impersonate("", "serviceaccounts", Some(namespace), name),
            None => impersonate("", "users", None, &self.user),
        }];
        checks.extend(
            self.groups
                .iter()
                .map(|g| impersonate("", "groups", None, g)),
        );
        if let Some(uid) = &self.uid {
            checks.push(impersonate("authentication.k8s.io", "uids", None, uid));
        }
        for (key, values) in &self.extra {
            for value in values {
                checks.push(impersonate(
                    "authentication.k8s.io",
                    &format!("userextras/{key}"),
                    None,
                    value,
                ));
            }
        }
        checks
    }

    /// The user the request runs as: the groups asked for, a service account's groups, and
    /// `system:authenticated` (unless the user is `system:anonymous`).
    pub fn user(&self) -> UserInfo {
        let mut groups = self.groups.clone();
        if let Some((namespace, _)) = service_account(&self.user) {
            for g in [
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{namespace}"),
            ] {
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
        }
        if self.user != "system:anonymous" && !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        UserInfo {
            name: self.user.clone(),
            uid: self.uid.clone().unwrap_or_default(),
            groups,
        }
    }
}

/// `(namespace, name)` of a service-account user name.
fn service_account(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix("system:serviceaccount:")?.split_once(':')
}

/// `%XX` sequences decoded (malformed ones kept as they are).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn names(checks: &[Attributes]) -> Vec<String> {
        checks
            .iter()
            .map(|a| match a {
                Attributes::Resource(r) => format!(
                    "{} {}/{} {}/{}",
                    r.verb,
                    r.group,
                    r.resource,
                    r.namespace.as_deref().unwrap_or("-"),
                    r.name.as_deref().unwrap_or("-")
                ),
                Attributes::NonResource { path, .. } => path.clone(),
            })
            .collect()
    }

    #[test]
    fn no_headers_no_impersonation_and_groups_need_a_user() {
        assert_eq!(requested(&HeaderMap::new()).unwrap(), None);
        let err = requested(&headers(&[("Impersonate-Group", "g")])).unwrap_err();
        assert_eq!(err.code, 400);
        assert!(err.message.contains("Impersonate-User"), "{}", err.message);
    }

    #[test]
    fn every_part_asked_for_is_checked_by_name() {
        let asked = requested(&headers(&[
            ("Impersonate-User", "alice"),
            ("Impersonate-Group", "team-a"),
            ("Impersonate-Group", "team-b"),
            ("Impersonate-Uid", "1234"),
            ("Impersonate-Extra-Scopes%2Fwide", "view"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            names(&asked.checks()),
            [
                "impersonate /users -/alice",
                "impersonate /groups -/team-a",
                "impersonate /groups -/team-b",
                "impersonate authentication.k8s.io/uids -/1234",
                "impersonate authentication.k8s.io/userextras/scopes/wide -/view",
            ]
        );
        let user = asked.user();
        assert_eq!(user.name, "alice");
        assert_eq!(user.uid, "1234");
        assert_eq!(user.groups, ["team-a", "team-b", AUTHENTICATED_GROUP]);
    }

    #[test]
    fn service_accounts_are_checked_in_their_namespace_and_get_their_groups() {
        let asked = requested(&headers(&[(
            "Impersonate-User",
            "system:serviceaccount:apps:builder",
        )]))
        .unwrap()
        .unwrap();
        assert_eq!(
            names(&asked.checks()),
            ["impersonate /serviceaccounts apps/builder"]
        );
        assert_eq!(
            asked.user().groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:apps",
                AUTHENTICATED_GROUP
            ]
        );
        let anonymous = requested(&headers(&[("Impersonate-User", "system:anonymous")]))
            .unwrap()
            .unwrap();
        assert!(anonymous.user().groups.is_empty());
    }
}
