//! Fleet files: parsing with located errors, the built-in fleets, and YAML round trips.

use proptest::prelude::*;

use super::*;
use crate::catalog;

/// Member `a` (valid) and member `b`, whose pool count is not a number.
const BAD_COUNT: &str = "\
members:
- name: a
  region: eastus
  kubernetesVersion: 1.30.1
  nodePools: []
- name: b
  region: eastus
  kubernetesVersion: 1.30.1
  nodePools:
  - name: p
    instanceType: Standard_D2s_v5
    count: many
    nodeImageVersion: v
";

#[test]
fn syntax_errors_say_where_and_in_which_member() {
    let cases: &[(&str, &str)] = &[
        (
            BAD_COUNT,
            "line 12, column 12: in member \"b\" (members[1]): expected a whole number from 0 to 4294967295",
        ),
        (
            "members:\n- name: a\n  region: eastus\n  kubernetesVersion: 1.30.1\n  nodePools: []\n  colour: red\n",
            "line 6, column 3: in member \"a\" (members[0]): unknown field `colour`, expected one of ",
        ),
        (
            "members:\n- name: a\n  region: eastus\n",
            "line 3, column 3: in member \"a\" (members[0]): missing field `kubernetesVersion`",
        ),
        (
            "members:\n- name: Bad_Name\n  region: eastus\n",
            "line 3, column 3: in members[0]: missing field `kubernetesVersion`",
        ),
        (
            "members: [{name: a, region: eastus, kubernetesVersion: 1.30.1, nodePools: []}, {name: b, region: 7, kubernetesVersion: [1]}]\n",
            "line 1, column 120: in member \"b\" (members[1]): expected a string",
        ),
        (
            "members:\n- name: a\n  region: eastus\n  kubernetesVersion: 1.30.1\n  nodePools: []\ncolour: red\n",
            "line 6, column 1: unknown field `colour`, expected one of members",
        ),
        ("members: {}\n", "line 1, column 10: expected a list"),
        (
            "members: [1]\n",
            "line 1, column 11: in members[0]: expected a mapping (key: value)",
        ),
        ("members:\n- name: 'a\n", "line "),
        ("", "line 1, column 1: unexpected end of file"),
    ];
    for (text, expected) in cases {
        let err = Fleet::from_yaml(text).expect_err(text);
        let shown = err.to_string();
        assert!(
            matches!(err, FleetError::Syntax { .. }) && shown.starts_with(expected),
            "{text}\ngave {shown:?}\nexpected it to start with {expected:?}"
        );
        assert!(!shown.contains('\n'), "one line: {shown:?}");
    }
}

#[test]
fn rule_violations_come_after_parsing() {
    let text =
        "members:\n- name: a\n  region: eastus\n  kubernetesVersion: 1.30\n  nodePools: []\n";
    let err = Fleet::from_yaml(text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "member \"a\" (members[0]): kubernetesVersion: \"1.30\" is not a Kubernetes version: \
         must be MAJOR.MINOR.PATCH, e.g. 1.30.3 (a leading 'v' is allowed)"
    );
}

#[test]
fn from_yaml_normalises_versions_and_coerces_scalars() {
    let text = "members:\n- name: a\n  region: eastus\n  labels: {name: 1, canary: true}\n  \
                kubernetesVersion: v1.31.2\n  nodePools: []\n  properties: {cost: 0.5}\n";
    let fleet = Fleet::from_yaml(text).unwrap();
    let member = &fleet.members[0];
    assert_eq!(member.kubernetes_version, "1.31.2");
    assert_eq!(member.labels["name"], "1");
    assert_eq!(member.labels["canary"], "true");
    assert_eq!(member.properties["cost"], "0.5");
    assert_eq!(Fleet::from_yaml("members: []\n").unwrap().members, []);
}

