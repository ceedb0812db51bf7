//! The reviews clients ask the hub: about the caller, `SelfSubjectAccessReview` (`kubectl auth
//! can-i VERB RESOURCE`), `SelfSubjectRulesReview` (`kubectl auth can-i --list`) and
//! `SelfSubjectReview` (`kubectl auth whoami`); about someone else, `SubjectAccessReview`,
//! `LocalSubjectAccessReview` (one namespace) and `TokenReview` (who a bearer token is),
//! which webhooks and proxies in front of the hub use. They are answered, never stored; RBAC
//! decides who may ask (every user may ask about itself; the others take `create` on them).

use serde_json::{Value, json};

use flotilla_apimachinery::FieldError;

use crate::auth::{Authenticator, UserInfo};
use crate::rbac::cache::PolicyCache;
use crate::rbac::{Attributes, ResourceAttributes};
use crate::status::{ApiError, ApiResult};

/// Which review a path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    /// `authorization.k8s.io/v1` SelfSubjectAccessReview.
    Access,
    /// `authorization.k8s.io/v1` SelfSubjectRulesReview.
    Rules,
    /// `authentication.k8s.io/v1` SelfSubjectReview.
    Identity,
    /// `authorization.k8s.io/v1` SubjectAccessReview: may the user in the spec do this?
    SubjectAccess,
    /// `authorization.k8s.io/v1` LocalSubjectAccessReview, in this namespace.
    LocalSubjectAccess(String),
    /// `authentication.k8s.io/v1` TokenReview: who is this bearer token?
    Token,
}

/// The review resources, create-only, as discovery lists them: (group, plural, kind,
/// namespaced).
pub const RESOURCES: &[(&str, &str, &str, bool)] = &[
    (
        "authentication.k8s.io",
        "selfsubjectreviews",
        "SelfSubjectReview",
        false,
    ),
    (
        "authentication.k8s.io",
        "tokenreviews",
        "TokenReview",
        false,
    ),
    (
        "authorization.k8s.io",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        true,
    ),
    (
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
    ),
    (
        "authorization.k8s.io",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        false,
    ),
    (
        "authorization.k8s.io",
        "subjectaccessreviews",
        "SubjectAccessReview",
        false,
    ),
];

impl Review {
    /// The review a POST to `path` is, if any.
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.trim_end_matches('/');
        if let Some(rest) = path.strip_prefix("/apis/authorization.k8s.io/v1/namespaces/")
            && let Some((namespace, "localsubjectaccessreviews")) = rest.split_once('/')
        {
            return Some(Review::LocalSubjectAccess(namespace.to_string()));
        }
        match path {
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" => Some(Review::Access),
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews" => Some(Review::Rules),
            "/apis/authentication.k8s.io/v1/selfsubjectreviews" => Some(Review::Identity),
            "/apis/authorization.k8s.io/v1/subjectaccessreviews" => Some(Review::SubjectAccess),
            "/apis/authentication.k8s.io/v1/tokenreviews" => Some(Review::Token),
            _ => None,
        }
    }
}

/// The caller as the reviews see it: a user, the policy it is judged by and the
/// authenticator tokens are reviewed with; `None` policy means an in-process client, which
/// may do everything, on a hub with no authentication.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The user.
    pub user: &'a UserInfo,
    /// The policy, when the hub is secured.
    pub policy: Option<&'a PolicyCache>,
    /// The authenticator, when the hub is secured.
    pub authenticator: Option<&'a Authenticator>,
}

/// Answers a review (JSON, or the protobuf kubectl's typed client sends): the request object
/// with its `status` filled in.
pub async fn answer(
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
        Review::Access => access(&obj["spec"], caller)?,
        Review::Rules => rules(&obj, caller),
        Review::Identity => json!({"userInfo": user_info(caller.user)}),
        Review::SubjectAccess => {
            let subject = subject(&obj["spec"])?;
            access(
                &obj["spec"],
                Caller {
                    user: &subject,
                    ..caller
                },
            )?
        }
        Review::LocalSubjectAccess(namespace) => {
            let spec = local_spec(&obj["spec"], &namespace)?;
            let subject = subject(&spec)?;
            access(
                &spec,
                Caller {
                    user: &subject,
                    ..caller
                },
            )?
        }
        Review::Token => token(&obj["spec"], caller).await?,
    };
    Ok(obj)
}

/// 422 naming the field of a review that is wrong.
fn invalid(kind: &str, error: FieldError) -> ApiError {
    let group = RESOURCES
        .iter()
        .find(|(_, _, k, _)| *k == kind)
        .map_or("authorization.k8s.io", |(g, ..)| g);
    let target = crate::status::Target {
        group: group.to_string(),
        resource: kind.to_string(),
        name: String::new(),
    };
    ApiError::invalid(&format!("{kind}.{group}"), &target, &[error])
}

/// A user as reviews report one.
fn user_info(user: &UserInfo) -> Value {
    json!({"username": user.name, "uid": user.uid, "groups": user.groups})
}

/// The user a SubjectAccessReview asks about: `spec.user`, `spec.groups`, `spec.uid`, taken
/// as given (kube-apiserver adds no groups).
fn subject(spec: &Value) -> ApiResult<UserInfo> {
    let name = spec["user"].as_str().unwrap_or_default().to_string();
    let groups: Vec<String> = spec["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.as_str().map(String::from))
        .collect();
    if name.is_empty() && groups.is_empty() {
        return Err(invalid(
            "SubjectAccessReview",
            FieldError::invalid(
                "spec.user",
                json!(""),
                "at least one of user or group must be specified",
            ),
        ));
    }
    Ok(UserInfo {
        name,
        uid: spec["uid"].as_str().unwrap_or_default().to_string(),
        groups,
    })
}

/// A LocalSubjectAccessReview's spec with its namespace made the path's: a resource
/// question only, in that namespace.
fn local_spec(spec: &Value, namespace: &str) -> ApiResult<Value> {
    if spec
        .get("nonResourceAttributes")
        .is_some_and(Value::is_object)
    {
        return Err(invalid(
            "LocalSubjectAccessReview",
            FieldError::forbidden(
                "spec.nonResourceAttributes",
                "disallowed on this kind of request",
            ),
        ));
    }
    let mut spec = spec.clone();
    match spec["resourceAttributes"]["namespace"].as_str() {
        None | Some("") => spec["resourceAttributes"]["namespace"] = json!(namespace),
        Some(given) if given == namespace => {}
        Some(given) => {
            return Err(invalid(
                "LocalSubjectAccessReview",
                FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    json!(given),
                    format!("must match metadata.namespace, {namespace:?}"),
                ),
            ));
        }
    }
    Ok(spec)
}

/// Who `spec.token` is, as the hub's authenticator sees it.
async fn token(spec: &Value, caller: Caller<'_>) -> ApiResult<Value> {
    let token = spec["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let mut status = match caller.authenticator {
        None => {
            json!({"authenticated": false, "error": "this hub authenticates no one (it is not secured)"})
        }
        Some(authenticator) => match authenticator.authenticate_token(token).await? {
            Some(user) => json!({"authenticated": true, "user": user_info(&user)}),
            None => json!({"authenticated": false, "error": "invalid bearer token"}),
        },
    };
    if let Some(audiences) = spec.get("audiences").filter(|a| a.is_array()) {
        status["audiences"] = audiences.clone();
    }
    Ok(status)
}

fn access(spec: &Value, caller: Caller<'_>) -> ApiResult<Value> {
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
