//! Serializing to JSON bytes of exactly the right size, through a per-thread scratch buffer.
//!
//! `serde_json::to_vec` grows its vector by doubling: a 1.4 KB object costs five allocations,
//! four copies, and (when the vector is kept, as stored values are) up to half of it in unused
//! capacity for as long as the object is retained. Serializing into a reused buffer and copying
//! the result once into an exactly sized allocation avoids all of that.

use std::cell::RefCell;

use bytes::Bytes;
use serde::Serialize;

/// Scratch buffers larger than this are not kept between calls, so one huge object does not
/// pin its size in every worker thread.
const KEEP_AT_MOST: usize = 1 << 20;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `value` as JSON, in an allocation of exactly its length. Values that cannot be serialized
/// (maps with non-string keys; never the case for `serde_json::Value`) give empty bytes.
pub(crate) fn to_bytes<T: Serialize + ?Sized>(value: &T) -> Bytes {
    SCRATCH.with_borrow_mut(|buf| {
        buf.clear();
        let out = match serde_json::to_writer(&mut *buf, value) {
            Ok(()) => Bytes::copy_from_slice(buf),
            Err(_) => Bytes::new(),
        };
        if buf.capacity() > KEEP_AT_MOST {
            *buf = Vec::new();
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bytes_are_the_json_and_exactly_sized() {
        let value = json!({"a": [1, 2, 3], "b": "x".repeat(5000)});
        let out = to_bytes(&value);
        assert_eq!(out, serde_json::to_vec(&value).unwrap());
        let again = to_bytes(&json!({"small": true}));
        assert_eq!(
            &again[..],
            br#"{"small":true}"#,
            "the scratch is cleared between calls"
        );
    }

    #[test]
    fn huge_values_are_not_kept_as_scratch() {
        to_bytes(&json!({"big": "y".repeat(2 * KEEP_AT_MOST)}));
        SCRATCH.with(|s| assert!(s.borrow().capacity() <= KEEP_AT_MOST));
    }
}
