//! What a request asks to do, in RBAC's terms: a verb on a resource (group, resource,
//! subresource, namespace, name) or a verb on a non-resource path. Derived from the HTTP
//! method, path and query exactly as kube-apiserver's request-info resolver does.

use std::collections::HashMap;

use http::Method;

use crate::http::{Route, parse_path};

/// The resource part of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceAttributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: String,
    /// API group (`""` for core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource (`status`, `proxy`, …).
    pub subresource: Option<String>,
    /// Namespace; `None` for cluster-scoped resources and all-namespace lists.
    pub namespace: Option<String>,
    /// Object name; for list and watch, the name a `metadata.name=` field selector pins.
    pub name: Option<String>,
}

/// A request as the authorizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attributes {
    /// A request on an API resource.
    Resource(ResourceAttributes),
    /// A request on any other path (discovery, `/openapi`, `/metrics`).
    NonResource {
        /// Lower-case HTTP verb (`get`, `post`, …).
        verb: String,
        /// The path.
        path: String,
    },
}

impl Attributes {
    /// The request's verb.
    pub fn verb(&self) -> &str {
        match self {
            Attributes::Resource(r) => &r.verb,
            Attributes::NonResource { verb, .. } => verb,
        }
    }

    /// Whether the request changes state (what the audit log records).
    pub fn is_mutating(&self) -> bool {
        matches!(
            self.verb(),
            "create" | "update" | "patch" | "delete" | "deletecollection" | "post" | "put"
        )
    }

    /// The attributes of `method path?query`.
    /// `query` is the decoded query string.
    pub fn of(method: &Method, path: &str, query: &HashMap<String, String>) -> Self {
        let param = |key: &str| query.get(key).map(String::as_str);
        let Some(Route::Resource(rp)) = parse_path(path) else {
            return Attributes::NonResource {
                verb: method.as_str().to_ascii_lowercase(),
                path: path.to_string(),
            };
        };
        let watching = param("watch").is_some_and(|w| w == "true" || w == "1");
        let verb = match (method, rp.name.is_some()) {
            (&Method::GET | &Method::HEAD, false) if watching => "watch",
            (&Method::GET | &Method::HEAD, false) => "list",
            (&Method::GET | &Method::HEAD, true) => "get",
            (&Method::POST, _) => "create",
            (&Method::PUT, _) => "update",
            (&Method::PATCH, _) => "patch",
            (&Method::DELETE, true) => "delete",
            (&Method::DELETE, false) => "deletecollection",
            (other, _) => {
                return Attributes::NonResource {
                    verb: other.as_str().to_ascii_lowercase(),
                    path: path.to_string(),
                };
            }
        };
        // kube lets a name-limited rule cover a list or watch pinned to that name.
        let name = rp.name.clone().or_else(|| {
            matches!(verb, "list" | "watch")
                .then(|| param("fieldSelector"))
                .flatten()
                .and_then(|selector| {
                    selector
                        .split(',')
                        .find_map(|term| {
                            term.strip_prefix("metadata.name==")
                                .or_else(|| term.strip_prefix("metadata.name="))
                        })
                        .map(String::from)
                })
        });
        // As in kube, a Namespace object is inside itself: a RoleBinding there covers it.
        let namespace = match (
            &rp.namespace,
            rp.group.is_empty() && rp.plural == "namespaces",
        ) {
            (None, true) => rp.name.clone(),
            _ => rp.namespace,
        };
        Attributes::Resource(ResourceAttributes {
            verb: verb.to_string(),
            group: rp.group,
            resource: rp.plural,
            subresource: rp.subresource,
            namespace,
            name,
        })
    }
}
