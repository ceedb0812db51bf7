//! The controls of cluster update runs end to end, with the real kubectl and the real
//! `flotilla` binary on `examples/fleets/cluster-updates.yaml` (groups a: east-a, west-a;
//! b: eu-b; c: east-c; d: west-d, eu-d; a Full upgrade takes a member 18 simulated minutes, a
//! node image upgrade 8):
//!
//! - stop (a kubectl patch) lets the member upgrade in flight finish, ends the run, its stage
//!   and group Stopped and starts nothing new; `flotilla updaterun start` runs it again and it
//!   completes, retrying nothing that was done;
//! - skips at every level (`flotilla updaterun skip` and a kubectl patch of `spec.skip`) end
//!   their targets Skipped and the run completes;
//! - Approval gates of a stage and of a group hold the run (the Gate Pending, listed by kubectl
//!   and `flotilla gate list`) until `flotilla gate approve` or kubectl's status patch completes
//!   them; an approval given while the run is stopped counts once it is started again;
//! - `flotilla updaterun create` with `--stages` (JSON inline or a YAML file) and with
//!   `--update-strategy-name` makes runs that wait NotStarted and complete once started; bad
//!   flag combinations and what the hub refuses are reported naming the flag or field.
//!
//! Two tests record controller bugs and are ignored until `flotilla-updates` is fixed.

mod common;

use common::update_runs::{
    flotilla_err, flotilla_ok, group, hub_now, member, run, stage, update_fleet, wait_state,
};
use common::{HubProcess, eventually, get_json};
use serde_json::{Value, json};

/// The clock speed of most tests: a simulated hour is six real seconds.
const SPEED: u64 = 600;
/// The clock speed of the stop test: a Full upgrade (18 simulated minutes) takes 9 real
/// seconds, ample time to stop the run while it is in flight.
const STOP_SPEED: u64 = 120;
/// Real seconds added to every wait, for a machine busy with other tests.
const SLACK: u64 = 60;

/// Real seconds to wait for `minutes` of simulated time at `speed`, with [`SLACK`].
fn within(minutes: u64, speed: u64) -> u64 {
    minutes * 60 / speed + SLACK
}

