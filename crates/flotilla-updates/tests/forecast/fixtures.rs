//! Fleets to forecast over: members with reported versions and expected durations, maintenance
//! windows, and a release catalog over three regions. Shared by the forecast tests and the
//! orchestration benchmark.

use flotilla_api::cluster::MemberCluster;
use flotilla_api::updates::{
    KubernetesVersion, MaintenanceConfiguration, NodeImageVersion, UpdateRun,
};
use flotilla_updates::fleet::FleetView;
use jiff::Timestamp;
use serde_json::{Value, json};

/// The image family every member's pool runs.
pub const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";
/// The image members run before the run.
pub const OLD_IMAGE: &str = "AKSUbuntu-2204gen2containerd-202510.13.0";
/// The newest image every region has: what a Consistent run chooses.
pub const NEW_IMAGE: &str = "AKSUbuntu-2204gen2containerd-202511.02.0";
/// The regions of the fleet.
pub const REGIONS: [&str; 3] = ["eastus", "westus", "northeurope"];

/// The forecasts' `now`: Saturday 2026-11-21, midnight UTC.
pub fn t0() -> Timestamp {
    "2026-11-21T00:00:00Z".parse().unwrap()
}

/// `t0` plus `minutes`.
pub fn plus(minutes: i64) -> Timestamp {
    t0() + jiff::SignedDuration::from_mins(minutes)
}

/// Objects of a fleet, as a client lists them.
#[derive(Clone)]
pub struct Fleet {
    pub members: Vec<MemberCluster>,
    pub windows: Vec<MaintenanceConfiguration>,
    pub kubernetes: Vec<KubernetesVersion>,
    pub images: Vec<NodeImageVersion>,
}

fn object<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// Availability in every region from 2026-11-01 on, but `late` regions at their time.
fn everywhere(late: &[(&str, &str)]) -> Value {
    REGIONS
        .iter()
        .map(|region| {
            let when = late
                .iter()
                .find(|(r, _)| r == region)
                .map_or("2026-11-01T00:00:00Z", |(_, when)| *when);
            json!({"region": region, "availableAt": when})
        })
        .collect()
}

impl Fleet {
    /// No members; Kubernetes 1.30.6 and 1.31.2 and two images of [`UBUNTU`], everywhere.
    pub fn new() -> Fleet {
        Fleet::with_late_releases(&[])
    }

    /// As [`Fleet::new`], with Kubernetes 1.31.2 reaching the `late` regions at their time.
    pub fn with_late_releases(late: &[(&str, &str)]) -> Fleet {
        let kubernetes = [("1.30.6", everywhere(&[])), ("1.31.2", everywhere(late))]
            .into_iter()
            .map(|(version, availability)| {
                object(json!({
                    "apiVersion": "updates.flotilla.dev/v1beta1", "kind": "KubernetesVersion",
                    "metadata": {"name": version},
                    "spec": {"version": version, "availability": availability},
                }))
            })
            .collect();
        let images = ["202510.13.0", "202511.02.0"]
            .into_iter()
            .map(|version| {
                object(json!({
                    "apiVersion": "updates.flotilla.dev/v1beta1", "kind": "NodeImageVersion",
                    "metadata": {"name": format!("ubuntu-{version}")},
                    "spec": {"family": UBUNTU, "version": version, "availability": everywhere(&[])},
                }))
            })
            .collect();
        Fleet {
            members: Vec::new(),
            windows: Vec::new(),
            kubernetes,
            images,
        }
    }

    /// Adds a member of update group `group` in `region` running 1.30.6 and [`OLD_IMAGE`] on
    /// `nodes` nodes, expecting `durations` (control plane, node) seconds (`None`: reports
    /// none).
    pub fn member(
        &mut self,
        name: &str,
        group: &str,
        region: &str,
        nodes: u32,
        durations: Option<(u64, u64)>,
    ) -> &mut MemberCluster {
        let durations =
            durations.map(|(cp, node)| json!({"controlPlaneSeconds": cp, "nodeSeconds": node}));
        self.members.push(object(json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
            "metadata": {"name": name, "labels": {
                "updates.flotilla.dev/group": group,
                "topology.kubernetes.io/region": region,
            }},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "agent", "namespace": "fleet-system"}},
            "status": {"versions": {
                "kubernetesVersion": "1.30.6",
                "nodePools": [{
                    "name": "system", "image": OLD_IMAGE, "imageFamily": UBUNTU,
                    "imageVersion": "202510.13.0", "nodeCount": nodes,
                }],
                "expectedDurations": durations,
            }},
        })));
        self.members.last_mut().expect("just added")
    }

    /// Gives `member` a daily Kubernetes upgrade window opening at `start` (`HH:mm` UTC) for
    /// `hours`.
    pub fn daily_window(&mut self, member: &str, start: &str, hours: u32) {
        self.windows.push(object(json!({
            "apiVersion": "updates.flotilla.dev/v1beta1", "kind": "MaintenanceConfiguration",
            "metadata": {"name": "aks-managed-auto-upgrade-schedule", "namespace": format!("fleet-member-{member}")},
            "spec": {"maintenanceWindow": {
                "schedule": {"daily": {"intervalDays": 1}},
                "durationHours": hours, "startTime": start, "utcOffset": "+00:00",
            }},
        })));
    }

    /// The view a forecast reads.
    pub fn view(&self) -> FleetView<'_> {
        FleetView::new(&self.members, &self.windows, &self.kubernetes, &self.images)
    }
}

/// A run named `r` upgrading (`Full`) to 1.31.2 with Consistent images, following `strategy`
/// (`null`: none), not started.
pub fn run(strategy: Value) -> UpdateRun {
    object(json!({
        "apiVersion": "updates.flotilla.dev/v1beta1", "kind": "UpdateRun",
        "metadata": {"name": "r"},
        "spec": {
            "strategy": strategy,
            "managedClusterUpdate": {
                "upgrade": {"type": "Full", "kubernetesVersion": "1.31.2"},
                "nodeImageSelection": {"type": "Consistent"},
            },
        },
    }))
}

/// Two stages of two groups with an hour's wait between and an approval before the second.
pub fn two_stages() -> Value {
    json!({"stages": [
        {"name": "test", "groups": [{"name": "a"}, {"name": "b"}], "afterStageWaitInSeconds": 3600},
        {"name": "prod", "groups": [{"name": "c"}, {"name": "d"}],
         "beforeGates": [{"type": "Approval", "displayName": "go to prod"}]},
    ]})
}

/// A fleet of `size` members over groups a–d and [`REGIONS`], one in five with a daily
/// four-hour window (at hours spread over the day), nodes and durations varying by member;
/// Kubernetes 1.31.2 reaches northeurope two days after `t0`. With the run of
/// [`two_stages`]: groups one member at a time, the O(n²) case of the run core.
pub fn large(size: usize) -> Fleet {
    let mut fleet = Fleet::with_late_releases(&[("northeurope", "2026-11-23T00:00:00Z")]);
    for i in 0..size {
        let name = format!("m{i:05}");
        let nodes = 1 + (i % 5) as u32;
        let durations = Some((600 + 60 * (i % 7) as u64, 240 + 30 * (i % 3) as u64));
        fleet.member(
            &name,
            ["a", "b", "c", "d"][i % 4],
            REGIONS[i % 3],
            nodes,
            durations,
        );
        if i % 5 == 0 {
            fleet.daily_window(&name, &format!("{:02}:00", (i * 7) % 24), 4);
        }
    }
    fleet
}
