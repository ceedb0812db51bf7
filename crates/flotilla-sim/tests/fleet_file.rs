//! The example fleet files in the repository (`examples/fleets/`) are valid fleets,
//! so the README's `flotilla up --fleet` example works as written.

use std::path::Path;

use flotilla_sim::fleet::Fleet;

#[test]
fn the_example_fleet_file_is_valid() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fleets/fleet.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let fleet = Fleet::from_yaml(&text).unwrap_or_else(|e| panic!("{}:\n{e}", path.display()));

    let names: Vec<&str> = fleet.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["staging-east", "canary-west", "prod-east", "prod-europe"]
    );
    // The file shows every kind of schedule, and a version written with a leading `v`.
    let prod_east = &fleet.members[2];
    assert_eq!(prod_east.kubernetes_version, "1.30.6");
    let schedules = fleet
        .members
        .iter()
        .flat_map(|m| &m.maintenance_windows)
        .map(|w| &w.schedule);
    let kinds = schedules.fold([0; 4], |[d, w, a, r], s| {
        [
            d + usize::from(s.daily.is_some()),
            w + usize::from(s.weekly.is_some()),
            a + usize::from(s.absolute_monthly.is_some()),
            r + usize::from(s.relative_monthly.is_some()),
        ]
    });
    assert!(kinds.iter().all(|&n| n > 0), "{kinds:?}");
    // It shows a member's upgrade behaviour and a release catalog with both kinds of time.
    let upgrade = fleet.members[3].upgrade.clone().unwrap();
    assert_eq!(
        (upgrade.control_plane_minutes, upgrade.node_minutes),
        (Some(15), Some(6))
    );
    let catalog = fleet.catalog.as_ref().unwrap();
    assert_eq!(catalog.kubernetes_versions.len(), 6);
    assert_eq!(catalog.node_images.len(), 5);
    let availability = catalog
        .kubernetes_versions
        .iter()
        .flat_map(|v| &v.availability);
    assert!(availability.clone().any(|a| a.available_at.is_some()));
    assert!(
        availability
            .clone()
            .any(|a| a.available_after_hours.is_some())
    );
    // What `flotilla up` would print reads back as the same fleet.
    assert_eq!(Fleet::from_yaml(&fleet.to_yaml()), Ok(fleet));
}

#[test]
fn the_readme_fleet_example_is_valid() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let section = readme
        .split("## Fleet files")
        .nth(1)
        .expect("README has a Fleet files section");
    let yaml = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the section has a YAML example");
    let fleet = Fleet::from_yaml(yaml).unwrap_or_else(|e| panic!("README fleet example:\n{e}"));
    assert_eq!(fleet.members.len(), 2);
    assert_eq!(fleet.members[1].maintenance_windows.len(), 2);
}

/// `examples/fleets/seed-001.yaml` is valid and carries seed 001's values: the node counts and
/// CPU totals of its table come from the node pools, available CPU and cost per core from
/// property overrides, and every member has more allocatable CPU than it reports available.
#[test]
fn the_seed_001_fleet_file_carries_the_document_values() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fleets/seed-001.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let fleet = Fleet::from_yaml(&text).unwrap_or_else(|e| panic!("{}:\n{e}", path.display()));
    // (name, region label, nodes, total vCPU, available CPU, cost per core)
    let table = [
        ("bravelion", "east", 10, 160, "100", "1"),
        ("smartfish", "east", 4, 32, "20", "0.2"),
        ("jumpingcat", "west", 5, 20, "10", "0.1"),
    ];
    assert_eq!(fleet.members.len(), table.len());
    for (member, (name, region, nodes, vcpu, available, cost)) in fleet.members.iter().zip(table) {
        assert_eq!(member.name, name);
        assert_eq!(member.labels["region"], region, "{name}");
        let types = member.node_pools.iter().map(|p| {
            let t = flotilla_sim::catalog::instance_type(&p.instance_type).expect("catalog type");
            (p.count, t)
        });
        let (count, total, allocatable_milli) = types.fold((0, 0, 0), |(n, c, a), (count, t)| {
            (
                n + count,
                c + count * t.vcpu,
                a + u64::from(count) * t.allocatable_millicpu(),
            )
        });
        assert_eq!((count, total), (nodes, vcpu), "{name}");
        let properties = &member.properties;
        assert_eq!(
            properties["resources.kubernetes-fleet.io/available-cpu"], available,
            "{name}"
        );
        assert_eq!(
            properties["kubernetes.azure.com/per-cpu-core-cost"], cost,
            "{name}"
        );
        let available_milli: u64 = available.parse::<u64>().unwrap() * 1000;
        assert!(allocatable_milli > available_milli, "{name}");
    }
}
