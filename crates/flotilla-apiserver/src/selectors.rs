//! List filtering: label and field selectors, limits and continue tokens.

use flotilla_apimachinery::selector::{FieldSelector, LabelSelector};
use serde_json::Value;

use crate::object::metadata;
use crate::registry::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// kube-apiserver's message for a continue token older than retained history.
pub const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// Where a paged list resumes: the first page's revision and the last key served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuePoint {
    /// Revision all pages are read at.
    pub revision: i64,
    /// Resume after this storage key.
    pub key: String,
}

/// A parsed list request: selectors, paging and the revision to read at.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// `labelSelector`.
    pub labels: Option<LabelSelector>,
    /// `fieldSelector`.
    pub fields: Option<FieldSelector>,
    /// `limit`.
    pub limit: Option<usize>,
    /// Decoded `continue`.
    pub continue_from: Option<ContinuePoint>,
    /// `resourceVersion` with `resourceVersionMatch=Exact`.
    pub exact_revision: Option<i64>,
}

/// Field paths every kind can be selected by.
const COMMON_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

/// Extra field selectors kube-apiserver supports on core kinds (kubectl describe uses the
/// Event ones).
fn kind_fields(info: &ResourceInfo) -> &'static [&'static str] {
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "events") | ("events.k8s.io", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
            "regarding.kind",
            "regarding.name",
            "regarding.namespace",
            "regarding.uid",
        ],
        ("", "namespaces") => &["status.phase"],
        ("", "secrets") => &["type"],
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        ("", "nodes") => &["spec.unschedulable"],
        _ => &[],
    }
}

impl ListFilter {
    /// Parses selectors and paging parameters, rejecting unsupported field selectors.
    pub fn parse(
        info: &ResourceInfo,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
        limit: Option<&str>,
        continue_token: Option<&str>,
    ) -> ApiResult<Self> {
        let labels =
            match label_selector.filter(|s| !s.trim().is_empty()) {
                Some(s) => Some(LabelSelector::parse(s).map_err(|e| {
                    ApiError::bad_request(format!("unable to parse requirement: {e}"))
                })?),
                None => None,
            };
        let fields = match field_selector.filter(|s| !s.trim().is_empty()) {
            Some(s) => {
                let sel = FieldSelector::parse(s)
                    .map_err(|e| ApiError::bad_request(format!("invalid field selector: {e}")))?;
                for f in sel.fields() {
                    let ok = COMMON_FIELDS.contains(&f)
                        || kind_fields(info).contains(&f)
                        || info.selectable_fields.iter().any(|s| s == f);
                    if !ok {
                        return Err(ApiError::bad_request(format!(
                            "field label not supported: {f}"
                        )));
                    }
                }
                Some(sel)
            }
            None => None,
        };
        let limit = match limit.filter(|s| !s.is_empty()) {
            Some(s) => match s.parse::<i64>() {
                Ok(n) if n > 0 => Some(n as usize),
                Ok(_) => None,
                Err(_) => {
                    return Err(ApiError::bad_request(format!(
                        "invalid limit {s:?}: must be an integer"
                    )));
                }
            },
            None => None,
        };
        let continue_from = match continue_token.filter(|s| !s.is_empty()) {
            Some(t) => Some(decode_continue(t)?),
            None => None,
        };
        Ok(Self {
            labels,
            fields,
            limit,
            continue_from,
            exact_revision: None,
        })
    }

    /// True when no selector filters items (so page sizes map 1:1 to stored keys).
    pub fn is_trivial(&self) -> bool {
        self.labels.as_ref().is_none_or(LabelSelector::is_empty) && self.fields.is_none()
    }

    /// Whether every object passes (no label or field selector), so objects need not be
    /// decoded to be judged.
    pub fn selects_everything(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    /// Whether only an object's identity is selected on: no label selector, and field
    /// selectors on `metadata.name` and `metadata.namespace` alone (`kubectl get NAME -w`,
    /// `kubectl wait`). Every version of an object then passes or fails alike, and its name
    /// and namespace are all that must be read of it.
    pub fn selects_by_identity(&self) -> bool {
        self.labels.is_none()
            && self
                .fields
                .as_ref()
                .is_some_and(|f| f.fields().all(|field| COMMON_FIELDS.contains(&field)))
    }

    /// Whether an object passes the selectors.
    pub fn matches(&self, obj: &Value) -> bool {
        if let Some(l) = &self.labels {
            let empty = serde_json::Map::new();
            let labels = metadata(obj)
                .get("labels")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            if !l.matches(labels) {
                return false;
            }
        }
        if let Some(f) = &self.fields {
            return f.matches(|path| field_value(obj, path));
        }
        true
    }
}

/// The string value of a dotted field path in an object (selectors compare strings).
pub fn field_value(obj: &Value, path: &str) -> Option<String> {
    let mut cur = obj;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Encodes a continue token (opaque to clients).
pub fn encode_continue(revision: i64, key: &str) -> String {
    let raw = serde_json::json!({"rv": revision, "start": key}).to_string();
    raw.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Decodes a continue token, or 400 if it is not one of ours.
pub fn decode_continue(token: &str) -> ApiResult<ContinuePoint> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token:?}"));
    if !token.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok())
        .collect();
    let v: Value = serde_json::from_slice(&bytes.ok_or_else(bad)?).map_err(|_| bad())?;
    match (v["rv"].as_i64(), v["start"].as_str()) {
        (Some(revision), Some(key)) if revision > 0 => Ok(ContinuePoint {
            revision,
            key: key.to_string(),
        }),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = encode_continue(42, "/registry/core/configmaps/ns/a");
        assert_eq!(
            decode_continue(&t).unwrap(),
            ContinuePoint {
                revision: 42,
                key: "/registry/core/configmaps/ns/a".into()
            }
        );
        assert_eq!(decode_continue("zz").unwrap_err().code, 400);
        assert_eq!(decode_continue("abc").unwrap_err().code, 400);
    }

    #[test]
    fn field_values_read_dotted_paths() {
        let obj = serde_json::json!({"metadata": {"name": "a"}, "spec": {"replicas": 3}});
        assert_eq!(field_value(&obj, "metadata.name").as_deref(), Some("a"));
        assert_eq!(field_value(&obj, "spec.replicas").as_deref(), Some("3"));
        assert_eq!(field_value(&obj, "spec.missing"), None);
    }
}
