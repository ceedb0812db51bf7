//! The rules a fleet must follow, checked all at once so that one run of `flotilla up` lists
//! every mistake in a fleet file. Each rule is a small predicate over a string or a number;
//! messages follow Kubernetes' field-validation phrasing (`Required value`, `Duplicate value`,
//! `Unsupported value`, `Invalid value`), and name the expected format for format errors.

use std::collections::HashMap;

use flotilla_apiserver::object::qualified_name_error;
use jiff::civil::Date;

use super::{
    Availability, Fleet, FleetError, MaintenanceWindow, MemberRef, MemberSpec, NodePoolSpec,
    REGION_LABEL_KEYS, ReleaseCatalog, Schedule, UpgradeBehaviour, Violation,
};
use crate::catalog;
use flotilla_api::cluster::member_cluster::MAX_MEMBER_NAME;
use flotilla_apimachinery::quantity;

/// Most nodes one pool may have (AKS's limit per node pool).
const MAX_POOL_NODES: u32 = 1000;

/// The maintenance configurations an AKS cluster can have.
const WINDOW_NAMES: [&str; 3] = [
    "default",
    "aksManagedAutoUpgradeSchedule",
    "aksManagedNodeOSUpgradeSchedule",
];

/// `dayOfWeek` values.
const DAYS_OF_WEEK: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// `weekIndex` values.
const WEEK_INDEXES: [&str; 5] = ["First", "Second", "Third", "Fourth", "Last"];

/// Longest simulated upgrade step, in minutes (a day).
const MAX_STEP_MINUTES: u32 = 24 * 60;

/// Furthest a catalog's `availableAfterHours` may reach, either way (ten years).
const MAX_AVAILABILITY_HOURS: i64 = 10 * 365 * 24;

/// The recurrences of a [`Schedule`], of which exactly one must be set.
const SCHEDULE_KINDS: &str = "daily, weekly, absoluteMonthly or relativeMonthly";

impl Fleet {
    /// Checks every rule of the fleet file format and returns all violations, in file order,
    /// as [`FleetError::Invalid`]. A leading `v` on `kubernetesVersion` is accepted here;
    /// [`Fleet::from_yaml`] strips it after validation.
    ///
    /// The rules: member names are unique DNS labels; `region` is a DNS label; label keys are
    /// Kubernetes qualified names and values are label values, and the region labels Flotilla
    /// derives from `region` ([`REGION_LABEL_KEYS`]) may not be set; `kubernetesVersion` is
    /// `MAJOR.MINOR.PATCH`; node pool names are AKS pool names (1 to 12 lower case
    /// alphanumerics, starting with a letter) unique within the member, each pool has a catalog
    /// instance type, at most 1000 nodes and a node image version; property names are
    /// qualified names and values Kubernetes quantities; maintenance windows follow AKS's
    /// planned maintenance bounds (one window per configuration name, exactly one recurrence,
    /// 4 to 24 hours, `HH:mm` start, `±HH:mm` offset, `YYYY-MM-DD` dates); `upgrade` step
    /// durations are 0 to 1440 minutes, `failWith` is not empty and `failAfterSteps` needs
    /// it. In the `catalog`, Kubernetes versions are `MAJOR.MINOR.PATCH` and unique, node
    /// image families are letters, digits and `-` (neither first nor last), image versions
    /// dotted numbers, family and version unique together; each availability names a region
    /// (a DNS label, once per release) and exactly one of `availableAt` (RFC 3339) and
    /// `availableAfterHours` (within ten years).
    pub fn validate(&self) -> Result<(), FleetError> {
        let mut violations = Vec::new();
        let mut names = HashMap::new();
        for (index, member) in self.members.iter().enumerate() {
            let reference = MemberRef::new(index, Some(&member.name));
            let named = reference.name.is_some();
            let mut check = Check {
                member: Some(reference),
                violations: &mut violations,
            };
            if named && let Some(first) = seen_before(&mut names, &member.name, index) {
                check.fail(
                    "name",
                    duplicate(&member.name, &format!("members[{first}]")),
                );
            }
            check.member(member);
        }
        if let Some(catalog) = &self.catalog {
            Check {
                member: None,
                violations: &mut violations,
            }
            .catalog(catalog);
        }
        if violations.is_empty() {
            Ok(())
        } else {
            Err(FleetError::Invalid(violations))
        }
    }

