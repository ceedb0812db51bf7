//! The self-reviews kubectl uses to ask the hub about the caller: `SelfSubjectAccessReview`
//! (`kubectl auth can-i VERB RESOURCE`), `SelfSubjectRulesReview` (`kubectl auth can-i --list`)
//! and `SelfSubjectReview` (`kubectl auth whoami`). They are answered, never stored.

use serde_json::{Value, json};

use crate::auth::UserInfo;
use crate::rbac::cache::PolicyCache;
use crate::rbac::{Attributes, ResourceAttributes};
use crate::status::{ApiError, ApiResult};

/// Which review a path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// `authorization.k8s.io/v1` SelfSubjectAccessReview.
    Access,
    /// `authorization.k8s.io/v1` SelfSubjectRulesReview.
    Rules,
    /// `authentication.k8s.io/v1` SelfSubjectReview.
    Identity,
}

impl Review {
    /// The review a POST to `path` is, if any.
    pub fn of_path(path: &str) -> Option<Self> {
        match path.trim_end_matches('/') {
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" => Some(Review::Access),
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews" => Some(Review::Rules),
            "/apis/authentication.k8s.io/v1/selfsubjectreviews" => Some(Review::Identity),
            _ => None,
        }
    }
}

/// The caller as the reviews see it: a user and the policy it is judged by; `None` policy
/// means an in-process client, which may do everything.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The user.
    pub user: &'a UserInfo,
    /// The policy, when the hub is secured.
    pub policy: Option<&'a PolicyCache>,
}

/// Answers a review (JSON, or the protobuf kubectl's typed client sends): the request object
/// with its `status` filled in.
pub fn answer(
    review: Review,
    body: &[u8],
    content_type: &str,
    caller: Caller<'_>,
) -> ApiResult<Value> {
    let decoded = if content_type.starts_with(crate::protobuf::CONTENT_TYPE) {
        crate::protobuf::decode(body, &Value::Null)
    } else {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    };
    let mut obj =
        decoded.map_err(|e| ApiError::bad_request(format!("error decoding review: {e}")))?;
    if !obj.is_object() {
        return Err(ApiError::bad_request("the review must be a JSON object"));
    }
    obj["status"] = match review {
        Review::Access => access(&obj, caller)?,
        Review::Rules => rules(&obj, caller),
        Review::Identity => json!({"userInfo": {
            "username": caller.user.name,
            "uid": caller.user.uid,
            "groups": caller.user.groups,
        }}),
    };
    Ok(obj)
}

fn access(obj: &Value, caller: Caller<'_>) -> ApiResult<Value> {
    let spec = &obj["spec"];
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let opt = |v: &Value, k: &str| Some(s(v, k)).filter(|x| !x.is_empty());
    let attrs = if let Some(r) = spec.get("resourceAttributes").filter(|r| r.is_object()) {
        Attributes::Resource(ResourceAttributes {
            verb: s(r, "verb"),
            group: s(r, "group"),
            resource: s(r, "resource"),
            subresource: opt(r, "subresource"),
            namespace: opt(r, "namespace"),
            name: opt(r, "name"),
        })
    } else if let Some(n) = spec.get("nonResourceAttributes").filter(|n| n.is_object()) {
        Attributes::NonResource {
            verb: s(n, "verb"),
            path: s(n, "path"),
        }
    } else {
        return Err(ApiError::bad_request(
            "spec: exactly one of resourceAttributes or nonResourceAttributes is required",
        ));
    };
    Ok(match caller.policy {
        None => json!({"allowed": true, "reason": "in-process client"}),
        Some(policy) => {
            let d = policy.authorize(caller.user, &attrs);
            json!({"allowed": d.allowed, "reason": d.reason})
        }
    })
}

fn rules(obj: &Value, caller: Caller<'_>) -> Value {
    let namespace = obj["spec"]["namespace"].as_str().unwrap_or_default();
    let rules = match caller.policy {
        None => vec![crate::rbac::PolicyRule {
            verbs: vec!["*".into()],
            api_groups: vec!["*".into()],
            resources: vec!["*".into()],
            resource_names: vec![],
            non_resource_urls: vec![],
        }],
        Some(policy) => policy.rules_for(caller.user, namespace),
    };
    let (resource, other): (Vec<_>, Vec<_>) = rules
        .into_iter()
        .partition(|r| r.non_resource_urls.is_empty());
    let non_resource: Vec<Value> = other
        .into_iter()
        .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
        .collect();
    json!({
        "resourceRules": resource,
        "nonResourceRules": non_resource,
        "incomplete": false,
    })
}
