//! RFC 6902 JSON patch (`application/json-patch+json`) with Go json-patch's null-test leniency.

use json_patch::{Patch, PatchOperation};
use serde_json::Value;

use super::PatchError;

/// The most operations one JSON patch may have (kube-apiserver's `maxJSONPatchOperations`).
pub const MAX_OPERATIONS: usize = 10_000;

/// The most JSON one patch's `copy` operations may copy in all: kube-apiserver's json-patch
/// `AccumulatedCopySizeLimit`, its request body limit (3 MiB).
pub const MAX_ACCUMULATED_COPY_BYTES: usize = 3 * 1024 * 1024;

/// The length of `value` serialized as JSON.
fn json_size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |bytes| bytes.len())
}

/// Applies an RFC 6902 JSON patch to `target` and returns the result; `target` is untouched.
///
/// One deliberate deviation from the `json_patch` crate, matching kube-apiserver's Go library:
/// a `test` operation whose `value` is `null` passes when the tested key is absent from an
/// existing object (kube-rs' finalizer helper sends `test /metadata/finalizers == null` on
/// objects without finalizers). Errors name the failing operation's index and path.
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Patch(operations) = serde_json::from_value(patch.clone())
        .map_err(|err| PatchError::InvalidJsonPatch(err.to_string()))?;
    if operations.len() > MAX_OPERATIONS {
        return Err(PatchError::TooManyOperations {
            limit: MAX_OPERATIONS,
            got: operations.len(),
        });
    }
    let mut doc = target.clone();
    let mut copied = 0usize;
    for (index, operation) in operations.iter().enumerate() {
        if let PatchOperation::Copy(copy) = operation
            && let Some(source) = doc.pointer(copy.from.as_str())
        {
            copied = copied.saturating_add(json_size(source));
            if copied > MAX_ACCUMULATED_COPY_BYTES {
                return Err(PatchError::CopyTooLarge {
                    index,
                    from: copy.from.to_string(),
                    limit: MAX_ACCUMULATED_COPY_BYTES,
                });
            }
        }
        if let PatchOperation::Test(test) = operation
            && test.value.is_null()
            && is_absent_key(&doc, operation)
        {
            continue;
        }
        if let PatchOperation::Remove(_) = operation
            && remove_object_key(&mut doc, operation)
        {
            continue;
        }
        json_patch::patch(&mut doc, std::slice::from_ref(operation)).map_err(|err| {
            PatchError::JsonPatchFailed {
                index,
                op: op_name(operation),
                path: operation.path().to_string(),
                reason: err.kind.to_string(),
            }
        })?;
    }
    Ok(doc)
}

/// Removes the key an operation names from its parent object, keeping the order of the other
/// keys (the `json_patch` crate swap-removes, which reorders a `preserve_order` map). Returns
/// `false`, leaving the document untouched, when the path does not name an existing key.
fn remove_object_key(doc: &mut Value, operation: &PatchOperation) -> bool {
    let Some((parent, last)) = operation.path().split_back() else {
        return false;
    };
    doc.pointer_mut(parent.as_str())
        .and_then(Value::as_object_mut)
        .is_some_and(|object| object.shift_remove(last.decoded().as_ref()).is_some())
}

/// Whether the operation's path names a missing key of an object that exists (Go's json-patch
/// reads such a key as `null`).
fn is_absent_key(doc: &Value, operation: &PatchOperation) -> bool {
    let Some((parent, last)) = operation.path().split_back() else {
        return false;
    };
    doc.pointer(parent.as_str())
        .and_then(Value::as_object)
        .is_some_and(|object| !object.contains_key(last.decoded().as_ref()))
}

fn op_name(operation: &PatchOperation) -> &'static str {
    match operation {
        PatchOperation::Add(_) => "add",
        PatchOperation::Remove(_) => "remove",
        PatchOperation::Replace(_) => "replace",
        PatchOperation::Move(_) => "move",
        PatchOperation::Copy(_) => "copy",
        PatchOperation::Test(_) => "test",
    }
}