    /// The fleet with every Kubernetes version (of members and of the catalog) in canonical
    /// form (no leading `v`).
    pub(super) fn normalized(mut self) -> Fleet {
        let versions = self
            .members
            .iter_mut()
            .map(|m| &mut m.kubernetes_version)
            .chain(
                self.catalog
                    .iter_mut()
                    .flat_map(|c| &mut c.kubernetes_versions)
                    .map(|r| &mut r.version),
            );
        for version in versions {
            if let Some(canonical) = version.strip_prefix('v') {
                *version = canonical.to_string();
            }
        }
        self
    }
}

/// Collects the violations of one member, or of the catalog.
struct Check<'a> {
    member: Option<MemberRef>,
    violations: &'a mut Vec<Violation>,
}

impl Check<'_> {
    /// Records that `field` breaks a rule.
    fn fail(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.violations.push(Violation {
            member: self.member.clone(),
            field: field.into(),
            message: message.into(),
        });
    }

    /// Records `problem`, if any, against `field`.
    fn check(&mut self, field: impl Into<String>, problem: Option<String>) {
        if let Some(message) = problem {
            self.fail(field, message);
        }
    }

    /// Every rule of one member, field by field in the order of the file format.
    fn member(&mut self, member: &MemberSpec) {
        self.check(
            "name",
            dns_label_problem(&member.name).or_else(|| member_name_length_problem(&member.name)),
        );
        self.check("region", dns_label_problem(&member.region));
        for (key, value) in &member.labels {
            let field = format!("labels[{key}]");
            match label_key_problem(key) {
                Some(problem) => self.fail("labels", problem),
                None if REGION_LABEL_KEYS.contains(&key.as_str()) => {
                    self.fail(field, "Forbidden: Flotilla sets this label from region")
                }
                None => self.check(field, label_value_problem(value)),
            }
        }
        self.check(
            "kubernetesVersion",
            kubernetes_version_problem(&member.kubernetes_version),
        );
        let mut pools = HashMap::new();
        for (index, pool) in member.node_pools.iter().enumerate() {
            let problem = pool_name_problem(&pool.name);
            self.unique_name("nodePools", index, &pool.name, problem, &mut pools);
            self.node_pool(&format!("nodePools[{index}]"), pool);
        }
        for (name, value) in &member.properties {
            match label_key_problem(name) {
                Some(problem) => self.fail("properties", problem),
                None => self.check(format!("properties[{name}]"), quantity_problem(value)),
            }
        }
        let mut windows = HashMap::new();
        for (index, window) in member.maintenance_windows.iter().enumerate() {
            let problem = one_of(&window.name, &WINDOW_NAMES);
            self.unique_name(
                "maintenanceWindows",
                index,
                &window.name,
                problem,
                &mut windows,
            );
            self.window(&format!("maintenanceWindows[{index}]"), window);
        }
        if let Some(upgrade) = &member.upgrade {
            self.upgrade(upgrade);
        }
    }

    /// The `upgrade` behaviour of a member.
    fn upgrade(&mut self, upgrade: &UpgradeBehaviour) {
        for (field, minutes) in [
            ("upgrade.controlPlaneMinutes", upgrade.control_plane_minutes),
            ("upgrade.nodeMinutes", upgrade.node_minutes),
        ] {
            if let Some(minutes) = minutes {
                self.check(field, in_range(minutes, 0, MAX_STEP_MINUTES));
            }
        }
        if let Some(message) = &upgrade.fail_with {
            self.check("upgrade.failWith", required(message.trim()));
        }
        if upgrade.fail_after_steps.is_some() && upgrade.fail_with.is_none() {
            self.fail(
                "upgrade.failAfterSteps",
                "Forbidden: only with upgrade.failWith (the message the failing steps give)",
            );
        }
    }

    /// Every rule of the release catalog.
    fn catalog(&mut self, catalog: &ReleaseCatalog) {
        let mut versions = HashMap::new();
        for (index, release) in catalog.kubernetes_versions.iter().enumerate() {
            let path = format!("catalog.kubernetesVersions[{index}]");
            let field = format!("{path}.version");
            match kubernetes_version_problem(&release.version) {
                Some(problem) => self.fail(field, problem),
                None => {
                    let canonical = release.version.trim_start_matches('v');
                    if let Some(first) = seen_before(&mut versions, canonical, index) {
                        let first = format!("catalog.kubernetesVersions[{first}]");
                        self.fail(field, duplicate(&release.version, &first));
                    }
                }
            }
            self.availability(&path, &release.availability);
        }
        let mut images = HashMap::new();
        for (index, release) in catalog.node_images.iter().enumerate() {
            let path = format!("catalog.nodeImages[{index}]");
            let family = image_family_problem(&release.family);
            let version = image_version_problem(&release.version);
            let valid = family.is_none() && version.is_none();
            self.check(format!("{path}.family"), family);
            self.check(format!("{path}.version"), version);
            let image = format!("{}-{}", release.family, release.version);
            if valid && let Some(first) = seen_before_owned(&mut images, &image, index) {
                let first = format!("catalog.nodeImages[{first}]");
                self.fail(path.clone(), duplicate(&image, &first));
            }
            self.availability(&path, &release.availability);
        }
    }

    /// The `availability` list of the release at `path`.
    fn availability(&mut self, path: &str, availability: &[Availability]) {
        let mut regions = HashMap::new();
        for (index, entry) in availability.iter().enumerate() {
            let path = format!("{path}.availability[{index}]");
            match dns_label_problem(&entry.region) {
                Some(problem) => self.fail(format!("{path}.region"), problem),
                None => {
                    if let Some(first) = seen_before(&mut regions, &entry.region, index) {
                        let first = format!("availability[{first}]");
                        self.fail(format!("{path}.region"), duplicate(&entry.region, &first));
                    }
                }
            }
            match (&entry.available_at, entry.available_after_hours) {
                (Some(_), Some(_)) => self.fail(
                    path,
                    "Forbidden: exactly one of availableAt and availableAfterHours may be set",
                ),
                (None, None) => self.fail(
                    path,
                    "Required value: exactly one of availableAt and availableAfterHours must be set",
                ),
                (Some(at), None) => self.check(
                    format!("{path}.availableAt"),
                    at.parse::<jiff::Timestamp>().err().map(|_| {
                        format!(
                            "{at:?} is not a time: must be RFC 3339, e.g. 2026-03-01T00:00:00Z"
                        )
                    }),
                ),
                (None, Some(hours)) => self.check(
                    format!("{path}.availableAfterHours"),
                    (hours.abs() > MAX_AVAILABILITY_HOURS).then(|| {
                        format!(
                            "Invalid value: {hours}: must be between -{MAX_AVAILABILITY_HOURS} \
                             and {MAX_AVAILABILITY_HOURS} (ten years), inclusive"
                        )
                    }),
                ),
            }
        }
    }

    /// Checks the name of entry `index` of the list `list`: its `problem`, if any, else that no
    /// earlier entry has the same name.
    fn unique_name<'a>(
        &mut self,
        list: &str,
        index: usize,
        name: &'a str,
        problem: Option<String>,
        seen: &mut HashMap<&'a str, usize>,
    ) {
        let field = format!("{list}[{index}].name");
        match problem {
            Some(problem) => self.fail(field, problem),
            None => {
                if let Some(first) = seen_before(seen, name, index) {
                    self.fail(field, duplicate(name, &format!("{list}[{first}]")));
                }
            }
        }
    }

    /// The fields of a node pool other than its name.
    fn node_pool(&mut self, path: &str, pool: &NodePoolSpec) {
        if catalog::instance_type(&pool.instance_type).is_none() {
            self.fail(
                format!("{path}.instanceType"),
                format!(
                    "unknown instance type {:?} (the catalog has {})",
                    pool.instance_type,
                    catalog_summary()
                ),
            );
        }
        self.check(
            format!("{path}.count"),
            in_range(pool.count, 0, MAX_POOL_NODES),
        );
    }

    /// The fields of a maintenance window other than its name.
    fn window(&mut self, path: &str, window: &MaintenanceWindow) {
        self.schedule(&format!("{path}.schedule"), &window.name, &window.schedule);
        self.check(
            format!("{path}.durationHours"),
            in_range(window.duration_hours, 4, 24),
        );
        self.check(
            format!("{path}.startTime"),
            time_of_day_problem(&window.start_time),
        );
        if let Some(offset) = &window.utc_offset {
            self.check(format!("{path}.utcOffset"), utc_offset_problem(offset));
        }
        if let Some(start) = &window.start_date {
            self.check(format!("{path}.startDate"), date(start).err());
        }
        for (index, span) in window.not_allowed_dates.iter().enumerate() {
            let span_path = format!("{path}.notAllowedDates[{index}]");
            match (date(&span.start), date(&span.end)) {
                (Ok(start), Ok(end)) if start > end => self.fail(
                    span_path,
                    format!("Invalid value: start {start} is after end {end}"),
                ),
                (start, end) => {
                    self.check(format!("{span_path}.start"), start.err());
                    self.check(format!("{span_path}.end"), end.err());
                }
            }
        }
    }

    fn schedule(&mut self, path: &str, window_name: &str, schedule: &Schedule) {
        let set: Vec<&str> = [
            ("daily", schedule.daily.is_some()),
            ("weekly", schedule.weekly.is_some()),
            ("absoluteMonthly", schedule.absolute_monthly.is_some()),
            ("relativeMonthly", schedule.relative_monthly.is_some()),
        ]
        .into_iter()
        .filter_map(|(kind, is_set)| is_set.then_some(kind))
        .collect();
        match set.as_slice() {
            [] => self.fail(
                path,
                format!("Required value: exactly one of {SCHEDULE_KINDS} must be set"),
            ),
            [_] => {}
            _ => self.fail(
                path,
                format!(
                    "Forbidden: exactly one of {SCHEDULE_KINDS} may be set, found {}",
                    set.join(" and ")
                ),
            ),
        }
        if window_name == "default" && set.iter().any(|kind| *kind != "weekly") {
            self.fail(
                path,
                "Forbidden: the \"default\" window supports only a weekly schedule",
            );
        }
        if let Some(daily) = &schedule.daily {
            self.check(
                format!("{path}.daily.intervalDays"),
                in_range(daily.interval_days, 1, 7),
            );
        }
        if let Some(weekly) = &schedule.weekly {
            self.check(
                format!("{path}.weekly.intervalWeeks"),
                in_range(weekly.interval_weeks, 1, 4),
            );
            self.check(
                format!("{path}.weekly.dayOfWeek"),
                one_of(&weekly.day_of_week, &DAYS_OF_WEEK),
            );
        }
        if let Some(monthly) = &schedule.absolute_monthly {
            self.check(
                format!("{path}.absoluteMonthly.intervalMonths"),
                in_range(monthly.interval_months, 1, 6),
            );
            self.check(
                format!("{path}.absoluteMonthly.dayOfMonth"),
                in_range(monthly.day_of_month, 1, 31),
            );
        }
        if let Some(monthly) = &schedule.relative_monthly {
            self.check(
                format!("{path}.relativeMonthly.intervalMonths"),
                in_range(monthly.interval_months, 1, 6),
            );
            self.check(
                format!("{path}.relativeMonthly.dayOfWeek"),
                one_of(&monthly.day_of_week, &DAYS_OF_WEEK),
            );
            self.check(
                format!("{path}.relativeMonthly.weekIndex"),
                one_of(&monthly.week_index, &WEEK_INDEXES),
            );
        }
    }
}

