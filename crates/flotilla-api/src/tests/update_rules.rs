//! Table tests of the `updates.flotilla.dev` rules: each case changes a valid object and lists
//! the exact messages expected.

use serde_json::{Value, json};

use super::served;
use crate::validate;

const UPDATES: &str = "updates.flotilla.dev";

fn messages(kind: &str, new: &Value, old: Option<&Value>) -> Vec<String> {
    validate(UPDATES, kind, new, old, served())
        .iter()
        .map(|e| e.message())
        .collect()
}

fn run(spec: Value) -> Value {
    json!({"apiVersion": "updates.flotilla.dev/v1beta1", "kind": "UpdateRun",
           "metadata": {"name": "run"}, "spec": spec})
}

fn full(version: &str) -> Value {
    json!({"upgrade": {"type": "Full", "kubernetesVersion": version}})
}

fn two_stages() -> Value {
    json!({"stages": [
        {"name": "canary", "groups": [{"name": "a"}, {"name": "b"}], "afterStageWaitInSeconds": 60},
        {"name": "prod", "groups": [{"name": "c"}, {"name": "d"}]}
    ]})
}

#[test]
fn a_valid_run_and_strategy_pass() {
    let spec = json!({"strategy": two_stages(), "managedClusterUpdate": full("1.31.2")});
    assert_eq!(
        messages("UpdateRun", &run(spec), None),
        Vec::<String>::new()
    );
    let strategy = json!({"metadata": {"name": "s"}, "spec": two_stages()});
    assert_eq!(
        messages("FleetUpdateStrategy", &strategy, None),
        Vec::<String>::new()
    );
}

#[test]
fn run_rules_name_the_field() {
    let cases = [
        (
            json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly", "kubernetesVersion": "1.31.2"}}}),
            vec![
                "spec.managedClusterUpdate.upgrade.kubernetesVersion: Forbidden: may not be set when type is NodeImageOnly",
            ],
        ),
        (
            json!({"managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly"}}}),
            vec![
                "spec.managedClusterUpdate.upgrade.kubernetesVersion: Required value: required when type is Full or ControlPlaneOnly",
            ],
        ),
        (
            json!({"updateStrategyName": "s", "strategy": two_stages(), "managedClusterUpdate": full("1.31.2")}),
            vec!["spec.strategy: Forbidden: may not be set together with spec.updateStrategyName"],
        ),
        (
            json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly"},
                   "nodeImageSelection": {"type": "Custom"}}}),
            vec![
                "spec.managedClusterUpdate.nodeImageSelection.customNodeImageVersions: Required value: required when type is Custom",
            ],
        ),
        (
            json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly"},
                   "nodeImageSelection": {"type": "Custom", "customNodeImageVersions": [
                       {"version": "AKSUbuntu-2204gen2containerd-202510.13.0"},
                       {"version": "AKSUbuntu-2204gen2containerd-202511.02.0"}]}}}),
            vec![
                "spec.managedClusterUpdate.nodeImageSelection.customNodeImageVersions[1].version: Duplicate value: \"AKSUbuntu-2204gen2containerd-202511.02.0\": at most one version per image family; AKSUbuntu-2204gen2containerd is already at [0]",
            ],
        ),
        (
            json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly"},
                   "nodeImageSelection": {"type": "Latest", "customNodeImageVersions": [{"version": "A-1"}]}}}),
            vec![
                "spec.managedClusterUpdate.nodeImageSelection.customNodeImageVersions: Forbidden: may only be set when type is Custom",
            ],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(
            messages("UpdateRun", &run(spec.clone()), None),
            want,
            "{spec}"
        );
    }
}

