//! The rolling update's numbers: the target cluster count `N`, and `maxUnavailable` and
//! `maxSurge` as cluster counts (absolute, or a percentage of `N` rounded up; both default to
//! 25%), and the unavailable period (default 60 s). KubeFleet allows `maxUnavailable: 0`
//! (moves between clusters then never lose availability, but in-place updates cannot start),
//! so no minimum is imposed.

use std::fmt;

use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::strategy::RollingUpdateConfig;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::SignedDuration;

/// The default of `maxUnavailable` and `maxSurge`.
const DEFAULT_PERCENT: &str = "25%";
/// The default of `unavailablePeriodSeconds`.
const DEFAULT_UNAVAILABLE_PERIOD_SECONDS: i32 = 60;

/// The limits of one rollout round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `N`: how many clusters the placement targets.
    pub target: usize,
    /// How many of the `N` clusters may be unavailable.
    pub max_unavailable: usize,
    /// How many clusters may hold the resources above `N`.
    pub max_surge: usize,
}

impl Limits {
    /// The limits `config` (defaults when `None`) sets for `target` clusters.
    pub fn resolve(
        config: Option<&RollingUpdateConfig>,
        target: usize,
    ) -> Result<Limits, InvalidLimit> {
        let field = |name: &'static str, value: Option<&IntOrString>| {
            let default = IntOrString::String(DEFAULT_PERCENT.to_string());
            let value = value.unwrap_or(&default);
            scale(value, target).ok_or_else(|| InvalidLimit {
                field: name,
                value: match value {
                    IntOrString::Int(i) => i.to_string(),
                    IntOrString::String(s) => s.clone(),
                },
            })
        };
        Ok(Limits {
            target,
            max_unavailable: field(
                "maxUnavailable",
                config.and_then(|c| c.max_unavailable.as_ref()),
            )?,
            max_surge: field("maxSurge", config.and_then(|c| c.max_surge.as_ref()))?,
        })
    }
}

/// A `maxUnavailable` or `maxSurge` that is neither a non-negative count nor a percentage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidLimit {
    /// `maxUnavailable` or `maxSurge`.
    pub field: &'static str,
    /// The value as written.
    pub value: String,
}

impl fmt::Display for InvalidLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rollingUpdate.{} {:?} is neither a non-negative number nor a percentage",
            self.field, self.value
        )
    }
}

impl std::error::Error for InvalidLimit {}

/// `N` for `policy`: PickAll targets every cluster the scheduler picked (`scheduled_or_bound`,
/// the placement's Scheduled and Bound bindings), PickFixed its named clusters, PickN its
/// `numberOfClusters`.
pub fn target_number(policy: &PlacementPolicy, scheduled_or_bound: usize) -> usize {
    match policy.placement_type.unwrap_or_default() {
        PlacementType::PickAll => scheduled_or_bound,
        PlacementType::PickFixed => policy.cluster_names.as_ref().map_or(0, Vec::len),
        PlacementType::PickN => policy
            .number_of_clusters
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0),
    }
}

/// How long resources whose availability cannot be tracked must have been applied before
/// they count as available (`unavailablePeriodSeconds`, default 60, never negative).
pub fn unavailable_period(config: Option<&RollingUpdateConfig>) -> SignedDuration {
    let seconds = config
        .and_then(|c| c.unavailable_period_seconds)
        .unwrap_or(DEFAULT_UNAVAILABLE_PERIOD_SECONDS)
        .max(0);
    SignedDuration::from_secs(i64::from(seconds))
}

/// `value` as a count of `total`: an absolute count, or a percentage rounded up. A string of
/// digits is a count too (the API pattern admits it).
fn scale(value: &IntOrString, total: usize) -> Option<usize> {
    match value {
        IntOrString::Int(n) => usize::try_from(*n).ok(),
        IntOrString::String(s) => match s.strip_suffix('%') {
            Some(percent) => {
                let percent: usize = percent.parse().ok()?;
                Some((percent.checked_mul(total)?).div_ceil(100))
            }
            None => s.parse().ok(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_counts_and_rounds_percentages_up() {
        let s = |v: &str| IntOrString::String(v.to_string());
        let cases = [
            (s("25%"), 4, Some(1)),
            (s("25%"), 5, Some(2)),
            (s("25%"), 1, Some(1)),
            (s("25%"), 0, Some(0)),
            (s("0%"), 10, Some(0)),
            (s("100%"), 7, Some(7)),
            (s("33%"), 10, Some(4)),
            (s("3"), 10, Some(3)),
            (IntOrString::Int(2), 10, Some(2)),
            (IntOrString::Int(12), 10, Some(12)),
            (IntOrString::Int(-1), 10, None),
            (s("x%"), 10, None),
            (s("-5%"), 10, None),
            (s("ten"), 10, None),
        ];
        for (value, total, expected) in cases {
            assert_eq!(scale(&value, total), expected, "{value:?} of {total}");
        }
    }
}
