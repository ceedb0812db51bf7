//! [`FieldSet`]: a set of field paths stored as a tree, with the `FieldsV1` encoding.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::ManagedFieldsError;
use super::object::members;
use super::path::{FieldPath, PathElement};
use crate::patch::PatchStrategy;

/// A set of field paths — what one manager owns — as Kubernetes records it in
/// `managedFields[].fieldsV1`.
///
/// Members are leaves a writer set (scalars, atomic lists, empty maps), elements of associative
/// lists (`k:`) and elements of set lists (`v:`). In the `FieldsV1` encoding a member with
/// children carries a `".": {}` marker, a member without children is `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    root: Node,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Node {
    member: bool,
    children: BTreeMap<PathElement, Node>,
}

impl Node {
    fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }

    fn union(&self, other: &Node) -> Node {
        let mut children = self.children.clone();
        for (element, theirs) in &other.children {
            let merged = match children.get(element) {
                Some(ours) => ours.union(theirs),
                None => theirs.clone(),
            };
            children.insert(element.clone(), merged);
        }
        Node {
            member: self.member || other.member,
            children,
        }
    }

    fn intersection(&self, other: &Node) -> Node {
        Node {
            member: self.member && other.member,
            children: self
                .children
                .iter()
                .filter_map(|(element, ours)| {
                    let common = ours.intersection(other.children.get(element)?);
                    (!common.is_empty()).then(|| (element.clone(), common))
                })
                .collect(),
        }
    }

    fn difference(&self, other: &Node) -> Node {
        Node {
            member: self.member && !other.member,
            children: self
                .children
                .iter()
                .filter_map(|(element, ours)| {
                    let rest = match other.children.get(element) {
                        Some(theirs) => ours.difference(theirs),
                        None => ours.clone(),
                    };
                    (!rest.is_empty()).then(|| (element.clone(), rest))
                })
                .collect(),
        }
    }

    fn count(&self) -> usize {
        usize::from(self.member) + self.children.values().map(Node::count).sum::<usize>()
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<FieldPath>) {
        if self.member {
            out.push(FieldPath(prefix.clone()));
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    fn to_fields_v1(&self) -> Value {
        let mut object = Map::new();
        if self.member && !self.children.is_empty() {
            object.insert(".".to_owned(), Value::Object(Map::new()));
        }
        for (element, child) in &self.children {
            object.insert(element.as_str().to_owned(), child.to_fields_v1());
        }
        Value::Object(object)
    }

    fn from_fields_v1(value: &Value, member: bool) -> Result<Node, ManagedFieldsError> {
        let Value::Object(object) = value else {
            return Err(ManagedFieldsError::InvalidFieldsV1 {
                element: value.to_string(),
                message: "every node must be a JSON object".to_owned(),
            });
        };
        let mut node = Node {
            member: member && object.is_empty(),
            children: BTreeMap::new(),
        };
        for (key, child) in object {
            if key == "." {
                node.member = member;
                continue;
            }
            let element = PathElement::parse(key)?;
            let child = Node::from_fields_v1(child, true)?;
            if !child.is_empty() {
                node.children.insert(element, child);
            }
        }
        Ok(node)
    }
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes a `fieldsV1` object, e.g.
    /// `{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{}}}}}`.
    pub fn from_fields_v1(value: &Value) -> Result<Self, ManagedFieldsError> {
        Ok(Self {
            root: Node::from_fields_v1(value, false)?,
        })
    }

    /// Encodes the set as a `fieldsV1` object, children sorted, as Kubernetes writes it.
    pub fn to_fields_v1(&self) -> Value {
        self.root.to_fields_v1()
    }

    /// Every path `object` sets, with lists interpreted by `semantics`: leaves (scalars, `null`,
    /// empty objects, atomic lists), associative-list elements (`k:`) with their fields, and
    /// set-list elements (`v:`). A list whose elements cannot be keyed (an element lacks every
    /// key field, or two elements share a key) is treated as atomic.
    pub fn from_object(object: &Value, semantics: &dyn PatchStrategy) -> Self {
        let mut set = Self::new();
        for (path, _) in members(object, semantics) {
            set.insert(&path);
        }
        set
    }

    /// Adds one path.
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        let mut node = &mut self.root;
        for element in path {
            node = node.children.entry(element.clone()).or_default();
        }
        node.member = true;
    }

    /// Whether `path` is a member.
    pub fn contains(&self, path: &FieldPath) -> bool {
        self.node(&path.0).is_some_and(|node| node.member)
    }

    /// Whether some member lies strictly below `path` (e.g. a field of a list element).
    pub(crate) fn has_members_below(&self, path: &[PathElement]) -> bool {
        // Empty nodes are never stored, so any child holds a member.
        self.node(path)
            .is_some_and(|node| !node.children.is_empty())
    }

    fn node(&self, path: &[PathElement]) -> Option<&Node> {
        path.iter()
            .try_fold(&self.root, |node, element| node.children.get(element))
    }

    /// Paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        FieldSet {
            root: self.root.union(&other.root),
        }
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        FieldSet {
            root: self.root.intersection(&other.root),
        }
    }

    /// Paths in `self` but not in `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        FieldSet {
            root: self.root.difference(&other.root),
        }
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        // The root is never a member and empty nodes are never stored.
        self.root.children.is_empty()
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.root.count()
    }

    /// The members in sorted order, each parent before its children; render them with
    /// `Display` (`.spec.containers[name="nginx"].image`).
    pub fn paths(&self) -> Vec<FieldPath> {
        let mut out = Vec::new();
        self.root.collect_paths(&mut Vec::new(), &mut out);
        out
    }
}