/// Records that `name` was seen at `index`; returns where it was first seen, if before.
fn seen_before<'a>(
    seen: &mut HashMap<&'a str, usize>,
    name: &'a str,
    index: usize,
) -> Option<usize> {
    let first = *seen.entry(name).or_insert(index);
    (first != index).then_some(first)
}

/// [`seen_before`] for names built on the fly.
fn seen_before_owned(seen: &mut HashMap<String, usize>, name: &str, index: usize) -> Option<usize> {
    let first = *seen.entry(name.to_string()).or_insert(index);
    (first != index).then_some(first)
}

/// A node image family: letters, digits and `-`, not first or last
/// (`AKSUbuntu-2204gen2containerd`).
fn image_family_problem(family: &str) -> Option<String> {
    let valid = edged(
        family,
        |b| b.is_ascii_alphanumeric(),
        |b| b.is_ascii_alphanumeric() || b == b'-',
    );
    (!valid).then(|| {
        format!(
            "{family:?} is not an image family: must consist of letters, digits and '-', \
             starting and ending with a letter or digit, e.g. AKSUbuntu-2204gen2containerd"
        )
    })
}

/// A node image version: dotted decimal numbers (`202511.02.0`).
fn image_version_problem(version: &str) -> Option<String> {
    let valid = version.split('.').all(|part| {
        !part.is_empty() && part.len() <= 9 && part.bytes().all(|b| b.is_ascii_digit())
    });
    (!valid).then(|| {
        format!(
            "{version:?} is not an image version: must be numbers separated by dots, \
             e.g. 202511.02.0"
        )
    })
}

