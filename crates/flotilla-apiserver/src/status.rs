//! Kubernetes `Status` errors with kube-apiserver's exact reasons and messages.
//!
//! kubectl prints `Error from server (<Reason>): <message>` and client libraries branch on
//! `reason`/`code`, so every failure the engine reports goes through [`ApiError`].

use flotilla_apimachinery::FieldError;
use serde_json::{Value, json};

/// Identifies the object an error is about (`Status.details`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Target {
    /// API group of the resource (empty for core).
    pub group: String,
    /// The resource's plural name (kube puts it in `details.kind`).
    pub resource: String,
    /// The object's name, when known.
    pub name: String,
}

impl Target {
    /// `deployments.apps` or `configmaps` as kube-apiserver prints qualified resources.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// An API failure: HTTP code, `Status.reason`, message, and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason` (e.g. `NotFound`, `Invalid`).
    pub reason: &'static str,
    /// Human message, kube-apiserver wording.
    pub message: String,
    /// The object concerned, if any (boxed: errors travel in every `Result`).
    pub target: Option<Box<Target>>,
    /// `details.causes` entries.
    pub causes: Vec<Value>,
    /// `details.retryAfterSeconds`, when the client should retry.
    pub retry_after: Option<u32>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// Result of engine operations.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            target: None,
            causes: vec![],
            retry_after: None,
        }
    }

    fn with_target(mut self, target: &Target) -> Self {
        self.target = Some(Box::new(target.clone()));
        self
    }

    /// 404: `<resource> "<name>" not found`.
    pub fn not_found(target: &Target) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{}\" not found", target.qualified(), target.name),
        )
        .with_target(target)
    }

    /// 404 for a path that names no served resource.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 409: `<resource> "<name>" already exists`.
    pub fn already_exists(target: &Target) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{}\" already exists", target.qualified(), target.name),
        )
        .with_target(target)
    }

    /// 409: the optimistic-concurrency failure kubectl and controllers retry on.
    pub fn conflict(target: &Target, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{}\": {why}",
                target.qualified(),
                target.name
            ),
        )
        .with_target(target)
    }

    /// 409 Conflict for a stale resourceVersion.
    pub fn stale(target: &Target) -> Self {
        Self::conflict(
            target,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422: `<Kind> "<name>" is invalid: [field errors]`, with one cause per field.
    pub fn invalid(kind: &str, target: &Target, errors: &[FieldError]) -> Self {
        let list = if errors.len() == 1 {
            errors[0].message()
        } else {
            format!(
                "[{}]",
                errors
                    .iter()
                    .map(FieldError::message)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{kind} \"{}\" is invalid: {list}", target.name),
        )
        .with_target(target);
        // `details.kind` is the bare kind; the group is `details.group`.
        if let Some(t) = &mut e.target {
            t.resource = kind.split('.').next().unwrap_or(kind).to_string();
        }
        e.causes = errors
            .iter()
            .map(|fe| json!({"reason": fe.error_type.cause_reason(), "message": fe.body(), "field": fe.field}))
            .collect();
        e
    }

    /// 409 for a server-side apply that conflicts with other managers: the causes name the
    /// fields; like kube, no object in `details`.
    pub fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        let mut e = Self::new(409, "Conflict", message);
        e.causes = causes;
        e
    }

    /// 422 with no object named: a JSON patch whose `test` failed, as kube answers it.
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }

    /// 405 for a method a path does not take (a DELETE of a discovery document, say).
    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// 400 with kube's generic wording.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405: the verb is not supported on this resource.
    pub fn method_not_supported(target: &Target, verb: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!(
                "{verb} is not supported on resources of kind \"{}\"",
                target.qualified()
            ),
        )
        .with_target(target)
    }

    /// 415: the request's content type is not accepted here.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {content_type:?}"
            ),
        )
    }

    /// 410 Expired: a resourceVersion or continue token older than retained history.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 403 Forbidden with a message.
    pub fn forbidden(target: &Target, why: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!(
                "{} \"{}\" is forbidden: {why}",
                target.qualified(),
                target.name
            ),
        )
        .with_target(target)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 401 with the reason the presented credentials were refused.
    pub fn unauthorized_because(message: impl Into<String>) -> Self {
        Self::new(401, "Unauthorized", message)
    }

    /// 429: the client is over one of its limits; retry after a second.
    pub fn too_many_requests(message: impl Into<String>) -> Self {
        let mut e = Self::new(429, "TooManyRequests", message);
        e.retry_after = Some(1);
        e
    }

    /// 408: the request body did not arrive in time.
    pub fn body_timeout(after: std::time::Duration) -> Self {
        Self::new(
            408,
            "Timeout",
            format!(
                "the request body was not received within {} s",
                after.as_secs()
            ),
        )
    }

    /// 403 Forbidden for a request RBAC refused, with kube-apiserver's message.
    pub fn forbidden_by_rbac(user: &str, attrs: &crate::rbac::Attributes) -> Self {
        use crate::rbac::Attributes;
        match attrs {
            Attributes::Resource(r) => {
                let resource = match &r.subresource {
                    Some(s) => format!("{}/{s}", r.resource),
                    None => r.resource.clone(),
                };
                let scope = match &r.namespace {
                    Some(ns) => format!("in the namespace {ns:?}"),
                    None => "at the cluster scope".to_string(),
                };
                let target = Target {
                    group: r.group.clone(),
                    resource: r.resource.clone(),
                    name: r.name.clone().unwrap_or_default(),
                };
                let why = format!(
                    "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
                    r.verb, r.group
                );
                if target.name.is_empty() {
                    Self::new(
                        403,
                        "Forbidden",
                        format!("{} is forbidden: {why}", target.qualified()),
                    )
                    .with_target(&target)
                } else {
                    Self::forbidden(&target, &why)
                }
            }
            Attributes::NonResource { verb, path } => Self::new(
                403,
                "Forbidden",
                format!("forbidden: User {user:?} cannot {verb} path {path:?}"),
            ),
        }
    }

    /// 413: request body over the limit.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 504: the request exceeded its deadline.
    pub fn timeout() -> Self {
        let mut e = Self::new(
            504,
            "Timeout",
            "The request did not complete within the allotted timeout",
        );
        e.retry_after = Some(1);
        e
    }

    /// 500: an internal failure (storage). The write was not acknowledged.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// 503 while the engine is starting or stopping.
    pub fn unavailable(message: impl Into<String>) -> Self {
        let mut e = Self::new(503, "ServiceUnavailable", message);
        e.retry_after = Some(1);
        e
    }

    /// The `Status` object to send.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        let mut details = serde_json::Map::new();
        if let Some(t) = &self.target {
            if !t.name.is_empty() {
                details.insert("name".into(), t.name.clone().into());
            }
            if !t.group.is_empty() {
                details.insert("group".into(), t.group.clone().into());
            }
            if !t.resource.is_empty() {
                details.insert("kind".into(), t.resource.clone().into());
            }
        }
        if !self.causes.is_empty() {
            details.insert("causes".into(), Value::Array(self.causes.clone()));
        }
        if let Some(r) = self.retry_after {
            details.insert("retryAfterSeconds".into(), r.into());
        }
        if !details.is_empty() {
            status["details"] = Value::Object(details);
        }
        status
    }
}

