//! The fleets `flotilla up` builds without a fleet file: the default six members, and the
//! generated fleet of `--members N`.
//!
//! Both label their members the same way, so that the seed documents' placements and staged
//! update strategies select and order them without change:
//!
//! | label | values | used by |
//! |---|---|---|
//! | `environment` | `staging`, `canary`, `production` | seed 004's stages |
//! | `name` (canary only) | `1`, `2`, … | seed 004's canary `sortingLabelKey` |
//! | `order` (production only) | `1`, `2`, … | seed 004's production `sortingLabelKey` |
//! | `region` | `east`, `west`, `europe` | seed 001's `region: east` |
//! | `env` (production only) | `prod` | seed 001's `env: prod` preference |

use std::collections::BTreeMap;

use super::{
    AbsoluteMonthlySchedule, Fleet, MaintenanceWindow, MemberSpec, NodePoolSpec, Schedule,
    WeeklySchedule,
};
use crate::catalog::{self, Arch};

/// The regions of built-in fleets, each with its short `region` label value.
const REGIONS: [(&str, &str); 3] = [
    ("eastus", "east"),
    ("westus", "west"),
    ("westeurope", "europe"),
];

/// Node image releases of built-in fleets (AKS's `YYYYMM.DD.PATCH`), older first.
const IMAGE_RELEASES: [&str; 2] = ["202509.23.0", "202510.13.0"];

/// Kubernetes versions of generated fleets.
const GENERATED_VERSIONS: [&str; 3] = ["1.30.6", "1.30.5", "1.31.2"];

/// Instance types of generated fleets: small (2 to 4 vCPU), of every family and both
/// architectures, so that costs and capacities vary.
const GENERATED_TYPES: [&str; 6] = [
    "Standard_F2s_v5",
    "Standard_D2s_v5",
    "Standard_D2ps_v5",
    "Standard_E2s_v5",
    "Standard_F4s_v5",
    "Standard_D4s_v5",
];

/// Most nodes of a generated member, so that 10,000 members stay cheap to simulate.
const GENERATED_MAX_NODES: usize = 5;

/// A member's rollout environment: its `environment` label and its place in seed 004's
/// staged update strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Environment {
    Staging,
    Canary,
    Production,
}

impl Environment {
    const ALL: [Environment; 3] = [
        Environment::Staging,
        Environment::Canary,
        Environment::Production,
    ];

    fn label(self) -> &'static str {
        match self {
            Environment::Staging => "staging",
            Environment::Canary => "canary",
            Environment::Production => "production",
        }
    }
}

/// Where a built-in member stands: its region (index into [`REGIONS`]), its environment and
/// its rank within the environment (1 first; the `name` or `order` label).
#[derive(Debug, Clone, Copy)]
struct Placement {
    region: usize,
    environment: Environment,
    rank: usize,
}

impl Placement {
    /// The labels of a member placed so (see the module docs).
    fn labels(self) -> BTreeMap<String, String> {
        let rank = self.rank.to_string();
        let mut labels = vec![
            ("environment", self.environment.label().to_string()),
            ("region", REGIONS[self.region].1.to_string()),
        ];
        match self.environment {
            Environment::Staging => {}
            Environment::Canary => labels.push(("name", rank)),
            Environment::Production => {
                labels.push(("order", rank));
                labels.push(("env", "prod".to_string()));
            }
        }
        labels
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect()
    }

    /// A member placed so, without properties or maintenance windows.
    fn member(
        self,
        name: String,
        kubernetes_version: &str,
        node_pools: Vec<NodePoolSpec>,
    ) -> MemberSpec {
        MemberSpec {
            name,
            region: REGIONS[self.region].0.to_string(),
            labels: self.labels(),
            kubernetes_version: kubernetes_version.to_string(),
            node_pools,
            properties: BTreeMap::new(),
            maintenance_windows: Vec::new(),
            stopped: false,
            upgrade: None,
        }
    }
}

