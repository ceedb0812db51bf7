//! `Custom` node image selection: explicit full image names, at most one version per family.

use std::collections::BTreeMap;

use super::node_image::{NodeImage, NodeImageError};

/// Why a `Custom` image list is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CustomImagesError {
    /// A name does not parse.
    #[error(transparent)]
    Parse(#[from] NodeImageError),
    /// Two versions of one family.
    #[error(
        "{first} and {second} are both of family {family}; list at most one version per family"
    )]
    SameFamily {
        /// The family.
        family: String,
        /// The first full name listed.
        first: String,
        /// The other full name.
        second: String,
    },
}

/// The images of a `Custom` selection by family (pools of other families are not upgraded).
/// A name listed twice counts once; two versions of one family are rejected.
pub fn custom_images<S: AsRef<str>>(
    full_names: impl IntoIterator<Item = S>,
) -> Result<BTreeMap<String, NodeImage>, CustomImagesError> {
    let mut by_family: BTreeMap<String, NodeImage> = BTreeMap::new();
    for name in full_names {
        let image = NodeImage::parse(name.as_ref())?;
        match by_family.get(&image.family) {
            Some(held) if held != &image => {
                return Err(CustomImagesError::SameFamily {
                    family: image.family.clone(),
                    first: held.to_string(),
                    second: image.to_string(),
                });
            }
            Some(_) => {}
            None => {
                by_family.insert(image.family.clone(), image);
            }
        }
    }
    Ok(by_family)
}
