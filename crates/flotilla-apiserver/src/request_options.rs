//! The options of a request (`CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`,
//! `ListOptions`, `GetOptions`), checked as kube-apiserver checks them before it touches
//! anything: an unknown `dryRun` or `fieldValidation` value, a malformed `resourceVersion`, or
//! DeleteOptions that contradict themselves refuse the request, so that, say, a dry-run delete
//! with a misspelt value never deletes.

use flotilla_apimachinery::FieldError;
use serde_json::{Value, json};

use crate::status::{ApiError, ApiResult, Target};

/// `metav1`'s group, which every options kind belongs to.
const META_GROUP: &str = "meta.k8s.io";

/// 422 for an options object: `CreateOptions.meta.k8s.io "" is invalid: …`.
pub fn invalid(options: &str, errors: &[FieldError]) -> ApiError {
    let target = Target {
        group: META_GROUP.into(),
        resource: options.into(),
        name: String::new(),
    };
    ApiError::invalid(&format!("{options}.{META_GROUP}"), &target, errors)
}

/// Whether `dryRun` asks for a dry run: every value must be `All` (kube's only one).
pub fn dry_run(options: &str, values: &[&str]) -> ApiResult<bool> {
    if values.iter().any(|v| *v != "All") {
        return Err(invalid(
            options,
            &[FieldError::not_supported("dryRun", json!(values), &["All"])],
        ));
    }
    Ok(!values.is_empty())
}

/// The `fieldValidation` directive, validated (`""` and absent mean `Warn`).
pub fn field_validation<'a>(options: &str, value: Option<&'a str>) -> ApiResult<&'a str> {
    match value.unwrap_or_default() {
        "" => Ok("Warn"),
        v @ ("Ignore" | "Warn" | "Strict") => Ok(v),
        other => Err(invalid(
            options,
            &[FieldError::not_supported(
                "fieldValidation",
                json!(other),
                &["", "Ignore", "Strict", "Warn"],
            )],
        )),
    }
}

/// A `resourceVersion` parameter must be a number when given (400, as kube's list does).
pub fn resource_version(value: Option<&str>) -> ApiResult<Option<u64>> {
    match value.filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            ApiError::bad_request(format!(
                "invalid resource version: resourceVersion: Invalid value: {v:?}: strconv.ParseUint: parsing {v:?}: invalid syntax"
            ))
        }),
    }
}

/// `resourceVersionMatch` must be `Exact`, `NotOlderThan` or empty, and needs a
/// `resourceVersion`.
pub fn resource_version_match(rv: Option<&str>, rv_match: Option<&str>) -> ApiResult<()> {
    match rv_match.unwrap_or_default() {
        "" => Ok(()),
        "Exact" | "NotOlderThan" if rv.is_none_or(str::is_empty) => Err(invalid(
            "ListOptions",
            &[FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            )],
        )),
        "Exact" | "NotOlderThan" => Ok(()),
        other => Err(invalid(
            "ListOptions",
            &[FieldError::not_supported(
                "resourceVersionMatch",
                json!(other),
                &["Exact", "NotOlderThan", ""],
            )],
        )),
    }
}

/// DeleteOptions from a request: the body (typed as kube decodes it) and the query
/// parameters, which kube merges into the same options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteRequest {
    /// `Foreground`, `Background` or `Orphan`, when chosen (by `propagationPolicy` or the
    /// deprecated `orphanDependents`).
    pub propagation: Option<String>,
    /// `orphanDependents` as sent: `false` makes a delete that is not immediate answer 202.
    pub orphan_dependents: Option<bool>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_rv: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// Decodes and validates DeleteOptions.
pub fn delete_options(
    body: &[u8],
    query: &dyn Fn(&str) -> Option<String>,
) -> ApiResult<DeleteRequest> {
    let parsed: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?
    };
    if !parsed.is_object() {
        return Err(ApiError::bad_request(
            "json: cannot unmarshal non-object into Go value of type v1.DeleteOptions",
        ));
    }
    let typed = |field: &str, want: &str, ok: fn(&Value) -> bool| -> ApiResult<()> {
        match parsed.get(field) {
            Some(v) if !v.is_null() && !ok(v) => Err(ApiError::bad_request(format!(
                "json: cannot unmarshal {} into Go struct field DeleteOptions.{field} of type {want}",
                go_type(v)
            ))),
            _ => Ok(()),
        }
    };
    typed("gracePeriodSeconds", "int64", |v| v.is_i64())?;
    typed("orphanDependents", "bool", Value::is_boolean)?;
    typed(
        "propagationPolicy",
        "v1.DeletionPropagation",
        Value::is_string,
    )?;
    typed("dryRun", "[]string", |v| {
        v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    })?;
    typed("preconditions", "v1.Preconditions", Value::is_object)?;
    let text = |v: &Value| v.as_str().map(String::from);
    let query_bool = |name: &str| -> ApiResult<Option<bool>> {
        match query(name).as_deref() {
            None | Some("") => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(ApiError::bad_request(format!(
                "invalid value for {name}: {other:?} is not a boolean"
            ))),
        }
    };
    if let Some(grace) = query("gracePeriodSeconds").filter(|g| !g.is_empty())
        && grace.parse::<i64>().is_err()
    {
        return Err(ApiError::bad_request(format!(
            "invalid value for gracePeriodSeconds: {grace:?} is not an integer"
        )));
    }
    let orphan = parsed["orphanDependents"]
        .as_bool()
        .or(query_bool("orphanDependents")?);
    let policy = text(&parsed["propagationPolicy"]).or_else(|| query("propagationPolicy"));
    let mut dry: Vec<String> = parsed["dryRun"]
        .as_array()
        .map(|a| a.iter().filter_map(text).collect())
        .unwrap_or_default();
    if let Some(q) = query("dryRun").filter(|q| !q.is_empty()) {
        dry.push(q);
    }
    let dry_refs: Vec<&str> = dry.iter().map(String::as_str).collect();
    let dry_run = dry_run("DeleteOptions", &dry_refs)?;
    if let (Some(_), Some(policy)) = (orphan, &policy) {
        return Err(invalid(
            "DeleteOptions",
            &[FieldError::invalid(
                "propagationPolicy",
                json!(policy),
                "orphanDependents and deletionPropagation cannot be both set",
            )],
        ));
    }
    if let Some(policy) = &policy
        && !matches!(policy.as_str(), "Foreground" | "Background" | "Orphan")
    {
        return Err(invalid(
            "DeleteOptions",
            &[FieldError::not_supported(
                "propagationPolicy",
                json!(policy),
                &["Foreground", "Background", "Orphan", "nil"],
            )],
        ));
    }
    let propagation = policy.or_else(|| match orphan {
        Some(true) => Some("Orphan".into()),
        Some(false) => Some("Background".into()),
        None => None,
    });
    Ok(DeleteRequest {
        propagation,
        orphan_dependents: orphan,
        precondition_uid: text(&parsed["preconditions"]["uid"]),
        precondition_rv: text(&parsed["preconditions"]["resourceVersion"]),
        dry_run,
    })
}