fn duplicate(name: &str, first: &str) -> String {
    format!("Duplicate value: {name:?} (same as {first})")
}

fn required(value: &str) -> Option<String> {
    value.is_empty().then(|| "Required value".to_string())
}

fn in_range(value: u32, min: u32, max: u32) -> Option<String> {
    (!(min..=max).contains(&value)).then(|| match min {
        0 => format!("Invalid value: {value}: must be less than or equal to {max}"),
        _ => format!("Invalid value: {value}: must be between {min} and {max}, inclusive"),
    })
}

fn one_of(value: &str, supported: &[&str]) -> Option<String> {
    (!supported.contains(&value)).then(|| {
        let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        format!(
            "Unsupported value: {value:?}: supported values: {}",
            quoted.join(", ")
        )
    })
}

/// Whether `s` is non-empty, starts and ends with a byte `edge` accepts, and consists of
/// bytes `inner` accepts: the shape of DNS labels and label values.
fn edged(s: &str, edge: fn(u8) -> bool, inner: fn(u8) -> bool) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => edge(first) && edge(last) && bytes.iter().all(|&b| inner(b)),
        _ => false,
    }
}

fn is_lower_alphanumeric(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// Whether `s` is a DNS-1123 label: at most 63 lower case alphanumerics or `-`, starting and
/// ending with an alphanumeric (Kubernetes' rule for namespace and member names).
pub(super) fn is_dns_label(s: &str) -> bool {
    s.len() <= 63
        && edged(s, is_lower_alphanumeric, |b| {
            is_lower_alphanumeric(b) || b == b'-'
        })
}

fn dns_label_problem(value: &str) -> Option<String> {
    required(value).or_else(|| {
        (!is_dns_label(value)).then(|| {
            format!(
                "{value:?} is not a DNS label: must consist of lower case alphanumeric \
                 characters or '-', start and end with an alphanumeric character (at most 63)"
            )
        })
    })
}

fn member_name_length_problem(name: &str) -> Option<String> {
    (name.len() > MAX_MEMBER_NAME).then(|| {
        format!(
            "{name:?} is too long: at most {MAX_MEMBER_NAME} characters, so that the member's \
             namespace fleet-member-<name> is a DNS label"
        )
    })
}

/// A label key or property name: Kubernetes' qualified-name rule.
fn label_key_problem(key: &str) -> Option<String> {
    qualified_name_error(key).map(|e| format!("{key:?} is not a valid label key: {e}"))
}

fn label_value_problem(value: &str) -> Option<String> {
    let valid = value.is_empty()
        || (value.len() <= 63
            && edged(
                value,
                |b| b.is_ascii_alphanumeric(),
                |b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'),
            ));
    (!valid).then(|| {
        format!(
            "{value:?} is not a valid label value: must be empty or consist of alphanumeric \
             characters, '-', '_' or '.', start and end with an alphanumeric character \
             (at most 63)"
        )
    })
}

/// The numbers of a `MAJOR.MINOR.PATCH` version with an optional leading `v`, each a decimal
/// without leading zeros.
fn version_numbers(text: &str) -> Option<[u32; 3]> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let parts: Vec<&str> = text.split('.').collect();
    let numbers = parts.iter().map(|part| {
        let canonical = !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part.len() == 1 || !part.starts_with('0'));
        canonical.then(|| part.parse().ok()).flatten()
    });
    numbers.collect::<Option<Vec<u32>>>()?.try_into().ok()
}

