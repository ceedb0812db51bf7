//! The fleet definition: which simulated members `flotilla up` runs, from a YAML file
//! (`--fleet FILE`, [`Fleet::from_yaml`]), a generated fleet (`--members N`,
//! [`Fleet::generated`]) or the default six-member fleet ([`Fleet::default_fleet`]).
//!
//! A fleet file is one YAML document, `members:` followed by a list of [`MemberSpec`]s in the
//! camelCase field names of the types below, and optionally `catalog:`, the releases the
//! simulated cloud offers ([`ReleaseCatalog`]; without it, `flotilla up` uses the built-in
//! catalog of [`crate::releases`]). `examples/fleets/fleet.yaml` is a documented example.
//! Everything here is pure: the caller reads the file and passes its text.
//!
//! The region labels of a member (`topology.kubernetes.io/region`, `fleet.azure.com/location`)
//! are not stored in the fleet: the caller adds them from `region`.

mod builtin;
mod error;
mod validate;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use builtin::default_image_family;
pub use error::{FleetError, MemberRef, Position, Violation};

/// Labels Flotilla puts on every member from its `region`; a fleet may not set them itself.
pub const REGION_LABEL_KEYS: [&str; 2] =
    ["topology.kubernetes.io/region", "fleet.azure.com/location"];

/// A whole fleet of simulated members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fleet {
    /// The members, in order.
    pub members: Vec<MemberSpec>,
    /// The Kubernetes versions and node images the simulated cloud offers; none: the built-in
    /// catalog ([`crate::releases::builtin`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<ReleaseCatalog>,
}

/// One simulated member cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberSpec {
    /// Member name: a DNS label; also the MemberCluster's name.
    pub name: String,
    /// Cloud region, e.g. `eastus`.
    pub region: String,
    /// Labels put on the MemberCluster (besides the region labels Flotilla adds).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Control-plane Kubernetes version, e.g. `1.30.3` (a leading `v` is accepted).
    pub kubernetes_version: String,
    /// Node pools.
    pub node_pools: Vec<NodePoolSpec>,
    /// Property values that add to or override what the member agent reports (name → quantity).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
    /// Planned maintenance windows (used by cluster update orchestration).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintenance_windows: Vec<MaintenanceWindow>,
    /// The cluster is stopped (as an AKS cluster can be): every upgrade of it fails at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// How upgrades of the member behave: step durations and simulated failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<UpgradeBehaviour>,
}

/// How upgrades of a simulated member behave.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpgradeBehaviour {
    /// Simulated minutes a control plane upgrade takes, 0 to 1440; default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_minutes: Option<u32>,
    /// Simulated minutes upgrading one node takes, 0 to 1440; default 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_minutes: Option<u32>,
    /// Upgrade steps fail with this message (after `failAfterSteps` steps succeeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_with: Option<String>,
    /// How many upgrade steps (over the member's life) succeed before `failWith` applies;
    /// default 0. Needs `failWith`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_after_steps: Option<u32>,
}

/// The releases a simulated cloud offers, region by region.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseCatalog {
    /// Kubernetes releases (each a `KubernetesVersion` on the hub).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kubernetes_versions: Vec<KubernetesRelease>,
    /// Node image releases (each a `NodeImageVersion` on the hub).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_images: Vec<NodeImageRelease>,
}

/// A Kubernetes release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubernetesRelease {
    /// `MAJOR.MINOR.PATCH`, unique in the catalog.
    pub version: String,
    /// A preview release (never chosen by auto-upgrade channels).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preview: bool,
    /// The minor has long-term support.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub long_term_support: bool,
    /// When it reaches each region; regions not listed never get it.
    pub availability: Vec<Availability>,
}

/// A node image release: one version of one image family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeImageRelease {
    /// Image family, e.g. `AKSUbuntu-2204gen2containerd`.
    pub family: String,
    /// Version within the family, e.g. `202511.02.0`; family and version are unique together.
    pub version: String,
    /// When it reaches each region; regions not listed never get it.
    pub availability: Vec<Availability>,
}

/// When a release reaches a region: exactly one of `availableAt` and `availableAfterHours`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Availability {
    /// Region name, e.g. `eastus`; once per release.
    pub region: String,
    /// An absolute time (RFC 3339, e.g. `2026-03-01T00:00:00Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_at: Option<String>,
    /// Hours after `flotilla up` first started the fleet (negative: before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_after_hours: Option<i64>,
}

