//! Printer columns of the built-in kinds, as kube-apiserver's table printers define them: a
//! JSONPath, or a computed `printer:` cell where no JSONPath can express the value.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition;

/// A printer column: name, type (`string`, `integer`, `date`, ...), JSONPath, priority.
pub(crate) type Column = (&'static str, &'static str, &'static str, i32);

/// The `Age` column: kube's table printers show it as a string cell (`5m`).
pub(crate) const AGE: Column = ("Age", "string", "printer:age", 0);

/// `kubectl get` prints RBAC objects and CRDs with their creation time, not an age.
pub(crate) const CREATED_AT: Column = (
    "Created At",
    "date",
    "printer:text:.metadata.creationTimestamp",
    0,
);

/// Builds the CRD column definitions.
pub(crate) fn definitions(columns: &[Column]) -> Vec<CustomResourceColumnDefinition> {
    columns
        .iter()
        .map(
            |&(name, type_, json_path, priority)| CustomResourceColumnDefinition {
                name: name.into(),
                type_: type_.into(),
                json_path: json_path.into(),
                priority: (priority != 0).then_some(priority),
                description: None,
                // A column of names (`printer:name…`) carries kube's `name` format.
                format: json_path
                    .starts_with("printer:name")
                    .then(|| "name".to_string()),
            },
        )
        .collect()
}
