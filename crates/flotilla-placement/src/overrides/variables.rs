//! The variables of JSON patch override values, filled in per cluster: in every string of a
//! value, however deeply nested, `${MEMBER-CLUSTER-NAME}` becomes the cluster's name and
//! `${MEMBER-CLUSTER-LABEL-KEY-<key>}` the value of its label `key`. Object keys and other
//! text are left as written.

use serde_json::Value;

use super::ClusterView;
use super::error::Problem;

/// The variable replaced by the member cluster's name.
pub const CLUSTER_NAME_VARIABLE: &str = "${MEMBER-CLUSTER-NAME}";
/// The start of the variable replaced by a label of the member cluster:
/// `${MEMBER-CLUSTER-LABEL-KEY-<key>}`.
pub const CLUSTER_LABEL_VARIABLE_PREFIX: &str = "${MEMBER-CLUSTER-LABEL-KEY-";

/// `value` with the variables of every string filled in for `cluster`.
pub(crate) fn substitute(value: &Value, cluster: ClusterView<'_>) -> Result<Value, Problem> {
    Ok(match value {
        Value::String(text) => Value::String(substitute_text(text, cluster)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| substitute(item, cluster))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, item)| Ok((key.clone(), substitute(item, cluster)?)))
                .collect::<Result<_, Problem>>()?,
        ),
        other => other.clone(),
    })
}

/// One string, scanned once from left to right (a substituted value is never scanned again).
fn substitute_text(text: &str, cluster: ClusterView<'_>) -> Result<String, Problem> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        if let Some(after) = tail.strip_prefix(CLUSTER_NAME_VARIABLE) {
            out.push_str(cluster.name);
            rest = after;
        } else if let Some(after) = tail.strip_prefix(CLUSTER_LABEL_VARIABLE_PREFIX) {
            let end = after
                .find('}')
                .ok_or_else(|| Problem::UnclosedVariable(text.to_string()))?;
            let key = &after[..end];
            let value = cluster
                .labels
                .get(key)
                .ok_or_else(|| Problem::MissingLabel {
                    key: key.to_string(),
                    cluster: cluster.name.to_string(),
                })?;
            out.push_str(value);
            rest = &after[end + 1..];
        } else {
            out.push_str("${");
            rest = &tail[2..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn variables_table() {
        let labels = BTreeMap::from([
            ("region".to_string(), "east".to_string()),
            ("env".to_string(), "prod".to_string()),
        ]);
        let cluster = ClusterView {
            name: "member-1",
            labels: &labels,
        };
        let cases = [
            (json!("${MEMBER-CLUSTER-NAME}"), Ok(json!("member-1"))),
            (
                json!("${MEMBER-CLUSTER-NAME}-${MEMBER-CLUSTER-LABEL-KEY-region}"),
                Ok(json!("member-1-east")),
            ),
            (
                json!({"a": ["x-${MEMBER-CLUSTER-LABEL-KEY-env}", 3, null], "${MEMBER-CLUSTER-NAME}": true}),
                Ok(json!({"a": ["x-prod", 3, null], "${MEMBER-CLUSTER-NAME}": true})),
            ),
            (json!("$${HOME} ${OTHER}"), Ok(json!("$${HOME} ${OTHER}"))),
            (json!(42), Ok(json!(42))),
            (
                json!("${MEMBER-CLUSTER-LABEL-KEY-zone}"),
                Err(Problem::MissingLabel {
                    key: "zone".into(),
                    cluster: "member-1".into(),
                }),
            ),
            (
                json!(["${MEMBER-CLUSTER-LABEL-KEY-region"]),
                Err(Problem::UnclosedVariable(
                    "${MEMBER-CLUSTER-LABEL-KEY-region".into(),
                )),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(substitute(&value, cluster), want, "{value}");
        }
    }
}
