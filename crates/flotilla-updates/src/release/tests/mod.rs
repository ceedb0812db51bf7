//! Tests of release and version selection: tables per concern, then properties.

mod channel;
mod images;
mod properties;
mod run_name;
mod selection;
mod support;
mod trigger;
mod verdict;
mod versions;

use flotilla_api::updates::catalog::RegionAvailability;
use flotilla_api::updates::{KubernetesVersionSpec, NodeImageVersionSpec};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::KubeVersion;

/// Day `n` (days since the epoch), the unit of time in these tests.
pub(crate) fn day(n: i64) -> Timestamp {
    Timestamp::from_second(n * 86_400).expect("in range")
}

/// Availability in each `(region, day)`.
pub(crate) fn availability(regions: &[(&str, i64)]) -> Vec<RegionAvailability> {
    regions
        .iter()
        .map(|&(region, d)| RegionAvailability {
            region: region.to_string(),
            available_at: Time(day(d)),
        })
        .collect()
}

/// A GA Kubernetes release without long-term support.
pub(crate) fn ga(version: &str, regions: &[(&str, i64)]) -> KubernetesVersionSpec {
    KubernetesVersionSpec {
        version: version.to_string(),
        preview: false,
        long_term_support: false,
        availability: availability(regions),
    }
}

/// A preview Kubernetes release.
pub(crate) fn preview(version: &str, regions: &[(&str, i64)]) -> KubernetesVersionSpec {
    KubernetesVersionSpec {
        preview: true,
        ..ga(version, regions)
    }
}

/// A GA Kubernetes release with long-term support.
pub(crate) fn lts(version: &str, regions: &[(&str, i64)]) -> KubernetesVersionSpec {
    KubernetesVersionSpec {
        long_term_support: true,
        ..ga(version, regions)
    }
}

/// A node image release.
pub(crate) fn image(family: &str, version: &str, regions: &[(&str, i64)]) -> NodeImageVersionSpec {
    NodeImageVersionSpec {
        family: family.to_string(),
        version: version.to_string(),
        availability: availability(regions),
    }
}

/// A version from test text.
pub(crate) fn v(text: &str) -> KubeVersion {
    KubeVersion::parse(text).expect("test version")
}
