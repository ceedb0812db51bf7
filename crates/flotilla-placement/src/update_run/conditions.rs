//! Reading and setting the `metav1.Condition`s of a run's status parts, which hold them as
//! `Option<Vec<Condition>>`.

use flotilla_api::conditions::{NewCondition, find, set_condition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

/// Where a condition is written: the run's generation and the time of the pass.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    /// The run's `metadata.generation`.
    pub generation: i64,
    /// Now.
    pub now: Timestamp,
}

impl Stamp {
    /// Sets condition `type_` in `conditions`.
    pub fn set(
        self,
        conditions: &mut Option<Vec<Condition>>,
        type_: &str,
        status: &str,
        reason: &str,
        message: impl Into<String>,
    ) {
        set_condition(
            conditions.get_or_insert_with(Vec::new),
            NewCondition {
                type_,
                status,
                reason,
                message: message.into(),
                observed_generation: Some(self.generation),
            },
            self.now,
        );
    }
}

/// The condition `type_` of `conditions`, if set.
pub(crate) fn get<'c>(
    conditions: &'c Option<Vec<Condition>>,
    type_: &str,
) -> Option<&'c Condition> {
    conditions.as_deref().and_then(|c| find(c, type_))
}

/// Whether condition `type_` has `status`.
pub(crate) fn has(conditions: &Option<Vec<Condition>>, type_: &str, status: &str) -> bool {
    get(conditions, type_).is_some_and(|c| c.status == status)
}
