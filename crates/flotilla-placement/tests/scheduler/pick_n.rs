//! PickN: scaling up to the best clusters, scaling down, staying put, and topology spread.

use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_placement::scheduler::{BindingChange, BindingState, BindingView, Decision};
use serde_json::json;

use crate::fixtures::{
    OLD_SNAPSHOT, SNAPSHOT, affinity, binding, cluster, policy, reason, run, run_after, score,
    scored, selected,
};

fn pick_n(n: i32, extra: serde_json::Value) -> PlacementPolicy {
    let mut p = json!({"placementType": "PickN", "numberOfClusters": n});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    policy(p)
}

/// Changes as short strings: `create c`, `refresh b State`, `unschedule b`.
fn changes(decision: &Decision) -> Vec<String> {
    decision
        .changes
        .iter()
        .map(|c| match c {
            BindingChange::Create { decision } => format!("create {}", decision.cluster_name),
            BindingChange::Refresh { binding, state, .. } => format!("refresh {binding} {state:?}"),
            BindingChange::Unschedule { binding, .. } => format!("unschedule {binding}"),
        })
        .collect()
}

fn prefer_prod() -> serde_json::Value {
    json!({"affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}},
        {"weight": 20, "preference": {"labelSelector": {"matchLabels": {"tier": "gold"}}}}
    ]}}})
}

#[test]
fn scales_up_to_the_best_clusters() {
    let clusters = [
        cluster("dev").label("env", "dev").build(),
        cluster("prod-gold")
            .label("env", "prod")
            .label("tier", "gold")
            .build(),
        cluster("prod").label("env", "prod").build(),
        cluster("gold").label("tier", "gold").build(),
    ];
    let decision = run(&pick_n(2, prefer_prod()), &clusters, &[]);
    assert_eq!(selected(&decision), ["prod", "prod-gold"]);
    assert_eq!(changes(&decision), ["create prod-gold", "create prod"]);
    assert_eq!(affinity(&decision, "prod-gold"), 70);
    assert_eq!(
        reason(&decision, "gold"),
        r#"Cluster "gold" does not score high enough (affinity score: 20, topology spread score: 0)"#
    );
    let order: Vec<&str> = decision
        .clusters
        .iter()
        .map(|d| d.cluster_name.as_str())
        .collect();
    assert_eq!(
        order,
        ["prod", "prod-gold", "gold", "dev"],
        "selected by name, then runners-up best first"
    );
    assert!(decision.condition.fulfilled);
    assert_eq!(
        decision.condition.message,
        "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)"
    );
}

#[test]
fn too_few_clusters_leave_the_policy_unfulfilled() {
    let clusters = [
        cluster("a").build(),
        cluster("b").build(),
        cluster("c").stale().build(),
    ];
    let decision = run(&pick_n(3, json!({})), &clusters, &[]);
    assert_eq!(selected(&decision), ["a", "b"]);
    assert!(!decision.condition.fulfilled);
    assert_eq!(decision.condition.reason, "SchedulingPolicyUnfulfilled");
    assert_eq!(
        decision.condition.message,
        "could not find all clusters needed as specified by the scheduling policy, found 2 cluster(s) instead"
    );
    assert!(!decision.requeue);
}

#[test]
fn existing_bindings_count_towards_n() {
    let clusters = [
        cluster("a").label("env", "dev").build(),
        cluster("b").label("env", "prod").build(),
        cluster("c").label("env", "prod").build(),
        cluster("d").build(),
    ];
    let bindings = [scored(binding("a", BindingState::Bound, SNAPSHOT), 7, 0)];
    let decision = run(&pick_n(2, prefer_prod()), &clusters, &bindings);
    assert_eq!(selected(&decision), ["a", "c"]);
    assert_eq!(changes(&decision), ["create c"]);
    let a = decision.cluster("a").unwrap();
    assert_eq!(a.cluster_score, Some(score(7, 0)));
    assert_eq!(
        a.reason,
        r#"Successfully scheduled resources for placement in "a" (affinity score: 7, topology spread score: 0): picked by scheduling policy"#
    );
}

/// KubeFleet sorts ascending (ties by smaller name) and then reverses: ties go to the larger
/// name.
#[test]
fn ties_go_to_the_larger_name() {
    let clusters = [
        cluster("a").build(),
        cluster("c").build(),
        cluster("b").build(),
    ];
    let decision = run(&pick_n(1, json!({})), &clusters, &[]);
    assert_eq!(selected(&decision), ["c"]);
    let runners_up: Vec<&str> = decision.clusters[1..]
        .iter()
        .map(|d| d.cluster_name.as_str())
        .collect();
    assert_eq!(runners_up, ["b", "a"]);
}

