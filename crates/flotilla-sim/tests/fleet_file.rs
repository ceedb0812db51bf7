//! The example fleet file in the repository (`examples/fleets/fleet.yaml`) is a valid fleet,
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