fn labels_of(member: &MemberSpec) -> Vec<(&str, &str)> {
    member
        .labels
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

fn node_count(member: &MemberSpec) -> u32 {
    member.node_pools.iter().map(|p| p.count).sum()
}

#[test]
fn the_default_fleet_fits_the_seed_examples() {
    let fleet = Fleet::default_fleet();
    assert_eq!(fleet.validate(), Ok(()));
    let names: Vec<&str> = fleet.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "member-cluster-01",
            "member-cluster-02",
            "member-cluster-03",
            "member-cluster-04",
            "member-cluster-05",
            "member-cluster-06"
        ]
    );
    let m = &fleet.members;
    assert_eq!(
        labels_of(&m[0]),
        [("environment", "canary"), ("name", "1"), ("region", "east")]
    );
    assert_eq!(
        labels_of(&m[1]),
        [("environment", "staging"), ("region", "west")]
    );
    assert_eq!(
        labels_of(&m[2]),
        [
            ("environment", "canary"),
            ("name", "2"),
            ("region", "europe")
        ]
    );
    for (member, order, region) in [
        (&m[3], "2", "east"),
        (&m[4], "1", "west"),
        (&m[5], "3", "europe"),
    ] {
        assert_eq!(
            labels_of(member),
            [
                ("env", "prod"),
                ("environment", "production"),
                ("order", order),
                ("region", region)
            ]
        );
    }
    // Seed 004's rolling update: PickN 2 among the westus members.
    let westus: Vec<&str> = m
        .iter()
        .filter(|m| m.region == "westus")
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(westus, ["member-cluster-02", "member-cluster-05"]);
    // Seed 001: node count >= 5, alone and with region=east.
    let counts: Vec<u32> = m.iter().map(node_count).collect();
    assert_eq!(counts, [3, 2, 5, 7, 4, 9]);
    let east_big: Vec<&str> = m
        .iter()
        .filter(|m| m.labels.get("region").is_some_and(|r| r == "east") && node_count(m) >= 5)
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(east_big, ["member-cluster-04"]);
    // Distinct CPU totals and costs per core, so metric sorters weigh every member differently.
    let cpu_and_cost: Vec<(u32, f64)> = m
        .iter()
        .map(|member| {
            let (cpus, price) = member.node_pools.iter().fold((0, 0.0), |(c, p), pool| {
                let t = catalog::instance_type(&pool.instance_type).unwrap();
                let price = t.price(&member.region, catalog::CapacityType::OnDemand);
                (c + t.vcpu * pool.count, p + price * f64::from(pool.count))
            });
            (cpus, price / f64::from(cpus))
        })
        .collect();
    for (i, a) in cpu_and_cost.iter().enumerate() {
        for b in &cpu_and_cost[i + 1..] {
            assert!(a.0 != b.0 && (a.1 - b.1).abs() > 1e-9, "{cpu_and_cost:?}");
        }
    }
    let versions: Vec<&str> = m.iter().map(|m| m.kubernetes_version.as_str()).collect();
    assert_eq!(
        versions,
        ["1.31.2", "1.31.2", "1.30.6", "1.30.6", "1.30.5", "1.30.5"]
    );
    assert_eq!(
        m[2].node_pools[1].node_image_version,
        "AKSUbuntu-2204gen2arm64containerd-202510.13.0"
    );
    let windows: Vec<usize> = m.iter().map(|m| m.maintenance_windows.len()).collect();
    assert_eq!(windows, [0, 0, 0, 0, 1, 1]);
}

#[test]
fn generated_fleets_follow_the_pattern() {
    assert_eq!(Fleet::generated(0).members, []);
    let names = |n| -> Vec<String> {
        Fleet::generated(n)
            .members
            .into_iter()
            .map(|m| m.name)
            .collect()
    };
    assert_eq!(names(1), ["member-1"]);
    assert_eq!(names(9).last().unwrap(), "member-9");
    assert_eq!(names(10)[..2], ["member-01", "member-02"]);
    let thousand = names(1000);
    assert_eq!(
        (thousand[0].as_str(), thousand[999].as_str()),
        ("member-0001", "member-1000")
    );

    let fleet = Fleet::generated(18);
    assert_eq!(fleet, Fleet::generated(18), "deterministic");
    let regions: Vec<&str> = fleet.members.iter().map(|m| m.region.as_str()).collect();
    assert_eq!(regions[..4], ["eastus", "westus", "westeurope", "eastus"]);
    let environments: Vec<&str> = fleet
        .members
        .iter()
        .map(|m| m.labels["environment"].as_str())
        .collect();
    assert_eq!(
        environments[..10],
        [
            "staging",
            "staging",
            "staging",
            "canary",
            "canary",
            "canary",
            "production",
            "production",
            "production",
            "staging"
        ]
    );
    let canary_names: Vec<&str> = fleet
        .members
        .iter()
        .filter_map(|m| m.labels.get("name").map(String::as_str))
        .collect();
    assert_eq!(canary_names, ["1", "2", "3", "4", "5", "6"]);
    let orders: Vec<&str> = fleet
        .members
        .iter()
        .filter_map(|m| m.labels.get("order").map(String::as_str))
        .collect();
    assert_eq!(orders, ["1", "2", "3", "4", "5", "6"]);
    assert_eq!(fleet.members[6].labels["env"], "prod");
    assert_eq!(fleet.members[6].labels["region"], "east");
}

