//! Pure object-metadata rules shared by every kind: names, labels, annotations, finalizers,
//! immutable system fields, generation bumping and the spec/status split.

use std::sync::LazyLock;

use flotilla_apimachinery::FieldError;
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::registry::ResourceInfo;

static DNS_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").expect("regex"));
static DNS_1035_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z]([-a-z0-9]*[a-z0-9])?$").expect("regex"));
static DNS_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$").expect("regex")
});
static QUALIFIED_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$").expect("regex"));
static LABEL_VALUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$").expect("regex"));

const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS_1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Total size limit of all annotations, as kube-apiserver enforces.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// Which name rule a kind's object names follow.
fn name_errors(info: &ResourceInfo, name: &str) -> Option<String> {
    if info.group == "rbac.authorization.k8s.io" {
        // Path-segment names (e.g. `system:controller:foo`).
        return if name == "." || name == ".." {
            Some(format!("may not be '{name}'"))
        } else if name.contains('/') || name.contains('%') {
            Some("may not contain '/' or '%'".into())
        } else {
            None
        };
    }
    let (re, msg, max): (&Regex, &str, usize) = match (info.group.as_str(), info.plural.as_str()) {
        ("", "namespaces") => (&DNS_LABEL, DNS_LABEL_MSG, 63),
        ("", "services") => (&DNS_1035_LABEL, DNS_1035_MSG, 63),
        _ => (&DNS_SUBDOMAIN, DNS_SUBDOMAIN_MSG, 253),
    };
    if name.len() > max {
        Some(format!("must be no more than {max} characters"))
    } else if !re.is_match(name) {
        Some(msg.to_string())
    } else {
        None
    }
}

/// Validates a qualified name (`prefix/name` or `name`) such as a label key or finalizer.
pub fn qualified_name_error(value: &str) -> Option<String> {
    let (prefix, name) = match value.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, value),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            return Some("prefix part must be non-empty".into());
        }
        if p.len() > 253 || !DNS_SUBDOMAIN.is_match(p) {
            return Some(format!("prefix part {DNS_SUBDOMAIN_MSG}"));
        }
    }
    if name.is_empty() {
        return Some("name part must be non-empty".into());
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 characters".into());
    }
    if !QUALIFIED_NAME.is_match(name) {
        return Some(QUALIFIED_NAME_MSG.into());
    }
    None
}

/// The metadata map of an object (empty if absent or not an object).
pub fn metadata(obj: &Value) -> &Map<String, Value> {
    obj.as_object().map_or(&EMPTY, metadata_of)
}

/// An empty map to borrow when an object has no metadata.
static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

/// A string field of `metadata`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    metadata(obj).get(field).and_then(Value::as_str)
}

/// Mutable metadata, created if absent.
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

/// The strings of a JSON list (non-strings and non-lists yield nothing).
pub fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The object's finalizers.
pub fn finalizers(obj: &Value) -> Vec<String> {
    string_list(metadata(obj).get("finalizers"))
}

/// Replaces the object's finalizers (removing the field when empty).
pub fn set_finalizers(obj: &mut Value, list: &[String]) {
    let meta = metadata_mut(obj);
    if list.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(list));
    }
}

/// Removes one finalizer from the object.
pub fn remove_finalizer(obj: &mut Value, finalizer: &str) {
    let kept: Vec<String> = finalizers(obj)
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    set_finalizers(obj, &kept);
}

