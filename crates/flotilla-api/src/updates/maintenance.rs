//! `MaintenanceConfiguration` (`mcfg`): a member's planned maintenance window, shaped exactly as
//! AKS's `maintenanceConfigurations/{name}.maintenanceWindow`. It lives in the member's hub
//! namespace (`fleet-member-<name>`) and is named for what it governs:
//! `aksManagedAutoUpgradeSchedule` (Kubernetes upgrades: `Full` and `ControlPlaneOnly` runs) or
//! `aksManagedNodeOSUpgradeSchedule` (node image upgrades: `NodeImageOnly` runs); `default`
//! (weekly only) is accepted and governs neither, as in AKS.
//!
//! Beyond AKS, the status (kept by the updates controllers) gives the window's summary,
//! whether it is open now, the current and the next occurrence, and a `Valid` condition, so a
//! dashboard need not evaluate the calendar itself.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Name of the configuration that governs Kubernetes (control plane) upgrades.
pub const AUTO_UPGRADE_SCHEDULE: &str = "aks-managed-auto-upgrade-schedule";
/// Name of the configuration that governs node image upgrades.
pub const NODE_OS_UPGRADE_SCHEDULE: &str = "aks-managed-node-os-upgrade-schedule";
/// Name of AKS's legacy configuration (weekly only; governs no update run).
pub const DEFAULT_SCHEDULE: &str = "default";
/// The configuration names a member may have.
pub const CONFIGURATION_NAMES: [&str; 3] = [
    DEFAULT_SCHEDULE,
    AUTO_UPGRADE_SCHEDULE,
    NODE_OS_UPGRADE_SCHEDULE,
];

/// The object name of the configuration AKS calls `aks_name` (`aksManagedAutoUpgradeSchedule`,
/// `aksManagedNodeOSUpgradeSchedule` or `default`).
pub fn object_name(aks_name: &str) -> Option<&'static str> {
    match aks_name {
        "aksManagedAutoUpgradeSchedule" => Some(AUTO_UPGRADE_SCHEDULE),
        "aksManagedNodeOSUpgradeSchedule" => Some(NODE_OS_UPGRADE_SCHEDULE),
        "default" => Some(DEFAULT_SCHEDULE),
        _ => None,
    }
}

/// Pattern of a `HH:mm` time of day.
pub const TIME_OF_DAY_PATTERN: &str = "^([01][0-9]|2[0-3]):[0-5][0-9]$";
/// Pattern of a `±HH:mm` UTC offset (the ±14:00 bound is checked by validation).
pub const UTC_OFFSET_PATTERN: &str = "^[+-]([01][0-9]|2[0-3]):[0-5][0-9]$";
/// Pattern of a `YYYY-MM-DD` date.
pub const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

/// A member's planned maintenance window.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "MaintenanceConfiguration",
    plural = "maintenanceconfigurations",
    singular = "maintenanceconfiguration",
    shortname = "mcfg",
    namespaced,
    category = "fleet",
    category = "fleet-updates",
    status = "MaintenanceConfigurationStatus",
    derive = "PartialEq",
    doc = "MaintenanceConfiguration is a member cluster's planned maintenance window: update runs start new work on the member only while it is open.",
    printcolumn(
        name = "Schedule",
        type_ = "string",
        json_path = ".spec.maintenanceWindow.schedule"
    ),
    printcolumn(
        name = "Start",
        type_ = "string",
        json_path = ".spec.maintenanceWindow.startTime"
    ),
    printcolumn(
        name = "Hours",
        type_ = "integer",
        json_path = ".spec.maintenanceWindow.durationHours"
    ),
    printcolumn(
        name = "UTC-Offset",
        type_ = "string",
        json_path = ".spec.maintenanceWindow.utcOffset"
    ),
    printcolumn(name = "Open", type_ = "boolean", json_path = ".status.open"),
    printcolumn(
        name = "Next-Window",
        type_ = "string",
        json_path = ".status.nextWindow.start"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceConfigurationSpec {
    /// The window.
    pub maintenance_window: MaintenanceWindow,
}

/// Condition type: whether the window is valid (`False`: it never opens; the reason and
/// message say which field is wrong).
pub const VALID_CONDITION: &str = "Valid";
/// Reason of `Valid=True`.
pub const WINDOW_VALID_REASON: &str = "MaintenanceWindowValid";

/// The window as the controllers evaluate it at the time they last looked.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceConfigurationStatus {
    /// The generation of the spec the status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The window in words, e.g. `weekly on Saturday 22:00 for 6h, UTC-08:00`; absent when
    /// the window is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Whether the window is open now.
    #[serde(default)]
    pub open: bool,
    /// The occurrence the window is in, while it is open (its end cut short by a
    /// `notAllowedDates` span it runs into).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_window: Option<WindowOccurrence>,
    /// The first occurrence starting after now; absent when none starts within the search
    /// horizon (three years), e.g. when `notAllowedDates` blocks every later date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_window: Option<WindowOccurrence>,
    /// `Valid`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// One occurrence of a window, the half-open interval `[start, end)`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct WindowOccurrence {
    /// When it opens.
    pub start: Time,
    /// When it closes.
    pub end: Time,
}

