//! The fleet definition: which simulated members `flotilla up` runs, from a YAML file
//! (`--fleet FILE`), a generated fleet (`--members N`) or the default six-member fleet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A whole fleet of simulated members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fleet {
    /// The members, in order.
    pub members: Vec<MemberSpec>,
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
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Control-plane Kubernetes version, e.g. `1.30.3` (a leading `v` is accepted).
    pub kubernetes_version: String,
    /// Node pools.
    pub node_pools: Vec<NodePoolSpec>,
    /// Property values that add to or override what the member agent reports (name → quantity).
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// Planned maintenance windows (used by cluster update orchestration).
    #[serde(default)]
    pub maintenance_windows: Vec<MaintenanceWindow>,
}

/// One node pool of a simulated member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePoolSpec {
    /// Pool name (a DNS label; AKS's `kubernetes.azure.com/agentpool` label).
    pub name: String,
    /// Instance type from the simulated cloud's catalog (see [`crate::catalog`]).
    pub instance_type: String,
    /// Number of nodes.
    pub count: u32,
    /// Node image version, e.g. `AKSUbuntu-2204gen2containerd-202501.12.0`.
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