/// Validates user-settable metadata: name, labels, annotations, finalizers, ownerReferences.
pub fn validate_metadata(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let meta = metadata(obj);
    match meta.get("name").and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        )),
        Some(name) => {
            if let Some(why) = name_errors(info, name) {
                errs.push(FieldError::invalid("metadata.name", json!(name), why));
            }
        }
    }
    if let Some(labels) = meta.get("labels") {
        match labels.as_object() {
            Some(labels) => {
                for (k, v) in labels {
                    if let Some(why) = qualified_name_error(k) {
                        errs.push(FieldError::invalid("metadata.labels", json!(k), why));
                    }
                    match v.as_str() {
                        Some(s) if s.len() > 63 => errs.push(FieldError::invalid(
                            "metadata.labels",
                            json!(s),
                            "must be no more than 63 characters",
                        )),
                        Some(s) if !LABEL_VALUE.is_match(s) => errs.push(FieldError::invalid(
                            "metadata.labels",
                            json!(s),
                            LABEL_VALUE_MSG,
                        )),
                        Some(_) => {}
                        None => errs.push(FieldError::invalid(
                            format!("metadata.labels[{k}]"),
                            v.clone(),
                            "must be a string",
                        )),
                    }
                }
            }
            None if labels.is_null() => {}
            None => errs.push(FieldError::invalid(
                "metadata.labels",
                labels.clone(),
                "must be a map of strings",
            )),
        }
    }
    if let Some(ann) = meta.get("annotations") {
        match ann.as_object() {
            Some(ann) => {
                let mut total = 0;
                for (k, v) in ann {
                    if let Some(why) = qualified_name_error(&k.to_lowercase()) {
                        errs.push(FieldError::invalid("metadata.annotations", json!(k), why));
                    }
                    match v.as_str() {
                        Some(s) => total += k.len() + s.len(),
                        None => errs.push(FieldError::invalid(
                            format!("metadata.annotations[{k}]"),
                            v.clone(),
                            "must be a string",
                        )),
                    }
                }
                if total > ANNOTATIONS_LIMIT {
                    errs.push(FieldError::new(
                        flotilla_apimachinery::FieldErrorType::TooLong,
                        "metadata.annotations",
                        None,
                        format!("may not be more than {ANNOTATIONS_LIMIT} bytes"),
                    ));
                }
            }
            None if ann.is_null() => {}
            None => errs.push(FieldError::invalid(
                "metadata.annotations",
                ann.clone(),
                "must be a map of strings",
            )),
        }
    }
    if let Some(f) = meta.get("finalizers").filter(|f| !f.is_null()) {
        match f.as_array() {
            Some(list) => {
                for (i, item) in list.iter().enumerate() {
                    match item.as_str() {
                        Some(s) => {
                            if let Some(why) = qualified_name_error(s) {
                                errs.push(FieldError::invalid(
                                    format!("metadata.finalizers[{i}]"),
                                    json!(s),
                                    why,
                                ));
                            }
                        }
                        None => errs.push(FieldError::invalid(
                            format!("metadata.finalizers[{i}]"),
                            item.clone(),
                            "must be a string",
                        )),
                    }
                }
            }
            None => errs.push(FieldError::invalid(
                "metadata.finalizers",
                f.clone(),
                "must be a list of strings",
            )),
        }
    }
    if let Some(refs) = meta.get("ownerReferences").filter(|r| !r.is_null()) {
        match refs.as_array() {
            Some(list) => {
                for (i, r) in list.iter().enumerate() {
                    for field in ["apiVersion", "kind", "name", "uid"] {
                        if r.get(field)
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            errs.push(FieldError::required(
                                format!("metadata.ownerReferences[{i}].{field}"),
                                "",
                            ));
                        }
                    }
                }
                let controllers = list
                    .iter()
                    .filter(|r| r["controller"].as_bool() == Some(true))
                    .count();
                if controllers > 1 {
                    errs.push(FieldError::invalid(
                        "metadata.ownerReferences",
                        refs.clone(),
                        "Only one reference can have Controller set to true",
                    ));
                }
            }
            None => errs.push(FieldError::invalid(
                "metadata.ownerReferences",
                refs.clone(),
                "must be a list",
            )),
        }
    }
    errs
}

/// The part of an object that counts as "spec" for generation bumping: everything except
/// `metadata`, `status`, `apiVersion` and `kind`.
fn spec_part(obj: &Value) -> Map<String, Value> {
    obj.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether an update changed anything that bumps `metadata.generation`.
pub fn spec_changed(old: &Value, new: &Value) -> bool {
    spec_part(old) != spec_part(new)
}

/// Whether two versions of an object are the same apart from `managedFields` and
/// `resourceVersion` (a write that changes nothing else is a no-op), compared without copying.
pub fn same_content(a: &Value, b: &Value) -> bool {
    fn same_map(a: &Map<String, Value>, b: &Map<String, Value>, ignore: &[&str]) -> bool {
        let kept =
            |m: &Map<String, Value>| m.keys().filter(|k| !ignore.contains(&k.as_str())).count();
        kept(a) == kept(b)
            && a.iter()
                .filter(|(k, _)| !ignore.contains(&k.as_str()))
                .all(|(k, v)| b.get(k) == Some(v))
    }
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            same_map(a, b, &["metadata"])
                && same_map(
                    metadata_of(a),
                    metadata_of(b),
                    &["managedFields", "resourceVersion"],
                )
        }
        _ => a == b,
    }
}

fn metadata_of(o: &Map<String, Value>) -> &Map<String, Value> {
    o.get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&EMPTY)
}