#[test]
fn clusters_with_obsolete_bindings_win_ties_and_keep_their_bindings() {
    let clusters = [
        cluster("a").build(),
        cluster("b").build(),
        cluster("y").build(),
        cluster("z").build(),
    ];
    let bindings = [
        binding("a", BindingState::Bound, OLD_SNAPSHOT),
        binding("b", BindingState::Scheduled, OLD_SNAPSHOT),
    ];
    let decision = run(&pick_n(2, json!({})), &clusters, &bindings);
    assert_eq!(selected(&decision), ["a", "b"]);
    assert_eq!(
        changes(&decision),
        ["refresh crp-a-0 Bound", "refresh crp-b-0 Scheduled"]
    );

    let decision = run(&pick_n(1, json!({})), &clusters, &bindings);
    assert_eq!(selected(&decision), ["b"]);
    assert_eq!(
        changes(&decision),
        ["refresh crp-b-0 Scheduled", "unschedule crp-a-0"]
    );
}

#[test]
fn unscheduled_bindings_are_restored_to_their_previous_state() {
    let clusters = [
        cluster("a").label("env", "prod").build(),
        cluster("b").build(),
    ];
    let mut old = binding("a", BindingState::Unscheduled, OLD_SNAPSHOT);
    old.previous_state = Some(BindingState::Bound);
    let decision = run(&pick_n(1, prefer_prod()), &clusters, &[old]);
    assert_eq!(changes(&decision), ["refresh crp-a-0 Bound"]);
    match &decision.changes[0] {
        BindingChange::Refresh { decision, .. } => {
            assert_eq!(decision.cluster_score, Some(score(50, 0)));
        }
        other => panic!("{other:?}"),
    }
}

fn scale_down_fixture() -> (Vec<flotilla_api::cluster::MemberCluster>, Vec<BindingView>) {
    let clusters = ["b1", "b2", "b3", "o1", "s1", "s2", "spare"]
        .map(|n| cluster(n).build())
        .to_vec();
    let bindings = vec![
        scored(binding("s1", BindingState::Scheduled, SNAPSHOT), 10, 0),
        scored(binding("s2", BindingState::Scheduled, SNAPSHOT), 5, 0),
        scored(binding("b1", BindingState::Bound, SNAPSHOT), 3, 0),
        scored(binding("b2", BindingState::Bound, SNAPSHOT), 1, 0),
        scored(binding("b3", BindingState::Bound, SNAPSHOT), 3, 0),
        binding("o1", BindingState::Bound, OLD_SNAPSHOT),
    ];
    (clusters, bindings)
}

#[test]
fn scaling_down_trims_scheduled_before_bound_lowest_score_first() {
    let (clusters, bindings) = scale_down_fixture();
    let decision = run(&pick_n(3, json!({})), &clusters, &bindings);
    assert_eq!(selected(&decision), ["b1", "b2", "b3"]);
    assert_eq!(
        changes(&decision),
        [
            "unschedule crp-o1-0",
            "unschedule crp-s2-1",
            "unschedule crp-s1-1"
        ]
    );
    assert_eq!(
        reason(&decision, "s1"),
        "deselected: the placement asks for 3 cluster(s) and had 5; Scheduled bindings go before \
         Bound ones, lowest score and smallest name first"
    );
    assert_eq!(
        reason(&decision, "o1"),
        "deselected: its binding follows an older scheduling policy and the placement already has \
         the 3 cluster(s) it asks for"
    );
    assert!(
        reason(&decision, "spare").starts_with("not evaluated: the placement already has the 3")
    );
    assert!(decision.condition.fulfilled);

    // Down to one: both Scheduled, then the lowest Bound (b2), then b1 before b3 (same score,
    // smaller name first).
    let decision = run(&pick_n(1, json!({})), &clusters, &bindings);
    assert_eq!(selected(&decision), ["b3"]);
    assert_eq!(
        changes(&decision),
        [
            "unschedule crp-o1-0",
            "unschedule crp-s2-1",
            "unschedule crp-s1-1",
            "unschedule crp-b2-1",
            "unschedule crp-b1-1"
        ]
    );
}

#[test]
fn exactly_n_with_obsolete_bindings_only_removes_the_obsolete_ones() {
    let (clusters, bindings) = scale_down_fixture();
    let decision = run(&pick_n(5, json!({})), &clusters, &bindings);
    assert_eq!(changes(&decision), ["unschedule crp-o1-0"]);
    assert_eq!(selected(&decision), ["b1", "b2", "b3", "s1", "s2"]);
}