/// A node pool running AKS's Ubuntu 22.04 image of `release`, for the architecture of
/// `instance_type`.
fn pool(name: &str, instance_type: &str, count: u32, release: &str) -> NodePoolSpec {
    NodePoolSpec {
        name: name.to_string(),
        instance_type: instance_type.to_string(),
        count,
        node_image_version: format!("{}-{release}", default_image_family(instance_type)),
    }
}

/// The image family a pool of `instance_type` runs unless told otherwise: AKS's Ubuntu 22.04
/// gen2 containerd image, for the instance type's architecture.
pub fn default_image_family(instance_type: &str) -> &'static str {
    match catalog::instance_type(instance_type).map(|t| t.arch) {
        Some(Arch::Arm64) => "AKSUbuntu-2204gen2arm64containerd",
        _ => "AKSUbuntu-2204gen2containerd",
    }
}

/// A maintenance window of `hours` from `start_time`, local to `utc_offset`.
fn window(
    name: &str,
    schedule: Schedule,
    start_time: &str,
    hours: u32,
    utc_offset: &str,
) -> MaintenanceWindow {
    MaintenanceWindow {
        name: name.to_string(),
        schedule,
        duration_hours: hours,
        start_time: start_time.to_string(),
        utc_offset: Some(utc_offset.to_string()),
        start_date: None,
        not_allowed_dates: Vec::new(),
    }
}

/// A well-mixed 64-bit value of `n` (SplitMix64's finaliser): deterministic variety for
/// generated members without a random number generator.
fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Deterministic choices drawn from one mixed value, as the digits of a mixed-radix number.
struct Draw(u64);

impl Draw {
    /// A choice in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let choice = self.0 % n;
        self.0 /= n;
        choice as usize
    }

    /// One of `items`.
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

impl Fleet {
    /// The six members `flotilla up` runs by default, `member-cluster-01` to
    /// `member-cluster-06`, two in each of `eastus`, `westus` and `westeurope`.
    ///
    /// Shaped for the seed documents' examples:
    /// - seed 004's staged strategy: `member-cluster-02` is the one staging member;
    ///   `member-cluster-01` (`name: "1"`) then `member-cluster-03` (`name: "2"`) are canary;
    ///   production is `-05` (`order: "1"`), `-04` (`order: "2"`), `-06` (`order: "3"`), an
    ///   order that differs from the names' so that the sorting label visibly decides it;
    /// - seed 004's rolling update picks two members labelled `fleet.azure.com/location:
    ///   westus`: there are exactly two (`-02`, `-05`);
    /// - seed 001's node-count filter (`Ge 5`) keeps `-03` (5 nodes), `-04` (7) and `-06` (9)
    ///   and drops `-01` (3), `-02` (2) and `-05` (4); with `region: east` it keeps only `-04`;
    ///   every member has a different node count, CPU total and cost per core (instance
    ///   families F, D and E, amd64 and arm64, three regional price levels), so metric sorters
    ///   give each a distinct weight.
    ///
    /// Kubernetes versions are 1.31.2 on staging and the first canary, 1.30.6 and 1.30.5
    /// elsewhere; `-06` still runs the older node image (202509.23.0, the others
    /// 202510.13.0). Two members have planned maintenance: `-05` may be upgraded only in a
    /// Saturday-night window (22:00 to 04:00, UTC-8) and `-06` gets node images only on the
    /// first of each month (00:00 to 08:00, UTC+1); the others have no window.
    pub fn default_fleet() -> Fleet {
        let [older, newer] = IMAGE_RELEASES;
        let at = |region, environment, rank| Placement {
            region,
            environment,
            rank,
        };
        let named = |n: u32| format!("member-cluster-{n:02}");
        let mut members = vec![
            at(0, Environment::Canary, 1).member(
                named(1),
                "1.31.2",
                vec![pool("system", "Standard_D2s_v5", 3, newer)],
            ),
            at(1, Environment::Staging, 1).member(
                named(2),
                "1.31.2",
                vec![pool("system", "Standard_F2s_v5", 2, newer)],
            ),
            at(2, Environment::Canary, 2).member(
                named(3),
                "1.30.6",
                vec![
                    pool("system", "Standard_D2s_v5", 2, newer),
                    pool("armpool", "Standard_E4ps_v5", 3, newer),
                ],
            ),
            at(0, Environment::Production, 2).member(
                named(4),
                "1.30.6",
                vec![
                    pool("system", "Standard_D4s_v5", 3, newer),
                    pool("apps", "Standard_F8s_v5", 4, newer),
                ],
            ),
            at(1, Environment::Production, 1).member(
                named(5),
                "1.30.5",
                vec![
                    pool("system", "Standard_D4s_v5", 2, newer),
                    pool("arm", "Standard_D8ps_v5", 2, newer),
                ],
            ),
            at(2, Environment::Production, 3).member(
                named(6),
                "1.30.5",
                vec![
                    pool("system", "Standard_D4s_v5", 3, older),
                    pool("memory", "Standard_E16s_v5", 6, older),
                ],
            ),
        ];
        members[4].maintenance_windows = vec![window(
            "aksManagedAutoUpgradeSchedule",
            Schedule {
                weekly: Some(WeeklySchedule {
                    interval_weeks: 1,
                    day_of_week: "Saturday".to_string(),
                }),
                ..Schedule::default()
            },
            "22:00",
            6,
            "-08:00",
        )];
        members[5].maintenance_windows = vec![window(
            "aksManagedNodeOSUpgradeSchedule",
            Schedule {
                absolute_monthly: Some(AbsoluteMonthlySchedule {
                    interval_months: 1,
                    day_of_month: 1,
                }),
                ..Schedule::default()
            },
            "00:00",
            8,
            "+01:00",
        )];
        Fleet {
            members,
            catalog: None,
        }
    }