/// One node pool of a simulated member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePoolSpec {
    /// Pool name: 1 to 12 lower case alphanumerics starting with a letter, as AKS requires
    /// (AKS's `kubernetes.azure.com/agentpool` label).
    pub name: String,
    /// Instance type from the simulated cloud's catalog (see [`crate::catalog`]).
    pub instance_type: String,
    /// Number of nodes, at most 1000.
    pub count: u32,
    /// Node image version, e.g. `AKSUbuntu-2204gen2containerd-202501.12.0`. Left out, the
    /// member starts on the newest image of its Ubuntu 22.04 family (amd64 or arm64, as its
    /// instance type) available in its region ([`crate::releases::default_node_images`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_image_version: String,
}

/// A planned maintenance window, shaped as AKS's `maintenanceWindow`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceWindow {
    /// `default`, `aksManagedAutoUpgradeSchedule` or `aksManagedNodeOSUpgradeSchedule`.
    pub name: String,
    /// When the window recurs.
    pub schedule: Schedule,
    /// Length of the window in hours, 4..24.
    pub duration_hours: u32,
    /// Start time of day, `HH:mm`, local to `utc_offset`.
    pub start_time: String,
    /// Static offset from UTC, `±HH:mm` (default `+00:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset: Option<String>,
    /// The window is inactive before this date (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    /// Date ranges in which the window does not open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_allowed_dates: Vec<DateSpan>,
}

/// Recurrence of a maintenance window: exactly one field is set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Schedule {
    /// Every `intervalDays` (1..7) days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily: Option<DailySchedule>,
    /// Every `intervalWeeks` (1..4) weeks on `dayOfWeek`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekly: Option<WeeklySchedule>,
    /// Every `intervalMonths` (1..6) months on `dayOfMonth` (1..31).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute_monthly: Option<AbsoluteMonthlySchedule>,
    /// Every `intervalMonths` (1..6) months on the `weekIndex` `dayOfWeek`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_monthly: Option<RelativeMonthlySchedule>,
}

/// A daily recurrence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DailySchedule {
    /// Days between windows, 1..7.
    pub interval_days: u32,
}

/// A weekly recurrence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WeeklySchedule {
    /// Weeks between windows, 1..4.
    pub interval_weeks: u32,
    /// `Monday` .. `Sunday`.
    pub day_of_week: String,
}

/// A monthly recurrence on a day of the month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AbsoluteMonthlySchedule {
    /// Months between windows, 1..6.
    pub interval_months: u32,
    /// Day of the month, 1..31.
    pub day_of_month: u32,
}

/// A monthly recurrence on a weekday of a given week.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelativeMonthlySchedule {
    /// Months between windows, 1..6.
    pub interval_months: u32,
    /// `Monday` .. `Sunday`.
    pub day_of_week: String,
    /// `First`, `Second`, `Third`, `Fourth` or `Last`.
    pub week_index: String,
}

/// An inclusive range of dates (`YYYY-MM-DD`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DateSpan {
    /// First date.
    pub start: String,
    /// Last date.
    pub end: String,
}

impl Fleet {
    /// Parses and validates a fleet file, returning the fleet with Kubernetes versions in
    /// canonical form (`v1.30.3` becomes `1.30.3`).
    ///
    /// A YAML syntax error, a value of the wrong type, or an unknown or missing field gives
    /// [`FleetError::Syntax`] with the line and column and, when inside `members`, the member;
    /// a well-formed fleet that breaks rules gives [`FleetError::Invalid`] listing every
    /// violation (see [`Fleet::validate`]).
    pub fn from_yaml(text: &str) -> Result<Fleet, FleetError> {
        // The parser's default budget (250,000 nodes) stops near 6,000 members; a fleet file is
        // the user's own, so the budget is sized for 100,000 members of about 60 nodes.
        let options = serde_saphyr::options! {
            budget: serde_saphyr::budget! {
                max_nodes: 6_000_000,
                max_events: 12_000_000,
            },
        };
        let fleet: Fleet = serde_saphyr::from_str_with_options(text, options)
            .map_err(|e| FleetError::syntax(text, &e))?;
        fleet.validate()?;
        Ok(fleet.normalized())
    }

    /// The fleet as a fleet file, which [`Fleet::from_yaml`] reads back equal: for
    /// `flotilla up` to show the fleet it runs, and to start a fleet file from a built-in fleet.
    pub fn to_yaml(&self) -> String {
        // Strings, integers and string-keyed maps always serialise.
        serde_saphyr::to_string(self).expect("a fleet serialises to YAML")
    }
}

#[cfg(test)]
mod tests;