#[test]
fn strategy_rules_name_the_field() {
    let cases = [
        (
            json!({"stages": [{"name": "one", "groups": [{"name": "a"}]}, {"name": "two", "groups": [{"name": "a"}]}]}),
            vec![
                "spec.stages[1].groups[0].name: Duplicate value: \"a\": a group may appear only once; it is already in stage \"one\"",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "groups": [{"name": "a"}]}, {"name": "one", "groups": [{"name": "b"}]}]}),
            vec!["spec.stages[1].name: Duplicate value: \"one\": stage names must be unique"],
        ),
        (
            json!({"stages": [{"name": "one"}]}),
            vec![
                "spec.stages[0].groups: Required value: a stage needs groups, or a memberSelector to form one implicit group",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "maxConcurrency": "51", "groups": [{"name": "a"}]}]}),
            vec!["spec.stages[0].maxConcurrency: Invalid value: \"51\": must be at most 50"],
        ),
        (
            json!({"stages": [{"name": "one", "maxConcurrency": "2", "groups": [{"name": "a", "maxConcurrency": "3"}]}]}),
            vec![
                "spec.stages[0].groups[0].maxConcurrency: Invalid value: \"3\": must not exceed the stage's maxConcurrency (2)",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "memberSelector": {"byLabel": "tier>2"}}]}),
            vec![
                "spec.stages[0].memberSelector.byLabel: Invalid value: \"tier>2\": \"tier\": only =, !=, in, notin, exists (key) and does-not-exist (!key) are supported",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "memberSelector": {"byLabel": "env in (prod"}}]}),
            vec![
                "spec.stages[0].memberSelector.byLabel: Invalid value: \"env in (prod\": \
                 unable to parse requirement: found '', expected: ',' or ')'",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "memberSelector": {"byLabel": "env=a,env=b"}}]}),
            vec![
                "spec.stages[0].memberSelector.byLabel: Invalid value: \"env=a,env=b\": label key \"env\" appears more than once",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "groups": [{"name": "a"}], "afterGates": [
                {"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Monday", "startTime": "09:00"}}]}]}),
            vec![
                "spec.stages[0].afterGates[0].type: Forbidden: ScheduledStart gates may only be before-gates",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "groups": [{"name": "a", "beforeGates": [{"type": "ScheduledStart"}]}]}]}),
            vec![
                "spec.stages[0].groups[0].beforeGates[0].scheduledStartConfiguration: Required value: required for a ScheduledStart gate",
            ],
        ),
        (
            json!({"stages": [{"name": "one", "groups": [{"name": "a"}], "beforeGates": [
                {"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Monday", "startTime": "09:00", "utcOffset": "+14:30"}}]}]}),
            vec![
                "spec.stages[0].beforeGates[0].scheduledStartConfiguration.utcOffset: Invalid value: \"+14:30\": must be ±HH:mm within ±14:00",
            ],
        ),
    ];
    for (spec, want) in cases {
        let strategy = json!({"metadata": {"name": "s"}, "spec": spec});
        assert_eq!(
            messages("FleetUpdateStrategy", &strategy, None),
            want,
            "{spec}"
        );
    }
}

#[test]
fn a_started_run_keeps_its_target_and_attempts_only_grow() {
    let old = json!({"metadata": {"name": "run"},
        "spec": {"managedClusterUpdate": full("1.31.2"), "attempt": 1},
        "status": {"state": "Running"}});
    let new = run(json!({"managedClusterUpdate": full("1.32.0"), "attempt": 0}));
    assert_eq!(
        messages("UpdateRun", &new, Some(&old)),
        vec![
            "spec.managedClusterUpdate: Invalid value: {\"upgrade\":{\"type\":\"Full\",\"kubernetesVersion\":\"1.32.0\"}}: may not change once the run has started",
            "spec.attempt: Invalid value: 0: may not decrease",
        ]
    );
    let not_started = json!({"metadata": {"name": "run"},
        "spec": {"managedClusterUpdate": full("1.31.2")}, "status": {"state": "NotStarted"}});
    let edited = run(json!({"managedClusterUpdate": full("1.32.0"), "state": "Run"}));
    assert_eq!(
        messages("UpdateRun", &edited, Some(&not_started)),
        Vec::<String>::new()
    );
}

fn window(name: &str, window: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": "fleet-member-a"},
           "spec": {"maintenanceWindow": window}})
}