#[test]
fn a_full_placement_evaluates_nothing() {
    let clusters = [
        cluster("a").build(),
        cluster("b").build(),
        cluster("c").build(),
    ];
    let bindings = [
        binding("a", BindingState::Bound, SNAPSHOT),
        binding("b", BindingState::Scheduled, SNAPSHOT),
    ];
    let decision = run(&pick_n(2, json!({})), &clusters, &bindings);
    assert!(decision.changes.is_empty());
    assert_eq!(selected(&decision), ["a", "b"]);
    assert_eq!(
        reason(&decision, "c"),
        "not evaluated: the placement already has the 2 cluster(s) it asks for; clusters are \
         picked again only when one is lost or the policy changes"
    );
    assert!(decision.condition.fulfilled);
}

/// A full placement evaluates nothing, but the policy snapshot keeps explaining why each
/// unselected cluster was not picked: the verdict an earlier cycle recorded (with its score)
/// is carried over, and only a cluster with no recorded verdict is "not evaluated". Seed 001's
/// available-CPU example with two clusters wanted: jumpingcat (10 cores, score 0) loses to
/// bravelion (100) and smartfish (20 → 11).
#[test]
fn a_full_placement_keeps_the_verdicts_it_recorded() {
    let cpu = |name: &str, cores: &str| cluster(name).resource("available", "cpu", cores).build();
    let clusters = [
        cpu("bravelion", "100"),
        cpu("smartfish", "20"),
        cpu("jumpingcat", "10"),
    ];
    let p = pick_n(
        2,
        json!({"affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"propertySorter": {
                "name": "resources.kubernetes-fleet.io/available-cpu", "sortOrder": "Descending"}}}
        ]}}}),
    );
    // The first cycle picks two and records the runner-up with its score.
    let first = run(&p, &clusters, &[]);
    assert_eq!(selected(&first), ["bravelion", "smartfish"]);
    let lost = "Cluster \"jumpingcat\" does not score high enough (affinity score: 0, topology \
                spread score: 0)";
    assert_eq!(reason(&first, "jumpingcat"), lost);
    assert_eq!(affinity(&first, "jumpingcat"), 0);

    // Later cycles find the placement full (bindings carry the picks' scores).
    let bound = [
        scored(binding("bravelion", BindingState::Bound, SNAPSHOT), 100, 0),
        scored(
            binding("smartfish", BindingState::Scheduled, SNAPSHOT),
            11,
            0,
        ),
    ];
    let newcomer = cpu("newcomer", "50");
    let with_newcomer = [clusters.as_slice(), std::slice::from_ref(&newcomer)].concat();
    let not_evaluated = "not evaluated: the placement already has the 2 cluster(s) it asks \
                         for; clusters are picked again only when one is lost or the policy \
                         changes";
    // (case, clusters, bindings, numberOfClusters, recorded verdicts, jumpingcat's reason and
    // score, newcomer's reason if present)
    type Case<'a> = (
        &'a str,
        &'a [flotilla_api::cluster::MemberCluster],
        &'a [BindingView],
        i32,
        &'a [flotilla_placement::scheduler::ClusterDecision],
        &'a str,
        Option<i32>,
    );
    let cases: [Case; 4] = [
        (
            "steady, recorded",
            &clusters,
            &bound,
            2,
            first.target_clusters(),
            lost,
            Some(0),
        ),
        (
            "steady, nothing recorded",
            &clusters,
            &bound,
            2,
            &[],
            not_evaluated,
            None,
        ),
        (
            "steady, new cluster",
            &with_newcomer,
            &bound,
            2,
            first.target_clusters(),
            lost,
            Some(0),
        ),
        (
            "scale down",
            &clusters,
            &bound,
            1,
            first.target_clusters(),
            lost,
            Some(0),
        ),
    ];
    for (case, clusters, bindings, n, previous, why, score) in cases {
        let p = pick_n(n, p_affinity(&p));
        let decision = run_after(&p, clusters, bindings, previous);
        let expected: &[&str] = if n == 2 {
            &["bravelion", "smartfish"]
        } else {
            &["bravelion"]
        };
        assert_eq!(selected(&decision), expected, "{case}");
        assert_eq!(affinity(&decision, "bravelion"), 100, "{case}");
        assert_eq!(reason(&decision, "jumpingcat"), why, "{case}");
        let recorded = decision
            .cluster("jumpingcat")
            .and_then(|d| d.cluster_score)
            .and_then(|s| s.affinity_score);
        assert_eq!(recorded, score, "{case}");
        if clusters.len() == 4 {
            // A cluster that joined after the last evaluation has no verdict to keep.
            assert_eq!(reason(&decision, "newcomer"), not_evaluated, "{case}");
        }
        assert!(decision.changes.len() <= 1, "{case}");
    }
}

