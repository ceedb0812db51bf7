//! Crate-level tests: the seed examples, the generated definitions, and the validation rules.

mod crds;
mod node_rules;
mod rules;
mod schema_check;
mod seeds;
mod update_rules;

use std::sync::LazyLock;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::{core_crds, fleet_crds};

/// What a hub with no user CRDs serves (the fleet and core kinds), built once for all tests:
/// the [`crate::ServedKinds`] rules are checked against.
fn served() -> &'static Vec<CustomResourceDefinition> {
    static SERVED: LazyLock<Vec<CustomResourceDefinition>> = LazyLock::new(|| {
        let mut crds = fleet_crds();
        crds.extend(core_crds());
        crds
    });
    &SERVED
}