#[test]
fn maintenance_rules_name_the_field() {
    let weekly = json!({"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}});
    let ok = json!({"schedule": weekly, "durationHours": 6, "startTime": "22:00", "utcOffset": "-08:00",
        "notAllowedDates": [{"start": "2026-12-23", "end": "2027-01-03"}]});
    assert_eq!(
        messages(
            "MaintenanceConfiguration",
            &window("aks-managed-auto-upgrade-schedule", ok.clone()),
            None
        ),
        Vec::<String>::new()
    );
    let daily = json!({"daily": {"intervalDays": 1}});
    let cases = [
        (
            "nightly",
            ok.clone(),
            vec![
                "metadata.name: Unsupported value: \"nightly\": supported values: \"default\", \"aks-managed-auto-upgrade-schedule\", \"aks-managed-node-os-upgrade-schedule\"",
            ],
        ),
        (
            "default",
            json!({"schedule": daily, "durationHours": 4, "startTime": "01:00"}),
            vec![
                "spec.maintenanceWindow.schedule: Invalid value: \"daily\": the default configuration supports a weekly schedule only",
            ],
        ),
        (
            "aks-managed-node-os-upgrade-schedule",
            json!({"schedule": {"daily": {"intervalDays": 1}, "weekly": {"intervalWeeks": 1, "dayOfWeek": "Monday"}}, "durationHours": 4, "startTime": "01:00"}),
            vec![
                "spec.maintenanceWindow.schedule: Invalid value: \"daily,weekly\": exactly one of daily, weekly, absoluteMonthly or relativeMonthly must be set",
            ],
        ),
        (
            "aks-managed-node-os-upgrade-schedule",
            json!({"schedule": daily, "durationHours": 4, "startTime": "01:00", "utcOffset": "+15:00", "startDate": "2026-02-30",
                   "notAllowedDates": [{"start": "2026-12-23", "end": "2026-12-01"}]}),
            vec![
                "spec.maintenanceWindow.utcOffset: Invalid value: \"+15:00\": must be ±HH:mm within ±14:00",
                "spec.maintenanceWindow.startDate: Invalid value: \"2026-02-30\": must be a calendar date, YYYY-MM-DD",
                "spec.maintenanceWindow.notAllowedDates[0].end: Invalid value: \"2026-12-01\": must not be before start",
            ],
        ),
    ];
    for (name, spec, want) in cases {
        assert_eq!(
            messages(
                "MaintenanceConfiguration",
                &window(name, spec.clone()),
                None
            ),
            want,
            "{name} {spec}"
        );
    }
}

#[test]
fn profile_rules_name_the_field() {
    let profile = |spec: Value| json!({"metadata": {"name": "p"}, "spec": spec});
    let cases = [
        (json!({"channel": "Stable"}), Vec::<&str>::new()),
        (
            json!({"channel": "TargetKubernetesVersion"}),
            vec![
                "spec.targetKubernetesVersion: Required value: required when channel is TargetKubernetesVersion",
            ],
        ),
        (
            json!({"channel": "Rapid", "targetKubernetesVersion": "1.31", "longTermSupport": true}),
            vec![
                "spec.targetKubernetesVersion: Forbidden: may only be set when channel is TargetKubernetesVersion",
                "spec.longTermSupport: Forbidden: may only be set when channel is TargetKubernetesVersion",
            ],
        ),
        (
            json!({"channel": "NodeImage", "nodeImageSelection": "Consistent"}),
            vec![
                "spec.nodeImageSelection: Forbidden: the NodeImage channel always uses the latest images",
            ],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(
            messages("AutoUpgradeProfile", &profile(spec.clone()), None),
            want,
            "{spec}"
        );
    }
    let old = profile(json!({"channel": "Stable", "updateStrategyName": "a"}));
    let new = profile(json!({"channel": "Stable", "updateStrategyName": "b"}));
    assert_eq!(
        messages("AutoUpgradeProfile", &new, Some(&old)),
        vec![
            "spec.updateStrategyName: Invalid value: \"b\": field is immutable (set only at creation)"
        ]
    );
}