    /// `n` generated members, for `flotilla up --members N`. Always this pattern, whatever
    /// `n` (`generated(6)` is not the default fleet):
    ///
    /// - member `i` (from 1) is named `member-<i>`, zero-padded to the width of `n`
    ///   (`member-0001` … `member-1000` for 1000 members);
    /// - regions go round-robin (`eastus`, `westus`, `westeurope`, `eastus`, …), environments
    ///   round-robin in runs of three (`staging` ×3, `canary` ×3, `production` ×3, …), so every
    ///   nine members hold every region × environment pair; canary and production members are
    ///   ranked in name order (`name` and `order` labels 1, 2, …), and are labelled as the
    ///   default fleet's are (see the module docs);
    /// - each member has one pool, `nodepool1`, of 1 to 5 nodes of a small instance type
    ///   (2 to 4 vCPU), Kubernetes 1.30.5, 1.30.6 or 1.31.2, and one of two node image
    ///   releases, chosen by a fixed hash of `i` so that sizes and costs vary but never change
    ///   between runs; no properties, no maintenance windows.
    pub fn generated(n: usize) -> Fleet {
        let width = n.to_string().len();
        let mut ranks = [0; Environment::ALL.len()];
        let members = (0..n)
            .map(|i| {
                let environment = (i / REGIONS.len()) % Environment::ALL.len();
                ranks[environment] += 1;
                let placement = Placement {
                    region: i % REGIONS.len(),
                    environment: Environment::ALL[environment],
                    rank: ranks[environment],
                };
                let mut draw = Draw(mix(i as u64));
                let instance_type = draw.pick(&GENERATED_TYPES);
                let count = 1 + draw.below(GENERATED_MAX_NODES);
                let pools = vec![pool(
                    "nodepool1",
                    instance_type,
                    count as u32,
                    draw.pick(&IMAGE_RELEASES),
                )];
                placement.member(
                    format!("member-{:0width$}", i + 1),
                    draw.pick(&GENERATED_VERSIONS),
                    pools,
                )
            })
            .collect();
        Fleet {
            members,
            catalog: None,
        }
    }
}
