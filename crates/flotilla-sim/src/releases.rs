//! The simulated cloud's release catalog: which Kubernetes versions and node images it
//! offers, and when each reached each region, as AKS's release tracker shows. `flotilla up`
//! creates one `KubernetesVersion` and one `NodeImageVersion` per release on the hub, from
//! the fleet file's `catalog:` or, without one, from [`builtin`].
//!
//! The built-in catalog is laid out around the moment the fleet first starts (hour 0), and
//! rolls each release out region by region, one region a day, in the order of the fleet's
//! regions sorted by name and rotated by one for each release (so no region is always first):
//!
//! | Kubernetes | rollout starts | |
//! |---|---|---|
//! | 1.30.5, 1.30.6 | 90 and 60 days ago | long-term support |
//! | 1.30.7 | 3 days ago | long-term support |
//! | 1.31.1, 1.31.2 | 90 and 45 days ago | |
//! | 1.31.3 | a day ago (still rolling out) | |
//! | 1.32.0 | 30 days ago | the newest GA minor |
//! | 1.32.1 | in 2 days | |
//! | 1.33.0 | 10 days ago | preview |
//!
//! So the default fleet's members (1.30.5, 1.30.6 and 1.31.2) each have a newer patch and a
//! next minor to go to. Node images come weekly for each family (Ubuntu 22.04 amd64 and
//! arm64, Ubuntu 24.04, Azure Linux 3): from 202509.23.0 (eight weeks ago) and 202509.30.0,
//! through 202510.13.0 (the default fleet's newer image, five weeks ago), 202510.20.0, 202510.27.0 (a
//! day ago, rolling out) to 202511.03.0 (in six days).

use std::collections::BTreeSet;

use flotilla_api::updates::catalog::{
    KubernetesVersion, KubernetesVersionSpec, NodeImageVersion, NodeImageVersionSpec,
    RegionAvailability,
};
use jiff::{SignedDuration, Timestamp};

use crate::fleet::{Availability, KubernetesRelease, NodeImageRelease, ReleaseCatalog};
use crate::objects::time;

/// Hours between a release reaching one region and the next.
const REGION_STRIDE_HOURS: i64 = 24;

const DAY: i64 = 24;

/// Built-in Kubernetes releases: version, preview, long-term support, hours from the fleet's
/// start to the first region.
const KUBERNETES: [(&str, bool, bool, i64); 9] = [
    ("1.30.5", false, true, -90 * DAY),
    ("1.30.6", false, true, -60 * DAY),
    ("1.30.7", false, true, -3 * DAY),
    ("1.31.1", false, false, -90 * DAY),
    ("1.31.2", false, false, -45 * DAY),
    ("1.31.3", false, false, -DAY),
    ("1.32.0", false, false, -30 * DAY),
    ("1.32.1", false, false, 2 * DAY),
    ("1.33.0", true, false, -10 * DAY),
];

/// Built-in node image families.
const IMAGE_FAMILIES: [&str; 4] = [
    "AKSUbuntu-2204gen2containerd",
    "AKSUbuntu-2204gen2arm64containerd",
    "AKSUbuntu-2404gen2containerd",
    "AKSAzureLinux-V3gen2",
];

/// Built-in weekly node image versions, with hours from the fleet's start to the first region.
const IMAGE_VERSIONS: [(&str, i64); 6] = [
    ("202509.23.0", -56 * DAY),
    ("202509.30.0", -49 * DAY),
    ("202510.13.0", -35 * DAY),
    ("202510.20.0", -8 * DAY),
    ("202510.27.0", -DAY),
    ("202511.03.0", 6 * DAY),
];

/// The built-in catalog for a fleet in `regions` (see the module docs).
pub fn builtin<'a>(regions: impl IntoIterator<Item = &'a str>) -> ReleaseCatalog {
    let regions: Vec<&str> = regions
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let rollout = |release: usize, first: i64| -> Vec<Availability> {
        (0..regions.len())
            .map(|i| Availability {
                region: regions[(i + release) % regions.len()].to_string(),
                available_at: None,
                available_after_hours: Some(first + i as i64 * REGION_STRIDE_HOURS),
            })
            .collect()
    };
    let kubernetes_versions = KUBERNETES
        .iter()
        .enumerate()
        .map(|(i, &(version, preview, lts, first))| KubernetesRelease {
            version: version.to_string(),
            preview,
            long_term_support: lts,
            availability: rollout(i, first),
        })
        .collect();
    let node_images = IMAGE_FAMILIES
        .iter()
        .flat_map(|family| {
            IMAGE_VERSIONS
                .iter()
                .enumerate()
                .map(|(i, &(version, first))| NodeImageRelease {
                    family: family.to_string(),
                    version: version.to_string(),
                    availability: rollout(i, first),
                })
        })
        .collect();
    ReleaseCatalog {
        kubernetes_versions,
        node_images,
    }
}

