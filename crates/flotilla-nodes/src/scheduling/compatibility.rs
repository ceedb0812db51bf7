//! The scheduler's memory of requirement algebra: each distinct set of requirements gets a
//! small id, and what is derived from it — combining it with a pod's requirements, which
//! instance types are compatible with it — is computed once and then looked up. A scheduling
//! run sees a handful of distinct sets and thousands of placement attempts, so attempts touch
//! no strings.

use std::collections::HashMap;

use super::instance_types::InstanceType;
use super::requirements::{Requirements, Undefined};

/// The id of an interned set of requirements.
pub(super) type SetId = u32;

/// A set of instance-type indices into the catalog.
pub(super) struct TypeSet(Vec<u64>);

impl TypeSet {
    /// Whether the instance type at `index` is in the set.
    pub(super) fn contains(&self, index: u32) -> bool {
        self.0[(index / 64) as usize] & (1 << (index % 64)) != 0
    }
}

/// Interned requirement sets over one instance-type catalog, with memoized derivations.
pub(super) struct Compatibility<'a> {
    instance_types: &'a [InstanceType],
    sets: Vec<Requirements>,
    ids: HashMap<Requirements, SetId>,
    has_min_values: Vec<bool>,
    combined: HashMap<(SetId, SetId), Option<SetId>>,
    compatible_types: Vec<Option<TypeSet>>,
}

impl<'a> Compatibility<'a> {
    /// The id of the empty set of requirements, interned first.
    pub(super) const NONE: SetId = 0;

    /// An empty memory over `instance_types`.
    pub(super) fn new(instance_types: &'a [InstanceType]) -> Self {
        let mut compatibility = Compatibility {
            instance_types,
            sets: Vec::new(),
            ids: HashMap::new(),
            has_min_values: Vec::new(),
            combined: HashMap::new(),
            compatible_types: Vec::new(),
        };
        compatibility.intern(&Requirements::new());
        compatibility
    }

    /// The id of `requirements`, interning them if new.
    pub(super) fn intern(&mut self, requirements: &Requirements) -> SetId {
        if let Some(&id) = self.ids.get(requirements) {
            return id;
        }
        let id =
            SetId::try_from(self.sets.len()).expect("fewer than 2^32 distinct requirement sets");
        self.sets.push(requirements.clone());
        self.ids.insert(requirements.clone(), id);
        self.has_min_values
            .push(requirements.iter().any(|(_, r)| r.min_values().is_some()));
        self.compatible_types.push(None);
        id
    }

    /// The requirements of `id`.
    pub(super) fn get(&self, id: SetId) -> &Requirements {
        &self.sets[id as usize]
    }

    /// Whether any requirement of `id` has `minValues`.
    pub(super) fn has_min_values(&self, id: SetId) -> bool {
        self.has_min_values[id as usize]
    }

    /// `base` (a pool's or claim's requirements) narrowed by `incoming` (a pod's), if
    /// [compatible](Requirements::compatible) with well-known labels allowed undefined.
    pub(super) fn combine(&mut self, base: SetId, incoming: SetId) -> Option<SetId> {
        if incoming == Self::NONE {
            return Some(base);
        }
        if let Some(&result) = self.combined.get(&(base, incoming)) {
            return result;
        }
        let (b, i) = (self.get(base), self.get(incoming));
        let result = match b.compatible(i, Undefined::AllowWellKnown) {
            Ok(()) => {
                let intersection = b.intersection(i);
                Some(self.intern(&intersection))
            }
            Err(_) => None,
        };
        self.combined.insert((base, incoming), result);
        result
    }

    /// The instance types [compatible](InstanceType::compatible) with `id`.
    pub(super) fn compatible_types(&mut self, id: SetId) -> &TypeSet {
        let slot = &mut self.compatible_types[id as usize];
        slot.get_or_insert_with(|| {
            let requirements = &self.sets[id as usize];
            let mut words = vec![0u64; self.instance_types.len().div_ceil(64)];
            for (i, it) in self.instance_types.iter().enumerate() {
                if it.compatible(requirements) {
                    words[i / 64] |= 1 << (i % 64);
                }
            }
            TypeSet(words)
        })
    }
}