/// Carries the server-owned metadata of `old` into `new` for an update, so clients cannot
/// change uid, creationTimestamp, generation, deletion fields or managed system fields.
pub fn carry_system_metadata(old: &Value, new: &mut Value) {
    let old_meta = metadata(old).clone();
    let meta = metadata_mut(new);
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(field) {
            Some(v) => {
                meta.insert(field.into(), v.clone());
            }
            None => {
                meta.remove(field);
            }
        }
    }
    for field in ["name", "namespace"] {
        if let Some(v) = old_meta.get(field) {
            meta.insert(field.into(), v.clone());
        }
    }
    if let Some(g) = old_meta.get("generateName") {
        meta.insert("generateName".into(), g.clone());
    }
}

/// Keeps only the status of `new` on top of `old` (writes to the `status` subresource), or
/// keeps `old`'s status under `new`'s spec (writes to the main endpoint of a kind with a status
/// subresource). Takes `new` by value so the half it keeps is moved, not copied; of `old`
/// only the half kept is copied (a status write copies neither status). A status write keeps
/// `old`'s metadata but for the fields `writable` names (kube's built-in kinds take
/// `annotations` from a status write; custom resources nothing).
pub fn split_status(old: &Value, new: Value, status_write: bool, writable: &[&str]) -> Value {
    let (Some(old_fields), Value::Object(mut new_fields)) = (old.as_object(), new) else {
        return old.clone();
    };
    if !status_write {
        match old_fields.get("status") {
            Some(status) => new_fields.insert("status".to_owned(), status.clone()),
            None => new_fields.shift_remove("status"),
        };
        return Value::Object(new_fields);
    }
    // A status write changes the status and nothing else: like kube-apiserver's
    // ResetObjectMetaForStatus, labels, annotations, finalizers and owner references stay as
    // stored (the field manager's managedFields entry is recorded afterwards). Both go where
    // `old` has them, in its field order.
    let mut status = new_fields.shift_remove("status");
    let mut kept = old_fields
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let (Some(written), Some(kept)) = (
        new_fields.get("metadata").and_then(Value::as_object),
        kept.as_object_mut(),
    ) {
        for field in writable {
            match written.get(*field) {
                Some(v) => kept.insert((*field).to_string(), v.clone()),
                None => kept.shift_remove(*field),
            };
        }
    }
    let mut metadata = Some(kept);
    let mut out = Map::with_capacity(old_fields.len() + 1);
    for (name, value) in old_fields {
        let kept = match name.as_str() {
            "metadata" => metadata.take(),
            "status" => status.take(),
            _ => Some(value.clone()),
        };
        if let Some(kept) = kept {
            out.insert(name.clone(), kept);
        }
    }
    for (name, rest) in [("metadata", metadata), ("status", status)] {
        if let Some(rest) = rest {
            out.insert(name.to_owned(), rest);
        }
    }
    Value::Object(out)
}