/// The Go name of a JSON value's type, as `encoding/json` errors print it.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn only_all_is_a_dry_run() {
        assert!(!dry_run("CreateOptions", &[]).unwrap());
        assert!(dry_run("CreateOptions", &["All"]).unwrap());
        for bad in [&["Bogus"][..], &["server"], &["All", "x"]] {
            let err = dry_run("DeleteOptions", bad).unwrap_err();
            assert_eq!(err.code, 422);
            assert!(
                err.message.starts_with(
                    "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value"
                ),
                "{}",
                err.message
            );
            assert_eq!(err.causes[0]["field"], "dryRun");
        }
    }

    #[test]
    fn field_validation_values() {
        assert_eq!(field_validation("CreateOptions", None).unwrap(), "Warn");
        assert_eq!(
            field_validation("PatchOptions", Some("Strict")).unwrap(),
            "Strict"
        );
        let err = field_validation("UpdateOptions", Some("Bogus")).unwrap_err();
        assert_eq!((err.code, err.reason), (422, "Invalid"));
        assert!(
            err.message.starts_with("UpdateOptions.meta.k8s.io"),
            "{}",
            err.message
        );
    }

    #[test]
    fn resource_versions_are_numbers_and_matches_need_one() {
        assert_eq!(resource_version(Some("12")).unwrap(), Some(12));
        assert_eq!(resource_version(Some("")).unwrap(), None);
        assert_eq!(resource_version(Some("abc")).unwrap_err().code, 400);
        assert!(resource_version_match(Some("5"), Some("Exact")).is_ok());
        assert_eq!(
            resource_version_match(None, Some("NotOlderThan"))
                .unwrap_err()
                .code,
            422
        );
        let bogus = resource_version_match(Some("1"), Some("Bogus")).unwrap_err();
        assert_eq!(bogus.causes[0]["reason"], "FieldValueNotSupported");
    }

    #[test]
    fn delete_options_are_typed_and_consistent() {
        let ok = delete_options(
            br#"{"propagationPolicy": "Foreground", "dryRun": ["All"]}"#,
            &none,
        )
        .unwrap();
        assert_eq!(ok.propagation.as_deref(), Some("Foreground"));
        assert!(ok.dry_run);
        let orphan = delete_options(br#"{"orphanDependents": false}"#, &none).unwrap();
        assert_eq!(
            (orphan.propagation.as_deref(), orphan.orphan_dependents),
            (Some("Background"), Some(false))
        );
        assert_eq!(
            delete_options(br#"{"gracePeriodSeconds": "abc"}"#, &none)
                .unwrap_err()
                .code,
            400
        );
        assert_eq!(
            delete_options(br#"{"orphanDependents": "yes"}"#, &none)
                .unwrap_err()
                .code,
            400
        );
        let both = delete_options(
            br#"{"orphanDependents": true, "propagationPolicy": "Background"}"#,
            &none,
        )
        .unwrap_err();
        assert_eq!(
            (both.code, both.causes[0]["field"].as_str()),
            (422, Some("propagationPolicy"))
        );
        assert_eq!(
            delete_options(br#"{"propagationPolicy": "Sideways"}"#, &none)
                .unwrap_err()
                .code,
            422
        );
        assert_eq!(
            delete_options(br#"{"dryRun": ["Bogus"]}"#, &none)
                .unwrap_err()
                .code,
            422
        );
    }

    #[test]
    fn query_parameters_count_like_the_body() {
        let query = |name: &str| match name {
            "dryRun" => Some("All".to_string()),
            "propagationPolicy" => Some("Orphan".to_string()),
            _ => None,
        };
        let opts = delete_options(b"", &query).unwrap();
        assert!(opts.dry_run);
        assert_eq!(opts.propagation.as_deref(), Some("Orphan"));
        let bogus = |name: &str| (name == "dryRun").then(|| "server".to_string());
        assert_eq!(delete_options(b"", &bogus).unwrap_err().code, 422);
        let grace = |name: &str| (name == "gracePeriodSeconds").then(|| "soon".to_string());
        assert_eq!(delete_options(b"", &grace).unwrap_err().code, 400);
    }
}