fn kubernetes_version_problem(version: &str) -> Option<String> {
    version_numbers(version).is_none().then(|| {
        format!(
            "{version:?} is not a Kubernetes version: must be MAJOR.MINOR.PATCH, e.g. 1.30.3 \
             (a leading 'v' is allowed)"
        )
    })
}

/// Whether `name` is an AKS node pool name: 1 to 12 lower case alphanumerics, starting with a
/// letter.
fn pool_name_problem(name: &str) -> Option<String> {
    let valid = (1..=12).contains(&name.len())
        && name.as_bytes()[0].is_ascii_lowercase()
        && name.bytes().all(is_lower_alphanumeric);
    (!valid).then(|| {
        format!(
            "{name:?} is not a node pool name: must be 1 to 12 lower case alphanumeric \
             characters, starting with a letter"
        )
    })
}

/// The catalog's instance type names in brief, from the catalog itself:
/// `Standard_{F,D,E}{1,2,4,…}[p]s_v5`.
fn catalog_summary() -> String {
    let mut families = Vec::new();
    let mut sizes = Vec::new();
    let mut arm = false;
    for t in catalog::instance_types() {
        let family = t
            .name
            .strip_prefix("Standard_")
            .and_then(|n| n.chars().next());
        if let Some(family) = family.filter(|f| !families.contains(f)) {
            families.push(family);
        }
        if !sizes.contains(&t.vcpu) {
            sizes.push(t.vcpu);
        }
        arm |= t.arch == catalog::Arch::Arm64;
    }
    let join = |items: Vec<String>| items.join(",");
    format!(
        "Standard_{{{}}}{{{}}}{}s_v5",
        join(families.iter().map(char::to_string).collect()),
        join(sizes.iter().map(u32::to_string).collect()),
        if arm { "[p]" } else { "" }
    )
}