/// Waits until the controller has laid the run's strategy over the fleet.
fn wait_planned(hub: &HubProcess, name: &str) -> Value {
    eventually(&format!("run {name} planned"), 30, || {
        let run = run(hub, name);
        run["status"]["stages"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
            .then_some(run)
    })
}

/// The Kubernetes version member `name` reports on its MemberCluster.
fn kubernetes_version(hub: &HubProcess, name: &str) -> String {
    let member = get_json(hub, &["membercluster", name]);
    member["status"]["versions"]["kubernetesVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The node image of member `name`'s first pool, as its MemberCluster reports it.
fn node_image(hub: &HubProcess, name: &str) -> String {
    let member = get_json(hub, &["membercluster", name]);
    member["status"]["versions"]["nodePools"][0]["image"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `kubectl get gate NAME -o jsonpath={.status.state}`.
fn gate_state(hub: &HubProcess, name: &str) -> String {
    hub.kubectl_ok(&["get", "gate", name, "-o", "jsonpath={.status.state}"])
}

/// `kubectl patch updaterun NAME --type=merge -p {"spec": SPEC}`.
fn patch_spec(hub: &HubProcess, name: &str, spec: Value) {
    let patch = json!({ "spec": spec }).to_string();
    hub.kubectl_ok(&["patch", "updaterun", name, "--type=merge", "-p", &patch]);
}

/// An UpdateRun upgrading to Kubernetes 1.32.0 (Latest images) following `stages`, created
/// with kubectl; it waits NotStarted.
fn create_full_run(hub: &HubProcess, name: &str, stages: &str) {
    hub.create(&format!(
        r#"
apiVersion: updates.flotilla.dev/v1beta1
kind: UpdateRun
metadata:
  name: {name}
spec:
  managedClusterUpdate:
    upgrade: {{type: Full, kubernetesVersion: 1.32.0}}
  strategy:
    stages:
{stages}"#
    ));
}

#[test]
fn stop_lets_the_upgrade_in_flight_finish_and_start_resumes() {
    let hub = update_fleet(&STOP_SPEED.to_string());
    create_full_run(
        &hub,
        "halt",
        "    - name: only\n      groups: [{name: a}]\n",
    );
    wait_planned(&hub, "halt");
    assert_eq!(
        flotilla_ok(&hub, &["updaterun", "start", "halt"]),
        "updaterun.updates.flotilla.dev/halt started\n"
    );
    let first = eventually(
        "a member of group a upgrading",
        within(30, STOP_SPEED),
        || {
            let run = run(&hub, "halt");
            ["east-a", "west-a"]
                .into_iter()
                .find(|m| member(&run, m)["state"] == "Running")
        },
    );
    let second = if first == "east-a" {
        "west-a"
    } else {
        "east-a"
    };
    patch_spec(&hub, "halt", json!({"state": "Stop"}));

    // Stopping while the upgrade is in flight: it is not aborted.
    let stopping = wait_state(&hub, "halt", "Stopping", within(18, STOP_SPEED));
    assert_eq!(member(&stopping, first)["state"], "Running");
    let stopped = wait_state(&hub, "halt", "Stopped", within(18, STOP_SPEED));
    assert_eq!(member(&stopped, first)["state"], "Completed");
    assert_eq!(group(&stopped, "a")["state"], "Stopped");
    assert_eq!(stage(&stopped, "only")["state"], "Stopped");
    // Nothing new started: the pass that stopped the run left the other member alone, and it
    // has no upgrade.
    let waiting = member(&stopped, second);
    assert_eq!(waiting["state"], "NotStarted", "{waiting}");
    assert!(waiting.get("operationId").is_none(), "{waiting}");
    let upgrades = hub.kubectl_ok(&[
        "get",
        "memberupgrades",
        "-A",
        "-l",
        "updates.flotilla.dev/update-run=halt",
        "-o",
        "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}",
    ]);
    assert_eq!(upgrades, format!("fleet-member-{first}/halt\n"));
    eventually(&format!("{first} reports 1.32.0"), 30, || {
        (kubernetes_version(&hub, first) == "1.32.0").then_some(())
    });
    assert_eq!(kubernetes_version(&hub, second), "1.31.2");

    assert_eq!(
        flotilla_ok(&hub, &["updaterun", "stop", "halt"]),
        "updaterun.updates.flotilla.dev/halt is already stopped\n"
    );
    // Started again: a Stopped run gets its attempt raised and goes on where it stopped.
    assert_eq!(
        flotilla_ok(&hub, &["updaterun", "start", "halt"]),
        "updaterun.updates.flotilla.dev/halt started again (attempt 1)\n"
    );
    let done = wait_state(&hub, "halt", "Completed", within(18, STOP_SPEED));
    assert_eq!(done["spec"]["attempt"], 1);
    assert_eq!(done["status"]["progressSummary"], "2/2");
    assert_eq!(member(&done, second)["state"], "Completed");
    assert_eq!(member(&done, second)["operationId"], "halt-retry1");
    assert_eq!(
        member(&done, first)["operationId"],
        "halt",
        "not upgraded twice"
    );
    assert_eq!(
        member(&done, first)["startTime"],
        member(&stopped, first)["startTime"]
    );
    eventually(&format!("{second} reports 1.32.0"), 30, || {
        (kubernetes_version(&hub, second) == "1.32.0").then_some(())
    });

    let again = flotilla_err(&hub, &["updaterun", "start", "halt"]);
    assert!(
        again.contains(r#"UpdateRun "halt" is Completed: there is nothing left to start"#),
        "{again}"
    );
    let stop = flotilla_err(&hub, &["updaterun", "stop", "halt"]);
    assert!(
        stop.contains(r#"UpdateRun "halt" is Completed: there is nothing to stop"#),
        "{stop}"
    );
}

#[test]
fn skips_at_every_level_end_skipped_and_the_run_completes() {
    let hub = update_fleet(&SPEED.to_string());
    // Stage one waits a simulated day after its groups and for an approval: only the skip of
    // its wait lets it finish within the test.
    create_full_run(
        &hub,
        "skippy",
        "    - name: one
      groups: [{name: a}, {name: b}]
      afterStageWaitInSeconds: 86400
      afterGates: [{type: Approval}]
    - name: two
      groups: [{name: c}]
    - name: three
      groups: [{name: d}]
",
    );
    wait_planned(&hub, "skippy");

    // Before the start, with flotilla: a member and a group.
    assert_eq!(
        flotilla_ok(
            &hub,
            &[
                "updaterun",
                "skip",
                "skippy",
                "--targets",
                "Member:east-a",
                "Group:b"
            ]
        ),
        "updaterun.updates.flotilla.dev/skippy skipping Member:east-a Group:b\n"
    );
    assert_eq!(
        flotilla_ok(
            &hub,
            &["updaterun", "skip", "skippy", "--targets", "Member:east-a"]
        ),
        "updaterun.updates.flotilla.dev/skippy already skips Member:east-a\n"
    );
    let lower = flotilla_err(
        &hub,
        &["updaterun", "skip", "skippy", "--targets", "member:east-a"],
    );
    assert!(
        lower.contains(r#""member" is not a target type: one of Member, Group, Stage, AfterStageWait (case-sensitive)"#),
        "{lower}"
    );
    let unknown = flotilla_err(
        &hub,
        &["updaterun", "skip", "skippy", "--targets", "Group:z"],
    );
    assert!(
        unknown.contains(r#"the run has no group "z" (its groups: a, b, c, d)"#),
        "{unknown}"
    );
    // The after-stage wait, with kubectl.
    hub.kubectl_ok(&[
        "patch",
        "updaterun",
        "skippy",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/spec/skip/-","value":{"type":"AfterStageWait","name":"one"}}]"#,
    ]);
    assert_eq!(
        run(&hub, "skippy")["spec"]["skip"],
        json!([
            {"type": "Member", "name": "east-a"},
            {"type": "Group", "name": "b"},
            {"type": "AfterStageWait", "name": "one"},
        ])
    );
    flotilla_ok(&hub, &["updaterun", "start", "skippy"]);

    // Stage one holds at its approval; its wait is skipped, not running.
    let held = eventually("stage one at its approval", within(60, SPEED), || {
        let run = run(&hub, "skippy");
        (stage(&run, "one")["afterGates"][0]["state"] == "Pending").then_some(run)
    });
    let east_a = member(&held, "east-a");
    assert_eq!(east_a["state"], "Skipped");
    assert_eq!(east_a["error"]["code"], "SkippedByUser");
    assert_eq!(member(&held, "west-a")["state"], "Completed");
    assert_eq!(group(&held, "b")["state"], "Skipped");
    assert_eq!(member(&held, "eu-b")["state"], "Skipped");
    assert_eq!(
        stage(&held, "one")["afterStageWaitStatus"]["state"],
        "Skipped"
    );
    assert_eq!(stage(&held, "one")["state"], "Pending");
    assert_eq!(held["status"]["state"], "Pending");
    assert_eq!(stage(&held, "two")["state"], "NotStarted");

    // While the run holds, with flotilla: a whole stage.
    assert_eq!(
        flotilla_ok(
            &hub,
            &["updaterun", "skip", "skippy", "--targets", "Stage:two"]
        ),
        "updaterun.updates.flotilla.dev/skippy skipping Stage:two\n"
    );
    flotilla_ok(&hub, &["gate", "approve", "skippy.one.after"]);
    let done = wait_state(&hub, "skippy", "Completed", within(60, SPEED));
    assert_eq!(stage(&done, "one")["state"], "Completed");
    assert_eq!(stage(&done, "two")["state"], "Skipped");
    assert_eq!(group(&done, "c")["state"], "Skipped");
    assert_eq!(member(&done, "east-c")["state"], "Skipped");
    assert_eq!(stage(&done, "three")["state"], "Completed");
    for name in ["west-d", "eu-d"] {
        assert_eq!(member(&done, name)["state"], "Completed", "{name}");
    }
    assert_eq!(done["status"]["progressSummary"], "6/6");
    for name in ["west-a", "west-d", "eu-d"] {
        eventually(&format!("{name} reports 1.32.0"), 30, || {
            (kubernetes_version(&hub, name) == "1.32.0").then_some(())
        });
    }
    for name in ["east-a", "eu-b", "east-c"] {
        assert_eq!(
            kubernetes_version(&hub, name),
            "1.31.2",
            "{name} was skipped"
        );
    }
    let finished = flotilla_err(
        &hub,
        &["updaterun", "skip", "skippy", "--targets", "Member:eu-d"],
    );
    assert!(
        finished.contains(r#"UpdateRun "skippy" is Completed: there is nothing left to skip"#),
        "{finished}"
    );
}

#[test]
fn skipping_a_running_after_stage_wait_ends_it() {
    let hub = update_fleet(&SPEED.to_string());
    // A simulated day's wait is 144 real seconds: only the skip ends it within the test.
    create_full_run(
        &hub,
        "waiting",
        "    - name: one
      groups: [{name: d}]
      afterStageWaitInSeconds: 86400
    - name: two
      groups: [{name: c}]
",
    );
    wait_planned(&hub, "waiting");
    flotilla_ok(&hub, &["updaterun", "start", "waiting"]);
    eventually("stage one's wait running", within(60, SPEED), || {
        let run = run(&hub, "waiting");
        (stage(&run, "one")["afterStageWaitStatus"]["state"] == "Running").then_some(())
    });
    flotilla_ok(
        &hub,
        &[
            "updaterun",
            "skip",
            "waiting",
            "--targets",
            "AfterStageWait:one",
        ],
    );
    let done = wait_state(&hub, "waiting", "Completed", within(30, SPEED));
    assert_eq!(
        stage(&done, "one")["afterStageWaitStatus"]["state"],
        "Skipped"
    );
    assert_eq!(member(&done, "east-c")["state"], "Completed");
}

#[test]
fn a_not_started_run_with_skips_keeps_its_status() {
    let hub = update_fleet(&SPEED.to_string());
    create_full_run(&hub, "idle", "    - name: one\n      groups: [{name: a}]\n");
    wait_planned(&hub, "idle");
    flotilla_ok(
        &hub,
        &["updaterun", "skip", "idle", "--targets", "Member:east-a"],
    );
    let skipped = eventually("east-a skipped", 30, || {
        let run = run(&hub, "idle");
        (member(&run, "east-a")["state"] == "Skipped").then_some(run)
    });
    assert!(
        member(&skipped, "east-a")["completedTime"].is_null(),
        "a skip before the start has no time: {skipped}"
    );
    assert_eq!(stage(&skipped, "one")["state"], "NotStarted");
    assert_eq!(group(&skipped, "a")["state"], "NotStarted");
    // A simulated hour later (six real seconds), the run has not been written again.
    let hour_later = hub_now(&hub) + jiff::SignedDuration::from_hours(1);
    eventually("a simulated hour to pass", within(120, SPEED), || {
        (hub_now(&hub) >= hour_later).then_some(())
    });
    let later = run(&hub, "idle");
    assert_eq!(
        later["metadata"]["resourceVersion"], skipped["metadata"]["resourceVersion"],
        "the status was rewritten: {}",
        later["status"]
    );
}

/// A stage-one after-gate and a group-b before-gate, both Approval.
const GATED_STAGES: &str = r#"{"stages":[
  {"name":"one","groups":[{"name":"a"}],"afterGates":[{"type":"Approval","displayName":"canary looks good"}]},
  {"name":"two","groups":[{"name":"b","beforeGates":[{"type":"Approval"}]}]}
]}"#;

#[test]
fn approval_gates_hold_the_run_until_approved() {
    let hub = update_fleet(&SPEED.to_string());
    let created = flotilla_ok(
        &hub,
        &[
            "updaterun",
            "create",
            "gated",
            "--upgrade-type",
            "NodeImageOnly",
            "--stages",
            GATED_STAGES,
        ],
    );
    assert!(
        created.contains("start it with: flotilla updaterun start gated"),
        "{created}"
    );
    flotilla_ok(&hub, &["updaterun", "start", "gated"]);

    // The stage's after-gate: reached once group a is done, and the run waits.
    let held = eventually("the gate after stage one", within(60, SPEED), || {
        let run = run(&hub, "gated");
        (stage(&run, "one")["afterGates"][0]["state"] == "Pending").then_some(run)
    });
    let gate = &stage(&held, "one")["afterGates"][0];
    assert_eq!(gate["gateId"], "gated.one.after");
    assert_eq!(gate["displayName"], "canary looks good");
    assert_eq!(group(&held, "a")["state"], "Completed");
    assert_eq!(stage(&held, "one")["state"], "Pending");
    assert_eq!(held["status"]["state"], "Pending");
    assert_eq!(stage(&held, "two")["state"], "NotStarted");
    assert_eq!(member(&held, "eu-b")["state"], "NotStarted");
    let listed = hub.kubectl_ok(&["get", "gates", "--no-headers"]);
    let row: Vec<&str> = listed
        .lines()
        .find(|l| l.starts_with("gated.one.after "))
        .unwrap_or_else(|| panic!("kubectl get gates: {listed}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        row[..6],
        [
            "gated.one.after",
            "Approval",
            "gated",
            "one",
            "After",
            "Pending"
        ]
    );
    let pending = flotilla_ok(
        &hub,
        &[
            "gate",
            "list",
            "--state",
            "Pending",
            "--update-run",
            "gated",
        ],
    );
    assert!(
        pending.starts_with("NAME ")
            && pending
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == [
                        "gated.one.after",
                        "Approval",
                        "gated",
                        "one",
                        "<none>",
                        "After",
                        "Pending"
                    ]),
        "{pending}"
    );
    assert_eq!(
        flotilla_ok(&hub, &["gate", "list", "--state", "Completed"]),
        "",
        "no gate is completed yet"
    );

    // Stopped at the gate, the gate stays Pending; approved meanwhile, it counts once the run
    // is started again.
    flotilla_ok(&hub, &["updaterun", "stop", "gated"]);
    wait_state(&hub, "gated", "Stopped", SLACK);
    assert_eq!(gate_state(&hub, "gated.one.after"), "Pending");
    assert_eq!(
        flotilla_ok(&hub, &["gate", "approve", "gated.one.after"]),
        "gate.updates.flotilla.dev/gated.one.after approved\n"
    );
    assert_eq!(gate_state(&hub, "gated.one.after"), "Completed");
    flotilla_ok(&hub, &["updaterun", "start", "gated"]);

    // Group b's before-gate: the group waits, its member has not started.
    let at_group = eventually("the gate before group b", within(60, SPEED), || {
        let run = run(&hub, "gated");
        (group(&run, "b")["beforeGates"][0]["state"] == "Pending").then_some(run)
    });
    assert_eq!(stage(&at_group, "one")["state"], "Completed");
    assert_eq!(
        stage(&at_group, "one")["afterGates"][0]["state"],
        "Completed"
    );
    assert_eq!(group(&at_group, "b")["state"], "Pending");
    assert_eq!(member(&at_group, "eu-b")["state"], "NotStarted");
    assert_eq!(
        group(&at_group, "b")["beforeGates"][0]["gateId"],
        "gated.two.b.before"
    );
    assert_eq!(gate_state(&hub, "gated.two.b.before"), "Pending");
    // This one with kubectl, as the Gate kind's docs say.
    hub.kubectl_ok(&[
        "patch",
        "gate",
        "gated.two.b.before",
        "--type=merge",
        "-p",
        r#"{"status":{"state":"Completed"}}"#,
        "--subresource=status",
    ]);
    let done = wait_state(&hub, "gated", "Completed", within(60, SPEED));
    assert_eq!(member(&done, "eu-b")["state"], "Completed");
    assert_eq!(group(&done, "b")["beforeGates"][0]["state"], "Completed");
    assert_eq!(done["status"]["progressSummary"], "3/3");

    let again = flotilla_err(&hub, &["gate", "approve", "gated.one.after"]);
    assert!(
        again.contains(
            r#"Gate "gated.one.after" is already Completed: there is nothing to approve"#
        ),
        "{again}"
    );
    let missing = flotilla_err(&hub, &["gate", "approve", "no-such-gate"]);
    assert!(
        missing.contains(r#"Gate "no-such-gate" not found on the hub"#),
        "{missing}"
    );
}

#[test]
fn create_builds_runs_from_flags_and_refuses_bad_combinations() {
    let hub = update_fleet(&SPEED.to_string());
    let strategy = common::examples_dir().join("updates/fleet-update-strategy.yaml");
    hub.kubectl_ok(&["apply", "-f", strategy.to_str().unwrap()]);

    // A FleetUpdateStrategy by name, Consistent images: created NotStarted, with a hint.
    assert_eq!(
        flotilla_ok(
            &hub,
            &[
                "updaterun",
                "create",
                "images",
                "--upgrade-type",
                "NodeImageOnly",
                "--node-image-selection",
                "Consistent",
                "--update-strategy-name",
                "two-stages",
            ],
        ),
        "updaterun.updates.flotilla.dev/images created (NotStarted)\nstart it with: flotilla updaterun start images\n"
    );
    let planned = wait_planned(&hub, "images");
    assert_eq!(
        planned["spec"],
        json!({
            "updateStrategyName": "two-stages",
            "managedClusterUpdate": {
                "upgrade": {"type": "NodeImageOnly"},
                "nodeImageSelection": {"type": "Consistent"},
            },
            "state": "NotStarted",
        })
    );
    assert_eq!(planned["status"]["state"], "NotStarted");
    flotilla_ok(&hub, &["updaterun", "start", "images"]);
    // Two stages of node image upgrades and an hour's wait between them.
    let images = wait_state(&hub, "images", "Completed", within(120, SPEED));
    assert_eq!(images["status"]["progressSummary"], "6/6");
    for name in ["east-a", "eu-b", "west-d"] {
        assert_eq!(
            node_image(&hub, name),
            "AKSUbuntu-2204gen2containerd-202510.20.0",
            "{name}: the newest image every region has"
        );
    }

    // Inline stages as JSON: a Full upgrade of group b alone.
    flotilla_ok(
        &hub,
        &[
            "updaterun",
            "create",
            "inline",
            "--upgrade-type",
            "Full",
            "--kubernetes-version",
            "1.32.0",
            "--stages",
            r#"{"stages":[{"name":"only","groups":[{"name":"b"}]}]}"#,
        ],
    );
    let inline = wait_planned(&hub, "inline");
    assert_eq!(
        inline["spec"]["strategy"],
        json!({"stages": [{"name": "only", "groups": [{"name": "b"}]}]})
    );
    assert_eq!(
        inline["spec"]["managedClusterUpdate"]["nodeImageSelection"],
        json!({"type": "Latest"}),
        "selection defaults to Latest"
    );
    flotilla_ok(&hub, &["updaterun", "start", "inline"]);
    let done = wait_state(&hub, "inline", "Completed", within(60, SPEED));
    assert_eq!(done["status"]["progressSummary"], "1/1");
    eventually("eu-b reports 1.32.0", 30, || {
        (kubernetes_version(&hub, "eu-b") == "1.32.0").then_some(())
    });

    // Stages from a YAML file.
    let file = hub.dir().join("stages.yaml");
    std::fs::write(
        &file,
        "stages:\n- name: canary\n  groups:\n  - name: c\n  afterStageWaitInSeconds: 600\n- name: rest\n  groups:\n  - name: d\n",
    )
    .unwrap();
    flotilla_ok(
        &hub,
        &[
            "updaterun",
            "create",
            "from-file",
            "--upgrade-type",
            "ControlPlaneOnly",
            "--kubernetes-version",
            "1.32.0",
            "--stages",
            file.to_str().unwrap(),
        ],
    );
    let from_file = wait_planned(&hub, "from-file");
    assert_eq!(
        from_file["spec"]["strategy"]["stages"][0],
        json!({"name": "canary", "groups": [{"name": "c"}], "afterStageWaitInSeconds": 600})
    );
    assert_eq!(
        from_file["spec"]["state"], "NotStarted",
        "create never starts"
    );

    // Bad input: each refused with the flag or field named, nothing created.
    let create = |name: &str, flags: &[&str]| {
        let mut args = vec!["updaterun", "create", name];
        args.extend_from_slice(flags);
        flotilla_err(&hub, &args)
    };
    let cases: [(&[&str], &str); 8] = [
        (
            &[
                "--upgrade-type",
                "Full",
                "--kubernetes-version",
                "1.32.0",
                "--stages",
                "{}",
                "--update-strategy-name",
                "two-stages",
            ],
            "the argument '--stages <FILE|JSON>' cannot be used with '--update-strategy-name <NAME>'",
        ),
        (
            &[
                "--upgrade-type",
                "NodeImageOnly",
                "--kubernetes-version",
                "1.32.0",
            ],
            "--kubernetes-version may not be used with --upgrade-type NodeImageOnly",
        ),
        (
            &["--upgrade-type", "ControlPlaneOnly"],
            "--upgrade-type ControlPlaneOnly requires --kubernetes-version",
        ),
        (
            &["--upgrade-type", "full", "--kubernetes-version", "1.32.0"],
            "[possible values: Full, NodeImageOnly, ControlPlaneOnly]",
        ),
        (
            &[
                "--upgrade-type",
                "NodeImageOnly",
                "--update-strategy-name",
                "no-such-strategy",
            ],
            r#"FleetUpdateStrategy "no-such-strategy" not found on the hub"#,
        ),
        (
            &[
                "--upgrade-type",
                "NodeImageOnly",
                "--stages",
                r#"{"stages":[{"name":"one","groups":[{"name":"a","maxConcurency":"2"}]}]}"#,
            ],
            r#"unknown field "spec.strategy.stages[0].groups[0].maxConcurency""#,
        ),
        (
            &["--upgrade-type", "Full", "--kubernetes-version", "1.32"],
            "spec.managedClusterUpdate.upgrade.kubernetesVersion",
        ),
        (
            &[
                "--upgrade-type",
                "NodeImageOnly",
                "--stages",
                "no-such-file.json",
            ],
            "--stages: reading no-such-file.json",
        ),
    ];
    for (flags, want) in cases {
        let err = create("bad", flags);
        assert!(err.contains(want), "{flags:?}: want {want:?} in:\n{err}");
    }
    let exists = create("inline", &["--upgrade-type", "NodeImageOnly"]);
    assert!(
        exists.contains(r#"the hub refused to create UpdateRun "inline" (AlreadyExists)"#),
        "{exists}"
    );
    let runs = hub.kubectl_ok(&["get", "updateruns", "-o", "name"]);
    assert_eq!(
        runs,
        "updaterun.updates.flotilla.dev/from-file\nupdaterun.updates.flotilla.dev/images\nupdaterun.updates.flotilla.dev/inline\n"
    );
}
