//! The `/scale` subresource: an `autoscaling/v1` Scale view of a workload's replica count, as
//! `kubectl scale`, `kubectl autoscale` and the HorizontalPodAutoscaler use it. Built-in
//! Deployments, ReplicaSets, StatefulSets and ReplicationControllers have it, and so does any
//! custom resource whose CRD declares `subresources.scale`.
//!
//! The view and the write-back are pure functions over the stored object; the engine reads,
//! patches and stores through its usual conflict-retrying update.

use flotilla_apimachinery::FieldError;
use serde_json::{Value, json};

use crate::engine::{Engine, WriteOptions, target};
use crate::object::{meta_str, metadata};
use crate::patching::PatchType;
use crate::registry::ResourceInfo;
use crate::status::{ApiError, ApiResult, Target};

/// Where a kind keeps what its Scale shows: JSON paths in the CRD's `.spec.replicas` form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// The desired replica count (`specReplicasPath`).
    pub spec_replicas: String,
    /// The observed replica count (`statusReplicasPath`).
    pub status_replicas: String,
    /// The pods' label selector (`labelSelectorPath`): a selector string, a LabelSelector
    /// object or (ReplicationController) a plain label map.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The paths a CRD version's `subresources.scale` declares, if it declares them.
    pub fn from_crd_version(version: &Value) -> Option<Self> {
        let scale = version.pointer("/subresources/scale")?;
        Some(Self {
            spec_replicas: scale["specReplicasPath"].as_str()?.to_string(),
            status_replicas: scale["statusReplicasPath"].as_str()?.to_string(),
            label_selector: scale["labelSelectorPath"].as_str().map(String::from),
        })
    }
}

/// The JSON pointer of a `.a.b` path.
fn pointer(path: &str) -> String {
    path.replace('.', "/")
}

/// The `autoscaling/v1` Scale of `obj`.
pub fn view(paths: &ScalePaths, obj: &Value) -> Value {
    let meta = metadata(obj);
    let mut scale_meta = serde_json::Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(field) {
            scale_meta.insert(field.into(), v.clone());
        }
    }
    let spec_replicas = obj
        .pointer(&pointer(&paths.spec_replicas))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status_replicas = obj
        .pointer(&pointer(&paths.status_replicas))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut status = json!({"replicas": status_replicas});
    if let Some(selector) = paths
        .label_selector
        .as_deref()
        .and_then(|p| obj.pointer(&pointer(p)))
        .and_then(flotilla_apimachinery::selector::selector_text)
        .filter(|s| !s.is_empty())
    {
        status["selector"] = json!(selector);
    }
    // `spec.replicas` is `omitempty` in the Go type: a Scale of zero has an empty spec.
    let spec = if spec_replicas == 0 {
        json!({})
    } else {
        json!({"replicas": spec_replicas})
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": spec,
        "status": status,
    })
}

/// `obj` with the replica count a written Scale asks for, or the Scale's validation errors
/// (kube-apiserver's `ValidateScale`).
pub fn write_back(paths: &ScalePaths, name: &str, obj: &Value, scale: &Value) -> ApiResult<Value> {
    let invalid = |errs: &[FieldError]| {
        let scale = Target {
            group: "autoscaling".into(),
            resource: "Scale".into(),
            name: name.to_string(),
        };
        ApiError::invalid("Scale.autoscaling", &scale, errs)
    };
    if !scale.is_object() {
        return Err(ApiError::bad_request(
            "the body of a Scale must be a JSON object",
        ));
    }
    let replicas = scale.pointer("/spec/replicas").unwrap_or(&Value::Null);
    let count = match replicas {
        Value::Null => 0,
        Value::Number(n) => match n.as_i64() {
            Some(n) if (0..=i64::from(i32::MAX)).contains(&n) => n,
            Some(n) if n < 0 => {
                return Err(invalid(&[FieldError::invalid(
                    "spec.replicas",
                    json!(n),
                    "must be greater than or equal to 0",
                )]));
            }
            _ => {
                return Err(ApiError::bad_request(format!(
                    "Scale in version \"v1\" cannot be handled as a Scale: spec.replicas: {n} is not a 32-bit integer"
                )));
            }
        },
        other => {
            return Err(ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                json_type(other)
            )));
        }
    };
    let mut out = obj.clone();
    set_path(&mut out, &paths.spec_replicas, json!(count));
    Ok(out)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        _ => "number",
    }
}

/// Sets `.a.b.c` in `obj`, creating the objects on the way.
fn set_path(obj: &mut Value, path: &str, value: Value) {
    let mut node = obj;
    let parts: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        if !node.is_object() {
            *node = json!({});
        }
        let map = node.as_object_mut().expect("made an object");
        if i + 1 == parts.len() {
            map.insert((*part).to_string(), value);
            return;
        }
        node = map.entry((*part).to_string()).or_insert_with(|| json!({}));
    }
}

/// A Scale write, decoded once before the conflict-retrying update.
enum Wanted {
    Replace(Value),
    Json(Value),
    Merge(Value),
}

/// What a request does with a Scale.
pub enum ScaleWrite<'a> {
    /// `PUT`: the body is the new Scale.
    Replace(Value),
    /// `PATCH`: the patch applies to the current Scale.
    Patch(PatchType, &'a [u8]),
}

impl Engine {
    /// The current Scale of an object.
    pub async fn get_scale(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
    ) -> ApiResult<Value> {
        let paths = scale_paths(info)?;
        let obj = self.get(info, ns, name).await?;
        Ok(view(paths, &obj))
    }