/// Letters kube-apiserver uses for `generateName` suffixes (no vowels, no confusable digits).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `generateName` + 5 random characters, as kube-apiserver generates names.
pub fn generated_name(prefix: &str, random: u128) -> String {
    let mut r = random;
    let mut name = prefix.chars().take(253 - 5).collect::<String>();
    for _ in 0..5 {
        name.push(NAME_ALPHABET[(r % NAME_ALPHABET.len() as u128) as usize] as char);
        r /= NAME_ALPHABET.len() as u128;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resources_of;

    fn info(group: &str, plural: &str) -> ResourceInfo {
        let crd = json!({"spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "kind": "K"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
        resources_of(&crd, true).remove(0)
    }

    #[test]
    fn names_follow_the_kinds_rule() {
        let cm = info("", "configmaps");
        assert!(validate_metadata(&cm, &json!({"metadata": {"name": "a.b-c"}})).is_empty());
        let errs = validate_metadata(&cm, &json!({"metadata": {"name": "Bad_Name"}}));
        assert_eq!(errs[0].field, "metadata.name");
        assert!(errs[0].message().starts_with(
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
        ));
        let ns = info("", "namespaces");
        assert!(!validate_metadata(&ns, &json!({"metadata": {"name": "a.b"}})).is_empty());
        let role = info("rbac.authorization.k8s.io", "clusterroles");
        assert!(
            validate_metadata(
                &role,
                &json!({"metadata": {"name": "system:aggregate-to-admin"}})
            )
            .is_empty()
        );
        assert_eq!(
            validate_metadata(&cm, &json!({"metadata": {}}))[0].message(),
            "metadata.name: Required value: name or generateName is required"
        );
    }

    #[test]
    fn labels_annotations_finalizers_are_checked() {
        let cm = info("", "configmaps");
        let obj = json!({"metadata": {"name": "x", "labels": {"good/key": "v", "-bad": "v", "k": "bad value"},
            "annotations": {"a": 1}, "finalizers": ["example.com/f", "bad finalizer"]}});
        let fields: Vec<_> = validate_metadata(&cm, &obj)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            vec![
                "metadata.labels",
                "metadata.labels",
                "metadata.annotations[a]",
                "metadata.finalizers[1]"
            ]
        );
    }

    #[test]
    fn generation_bumps_on_spec_only() {
        let a = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"x": 1}, "status": {"y": 1}});
        let mut b = a.clone();
        b["metadata"]["labels"]["a"] = json!("c");
        b["status"]["y"] = json!(2);
        assert!(!spec_changed(&a, &b));
        b["spec"]["x"] = json!(2);
        assert!(spec_changed(&a, &b));
        // Kinds without spec (ConfigMap data) bump too.
        assert!(spec_changed(
            &json!({"data": {"a": "1"}}),
            &json!({"data": {"a": "2"}})
        ));
    }

    #[test]
    fn status_split_keeps_the_right_half() {
        let old = json!({"metadata": {"name": "x"}, "spec": {"a": 1}, "status": {"s": 1}});
        let new = json!({"metadata": {"name": "x"}, "spec": {"a": 2}, "status": {"s": 2}});
        assert_eq!(
            split_status(&old, new.clone(), true, &[]),
            json!({"metadata": {"name": "x"}, "spec": {"a": 1}, "status": {"s": 2}})
        );
        assert_eq!(
            split_status(&old, new, false, &[]),
            json!({"metadata": {"name": "x"}, "spec": {"a": 2}, "status": {"s": 1}})
        );
        // A status write keeps `old`'s field order, adds a status `old` lacked, and drops
        // the status when `new` has none; a write to the main endpoint likewise.
        let order =
            |value: &Value| -> Vec<String> { value.as_object().unwrap().keys().cloned().collect() };
        let old = json!({"kind": "K", "metadata": {"name": "x"}, "spec": {"a": 1}});
        let new = json!({"status": {"s": 2}, "spec": {"a": 2}, "metadata": {"name": "y"}});
        let written = split_status(&old, new, true, &[]);
        assert_eq!(order(&written), ["kind", "metadata", "spec", "status"]);
        assert_eq!(written["metadata"]["name"], "x");
        let unset = split_status(&written, json!({"metadata": {"name": "x"}}), true, &[]);
        assert_eq!(
            unset,
            json!({"kind": "K", "metadata": {"name": "x"}, "spec": {"a": 1}})
        );
        // A status write cannot relabel, annotate or re-own the object.
        let labelled = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "status": {}});
        let relabel = json!({"metadata": {"name": "x", "labels": {"a": "2", "b": "1"},
            "annotations": {"n": "v"}, "finalizers": ["f"], "ownerReferences": [{"uid": "u"}]},
            "status": {"s": 1}});
        assert_eq!(
            split_status(&labelled, relabel.clone(), true, &["annotations"]),
            json!({"metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"n": "v"}},
                "status": {"s": 1}})
        );
        assert_eq!(
            split_status(&labelled, relabel, true, &[]),
            json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "status": {"s": 1}})
        );
        let main = split_status(
            &old,
            json!({"metadata": {}, "spec": {}, "status": {"s": 9}}),
            false,
            &[],
        );
        assert_eq!(main, json!({"metadata": {}, "spec": {}}));
    }

    #[test]
    fn same_content_ignores_only_managed_fields_and_resource_version() {
        let a = json!({"metadata": {"name": "x", "resourceVersion": "1", "managedFields": [1]}, "data": {"k": "v"}});
        let b = json!({"metadata": {"resourceVersion": "2", "name": "x"}, "data": {"k": "v"}});
        assert!(same_content(&a, &b));
        let c = json!({"metadata": {"name": "x", "labels": {"l": "1"}}, "data": {"k": "v"}});
        assert!(!same_content(&a, &c));
        let d = json!({"metadata": {"name": "x"}, "data": {"k": "w"}});
        assert!(!same_content(&b, &d));
        assert!(!same_content(
            &b,
            &json!({"metadata": {"name": "x"}, "data": {"k": "v"}, "extra": 1})
        ));
    }

    #[test]
    fn generated_names_use_kube_alphabet() {
        let n = generated_name("run-", 123456789);
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("run-"));
        assert!(n[4..].bytes().all(|b| NAME_ALPHABET.contains(&b)));
    }
}
