//! Table tests of every rule, and properties of the small format checks.

use super::*;
use crate::fleet::{
    AbsoluteMonthlySchedule, DailySchedule, DateSpan, RelativeMonthlySchedule, UpgradeBehaviour,
};

/// A member that breaks no rule; each case below changes one thing.
const VALID: &str = r#"
name: west-2
region: westus
labels: {team: payments, example.com/tier: "", order: 3}
kubernetesVersion: 1.30.3
nodePools:
- {name: system, instanceType: Standard_D4s_v5, count: 3, nodeImageVersion: AKSUbuntu-2204gen2containerd-202510.13.0}
- {name: armpool1, instanceType: Standard_E8ps_v5, count: 0, nodeImageVersion: AKSUbuntu-2204gen2arm64containerd-202510.13.0}
properties: {example.com/cost: "0.034", kubernetes.azure.com/node-count: 5, memory: 3Gi}
maintenanceWindows:
- name: aksManagedAutoUpgradeSchedule
  schedule: {weekly: {intervalWeeks: 1, dayOfWeek: Saturday}}
  durationHours: 4
  startTime: "22:00"
  utcOffset: "-08:00"
  startDate: "2025-01-01"
  notAllowedDates: [{start: "2025-12-23", end: "2026-01-02"}]
"#;

fn valid_member() -> MemberSpec {
    serde_saphyr::from_str(VALID).expect("the valid member parses")
}

/// `field: message` of each violation of a one-member fleet after `change`.
fn violations(change: impl FnOnce(&mut MemberSpec)) -> Vec<String> {
    let mut member = valid_member();
    change(&mut member);
    match (Fleet {
        members: vec![member],
        catalog: None,
    })
    .validate()
    {
        Ok(()) => Vec::new(),
        Err(FleetError::Invalid(found)) => found
            .iter()
            .map(|v| format!("{}: {}", v.field, v.message))
            .collect(),
        Err(other) => panic!("unexpected {other}"),
    }
}

fn window(member: &mut MemberSpec) -> &mut MaintenanceWindow {
    &mut member.maintenance_windows[0]
}

type Case = (fn(&mut MemberSpec), &'static [&'static str]);

