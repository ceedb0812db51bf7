//! A read-only view of the release catalog answering "what is available where, now".

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::updates::catalog::RegionAvailability;
use flotilla_api::updates::{KubernetesVersionSpec, NodeImageVersionSpec};
use jiff::Timestamp;

use super::kube_version::{KubeVersion, Minor};
use super::node_image::{ImageVersion, NodeImage};
use super::support_window::SupportWindow;

/// The catalog's Kubernetes and node image releases, parsed once, to query at a time `now`.
/// A release is available in a region from its `availableAt` on (inclusive); entries whose
/// version does not parse are left out, so they are never chosen.
#[derive(Clone, Debug)]
pub struct Catalog<'a> {
    kubernetes: Vec<KubeRelease<'a>>,
    images: Vec<ImageRelease<'a>>,
}

#[derive(Clone, Debug)]
struct KubeRelease<'a> {
    version: KubeVersion,
    preview: bool,
    long_term_support: bool,
    availability: &'a [RegionAvailability],
}

#[derive(Clone, Debug)]
struct ImageRelease<'a> {
    image: NodeImage,
    availability: &'a [RegionAvailability],
}

/// Whether a release with this availability may be used in `region` at `now`.
fn available_in(availability: &[RegionAvailability], region: &str, now: Timestamp) -> bool {
    availability
        .iter()
        .any(|a| a.region == region && a.available_at.0 <= now)
}

/// When a release with this availability reaches `region`.
fn arrival(availability: &[RegionAvailability], region: &str) -> Option<Timestamp> {
    availability
        .iter()
        .find(|a| a.region == region)
        .map(|a| a.available_at.0)
}

/// Whether a release with this availability may be used in some region at `now`.
fn available_anywhere(availability: &[RegionAvailability], now: Timestamp) -> bool {
    availability.iter().any(|a| a.available_at.0 <= now)
}

impl<'a> Catalog<'a> {
    /// A view over the catalog's specs (e.g. `kvs.iter().map(|k| &k.spec)`).
    pub fn new(
        kubernetes: impl IntoIterator<Item = &'a KubernetesVersionSpec>,
        images: impl IntoIterator<Item = &'a NodeImageVersionSpec>,
    ) -> Self {
        let kubernetes = kubernetes
            .into_iter()
            .filter_map(|spec| {
                Some(KubeRelease {
                    version: KubeVersion::parse(&spec.version).ok()?,
                    preview: spec.preview,
                    long_term_support: spec.long_term_support,
                    availability: &spec.availability,
                })
            })
            .collect();
        let images = images
            .into_iter()
            .filter_map(|spec| {
                Some(ImageRelease {
                    image: NodeImage {
                        family: spec.family.clone(),
                        version: ImageVersion::parse(&spec.version).ok()?,
                    },
                    availability: &spec.availability,
                })
            })
            .collect();
        Self { kubernetes, images }
    }

    /// Whether `version` (preview or not) may be installed in `region` at `now`; a member
    /// whose region lacks its target waits rather than fails.
    pub fn kubernetes_available_in(
        &self,
        version: KubeVersion,
        region: &str,
        now: Timestamp,
    ) -> bool {
        self.kubernetes
            .iter()
            .any(|r| r.version == version && available_in(r.availability, region, now))
    }

    /// Whether `image` may be installed in `region` at `now`.
    pub fn image_available_in(&self, image: &NodeImage, region: &str, now: Timestamp) -> bool {
        self.images
            .iter()
            .any(|r| &r.image == image && available_in(r.availability, region, now))
    }

    /// When `version` reaches `region`, if the catalog says: how long a member waiting for it
    /// stays Pending.
    pub fn kubernetes_available_at(&self, version: KubeVersion, region: &str) -> Option<Timestamp> {
        self.kubernetes
            .iter()
            .filter(|r| r.version == version)
            .find_map(|r| arrival(r.availability, region))
    }