/// The catalog as hub objects, for a fleet first started at `start`: a `KubernetesVersion`
/// named for its version (`1.31.2`) per Kubernetes release and a `NodeImageVersion` named for
/// its full image name in lower case (`aksubuntu-2204gen2containerd-202511.03.0`) per image.
/// Fails on an `availableAt` that is not RFC 3339 (a validated fleet has none).
pub fn objects(
    catalog: &ReleaseCatalog,
    start: Timestamp,
) -> Result<(Vec<KubernetesVersion>, Vec<NodeImageVersion>), jiff::Error> {
    let availability = |entries: &[Availability]| -> Result<Vec<RegionAvailability>, jiff::Error> {
        entries
            .iter()
            .map(|entry| {
                let at = match (&entry.available_at, entry.available_after_hours) {
                    (Some(at), _) => at.parse()?,
                    (None, hours) => {
                        start.checked_add(SignedDuration::from_hours(hours.unwrap_or_default()))?
                    }
                };
                Ok(RegionAvailability {
                    region: entry.region.clone(),
                    available_at: time(at),
                })
            })
            .collect()
    };
    let versions = catalog
        .kubernetes_versions
        .iter()
        .map(|release| {
            let version = release.version.trim_start_matches('v');
            Ok(KubernetesVersion::new(
                version,
                KubernetesVersionSpec {
                    version: version.to_string(),
                    preview: release.preview,
                    long_term_support: release.long_term_support,
                    availability: availability(&release.availability)?,
                },
            ))
        })
        .collect::<Result<_, jiff::Error>>()?;
    let images = catalog
        .node_images
        .iter()
        .map(|release| {
            let spec = NodeImageVersionSpec {
                family: release.family.clone(),
                version: release.version.clone(),
                availability: availability(&release.availability)?,
            };
            Ok(NodeImageVersion::new(
                &spec.full_name().to_lowercase(),
                spec,
            ))
        })
        .collect::<Result<_, jiff::Error>>()?;
    Ok((versions, images))
}

/// Fills in every node pool of `fleet` that names no `nodeImageVersion` with the newest image
/// of its default family ([`crate::fleet::default_image_family`]) that `images` (the
/// catalog's objects) show available in its member's region at `now`, as a new AKS node pool
/// starts on the region's latest image. Errs naming the first pool for which there is none.
pub fn default_node_images(
    fleet: &mut crate::fleet::Fleet,
    images: &[NodeImageVersion],
    now: Timestamp,
) -> Result<(), String> {
    for member in &mut fleet.members {
        for pool in member
            .node_pools
            .iter_mut()
            .filter(|p| p.node_image_version.is_empty())
        {
            let family = crate::fleet::default_image_family(&pool.instance_type);
            let newest = images
                .iter()
                .filter(|image| image.spec.family == family)
                .filter(|image| {
                    image
                        .spec
                        .availability
                        .iter()
                        .any(|a| a.region == member.region && a.available_at.0 <= now)
                })
                .max_by(|a, b| {
                    numeric_version(&a.spec.version).cmp(&numeric_version(&b.spec.version))
                });
            pool.node_image_version = match newest {
                Some(image) => image.spec.full_name(),
                None => {
                    return Err(format!(
                        "member {:?} node pool {:?}: no {family} image is available in {} yet; give nodeImageVersion",
                        member.name, pool.name, member.region
                    ));
                }
            };
        }
    }
    Ok(())
}