/// A recurring maintenance window, as AKS's `maintenanceWindow`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceWindow {
    /// When the window recurs: exactly one recurrence.
    pub schedule: Schedule,
    /// Length of the window in hours, 4 to 24.
    #[schemars(range(min = 4, max = 24))]
    pub duration_hours: u32,
    /// Start time of day, `HH:mm`, local to `utcOffset`.
    #[schemars(regex(pattern = TIME_OF_DAY_PATTERN))]
    pub start_time: String,
    /// Static offset from UTC, `±HH:mm` within ±14:00 (no daylight saving). Default `+00:00`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "+00:00", "pattern" = UTC_OFFSET_PATTERN))]
    pub utc_offset: Option<String>,
    /// The window is inactive before this date (`YYYY-MM-DD`, local to `utcOffset`); it also
    /// anchors the interval of daily, weekly and monthly recurrences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub start_date: Option<String>,
    /// Date ranges (inclusive, local to `utcOffset`) in which the window does not open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub not_allowed_dates: Vec<DateSpan>,
}

/// Recurrence of a maintenance window: exactly one field is set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// Every `intervalDays` days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily: Option<DailySchedule>,
    /// Every `intervalWeeks` weeks on `dayOfWeek`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekly: Option<WeeklySchedule>,
    /// Every `intervalMonths` months on `dayOfMonth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute_monthly: Option<AbsoluteMonthlySchedule>,
    /// Every `intervalMonths` months on the `weekIndex` `dayOfWeek`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_monthly: Option<RelativeMonthlySchedule>,
}

/// A daily recurrence.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DailySchedule {
    /// Days between windows, 1 to 7.
    #[schemars(range(min = 1, max = 7))]
    pub interval_days: u32,
}

/// A weekly recurrence.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeeklySchedule {
    /// Weeks between windows, 1 to 4.
    #[schemars(range(min = 1, max = 4))]
    pub interval_weeks: u32,
    /// The day of the window.
    pub day_of_week: Weekday,
}

/// A monthly recurrence on a day of the month.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AbsoluteMonthlySchedule {
    /// Months between windows, 1 to 6.
    #[schemars(range(min = 1, max = 6))]
    pub interval_months: u32,
    /// Day of the month, 1 to 31; in a shorter month the window falls on its last day.
    #[schemars(range(min = 1, max = 31))]
    pub day_of_month: u32,
}

/// A monthly recurrence on a weekday of a given week.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelativeMonthlySchedule {
    /// Months between windows, 1 to 6.
    #[schemars(range(min = 1, max = 6))]
    pub interval_months: u32,
    /// The weekday of the window.
    pub day_of_week: Weekday,
    /// Which occurrence of `dayOfWeek` in the month.
    pub week_index: WeekIndex,
}

/// A day of the week.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum Weekday {
    #[default]
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

/// Which occurrence of a weekday in a month.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum WeekIndex {
    #[default]
    First,
    Second,
    Third,
    Fourth,
    Last,
}

/// An inclusive range of dates (`YYYY-MM-DD`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DateSpan {
    /// First date.
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub start: String,
    /// Last date (included).
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub end: String,
}

/// The furthest a `utcOffset` may be from UTC: ±14:00, in seconds.
pub const MAX_UTC_OFFSET_SECONDS: i32 = 14 * 3600;

/// Reads a `±HH:mm` UTC offset as seconds east of UTC; `None` when malformed or beyond
/// ±14:00.
pub fn utc_offset_seconds(offset: &str) -> Option<i32> {
    let (sign, rest) = match offset.as_bytes().first()? {
        b'+' => (1, &offset[1..]),
        b'-' => (-1, &offset[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    let two_digits = |s: &str| s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !two_digits(hours) || !two_digits(minutes) {
        return None;
    }
    let (hours, minutes): (i32, i32) = (hours.parse().ok()?, minutes.parse().ok()?);
    let seconds = hours * 3600 + minutes * 60;
    (minutes < 60 && seconds <= MAX_UTC_OFFSET_SECONDS).then_some(sign * seconds)
}

impl Schedule {
    /// The names of the recurrences that are set (exactly one in a valid schedule).
    pub fn kinds(&self) -> Vec<&'static str> {
        [
            ("daily", self.daily.is_some()),
            ("weekly", self.weekly.is_some()),
            ("absoluteMonthly", self.absolute_monthly.is_some()),
            ("relativeMonthly", self.relative_monthly.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
}