    /// When `image` reaches `region`, if the catalog says.
    pub fn image_available_at(&self, image: &NodeImage, region: &str) -> Option<Timestamp> {
        self.images
            .iter()
            .filter(|r| &r.image == image)
            .find_map(|r| arrival(r.availability, region))
    }

    /// GA releases available in at least one region at `now`.
    fn released_ga(&self, now: Timestamp) -> impl Iterator<Item = &KubeRelease<'a>> {
        self.kubernetes
            .iter()
            .filter(move |r| !r.preview && available_anywhere(r.availability, now))
    }

    /// N: the newest GA minor with a release available in at least one region at `now`.
    pub fn newest_ga_minor(&self, now: Timestamp) -> Option<Minor> {
        self.released_ga(now).map(|r| r.version.minor()).max()
    }

    /// The newest GA patch of `minor` available in at least one region at `now`.
    pub fn latest_ga_patch(&self, minor: Minor, now: Timestamp) -> Option<KubeVersion> {
        self.released_ga(now)
            .map(|r| r.version)
            .filter(|v| v.minor() == minor)
            .max()
    }

    /// The support window at `now`: N to N−2, plus the minors with an available GA release
    /// marked long-term support. `None` while no GA release is available anywhere.
    pub fn support_window(&self, now: Timestamp) -> Option<SupportWindow> {
        let newest = self.newest_ga_minor(now)?;
        let long_term_support: BTreeSet<Minor> = self
            .released_ga(now)
            .filter(|r| r.long_term_support)
            .map(|r| r.version.minor())
            .collect();
        Some(SupportWindow::new(newest, long_term_support))
    }

    /// For `Latest` selection: the newest version of `family` available in `region` at `now`,
    /// asked when a member's upgrade starts.
    pub fn latest_image(&self, family: &str, region: &str, now: Timestamp) -> Option<NodeImage> {
        self.images
            .iter()
            .filter(|r| r.image.family == family && available_in(r.availability, region, now))
            .map(|r| &r.image)
            .max()
            .cloned()
    }

    /// For `Consistent` selection: for each family in `usage` (pairs of region and family, one
    /// per node pool of the run's members), the newest version available at `now` in every
    /// region where the family is used — region X has .12 and Y .17: .12. `None` for a family
    /// no version of which all those regions share; members with pools of it are skipped.
    pub fn consistent_images<'u>(
        &self,
        usage: impl IntoIterator<Item = (&'u str, &'u str)>,
        now: Timestamp,
    ) -> BTreeMap<String, Option<NodeImage>> {
        let mut regions_by_family: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (region, family) in usage {
            regions_by_family.entry(family).or_default().insert(region);
        }
        regions_by_family
            .into_iter()
            .map(|(family, regions)| {
                let newest_shared = self
                    .images
                    .iter()
                    .map(|r| &r.image)
                    .filter(|image| image.family == family)
                    .filter(|image| {
                        regions
                            .iter()
                            .all(|region| self.image_available_in(image, region, now))
                    })
                    .max()
                    .cloned();
                (family.to_string(), newest_shared)
            })
            .collect()
    }

    /// For the `NodeImage` channel: per family, the newest version available in at least one
    /// region at `now`.
    pub fn newest_images(&self, now: Timestamp) -> BTreeMap<String, NodeImage> {
        let mut newest: BTreeMap<String, NodeImage> = BTreeMap::new();
        for release in self
            .images
            .iter()
            .filter(|r| available_anywhere(r.availability, now))
        {
            let image = &release.image;
            if newest
                .get(&image.family)
                .is_none_or(|held| held.version < image.version)
            {
                newest.insert(image.family.clone(), image.clone());
            }
        }
        newest
    }

    /// The first time after `now` at which a release reaches some region: when what the
    /// catalog offers changes next, without any object changing.
    pub fn next_arrival(&self, now: Timestamp) -> Option<Timestamp> {
        let kubernetes = self.kubernetes.iter().map(|r| r.availability);
        let images = self.images.iter().map(|r| r.availability);
        kubernetes
            .chain(images)
            .flatten()
            .map(|a| a.available_at.0)
            .filter(|at| *at > now)
            .min()
    }
}