#[test]
fn ten_thousand_generated_members_are_small_and_varied() {
    let fleet = Fleet::generated(10_000);
    assert_eq!(fleet.validate(), Ok(()));
    let mut counts = std::collections::BTreeSet::new();
    let mut types = std::collections::BTreeSet::new();
    for member in &fleet.members {
        let [pool] = member.node_pools.as_slice() else {
            panic!("one pool: {member:?}");
        };
        assert!((1..=5).contains(&pool.count), "{member:?}");
        assert!(catalog::instance_type(&pool.instance_type).unwrap().vcpu <= 4);
        counts.insert(pool.count);
        types.insert(pool.instance_type.as_str());
    }
    assert_eq!(counts.len(), 5);
    assert_eq!(types.len(), 6);
    let nodes: u32 = fleet.members.iter().map(node_count).sum();
    assert!(nodes < 35_000, "{nodes} nodes");
}

#[test]
fn the_default_fleet_round_trips_through_yaml() {
    let fleet = Fleet::default_fleet();
    let text = fleet.to_yaml();
    assert_eq!(Fleet::from_yaml(&text), Ok(fleet), "{text}");
    assert!(
        !text.contains("properties"),
        "empty maps are left out:\n{text}"
    );
}

/// Label values YAML would read as something other than a string if written bare.
const TRICKY: &[&str] = &[
    "", "1", "007", "1.30", "1_000", "1e3", "0x10", "0o17", "true", "True", "no", "yes", "null",
    "Null", "NULL",
];

fn label_value() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(TRICKY).prop_map(String::from),
        "[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?",
    ]
}

proptest! {
    // 40 sizes cover the generated pattern (it repeats every nine members) several times.
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every generated fleet is valid and reads back equal from its YAML.
    #[test]
    fn generated_fleets_round_trip(n in 0usize..40) {
        let fleet = Fleet::generated(n);
        prop_assert_eq!(fleet.validate(), Ok(()));
        prop_assert_eq!(Fleet::from_yaml(&fleet.to_yaml()), Ok(fleet));
    }
}

proptest! {
    /// Strings that look like numbers, booleans or null survive the round trip as strings.
    #[test]
    fn label_and_property_values_round_trip(
        values in proptest::collection::vec(label_value(), 1..6),
        quantity in proptest::sample::select(&["5", "12.5", "0.034", "3Gi", "500m", "1e3", ".5", "+2"][..]),
    ) {
        let mut fleet = Fleet::generated(1);
        let member = &mut fleet.members[0];
        for (i, v) in values.into_iter().enumerate() {
            member.labels.insert(format!("example.com/k{i}"), v);
        }
        member.properties.insert("example.com/cost".into(), quantity.to_string());
        prop_assert_eq!(Fleet::from_yaml(&fleet.to_yaml()), Ok(fleet));
    }

    /// No text makes parsing panic; a syntax error is one line, a rule error one line per
    /// violation.
    #[test]
    fn any_text_parses_or_fails_cleanly(text in "[-a-zA-Z0-9 :{}\\[\\],'\"#\n.]{0,120}") {
        if let Err(e) = Fleet::from_yaml(&format!("members:\n{text}")) {
            let lines = match &e {
                FleetError::Syntax { .. } => 1,
                FleetError::Invalid(found) => found.len(),
            };
            prop_assert_eq!(e.to_string().lines().count(), lines, "{}", e);
        }
    }
}

#[test]
fn a_fleet_file_of_twenty_thousand_members_reads_back() {
    // About 30 YAML nodes a member: past the parser's default budget of 250,000 nodes.
    let fleet = Fleet::generated(20_000);
    let text = fleet.to_yaml();
    let read = Fleet::from_yaml(&text).expect("a large fleet file is within the parser's budget");
    assert_eq!(read.members.len(), 20_000);
    assert_eq!(read, fleet);
}
