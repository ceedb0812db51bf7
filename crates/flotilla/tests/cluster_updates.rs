//! Cluster update runs end to end with the real kubectl, on
//! `examples/fleets/cluster-updates.yaml` (six members in three regions and four update
//! groups, with its own release catalog) at 600 times real time: a Consistent node image run
//! picks the newest image every region has and shows it before it starts; a two-stage Full run
//! with an injected failure fails member → group → stage → run with the message, and started
//! again it retries only what failed; a member whose maintenance window is closed waits Pending
//! with the next opening and is upgraded when it opens; every member ends on the target
//! versions, visible on its MemberCluster. Then bad input, each rejected naming the field.

mod common;

use common::update_runs::{
    flotilla_ok, group, hub_now, member, run, stage, update_fleet, wait_state,
};
use common::{HubProcess, eventually, examples_dir, get_json};
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

const SPEED: &str = "600";
const MEMBERS: [&str; 6] = ["east-a", "west-a", "eu-b", "east-c", "west-d", "eu-d"];
const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";

fn apply(hub: &HubProcess, name: &str) {
    let path = examples_dir().join("updates").join(name);
    hub.kubectl_ok(&["apply", "-f", path.to_str().unwrap()]);
}

fn time(value: &Value) -> Timestamp {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {value}"))
        .parse()
        .unwrap()
}

