//! What is wrong with a fleet file, said so that its author can find and fix it: the member at
//! fault (by name and position), the field path inside it, and for YAML and type errors the
//! line and column.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_saphyr::{Localizer, Location, Spanned, UserMessageFormatter};

use super::validate::is_dns_label;

/// Why a fleet file or fleet was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FleetError {
    /// The text is not YAML, or not shaped like a fleet file (a value of the wrong type, an
    /// unknown or a missing field). The YAML parser stops at the first such error, so there is
    /// only one.
    #[error("{}{}{message}", at_position(.position), in_member(.member))]
    Syntax {
        /// Where the parser stopped, when it could tell.
        position: Option<Position>,
        /// The member whose entry holds the error, when it lies inside `members`.
        member: Option<MemberRef>,
        /// What the parser expected or found, e.g. ``unknown field `colour`, expected one of …``.
        message: String,
    },
    /// The fleet is well-formed but breaks rules: every violation, in file order, displayed one
    /// per line.
    #[error("{}", lines(.0))]
    Invalid(Vec<Violation>),
}

/// A place in the fleet file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Line, from 1.
    pub line: u64,
    /// Column, from 1.
    pub column: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// The member an error is about: its position in `members` and, when usable, its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberRef {
    /// Index in `members`, from 0.
    pub index: usize,
    /// The member's name, only when it is a valid DNS label (an invalid name cannot identify
    /// the member, so the member is then named by its index alone).
    pub name: Option<String>,
}

impl MemberRef {
    /// The member at `index` whose `name` field reads `name`.
    pub(crate) fn new(index: usize, name: Option<&str>) -> Self {
        MemberRef {
            index,
            name: name.filter(|n| is_dns_label(n)).map(String::from),
        }
    }
}

/// `member "west-2" (members[3])`, or `members[3]` when the member has no usable name.
impl fmt::Display for MemberRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "member {name:?} (members[{}])", self.index),
            None => write!(f, "members[{}]", self.index),
        }
    }
}

/// One broken rule of one member, or of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The member at fault; none for a rule of the top-level `catalog`.
    pub member: Option<MemberRef>,
    /// The field path inside the member, as written in the file: `nodePools[0].instanceType`;
    /// for the catalog, the path from the top: `catalog.nodeImages[1].version`.
    pub field: String,
    /// What is wrong and what would be right.
    pub message: String,
}

/// `member "west-2" (members[3]): nodePools[0].count: …`, or, for a member without a usable
/// name or the catalog, the full path: `members[1].name: …`, `catalog.nodeImages[0].family: …`.
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Violation {
            member,
            field,
            message,
        } = self;
        match member {
            Some(member) if member.name.is_some() => write!(f, "{member}: {field}: {message}"),
            Some(member) => write!(f, "{member}.{field}: {message}"),
            None => write!(f, "{field}: {message}"),
        }
    }
}

fn at_position(position: &Option<Position>) -> String {
    position.map(|p| format!("{p}: ")).unwrap_or_default()
}

fn in_member(member: &Option<MemberRef>) -> String {
    member
        .as_ref()
        .map(|m| format!("in {m}: "))
        .unwrap_or_default()
}

fn lines(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(Violation::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl FleetError {
    /// A parse error of `text`, with its position and the member whose entry holds it.
    pub(crate) fn syntax(text: &str, err: &serde_saphyr::Error) -> Self {
        let location = err.location().filter(|l| *l != Location::UNKNOWN);
        let formatter = UserMessageFormatter.with_localizer(&WithoutLocation);
        let options = serde_saphyr::render_options! {
            formatter: &formatter,
            snippets: serde_saphyr::SnippetMode::Off,
        };
        FleetError::Syntax {
            position: location.map(|l| Position {
                line: l.line(),
                column: l.column(),
            }),
            member: location.and_then(|l| Outline::of(text)?.member_at(l.span().offset())),
            message: plainer(err.render_with_options(options)),
        }
    }
}

/// Parser messages that speak of YAML events or Rust types, and what they mean to the author
/// of a fleet file.
const PLAINER: [(&str, &str); 4] = [
    ("expected mapping start", "expected a mapping (key: value)"),
    ("expected sequence start", "expected a list"),
    ("expected string scalar", "expected a string"),
    (
        "invalid u32",
        "expected a whole number from 0 to 4294967295",
    ),
];

fn plainer(message: String) -> String {
    PLAINER
        .iter()
        .find(|(said, _)| *said == message)
        .map_or(message, |(_, meant)| meant.to_string())
}

/// Renders parser messages without their ` at line L, column C` suffix: [`Position`] carries
/// the location.
struct WithoutLocation;

impl Localizer for WithoutLocation {
    fn attach_location<'a>(&self, base: Cow<'a, str>, _: Location) -> Cow<'a, str> {
        base
    }
}

/// Where each member's entry starts and where the `members` list ends (character offsets),
/// read leniently from a file that failed strict parsing, to say which member a parse error
/// is in.
#[derive(Debug, Default)]
struct Outline {
    /// Start offset and `name` field of each member, in order.
    members: Vec<(u64, Option<String>)>,
    /// Offset of the first top-level key after `members`, if any.
    end: Option<u64>,
}

impl Outline {
    /// The outline of `text`, or `None` when even the lenient reading fails (bad YAML, or
    /// `members` not a list).
    fn of(text: &str) -> Option<Self> {
        serde_saphyr::from_str(text).ok()
    }

    /// The member whose entry contains `offset`.
    fn member_at(&self, offset: u64) -> Option<MemberRef> {
        if self.end.is_some_and(|end| offset >= end) {
            return None;
        }
        let index = self
            .members
            .iter()
            .rposition(|(start, _)| *start <= offset)?;
        Some(MemberRef::new(index, self.members[index].1.as_deref()))
    }
}

impl<'de> Deserialize<'de> for Outline {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OutlineVisitor)
    }
}

struct OutlineVisitor;

impl<'de> Visitor<'de> for OutlineVisitor {
    type Value = Outline;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a fleet file")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Outline, A::Error> {
        let mut outline = Outline::default();
        let mut seen_members = false;
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            if key.value == "members" {
                let members: Vec<Spanned<serde_json::Value>> = map.next_value()?;
                outline.members = members
                    .into_iter()
                    .map(|m| {
                        let name = m.value.get("name").and_then(|n| n.as_str());
                        (m.referenced.span().offset(), name.map(String::from))
                    })
                    .collect();
                seen_members = true;
            } else {
                map.next_value::<IgnoredAny>()?;
                if seen_members && outline.end.is_none() {
                    outline.end = Some(key.referenced.span().offset());
                }
            }
        }
        Ok(outline)
    }
}