/// Each change, and the start of each violation message it causes (none: still valid).
const CASES: &[Case] = &[
    (|_| {}, &[]),
    (
        |m| m.name = "West_1".into(),
        &[
            "name: \"West_1\" is not a DNS label: must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character (at most 63)",
        ],
    ),
    (|m| m.name = String::new(), &["name: Required value"]),
    (|m| m.name = "a".repeat(64), &["name: \"aaaa"]),
    (
        |m| m.name = "a".repeat(51),
        &["name: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" is too long: at most 50"],
    ),
    (|m| m.name = "a".repeat(50), &[]),
    (
        |m| m.name = "-west".into(),
        &["name: \"-west\" is not a DNS label"],
    ),
    (
        |m| m.region = "East US".into(),
        &["region: \"East US\" is not a DNS label"],
    ),
    (|m| m.region = String::new(), &["region: Required value"]),
    (
        |m| {
            m.labels.insert("bad key".into(), "x".into());
        },
        &[
            "labels: \"bad key\" is not a valid label key: name part must consist of alphanumeric characters",
        ],
    ),
    (
        |m| {
            m.labels.insert("Example.com/x".into(), "x".into());
        },
        &["labels: \"Example.com/x\" is not a valid label key: prefix part"],
    ),
    (
        |m| {
            m.labels.insert("team".into(), "a b".into());
        },
        &[
            "labels[team]: \"a b\" is not a valid label value: must be empty or consist of alphanumeric characters, '-', '_' or '.', start and end with an alphanumeric character (at most 63)",
        ],
    ),
    (
        |m| {
            m.labels.insert("team".into(), "x".repeat(64));
        },
        &["labels[team]: \"xxx"],
    ),
    (
        |m| {
            m.labels.insert("team".into(), "A-b_c.9".into());
        },
        &[],
    ),
    (
        |m| {
            m.labels
                .insert("fleet.azure.com/location".into(), "westus".into());
        },
        &["labels[fleet.azure.com/location]: Forbidden: Flotilla sets this label from region"],
    ),
    (
        |m| m.kubernetes_version = "1.30".into(),
        &[
            "kubernetesVersion: \"1.30\" is not a Kubernetes version: must be MAJOR.MINOR.PATCH, e.g. 1.30.3 (a leading 'v' is allowed)",
        ],
    ),
    (|m| m.kubernetes_version = "v1.31.0".into(), &[]),
    (
        |m| m.kubernetes_version = "1.30.03".into(),
        &["kubernetesVersion: \"1.30.03\" is not"],
    ),
    (
        |m| m.kubernetes_version = "1.30.3-rc.1".into(),
        &["kubernetesVersion: \"1.30.3-rc.1\" is not"],
    ),
    (
        |m| m.kubernetes_version = "V1.30.3".into(),
        &["kubernetesVersion: \"V1.30.3\" is not"],
    ),
    (
        |m| m.node_pools[0].name = "System".into(),
        &[
            "nodePools[0].name: \"System\" is not a node pool name: must be 1 to 12 lower case alphanumeric characters, starting with a letter",
        ],
    ),
    (
        |m| m.node_pools[0].name = "nodepool12345".into(),
        &["nodePools[0].name: \"nodepool12345\" is not"],
    ),
    (
        |m| m.node_pools[0].name = "1pool".into(),
        &["nodePools[0].name: \"1pool\" is not"],
    ),
    (
        |m| m.node_pools[0].name = "node-pool".into(),
        &["nodePools[0].name: \"node-pool\" is not"],
    ),
    (
        |m| m.node_pools[0].name = String::new(),
        &["nodePools[0].name: \"\" is not"],
    ),
    (|m| m.node_pools[0].name = "nodepool1234".into(), &[]),
    (
        |m| {
            m.node_pools[0].name = "Pool".into();
            m.node_pools[1].name = "Pool".into();
        },
        &[
            "nodePools[0].name: \"Pool\" is not a node pool name",
            "nodePools[1].name: \"Pool\" is not a node pool name",
        ],
    ),
    (
        |m| m.node_pools[1].name = "system".into(),
        &["nodePools[1].name: Duplicate value: \"system\" (same as nodePools[0])"],
    ),
    (
        |m| m.node_pools[1].instance_type = "Standard_D3s_v5".into(),
        &[
            "nodePools[1].instanceType: unknown instance type \"Standard_D3s_v5\" (the catalog has Standard_{F,D,E}{1,2,4,8,16,32,48,64,96}[p]s_v5)",
        ],
    ),
    (
        |m| m.node_pools[0].count = 1001,
        &["nodePools[0].count: Invalid value: 1001: must be less than or equal to 1000"],
    ),
    (|m| m.node_pools[0].count = 1000, &[]),
    // No image: the member starts on the newest of its family (releases::default_node_images).
    (|m| m.node_pools[0].node_image_version = String::new(), &[]),
    (|m| m.node_pools.clear(), &[]),
    (
        |m| {
            m.properties.insert("/cost".into(), "1".into());
        },
        &["properties: \"/cost\" is not a valid label key: prefix part must be non-empty"],
    ),
    (
        |m| {
            m.properties.insert("cost".into(), "5 Gi".into());
        },
        &[
            "properties[cost]: \"5 Gi\" is not a quantity: must be a decimal number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …) or exponent, e.g. 5, 12.5, 0.034, 500m, 3Gi, 1e3",
        ],
    ),
    (
        |m| {
            m.properties.insert("cost".into(), " 5".into());
        },
        &["properties[cost]: \" 5\" is not a quantity"],
    ),
    (
        |m| {
            m.properties.insert("cost".into(), "5gi".into());
        },
        &["properties[cost]: \"5gi\" is not a quantity"],
    ),
    (
        |m| {
            m.properties.insert("cost".into(), String::new());
        },
        &["properties[cost]: \"\" is not a quantity"],
    ),
    (
        |m| {
            for (i, q) in [
                "5", "12.5", ".5", "-1", "+2", "500m", "1e3", "1E-3", "2k", "1Ei", "7n",
            ]
            .iter()
            .enumerate()
            {
                m.properties.insert(format!("q{i}"), q.to_string());
            }
        },
        &[],
    ),
    (
        |m| window(m).name = "weekly".into(),
        &[
            "maintenanceWindows[0].name: Unsupported value: \"weekly\": supported values: \"default\", \"aksManagedAutoUpgradeSchedule\", \"aksManagedNodeOSUpgradeSchedule\"",
        ],
    ),
    (
        |m| {
            let w = window(m).clone();
            m.maintenance_windows.push(w);
        },
        &[
            "maintenanceWindows[1].name: Duplicate value: \"aksManagedAutoUpgradeSchedule\" (same as maintenanceWindows[0])",
        ],
    ),
    (|m| window(m).name = "default".into(), &[]),
    (
        |m| window(m).schedule = Schedule::default(),
        &[
            "maintenanceWindows[0].schedule: Required value: exactly one of daily, weekly, absoluteMonthly or relativeMonthly must be set",
        ],
    ),
    (
        |m| window(m).schedule.daily = Some(DailySchedule { interval_days: 2 }),
        &[
            "maintenanceWindows[0].schedule: Forbidden: exactly one of daily, weekly, absoluteMonthly or relativeMonthly may be set, found daily and weekly",
        ],
    ),
    (
        |m| {
            let w = window(m);
            w.name = "default".into();
            w.schedule = Schedule {
                daily: Some(DailySchedule { interval_days: 1 }),
                ..Schedule::default()
            };
        },
        &[
            "maintenanceWindows[0].schedule: Forbidden: the \"default\" window supports only a weekly schedule",
        ],
    ),
    (
        |m| {
            window(m).schedule = Schedule {
                daily: Some(DailySchedule { interval_days: 8 }),
                ..Schedule::default()
            }
        },
        &[
            "maintenanceWindows[0].schedule.daily.intervalDays: Invalid value: 8: must be between 1 and 7, inclusive",
        ],
    ),
    (
        |m| window(m).schedule.weekly.as_mut().unwrap().interval_weeks = 0,
        &[
            "maintenanceWindows[0].schedule.weekly.intervalWeeks: Invalid value: 0: must be between 1 and 4, inclusive",
        ],
    ),
    (
        |m| window(m).schedule.weekly.as_mut().unwrap().day_of_week = "saturday".into(),
        &[
            "maintenanceWindows[0].schedule.weekly.dayOfWeek: Unsupported value: \"saturday\": supported values: \"Monday\", \"Tuesday\",",
        ],
    ),
    (
        |m| {
            window(m).schedule = Schedule {
                absolute_monthly: Some(AbsoluteMonthlySchedule {
                    interval_months: 7,
                    day_of_month: 32,
                }),
                ..Schedule::default()
            }
        },
        &[
            "maintenanceWindows[0].schedule.absoluteMonthly.intervalMonths: Invalid value: 7: must be between 1 and 6, inclusive",
            "maintenanceWindows[0].schedule.absoluteMonthly.dayOfMonth: Invalid value: 32: must be between 1 and 31, inclusive",
        ],
    ),
    (
        |m| {
            window(m).schedule = Schedule {
                relative_monthly: Some(RelativeMonthlySchedule {
                    interval_months: 6,
                    day_of_week: "Sunday".into(),
                    week_index: "Fifth".into(),
                }),
                ..Schedule::default()
            }
        },
        &[
            "maintenanceWindows[0].schedule.relativeMonthly.weekIndex: Unsupported value: \"Fifth\": supported values: \"First\", \"Second\", \"Third\", \"Fourth\", \"Last\"",
        ],
    ),
    (
        |m| window(m).duration_hours = 3,
        &[
            "maintenanceWindows[0].durationHours: Invalid value: 3: must be between 4 and 24, inclusive",
        ],
    ),
    (|m| window(m).duration_hours = 24, &[]),
    (
        |m| window(m).start_time = "24:00".into(),
        &[
            "maintenanceWindows[0].startTime: \"24:00\" is not a time of day: must be HH:mm, from 00:00 to 23:59",
        ],
    ),
    (
        |m| window(m).start_time = "9:00".into(),
        &["maintenanceWindows[0].startTime: \"9:00\" is not"],
    ),
    (
        |m| window(m).start_time = "09:60".into(),
        &["maintenanceWindows[0].startTime: \"09:60\" is not"],
    ),
    (|m| window(m).start_time = "23:59".into(), &[]),
    (
        |m| window(m).utc_offset = Some("+14:30".into()),
        &[
            "maintenanceWindows[0].utcOffset: \"+14:30\" is not a UTC offset: must be ±HH:mm, from -14:00 to +14:00",
        ],
    ),
    (
        |m| window(m).utc_offset = Some("05:30".into()),
        &["maintenanceWindows[0].utcOffset: \"05:30\" is not"],
    ),
    (|m| window(m).utc_offset = Some("+05:30".into()), &[]),
    (|m| window(m).utc_offset = None, &[]),
    (
        |m| window(m).start_date = Some("2025-02-29".into()),
        &[
            "maintenanceWindows[0].startDate: \"2025-02-29\" is not a date: must be YYYY-MM-DD, e.g. 2025-12-24",
        ],
    ),
    (|m| window(m).start_date = Some("2024-02-29".into()), &[]),
    (
        |m| window(m).start_date = Some("2025-1-01".into()),
        &["maintenanceWindows[0].startDate: \"2025-1-01\" is not"],
    ),
    (
        |m| window(m).start_date = Some("2025-01-01T00:00".into()),
        &["maintenanceWindows[0].startDate: \"2025-01-01T00:00\" is not"],
    ),
    (
        |m| {
            window(m).not_allowed_dates = vec![DateSpan {
                start: "2025-12-31".into(),
                end: "2025-12-01".into(),
            }]
        },
        &[
            "maintenanceWindows[0].notAllowedDates[0]: Invalid value: start 2025-12-31 is after end 2025-12-01",
        ],
    ),
    (
        |m| {
            window(m).not_allowed_dates = vec![DateSpan {
                start: "2025-12-01".into(),
                end: "2025-12-01".into(),
            }]
        },
        &[],
    ),
    (
        |m| {
            window(m).not_allowed_dates = vec![DateSpan {
                start: "Dec 1".into(),
                end: "2025-13-01".into(),
            }]
        },
        &[
            "maintenanceWindows[0].notAllowedDates[0].start: \"Dec 1\" is not a date",
            "maintenanceWindows[0].notAllowedDates[0].end: \"2025-13-01\" is not a date",
        ],
    ),
    (
        |m| {
            m.stopped = true;
            m.upgrade = Some(UpgradeBehaviour {
                control_plane_minutes: Some(0),
                node_minutes: Some(1440),
                fail_with: Some("quota exceeded".into()),
                fail_after_steps: Some(3),
            })
        },
        &[],
    ),
    (
        |m| {
            m.upgrade = Some(UpgradeBehaviour {
                control_plane_minutes: Some(1441),
                node_minutes: Some(5000),
                fail_with: Some(" ".into()),
                fail_after_steps: None,
            })
        },
        &[
            "upgrade.controlPlaneMinutes: Invalid value: 1441: must be less than or equal to 1440",
            "upgrade.nodeMinutes: Invalid value: 5000: must be less than or equal to 1440",
            "upgrade.failWith: Required value",
        ],
    ),
    (
        |m| {
            m.upgrade = Some(UpgradeBehaviour {
                fail_after_steps: Some(2),
                ..UpgradeBehaviour::default()
            })
        },
        &["upgrade.failAfterSteps: Forbidden: only with upgrade.failWith"],
    ),
];

#[test]
fn each_rule_reports_its_field() {
    for (index, (change, expected)) in CASES.iter().enumerate() {
        let found = violations(change);
        assert_eq!(found.len(), expected.len(), "case {index}: {found:#?}");
        for (found, expected) in found.iter().zip(*expected) {
            assert!(
                found.starts_with(expected),
                "case {index}:\n{found}\ndoes not start with\n{expected}"
            );
        }
    }
}

#[test]
fn every_violation_is_listed_in_file_order() {
    let mut fleet = Fleet {
        members: vec![valid_member(), valid_member(), valid_member()],
        catalog: None,
    };
    fleet.members[0].region = "East US".into();
    fleet.members[0].node_pools[0].count = 5000;
    fleet.members[1].name = "West_1".into();
    fleet.members[2].node_pools[0].instance_type = "Standard_D3s_v5".into();
    let Err(FleetError::Invalid(found)) = fleet.validate() else {
        panic!("the fleet is invalid");
    };
    let lines: Vec<String> = found.iter().map(Violation::to_string).collect();
    let starts = [
        "member \"west-2\" (members[0]): region: \"East US\" is not a DNS label",
        "member \"west-2\" (members[0]): nodePools[0].count: Invalid value: 5000",
        "members[1].name: \"West_1\" is not a DNS label",
        "member \"west-2\" (members[2]): name: Duplicate value: \"west-2\" (same as members[0])",
        "member \"west-2\" (members[2]): nodePools[0].instanceType: unknown instance type",
    ];
    assert_eq!(lines.len(), starts.len(), "{lines:#?}");
    for (line, start) in lines.iter().zip(starts) {
        assert!(line.starts_with(start), "{line}");
    }
    assert_eq!(FleetError::Invalid(found).to_string(), lines.join("\n"));
}

#[test]
fn duplicate_members_are_reported_once_each() {
    let mut fleet = Fleet {
        members: vec![valid_member(), valid_member(), valid_member()],
        catalog: None,
    };
    fleet.members[0].node_pools[0].instance_type = "Standard_Z1s_v5".into();
    fleet.members[1].name = "east-1".into();
    let Err(FleetError::Invalid(found)) = fleet.validate() else {
        panic!("the fleet is invalid");
    };
    let lines: Vec<String> = found.iter().map(Violation::to_string).collect();
    assert_eq!(
        lines,
        [
            "member \"west-2\" (members[0]): nodePools[0].instanceType: unknown instance type \"Standard_Z1s_v5\" (the catalog has Standard_{F,D,E}{1,2,4,8,16,32,48,64,96}[p]s_v5)",
            "member \"west-2\" (members[2]): name: Duplicate value: \"west-2\" (same as members[0])",
        ]
    );
}

/// A catalog that breaks no rule.
const VALID_CATALOG: &str = r#"
kubernetesVersions:
- version: 1.31.2
  availability: [{region: eastus, availableAfterHours: -48}, {region: westus, availableAt: "2026-03-01T00:00:00Z"}]
- {version: v1.33.0, preview: true, longTermSupport: true, availability: []}
nodeImages:
- family: AKSUbuntu-2204gen2containerd
  version: 202511.02.0
  availability: [{region: eastus, availableAfterHours: 24}]
"#;

/// Each catalog violation, as displayed, after `change` to the valid catalog.
fn catalog_violations(change: impl FnOnce(&mut ReleaseCatalog)) -> Vec<String> {
    let mut catalog: ReleaseCatalog = serde_saphyr::from_str(VALID_CATALOG).unwrap();
    change(&mut catalog);
    match (Fleet {
        members: vec![],
        catalog: Some(catalog),
    })
    .validate()
    {
        Ok(()) => Vec::new(),
        Err(FleetError::Invalid(found)) => found.iter().map(Violation::to_string).collect(),
        Err(other) => panic!("unexpected {other}"),
    }
}

#[test]
fn catalog_rules_name_the_field_from_the_top() {
    assert_eq!(catalog_violations(|_| {}), Vec::<String>::new());
    assert_eq!(
        catalog_violations(|c| {
            c.kubernetes_versions[1].version = "1.31.2".into();
            c.kubernetes_versions[0].availability[1].region = "eastus".into();
            c.kubernetes_versions[0].availability[0].available_at = Some("2026-03-01".into());
        }),
        [
            "catalog.kubernetesVersions[0].availability[0]: Forbidden: exactly one of availableAt and availableAfterHours may be set",
            "catalog.kubernetesVersions[0].availability[1].region: Duplicate value: \"eastus\" (same as availability[0])",
            "catalog.kubernetesVersions[1].version: Duplicate value: \"1.31.2\" (same as catalog.kubernetesVersions[0])",
        ]
    );
    assert_eq!(
        catalog_violations(|c| {
            c.kubernetes_versions[0].version = "1.31".into();
            c.kubernetes_versions[0].availability[1].available_at = Some("tomorrow".into());
            let image = &mut c.node_images[0];
            image.availability[0].available_after_hours = None;
            image.family = "-ubuntu".into();
            image.version = "2025.x".into();
        }),
        [
            "catalog.kubernetesVersions[0].version: \"1.31\" is not a Kubernetes version: must be MAJOR.MINOR.PATCH, e.g. 1.30.3 (a leading 'v' is allowed)",
            "catalog.kubernetesVersions[0].availability[1].availableAt: \"tomorrow\" is not a time: must be RFC 3339, e.g. 2026-03-01T00:00:00Z",
            "catalog.nodeImages[0].family: \"-ubuntu\" is not an image family: must consist of letters, digits and '-', starting and ending with a letter or digit, e.g. AKSUbuntu-2204gen2containerd",
            "catalog.nodeImages[0].version: \"2025.x\" is not an image version: must be numbers separated by dots, e.g. 202511.02.0",
            "catalog.nodeImages[0].availability[0]: Required value: exactly one of availableAt and availableAfterHours must be set",
        ]
    );
    assert_eq!(
        catalog_violations(|c| {
            c.node_images.push(c.node_images[0].clone());
            c.node_images[0].availability[0].available_after_hours = Some(100_000);
        }),
        [
            "catalog.nodeImages[0].availability[0].availableAfterHours: Invalid value: 100000: must be between -87600 and 87600 (ten years), inclusive",
            "catalog.nodeImages[1]: Duplicate value: \"AKSUbuntu-2204gen2containerd-202511.02.0\" (same as catalog.nodeImages[0])",
        ]
    );
}

#[test]
fn an_empty_fleet_is_valid() {
    assert_eq!(
        Fleet {
            members: vec![],
            catalog: None
        }
        .validate(),
        Ok(())
    );
}

#[test]
fn every_catalog_name_fits_the_summary() {
    let summary = catalog_summary();
    let (families, rest) = summary["Standard_{".len()..].split_once("}{").unwrap();
    let (sizes, _) = rest.split_once('}').unwrap();
    for t in catalog::instance_types() {
        let arm = if t.arch == catalog::Arch::Arm64 {
            "p"
        } else {
            ""
        };
        let family = &t.name["Standard_".len().."Standard_".len() + 1];
        assert!(families.split(',').any(|f| f == family), "{}", t.name);
        assert!(
            sizes.split(',').any(|s| s == t.vcpu.to_string()),
            "{}",
            t.name
        );
        assert_eq!(t.name, format!("Standard_{family}{}{arm}s_v5", t.vcpu));
    }
}

#[test]
fn versions_parse_to_numbers() {
    assert_eq!(version_numbers("1.30.3"), Some([1, 30, 3]));
    assert_eq!(version_numbers("v1.31.0"), Some([1, 31, 0]));
    for bad in [
        "",
        "v",
        "1",
        "1.30",
        "1.30.3.4",
        "1..3",
        "1.30.x",
        "01.30.3",
        "vv1.30.3",
        "1.30.99999999999",
    ] {
        assert_eq!(version_numbers(bad), None, "{bad}");
    }
}

proptest::proptest! {
    /// A DNS label is exactly what Kubernetes' regex `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
    /// (at most 63 characters) accepts, checked against a straightforward reading of it.
    #[test]
    fn dns_labels_match_the_kubernetes_rule(s in "[a-z0-9A-Z_.-]{0,70}") {
        let b = s.as_bytes();
        let edge = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        let expected = !s.is_empty()
            && s.len() <= 63
            && edge(b[0])
            && edge(b[b.len() - 1])
            && b.iter().all(|&c| edge(c) || c == b'-');
        proptest::prop_assert_eq!(is_dns_label(&s), expected);
    }

    /// Every `HH:mm` and `YYYY-MM-DD` that names a real time or date is accepted, and
    /// formats back to itself.
    #[test]
    fn real_times_and_dates_are_accepted(h in 0u32..24, m in 0u32..60, day in 0i32..2_900_000) {
        let time = format!("{h:02}:{m:02}");
        proptest::prop_assert_eq!(time_of_day_problem(&time), None);
        let d = Date::new(1970, 1, 1).unwrap() + jiff::Span::new().days(day);
        proptest::prop_assert_eq!(date(&d.to_string()), Ok(d));
    }
}