/// What member `name` runs, as its MemberCluster shows.
fn versions(hub: &HubProcess, name: &str) -> (String, String) {
    let member = get_json(hub, &["membercluster", name]);
    let versions = &member["status"]["versions"];
    (
        versions["kubernetesVersion"].as_str().unwrap().to_string(),
        versions["nodePools"][0]["image"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

#[test]
fn cluster_update_runs_end_to_end() {
    let hub = update_fleet(SPEED);
    let kv = hub.kubectl_ok(&["get", "kubernetesversions"]);
    assert!(kv.contains("1.32.0") && kv.contains("1.31.2"), "{kv}");

    // Consistent: per family, the newest image every region has, shown before the start.
    apply(&hub, "node-image-run.yaml");
    let selected = eventually("the Consistent choice", 30, || {
        let run = run(&hub, "node-images");
        let chosen = run["status"]["nodeImageSelection"]["selectedNodeImageVersions"].clone();
        chosen.is_array().then_some((run, chosen))
    });
    assert_eq!(selected.0["status"]["state"], "NotStarted");
    assert_eq!(
        selected.1,
        serde_json::json!([{"version": format!("{UBUNTU}-202510.20.0")}])
    );
    // Planned before it starts: one member after another, 8 simulated minutes each (two nodes
    // at 4 minutes, as the members report), the Consistent image named.
    let plan = flotilla_ok(&hub, &["updaterun", "plan", "node-images"]);
    assert!(plan.contains("Predicted finish: +48m"), "{plan}");
    let planned_order: Vec<&str> = plan
        .lines()
        .filter(|l| {
            l.contains(&format!(
                "starts upgrading to {UBUNTU}-202510.20.0 (about 8m)"
            ))
        })
        .filter_map(|l| {
            MEMBERS
                .iter()
                .copied()
                .find(|m| l.contains(&format!("  {m}  ")))
        })
        .collect();
    assert_eq!(planned_order.len(), 6, "{plan}");
    // The same forecast as a read-only subresource (what the dashboard shows).
    let forecasts = "/apis/updates.flotilla.dev/v1beta1/updateruns";
    let raw = hub.kubectl_ok(&["get", "--raw", &format!("{forecasts}/node-images/forecast")]);
    let forecast: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(forecast["kind"], "UpdateRunForecast");
    assert_eq!(forecast["end"]["finished"]["state"], "Completed");
    let timeline = forecast["timeline"].as_str().unwrap();
    assert!(timeline.contains("Predicted finish: +48m"), "{timeline}");
    let missing = hub.kubectl_err(&["get", "--raw", &format!("{forecasts}/nope/forecast")]);
    assert!(missing.contains("NotFound"), "{missing}");
    let bad = hub.kubectl_err(&[
        "get",
        "--raw",
        &format!("{forecasts}/node-images/forecast?approvalDelay=soon"),
    ]);
    assert!(bad.contains("approvalDelay"), "{bad}");
    hub.kubectl_ok(&[
        "patch",
        "updaterun",
        "node-images",
        "--type=merge",
        "-p",
        r#"{"spec":{"state":"Run"}}"#,
    ]);
    let images = wait_state(&hub, "node-images", "Completed", 120);
    assert_eq!(images["status"]["progressSummary"], "6/6");
    // Its progress told as events on the run.
    let described = eventually("the run's events", 30, || {
        let out = hub.kubectl_ok(&["describe", "updaterun", "node-images"]);
        out.contains("UpdateRunCompleted").then_some(out)
    });
    for reason in ["UpdateRunStarted", "StageStarted", "StageCompleted"] {
        assert!(described.contains(reason), "{reason} missing:\n{described}");
    }
    let mut actual_order = MEMBERS.to_vec();
    actual_order.sort_by_key(|m| time(&member(&images, m)["startTime"]));
    assert_eq!(actual_order, planned_order, "upgraded in the planned order");
    for name in MEMBERS {
        assert_eq!(
            versions(&hub, name),
            ("1.31.2".to_string(), format!("{UBUNTU}-202510.20.0")),
            "{name}"
        );
    }

    // A Full run in two stages; eu-b's upgrades fail.
    hub.kubectl_ok(&[
        "annotate",
        "membercluster",
        "eu-b",
        "updates.flotilla.dev/simulate-failure=disk full",
    ]);
    apply(&hub, "fleet-update-strategy.yaml");
    apply(&hub, "update-run.yaml");
    hub.kubectl_ok(&[
        "patch",
        "updaterun",
        "upgrade-1-32",
        "--type=merge",
        "-p",
        r#"{"spec":{"state":"Run"}}"#,
    ]);
    let failed = wait_state(&hub, "upgrade-1-32", "Failed", 120);
    let eu_b = member(&failed, "eu-b");
    assert_eq!(eu_b["state"], "Failed");
    assert!(
        eu_b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disk full"),
        "{eu_b}"
    );
    assert_eq!(group(&failed, "b")["state"], "Failed");
    assert_eq!(stage(&failed, "test")["state"], "Failed");
    let message = failed["status"]["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("stage test: 1 member failed (0 allowed): eu-b: ")
            && message.contains("disk full"),
        "{message}"
    );
    assert_eq!(
        stage(&failed, "prod")["state"],
        "NotStarted",
        "progress stopped"
    );
    let listed = hub.kubectl_ok(&["get", "updateruns"]);
    assert!(
        listed.contains("upgrade-1-32") && listed.contains("Failed") && listed.contains("1.32.0"),
        "{listed}"
    );

    // east-c may only be upgraded in a daily window opening four simulated hours from now.
    let now = hub_now(&hub);
    let opens = (now + SignedDuration::from_hours(4))
        .round(jiff::Unit::Hour)
        .unwrap();
    let start = opens
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%H:%M")
        .to_string();
    hub.create(&format!(
        "apiVersion: updates.flotilla.dev/v1beta1\nkind: MaintenanceConfiguration\nmetadata:\n  name: aks-managed-auto-upgrade-schedule\n  namespace: fleet-member-east-c\nspec:\n  maintenanceWindow:\n    schedule:\n      daily:\n        intervalDays: 1\n    durationHours: 4\n    startTime: \"{start}\"\n"
    ));

    // Started again: only eu-b is retried; east-a and west-a are not upgraded twice.
    hub.kubectl_ok(&[
        "annotate",
        "membercluster",
        "eu-b",
        "updates.flotilla.dev/simulate-failure-",
    ]);
    let before = run(&hub, "upgrade-1-32");
    let east_a = member(&before, "east-a").clone();
    hub.kubectl_ok(&[
        "patch",
        "updaterun",
        "upgrade-1-32",
        "--type=merge",
        "-p",
        r#"{"spec":{"attempt":1}}"#,
    ]);
    let pending = eventually("east-c waits for its window", 120, || {
        let run = run(&hub, "upgrade-1-32");
        (member(&run, "east-c")["state"] == "Pending").then_some(run)
    });
    let retried = member(&pending, "eu-b");
    assert_eq!(retried["state"], "Completed");
    assert_eq!(retried["operationId"], "upgrade-1-32-retry1");
    assert_eq!(
        member(&pending, "east-a")["startTime"],
        east_a["startTime"],
        "not upgraded twice"
    );
    let waiting = member(&pending, "east-c");
    assert_eq!(waiting["error"]["code"], "MaintenanceWindowClosed");
    let why = waiting["error"]["message"].as_str().unwrap();
    assert!(
        why.starts_with(&format!("maintenance window closed; next opening {opens}")),
        "{why}"
    );
    assert_eq!(group(&pending, "c")["state"], "Pending");

    let done = wait_state(&hub, "upgrade-1-32", "Completed", 180);
    assert!(
        time(&member(&done, "east-c")["startTime"]) >= opens,
        "upgraded inside its window"
    );
    let test_done = time(&stage(&done, "test")["completedTime"]);
    let prod_started = time(&stage(&done, "prod")["startTime"]);
    assert!(prod_started >= test_done, "stages run in order");
    assert_eq!(
        stage(&done, "test")["afterStageWaitStatus"]["state"],
        "Completed"
    );
    for name in MEMBERS {
        let (kubernetes, image) = versions(&hub, name);
        assert_eq!(kubernetes, "1.32.0", "{name}");
        let want = if name.starts_with("eu-") {
            "202510.20.0"
        } else {
            "202510.27.0"
        };
        assert_eq!(
            image,
            format!("{UBUNTU}-{want}"),
            "{name}: Latest is the newest image of its region"
        );
    }
    let columns = hub.kubectl_ok(&["get", "memberclusters"]);
    assert!(
        columns.contains("KUBERNETES-VERSION") && columns.contains("1.32.0"),
        "{columns}"
    );
}

#[test]
fn a_new_rapid_release_generates_an_auto_upgrade_run_that_completes() {
    let hub = update_fleet(SPEED);
    apply(&hub, "fleet-update-strategy.yaml");
    apply(&hub, "auto-upgrade-profile.yaml");
    // A new profile records where its channel is and waits for the next release.
    let watching = eventually("the profile looks at its channel", 30, || {
        let profile = get_json(&hub, &["autoupgradeprofile", "rapid"]);
        profile["status"]["channelVersions"]
            .is_array()
            .then_some(profile)
    });
    assert_eq!(
        watching["status"]["channelVersions"],
        serde_json::json!(["1.32.0"])
    );
    assert!(
        watching["status"]["lastTriggeredRun"].is_null(),
        "{watching}"
    );
    let message = watching["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("watching the Rapid channel, now at 1.32.0"),
        "{message}"
    );

    // west-d is stopped: its agent reports it, and the run skips it instead of failing.
    hub.kubectl_ok(&[
        "annotate",
        "membercluster",
        "west-d",
        "updates.flotilla.dev/simulate-stopped=true",
    ]);
    eventually("west-d reports it is stopped", 60, || {
        let member = get_json(&hub, &["membercluster", "west-d"]);
        (member["status"]["versions"]["powerState"] == "Stopped").then_some(())
    });

    // 1.32.1 is released in every region.
    let released = (hub_now(&hub) - SignedDuration::from_hours(1)).to_string();
    let availability: String = ["eastus", "westus", "westeurope"]
        .iter()
        .map(|r| format!("  - {{region: {r}, availableAt: \"{released}\"}}\n"))
        .collect();
    hub.create(&format!(
        "apiVersion: updates.flotilla.dev/v1beta1\nkind: KubernetesVersion\nmetadata:\n  name: 1.32.1\nspec:\n  version: 1.32.1\n  availability:\n{availability}"
    ));
    let triggered = eventually("the release triggers a run", 60, || {
        let profile = get_json(&hub, &["autoupgradeprofile", "rapid"]);
        let name = profile["status"]["lastTriggeredRun"].as_str()?.to_string();
        Some((name, profile))
    });
    let (name, profile) = triggered;
    assert!(
        name.starts_with("rapid-") && name.len() == "rapid-".len() + 8,
        "{name}"
    );
    assert_eq!(profile["status"]["lastTriggerStatus"], "Succeeded");
    assert_eq!(
        profile["status"]["lastTriggerUpgradeVersions"],
        serde_json::json!(["1.32.1"])
    );
    let generated = run(&hub, &name);
    assert_eq!(generated["spec"]["state"], "Run", "started at once");
    assert_eq!(generated["spec"]["updateStrategyName"], "two-stages");
    assert_eq!(generated["spec"]["autoUpgradeProfileName"], "rapid");
    assert_eq!(
        generated["spec"]["managedClusterUpdate"]["upgrade"],
        serde_json::json!({"type": "Full", "kubernetesVersion": "1.32.1"})
    );
    let listed = hub.kubectl_ok(&[
        "get",
        "updateruns",
        "-l",
        "updates.flotilla.dev/auto-upgrade-profile=rapid",
        "-o",
        "name",
    ]);
    assert_eq!(
        listed.trim(),
        format!("updaterun.updates.flotilla.dev/{name}")
    );

    let done = wait_state(&hub, &name, "Completed", 180);
    let stopped = member(&done, "west-d");
    assert_eq!(stopped["state"], "Skipped", "{stopped}");
    let why = stopped["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("the cluster is stopped"), "{stopped}");
    for name in MEMBERS.iter().filter(|m| **m != "west-d") {
        assert_eq!(versions(&hub, name).0, "1.32.1", "{name}");
    }
    assert_eq!(
        versions(&hub, "west-d").0,
        "1.31.2",
        "a stopped cluster is left alone"
    );

    // Nothing new in the channel: no second run, and the profile says where it stands.
    let profiles = hub.kubectl_ok(&["get", "autoupgradeprofiles"]);
    assert!(
        profiles.contains("Rapid") && profiles.contains("Succeeded") && profiles.contains(&name),
        "{profiles}"
    );
    let runs = hub.kubectl_ok(&["get", "updateruns", "-o", "name"]);
    assert_eq!(runs.lines().count(), 1, "{runs}");

    // Generating by hand for the same release finds the same run, unchanged.
    let said = flotilla_ok(
        &hub,
        &["autoupgradeprofile", "generate-update-run", "-n", "rapid"],
    );
    assert!(
        said.contains(&format!("updaterun.updates.flotilla.dev/{name} unchanged")),
        "{said}"
    );
    assert_eq!(run(&hub, &name)["status"]["state"], "Completed");
}

#[test]
fn bad_update_input_is_rejected_naming_the_field() {
    let hub = HubProcess::start();
    let cases = [
        (
            "apiVersion: updates.flotilla.dev/v1beta1\nkind: UpdateRun\nmetadata: {name: r1}\nspec:\n  managedClusterUpdate:\n    upgrade: {type: NodeImageOnly, kubernetesVersion: 1.32.0}\n",
            "spec.managedClusterUpdate.upgrade.kubernetesVersion: Forbidden: may not be set when type is NodeImageOnly",
        ),
        (
            "apiVersion: updates.flotilla.dev/v1beta1\nkind: UpdateRun\nmetadata: {name: r2}\nspec:\n  updateStrategyName: s\n  strategy:\n    stages: [{name: one, groups: [{name: a}]}]\n  managedClusterUpdate:\n    upgrade: {type: Full, kubernetesVersion: 1.32.0}\n",
            "spec.strategy: Forbidden: may not be set together with spec.updateStrategyName",
        ),
        (
            "apiVersion: updates.flotilla.dev/v1beta1\nkind: FleetUpdateStrategy\nmetadata: {name: s}\nspec:\n  stages:\n  - {name: one, groups: [{name: a}]}\n  - {name: two, groups: [{name: a}]}\n",
            "spec.stages[1].groups[0].name: Duplicate value: \"a\"",
        ),
        (
            "apiVersion: updates.flotilla.dev/v1beta1\nkind: MaintenanceConfiguration\nmetadata: {name: aks-managed-auto-upgrade-schedule, namespace: default}\nspec:\n  maintenanceWindow:\n    schedule: {daily: {intervalDays: 1}}\n    durationHours: 3\n    startTime: \"01:00\"\n",
            "spec.maintenanceWindow.durationHours",
        ),
    ];
    for (yaml, want) in cases {
        let out = hub.kubectl_stdin(&["apply", "-f", "-"], yaml);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(want),
            "want {want:?} in:\n{err}"
        );
    }
    let stored = hub.kubectl_ok(&[
        "get",
        "updateruns,fleetupdatestrategies,maintenanceconfigurations",
        "-A",
        "-o",
        "name",
    ]);
    assert!(
        stored.trim().is_empty(),
        "nothing invalid was stored: {stored}"
    );
}