/// A property value: a Kubernetes quantity (`5`, `12.5`, `500m`, `3Gi`, `1e3`) the simulator
/// can hold ([`quantity::parse_milli`]), without surrounding spaces.
fn quantity_problem(value: &str) -> Option<String> {
    let valid = value.trim() == value && quantity::parse_milli(value).is_some();
    (!valid).then(|| {
        format!(
            "{value:?} is not a quantity: must be a decimal number with an optional suffix \
             (m, k, M, G, Ki, Mi, Gi, …) or exponent, e.g. 5, 12.5, 0.034, 500m, 3Gi, 1e3"
        )
    })
}

/// Whether `s` is exactly `len` ASCII digits.
fn fixed_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

/// Hours and minutes of `HH:mm` (two digits each, minutes below 60).
fn hours_minutes(text: &str) -> Option<(u32, u32)> {
    let (hours, minutes) = text.split_once(':')?;
    if !(fixed_digits(hours, 2) && fixed_digits(minutes, 2)) {
        return None;
    }
    let (hours, minutes) = (hours.parse().ok()?, minutes.parse().ok()?);
    (minutes < 60).then_some((hours, minutes))
}

fn time_of_day_problem(text: &str) -> Option<String> {
    hours_minutes(text)
        .is_none_or(|(hours, _)| hours > 23)
        .then(|| format!("{text:?} is not a time of day: must be HH:mm, from 00:00 to 23:59"))
}

/// A UTC offset is `+HH:mm` or `-HH:mm`, at most 14 hours (the widest offset in use).
fn utc_offset_problem(text: &str) -> Option<String> {
    text.strip_prefix(['+', '-'])
        .and_then(hours_minutes)
        .is_none_or(|(hours, minutes)| hours * 60 + minutes > 14 * 60)
        .then(|| format!("{text:?} is not a UTC offset: must be ±HH:mm, from -14:00 to +14:00"))
}

/// The calendar date written `YYYY-MM-DD`.
fn date(text: &str) -> Result<Date, String> {
    let parse = || {
        let [year, month, day]: [&str; 3] = text.split('-').collect::<Vec<_>>().try_into().ok()?;
        if !(fixed_digits(year, 4) && fixed_digits(month, 2) && fixed_digits(day, 2)) {
            return None;
        }
        Date::new(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?).ok()
    };
    parse().ok_or_else(|| format!("{text:?} is not a date: must be YYYY-MM-DD, e.g. 2025-12-24"))
}

#[cfg(test)]
mod tests;