/// The `affinity` part of a PickN policy, to rebuild it with another `numberOfClusters`.
fn p_affinity(p: &PlacementPolicy) -> serde_json::Value {
    json!({"affinity": serde_json::to_value(&p.affinity).unwrap()})
}

#[test]
fn a_lost_cluster_is_replaced() {
    let clusters = [
        cluster("a").build(),
        cluster("b").build(),
        cluster("c").leaving().build(),
    ];
    let bindings = [
        binding("a", BindingState::Bound, SNAPSHOT),
        binding("c", BindingState::Bound, SNAPSHOT),
    ];
    let decision = run(&pick_n(2, json!({})), &clusters, &bindings);
    assert_eq!(changes(&decision), ["unschedule crp-c-1", "create b"]);
    assert_eq!(selected(&decision), ["a", "b"]);
}

fn spread(action: &str) -> serde_json::Value {
    json!({"topologySpreadConstraints": [{"topologyKey": "zone", "whenUnsatisfiable": action}]})
}

fn zones() -> Vec<flotilla_api::cluster::MemberCluster> {
    [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c")]
        .map(|(n, z)| cluster(n).label("zone", z).build())
        .to_vec()
}

/// Runs cycles as a controller would, binding each pick, until no requeue is asked for.
fn run_to_completion(p: &PlacementPolicy) -> (Vec<Decision>, Vec<BindingView>) {
    let clusters = zones();
    let mut bindings: Vec<BindingView> = Vec::new();
    let mut decisions = Vec::new();
    loop {
        let decision = run(p, &clusters, &bindings);
        for change in &decision.changes {
            if let BindingChange::Create { decision } = change {
                let mut b = binding(&decision.cluster_name, BindingState::Scheduled, SNAPSHOT);
                b.score = decision.cluster_score;
                bindings.push(b);
            }
        }
        let again = decision.requeue;
        decisions.push(decision);
        if !again {
            return (decisions, bindings);
        }
    }
}

#[test]
fn topology_spread_picks_one_cluster_per_cycle_across_domains() {
    let (decisions, bindings) = run_to_completion(&pick_n(3, spread("DoNotSchedule")));
    let picks: Vec<Vec<String>> = decisions.iter().map(changes).collect();
    assert_eq!(picks, [["create c1"], ["create b1"], ["create a2"]]);
    assert_eq!(bindings.len(), 3);
    assert!(decisions[0].requeue && decisions[1].requeue && !decisions[2].requeue);
    assert!(!decisions[0].condition.fulfilled);
    assert!(decisions[2].condition.fulfilled);
    // First pick: every domain empty, so any pick raises the skew by one.
    assert_eq!(
        decisions[0].cluster("c1").unwrap().cluster_score,
        Some(score(0, -1))
    );
    // Third pick: zone a is the unique emptiest domain.
    assert_eq!(
        decisions[2].cluster("a2").unwrap().cluster_score,
        Some(score(0, 1))
    );
}

#[test]
fn do_not_schedule_filters_and_explains_violations() {
    let clusters = zones();
    let bindings = [binding("a1", BindingState::Bound, SNAPSHOT)];
    let decision = run(&pick_n(2, spread("DoNotSchedule")), &clusters, &bindings);
    assert_eq!(
        reason(&decision, "a2"),
        r#"placing here would violate the topology spread constraint on "zone" (maxSkew 1): domain zone=a already has 1 of the placement's clusters and the least loaded domain has 0, so the skew would become 2"#
    );
    assert_eq!(selected(&decision), ["a1", "c1"]);

    let decision = run(&pick_n(2, spread("ScheduleAnyway")), &clusters, &bindings);
    assert_eq!(
        decision.cluster("a2").unwrap().cluster_score,
        Some(score(0, -1000))
    );
    assert_eq!(selected(&decision), ["a1", "c1"]);
}

#[test]
fn topology_spread_outweighs_affinity() {
    let clusters = [
        cluster("a1")
            .label("zone", "a")
            .label("env", "prod")
            .build(),
        cluster("a2").label("zone", "a").build(),
        cluster("b1").label("zone", "b").build(),
    ];
    let bindings = [binding("a2", BindingState::Bound, SNAPSHOT)];
    let mut extra = spread("ScheduleAnyway");
    extra
        .as_object_mut()
        .unwrap()
        .extend(prefer_prod().as_object().unwrap().clone());
    let decision = run(&pick_n(2, extra), &clusters, &bindings);
    assert_eq!(selected(&decision), ["a2", "b1"]);
    assert_eq!(affinity(&decision, "a1"), 50);
}