    /// Writes a Scale (replace or patch) and returns the Scale of the stored object.
    pub async fn write_scale(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        write: ScaleWrite<'_>,
        opts: &WriteOptions,
    ) -> ApiResult<Value> {
        let paths = scale_paths(info)?.clone();
        let ns = if info.namespaced { ns } else { None };
        let patch = |body: &[u8]| {
            serde_json::from_slice::<Value>(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
        };
        let wanted = match write {
            ScaleWrite::Replace(body) => Wanted::Replace(body),
            ScaleWrite::Patch(PatchType::Apply, _) => {
                return Err(ApiError::unsupported_media_type(
                    "application/apply-patch+yaml",
                ));
            }
            ScaleWrite::Patch(PatchType::Json, body) => Wanted::Json(patch(body)?),
            ScaleWrite::Patch(PatchType::Merge | PatchType::Strategic, body) => {
                Wanted::Merge(patch(body)?)
            }
        };
        let written = self
            .guaranteed_update(info, ns, name, Some("scale"), opts, |cur| {
                let cur = cur.ok_or_else(|| ApiError::not_found(&target(info, name)))?;
                let current = view(&paths, cur);
                let wanted = match &wanted {
                    Wanted::Replace(body) => {
                        let want_rv = meta_str(body, "resourceVersion").filter(|v| !v.is_empty());
                        if want_rv.is_some() && want_rv != meta_str(&current, "resourceVersion") {
                            return Err(ApiError::stale(&target(info, name)));
                        }
                        body.clone()
                    }
                    Wanted::Json(ops) => flotilla_apimachinery::patch::json_patch(&current, ops)
                        .map_err(crate::patching::json_patch_error)?,
                    // A Scale has no lists: a strategic merge patch is a merge patch.
                    Wanted::Merge(merge) => {
                        flotilla_apimachinery::patch::merge_patch(&current, merge)
                    }
                };
                let mut candidate = write_back(&paths, name, cur, &wanted)?;
                // The write is conditional on the revision the Scale was read at only when
                // the client sent one.
                if let Some(meta) = candidate
                    .pointer_mut("/metadata")
                    .and_then(Value::as_object_mut)
                {
                    meta.remove("resourceVersion");
                }
                Ok(candidate)
            })
            .await?;
        Ok(view(&paths, &written.object))
    }
}

fn scale_paths(info: &ResourceInfo) -> ApiResult<&ScalePaths> {
    info.scale.as_ref().ok_or_else(ApiError::no_route)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment_paths() -> ScalePaths {
        ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".spec.selector".into()),
        }
    }

    #[test]
    fn a_deployment_scale_shows_its_replicas_and_selector() {
        let d = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                "labels": {"x": "y"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "tier": "fe"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]}]}},
            "status": {"replicas": 2}});
        let s = view(&deployment_paths(), &d);
        assert_eq!(s["kind"], "Scale");
        assert_eq!(s["apiVersion"], "autoscaling/v1");
        assert_eq!(
            s["metadata"],
            json!({"name": "web", "namespace": "ns", "uid": "u", "resourceVersion": "7"})
        );
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=web,env in (a,b),tier=fe");
    }

    #[test]
    fn missing_counts_are_zero_and_map_selectors_print_sorted() {
        let rc = json!({"metadata": {"name": "rc"}, "spec": {"selector": {"b": "2", "a": "1"}}});
        let s = view(&deployment_paths(), &rc);
        assert_eq!(s["spec"], json!({}));
        assert_eq!(s["status"], json!({"replicas": 0, "selector": "a=1,b=2"}));
        let crd_paths = ScalePaths {
            spec_replicas: ".spec.size".into(),
            status_replicas: ".status.size".into(),
            label_selector: Some(".status.selector".into()),
        };
        let cr = json!({"metadata": {"name": "c"}, "spec": {"size": 4}, "status": {"size": 1, "selector": "app=c"}});
        assert_eq!(
            view(&crd_paths, &cr)["status"],
            json!({"replicas": 1, "selector": "app=c"})
        );
    }

    #[test]
    fn writing_back_sets_only_the_replica_path() {
        let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3, "template": {}}});
        let out = write_back(
            &deployment_paths(),
            "web",
            &d,
            &json!({"spec": {"replicas": 5}}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"metadata": {"name": "web"}, "spec": {"replicas": 5, "template": {}}})
        );
        let paths = ScalePaths {
            spec_replicas: ".spec.deep.count".into(),
            status_replicas: ".status.count".into(),
            label_selector: None,
        };
        let out = write_back(
            &paths,
            "c",
            &json!({"metadata": {}}),
            &json!({"spec": {"replicas": 2}}),
        )
        .unwrap();
        assert_eq!(out["spec"]["deep"]["count"], 2);
    }

    #[test]
    fn a_bad_scale_is_refused_naming_the_field() {
        let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3}});
        let negative = write_back(
            &deployment_paths(),
            "web",
            &d,
            &json!({"spec": {"replicas": -1}}),
        )
        .unwrap_err();
        assert_eq!(negative.code, 422);
        assert_eq!(negative.causes[0]["field"], "spec.replicas");
        let text = write_back(
            &deployment_paths(),
            "web",
            &d,
            &json!({"spec": {"replicas": "3"}}),
        )
        .unwrap_err();
        assert_eq!(text.code, 400);
        assert!(text.message.contains("spec.replicas"), "{}", text.message);
    }
}
