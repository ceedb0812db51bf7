//! Serving stored JSON without parsing it: objects are stored as
//! `{"apiVersion":"…","kind":"…","metadata":{…},…}` without a resourceVersion, so a read only
//! has to splice `"resourceVersion":"N"` in at the start of `metadata`.

use bytes::Bytes;

/// The stored object with its resourceVersion spliced into `metadata`, or `None` when the
/// bytes do not start with the canonical `apiVersion`, `kind`, `metadata` prefix.
pub fn splice_revision(stored: &[u8], revision: i64) -> Option<Bytes> {
    let mut rest = stored.strip_prefix(b"{\"apiVersion\":")?;
    rest = skip_plain_string(rest)?;
    rest = rest.strip_prefix(b",\"kind\":")?;
    rest = skip_plain_string(rest)?;
    rest = rest.strip_prefix(b",\"metadata\":{")?;
    let head = stored.len() - rest.len();
    let rv = format!("\"resourceVersion\":\"{revision}\"");
    let mut out = Vec::with_capacity(stored.len() + rv.len() + 1);
    out.extend_from_slice(&stored[..head]);
    out.extend_from_slice(rv.as_bytes());
    if rest.first() != Some(&b'}') {
        out.push(b',');
    }
    out.extend_from_slice(rest);
    Some(Bytes::from(out))
}

/// Skips a JSON string without escapes (`"apps/v1"`); `None` for anything else.
fn skip_plain_string(s: &[u8]) -> Option<&[u8]> {
    let s = s.strip_prefix(b"\"")?;
    let end = s.iter().position(|&b| b == b'"' || b == b'\\')?;
    (s[end] == b'"').then(|| &s[end + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn splices_into_metadata_and_stays_valid_json() {
        let stored =
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}"#;
        let out = splice_revision(stored, 42).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["metadata"], json!({"resourceVersion": "42", "name": "a"}));
        assert_eq!(v["data"]["k"], "v");
        let empty = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#;
        let v: Value = serde_json::from_slice(&splice_revision(empty, 7).unwrap()).unwrap();
        assert_eq!(v["metadata"], json!({"resourceVersion": "7"}));
    }

    #[test]
    fn refuses_non_canonical_layouts() {
        assert!(
            splice_revision(
                br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}"#,
                1
            )
            .is_none()
        );
        assert!(splice_revision(br#"{"apiVersion":"v\"1","kind":"X","metadata":{}}"#, 1).is_none());
        assert!(splice_revision(br#"{"apiVersion":"v1","kind":"X","spec":{}}"#, 1).is_none());
        assert!(splice_revision(b"", 1).is_none());
    }
}