/// The `Success` Status kube-apiserver answers an immediate delete with (for the kinds that do
/// not return the deleted object): the target's name, resource, group and the object's uid.
pub fn success(target: &Target, deleted: &Value) -> Value {
    let mut details = serde_json::Map::new();
    details.insert("name".into(), target.name.clone().into());
    if !target.group.is_empty() {
        details.insert("group".into(), target.group.clone().into());
    }
    details.insert("kind".into(), target.resource.clone().into());
    if let Some(uid) = deleted.pointer("/metadata/uid") {
        details.insert("uid".into(), uid.clone());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": details})
}

impl From<flotilla_store::StoreError> for ApiError {
    fn from(e: flotilla_store::StoreError) -> Self {
        use flotilla_store::StoreError as S;
        match e {
            S::Compacted {
                requested,
                compacted,
            } => Self::expired(format!(
                "too old resource version: {requested} ({compacted})"
            )),
            S::FutureRevision { requested, current } => {
                let mut e = Self::new(
                    504,
                    "Timeout",
                    format!("Too large resource version: {requested}, current: {current}"),
                );
                e.retry_after = Some(1);
                e
            }
            S::Closed => Self::unavailable("storage is shutting down"),
            other => Self::internal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_kube_wording() {
        let t = Target {
            group: "apps".into(),
            resource: "deployments".into(),
            name: "web".into(),
        };
        let s = ApiError::not_found(&t).to_status();
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["code"], 404);
        assert_eq!(s["details"]["kind"], "deployments");
    }

    #[test]
    fn invalid_lists_every_field() {
        let t = Target {
            group: "g".into(),
            resource: "things".into(),
            name: "x".into(),
        };
        let errs = vec![
            FieldError::required("spec.a", ""),
            FieldError::invalid("spec.b", json!(5), "must be less than 3"),
        ];
        let s = ApiError::invalid("Thing", &t, &errs).to_status();
        assert_eq!(
            s["message"],
            "Thing \"x\" is invalid: [spec.a: Required value, spec.b: Invalid value: 5: must be less than 3]"
        );
        assert_eq!(s["details"]["causes"][1]["field"], "spec.b");
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueRequired");
    }
}
