//! Properties of overrides for any rules and any fleet: a cluster no rule selects receives the
//! manifest as it is, a matching Delete rule always wins, and a snapshot plan, once carried
//! out, leaves exactly one latest snapshot recording the spec and needs no further change.

use std::collections::BTreeSet;

use flotilla_placement::overrides::{
    ApplicableOverrides, Rendered, SnapshotPlan, plan_snapshots, render,
};
use flotilla_placement::placement_key::PlacementKey;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::fixtures::{
    PLACEMENT, cro, cro_spec, delete_rule, deployment, member, namespace, on, patch_rule, ro,
    ro_spec,
};
use crate::snapshots::{Existing, existing, records};

const ENVS: [&str; 3] = ["prod", "test", "dev"];

/// A generated rule: the env it selects, and whether it deletes, patches, or fails.
#[derive(Clone, Debug)]
enum Rule {
    Delete(&'static str),
    Label(&'static str, u8),
    Fail(&'static str),
}

impl Rule {
    fn env(&self) -> &'static str {
        match self {
            Rule::Delete(env) | Rule::Label(env, _) | Rule::Fail(env) => env,
        }
    }

    fn json(&self) -> Value {
        match self {
            Rule::Delete(env) => delete_rule(on("env", env)),
            Rule::Label(env, n) => patch_rule(
                on("env", env),
                json!([{"op": "add", "path": "/metadata/labels/n", "value": n.to_string()}]),
            ),
            Rule::Fail(env) => patch_rule(
                on("env", env),
                json!([{"op": "replace", "path": "/spec/absent", "value": 1}]),
            ),
        }
    }
}

fn rule() -> impl Strategy<Value = Rule> {
    let env = prop::sample::select(ENVS.to_vec());
    prop_oneof![
        env.clone().prop_map(Rule::Delete),
        (env.clone(), any::<u8>()).prop_map(|(e, n)| Rule::Label(e, n)),
        env.prop_map(Rule::Fail),
    ]
}

/// Rules of up to three ClusterResourceOverrides and two ResourceOverrides.
fn overrides() -> impl Strategy<Value = (Vec<Vec<Rule>>, Vec<Vec<Rule>>)> {
    let rules = || prop::collection::vec(rule(), 1..4);
    (
        prop::collection::vec(rules(), 0..3),
        prop::collection::vec(rules(), 0..2),
    )
}

fn cluster_env() -> impl Strategy<Value = Option<&'static str>> {
    prop::option::of(prop::sample::select(vec!["prod", "test", "dev", "stage"]))
}

fn rules_json(rules: &[Rule]) -> Value {
    Value::Array(rules.iter().map(Rule::json).collect())
}

fn render_for(
    cro_rules: &[Vec<Rule>],
    ro_rules: &[Vec<Rule>],
    env: Option<&str>,
) -> Result<Rendered, Box<flotilla_placement::overrides::OverrideError>> {
    let cros: Vec<_> = cro_rules
        .iter()
        .enumerate()
        .map(|(i, rules)| {
            cro(
                &format!("cro{i}"),
                cro_spec(
                    json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
                    rules_json(rules),
                ),
            )
        })
        .collect();
    let ros: Vec<_> = ro_rules
        .iter()
        .enumerate()
        .map(|(i, rules)| {
            ro(
                "app",
                &format!("ro{i}"),
                ro_spec(
                    json!([{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}]),
                    rules_json(rules),
                ),
            )
        })
        .collect();
    let web = deployment("app", "web");
    let selected = [namespace("app"), web.clone()];
    let applicable =
        ApplicableOverrides::select(&PlacementKey::cluster(PLACEMENT), &selected, &cros, &ros);
    let labels: Vec<(&str, &str)> = env.map(|e| ("env", e)).into_iter().collect();
    render(&web, member("m", &labels).view(), &applicable)
}

fn all_rules<'a>(
    cro_rules: &'a [Vec<Rule>],
    ro_rules: &'a [Vec<Rule>],
) -> impl Iterator<Item = &'a Rule> {
    cro_rules.iter().chain(ro_rules).flatten()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn clusters_no_rule_selects_receive_the_manifest_unchanged(
        (cro_rules, ro_rules) in overrides(),
        env in cluster_env(),
    ) {
        let selected = all_rules(&cro_rules, &ro_rules).any(|r| Some(r.env()) == env);
        let rendered = render_for(&cro_rules, &ro_rules, env);
        if !selected {
            prop_assert_eq!(rendered, Ok(Rendered::Manifest(deployment("app", "web"))));
        }
    }

    #[test]
    fn a_delete_rule_always_wins_for_its_clusters(
        (cro_rules, ro_rules) in overrides(),
        env in cluster_env(),
    ) {
        let deletes = all_rules(&cro_rules, &ro_rules)
            .any(|r| matches!(r, Rule::Delete(e) if Some(*e) == env));
        let rendered = render_for(&cro_rules, &ro_rules, env);
        prop_assert_eq!(matches!(rendered, Ok(Rendered::Deleted(_))), deletes, "{:?}", rendered);
    }

    #[test]
    fn a_carried_out_plan_is_final(
        indexes in prop::collection::btree_set(0u64..15, 0..12),
        hashes in prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 12),
        latest in prop::collection::vec(any::<bool>(), 12),
        hash in prop::sample::select(vec!["a", "b", "c", "d"]),
        limit in 0usize..12,
    ) {
        let mut snapshots: Vec<Existing> = indexes
            .iter()
            .enumerate()
            .map(|(i, index)| existing(*index, hashes[i], latest[i]))
            .collect();
        let plan = plan_snapshots("cro", hash, &records(&snapshots), limit).unwrap();
        carry_out(&mut snapshots, &plan, hash);
        let latest: Vec<&Existing> = snapshots
            .iter()
            .filter(|s| s.labels["kubernetes-fleet.io/is-latest-snapshot"] == "true")
            .collect();
        prop_assert_eq!(latest.len(), 1);
        prop_assert_eq!(latest[0].hash.as_str(), hash);
        let newest = snapshots.iter().max_by_key(|s| index_of(s)).unwrap();
        prop_assert_eq!(&newest.name, &latest[0].name);
        prop_assert!(snapshots.len() <= limit.max(1));
        let again = plan_snapshots("cro", hash, &records(&snapshots), limit).unwrap();
        prop_assert_eq!(again, SnapshotPlan::default());
    }
}

fn index_of(snapshot: &Existing) -> u64 {
    snapshot.labels["kubernetes-fleet.io/override-index"]
        .parse()
        .unwrap()
}

/// Applies `plan` to `snapshots` as the controller would, a new snapshot recording `hash`.
fn carry_out(snapshots: &mut Vec<Existing>, plan: &SnapshotPlan, hash: &str) {
    let deleted: BTreeSet<&String> = plan.delete.iter().collect();
    snapshots.retain(|s| !deleted.contains(&s.name));
    let set = |snapshots: &mut Vec<Existing>, name: &str, value: &str| {
        let snapshot = snapshots.iter_mut().find(|s| s.name == name).unwrap();
        snapshot.labels.insert(
            "kubernetes-fleet.io/is-latest-snapshot".into(),
            value.into(),
        );
    };
    if let Some(name) = &plan.mark_latest {
        set(snapshots, name, "true");
    }
    for name in &plan.unmark_latest {
        set(snapshots, name, "false");
    }
    if let Some(new) = &plan.create {
        snapshots.push(Existing {
            name: new.name.clone(),
            labels: new.labels.clone(),
            hash: hash.to_string(),
        });
    }
}
