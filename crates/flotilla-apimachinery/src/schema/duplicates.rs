//! Duplicate object keys in a raw JSON body, found while streaming it (no `Value` is built), for
//! strict field validation.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Scans `raw_json` and returns the path of every repeated object key, in document order, as
/// kube's strict decoder names them (`spec.placementName`, `spec.stages[0].name`); the server
/// answers 400 `strict decoding error: duplicate field "<path>"`. Each extra occurrence is
/// reported. `Err` carries serde_json's message for malformed JSON, trailing data, or nesting
/// deeper than serde_json's limit of 128 levels.
pub fn find_duplicate_fields(raw_json: &[u8]) -> Result<Vec<String>, String> {
    let mut de = serde_json::Deserializer::from_slice(raw_json);
    let mut path = Vec::new();
    let mut found = Vec::new();
    Scan {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de)
    .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(found)
}

/// One step of the current path; keys borrow from the input when they have no escapes.
enum Segment<'de> {
    Key(Cow<'de, str>),
    Index(usize),
}

fn render(path: &[Segment<'_>], last: &str) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(last);
    out
}

/// Visits one JSON value, recursing into arrays and objects.
struct Scan<'a, 'de> {
    path: &'a mut Vec<Segment<'de>>,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Scan<'_, 'de> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for i in 0.. {
            self.path.push(Segment::Index(i));
            let more = seq.next_element_seed(Scan {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            self.path.pop();
            if more.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = Seen::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if !seen.insert(key.clone()) {
                self.found.push(render(self.path, &key));
            }
            self.path.push(Segment::Key(key));
            map.next_value_seed(Scan {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            self.path.pop();
        }
        Ok(())
    }
}

/// The keys of one object so far: a short list, then a hash set for wide objects.
#[derive(Default)]
struct Seen<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    const FEW: usize = 16;

    /// Records `key`; `false` if it was already there.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if self.few.len() < Self::FEW {
            if self.few.contains(&key) {
                return false;
            }
            self.few.push(key);
            return true;
        }
        if self.many.is_empty() {
            self.many.extend(self.few.iter().cloned());
        }
        self.many.insert(key)
    }
}

/// Reads an object key, borrowing it from the input when possible.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}