/// `202510.13.0` as numbers, for ordering image versions.
fn numeric_version(version: &str) -> Vec<u64> {
    version.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{Fleet, ReleaseCatalog};
    use flotilla_member::upgrade::compare_versions;

    #[test]
    fn pools_without_an_image_start_on_the_newest_of_their_family_in_their_region() {
        let yaml = |region: &str| {
            format!(
                "members:\n- name: m\n  region: {region}\n  kubernetesVersion: 1.31.2\n  nodePools:\n  - {{name: amd, instanceType: Standard_D4s_v5, count: 1}}\n  - {{name: arm, instanceType: Standard_D4ps_v5, count: 1}}\n  - {{name: kept, instanceType: Standard_D4s_v5, count: 1, nodeImageVersion: AKSUbuntu-2204gen2containerd-202509.23.0}}\n"
            )
        };
        // One region: every release reaches it on its first day.
        let mut fleet = Fleet::from_yaml(&yaml("eastus")).unwrap();
        let (_, images) = objects(&builtin(["eastus"]), start()).unwrap();
        default_node_images(&mut fleet, &images, start()).unwrap();
        let pools: Vec<&str> = fleet.members[0]
            .node_pools
            .iter()
            .map(|p| p.node_image_version.as_str())
            .collect();
        assert_eq!(
            pools,
            [
                // 202511.03.0 comes out in six days: not yet.
                "AKSUbuntu-2204gen2containerd-202510.27.0",
                "AKSUbuntu-2204gen2arm64containerd-202510.27.0",
                "AKSUbuntu-2204gen2containerd-202509.23.0",
            ]
        );
        // A region the newest release has not reached yet gets the one before.
        let regions = ["eastus", "westus", "westeurope"];
        let (_, images) = objects(&builtin(regions), start()).unwrap();
        let newest_in = |region: &str| {
            let mut fleet = Fleet::from_yaml(&yaml(region)).unwrap();
            default_node_images(&mut fleet, &images, start()).unwrap();
            fleet.members[0].node_pools[0].node_image_version.clone()
        };
        let seen: BTreeSet<String> = regions.iter().map(|r| newest_in(r)).collect();
        assert!(
            seen.contains("AKSUbuntu-2204gen2containerd-202510.20.0"),
            "{seen:?}"
        );
        // A catalog with nothing for the region says which pool needs an image.
        let (_, images) = objects(&builtin(["westus"]), start()).unwrap();
        let mut fleet = Fleet::from_yaml(&yaml("eastus")).unwrap();
        let err = default_node_images(&mut fleet, &images, start()).unwrap_err();
        assert!(
            err.contains("\"amd\"") && err.contains("nodeImageVersion"),
            "{err}"
        );
    }

    fn start() -> Timestamp {
        "2026-03-01T00:00:00Z".parse().unwrap()
    }

    /// When a release reaches `region`, relative to the start, in hours.
    fn hours_until(availability: &[RegionAvailability], region: &str) -> Option<i64> {
        let entry = availability.iter().find(|a| a.region == region)?;
        Some(entry.available_at.0.duration_since(start()).as_hours())
    }

    #[test]
    fn the_builtin_catalog_is_valid_and_rolls_out_region_by_region() {
        let catalog = builtin(["westus", "eastus", "westeurope", "eastus"]);
        let fleet = Fleet {
            members: vec![],
            catalog: Some(catalog.clone()),
        };
        assert_eq!(fleet.validate(), Ok(()));
        let (versions, images) = objects(&catalog, start()).unwrap();
        assert_eq!(versions.len(), KUBERNETES.len());
        assert_eq!(images.len(), IMAGE_FAMILIES.len() * IMAGE_VERSIONS.len());
        let v = versions
            .iter()
            .find(|v| v.metadata.name.as_deref() == Some("1.31.3"))
            .unwrap();
        // Release 5 of 3 regions: the rotation starts at the region of index 2 by name.
        let hours: Vec<Option<i64>> = ["westus", "eastus", "westeurope"]
            .iter()
            .map(|r| hours_until(&v.spec.availability, r))
            .collect();
        assert_eq!(hours, [Some(-24), Some(0), Some(24)]);
        let image = images
            .iter()
            .find(|i| {
                i.metadata.name.as_deref() == Some("aksubuntu-2204gen2arm64containerd-202510.27.0")
            })
            .unwrap();
        assert_eq!(
            image.spec.full_name(),
            "AKSUbuntu-2204gen2arm64containerd-202510.27.0"
        );
        assert!(versions.iter().any(|v| v.spec.preview));
    }

    #[test]
    fn the_default_fleet_has_somewhere_to_go() {
        let fleet = Fleet::default_fleet();
        let regions: Vec<&str> = fleet.members.iter().map(|m| m.region.as_str()).collect();
        let (versions, images) = objects(&builtin(regions), start()).unwrap();
        let available_now = |availability: &[RegionAvailability], region: &str| {
            hours_until(availability, region).is_some_and(|h| h <= 0)
        };
        for member in &fleet.members {
            let newer_kubernetes = versions.iter().any(|v| {
                !v.spec.preview
                    && available_now(&v.spec.availability, &member.region)
                    && compare_versions(&v.spec.version, &member.kubernetes_version)
                        .is_some_and(|o| o.is_gt())
            });
            assert!(newer_kubernetes, "{}", member.name);
            for pool in &member.node_pools {
                let (family, version) = pool.node_image_version.rsplit_once('-').unwrap();
                let newer_image = images.iter().any(|i| {
                    i.spec.family == family
                        && available_now(&i.spec.availability, &member.region)
                        && compare_versions(&i.spec.version, version).is_some_and(|o| o.is_gt())
                });
                assert!(newer_image, "{} {}", member.name, pool.name);
            }
        }
    }

    #[test]
    fn fleet_file_times_are_absolute_or_relative() {
        let catalog: ReleaseCatalog = serde_saphyr::from_str(
            r#"
kubernetesVersions:
- version: v1.31.2
  longTermSupport: true
  availability:
  - {region: eastus, availableAt: "2026-02-01T12:00:00Z"}
  - {region: westus, availableAfterHours: 36}
"#,
        )
        .unwrap();
        let (versions, images) = objects(&catalog, start()).unwrap();
        assert!(images.is_empty());
        let v = &versions[0];
        assert_eq!(v.metadata.name.as_deref(), Some("1.31.2"));
        assert!(v.spec.long_term_support);
        assert_eq!(hours_until(&v.spec.availability, "eastus"), Some(-660));
        assert_eq!(hours_until(&v.spec.availability, "westus"), Some(36));
    }
}
