//! Field-level validation errors, rendered exactly as kube-apiserver renders them.

use serde_json::Value;

/// The kind of a field error (Kubernetes `field.ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorType {
    /// A required field is missing.
    Required,
    /// A value is malformed or out of range.
    Invalid,
    /// A value is not one of the allowed values.
    NotSupported,
    /// A field may not be set (in this combination or at all).
    Forbidden,
    /// A value appears twice where it must be unique.
    Duplicate,
    /// A string or list is longer than allowed.
    TooLong,
    /// A list has too many items.
    TooMany,
    /// A value has the wrong JSON type.
    TypeInvalid,
    /// A referenced item does not exist.
    NotFound,
}

impl FieldErrorType {
    /// The `Status.details.causes[].reason` string (`metav1.CauseType`).
    pub fn cause_reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::NotFound => "FieldValueNotFound",
        }
    }

    /// The human text kube-apiserver prints for this kind ("Invalid value", ...).
    pub fn text(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::Duplicate => "Duplicate value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::TypeInvalid => "Invalid value",
            Self::NotFound => "Not found",
        }
    }
}

/// One invalid field: its path (`spec.policy.numberOfClusters`), the kind of error, the bad value
/// when there is one, and a detail sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What is wrong.
    pub error_type: FieldErrorType,
    /// Dotted path with indices, as Kubernetes prints it: `spec.stages[0].name`.
    pub field: String,
    /// The offending value, printed in the message when present.
    pub bad_value: Option<Value>,
    /// Extra explanation, e.g. `must be no more than 100 items`.
    pub detail: String,
}

impl FieldError {
    /// A new error of the given type.
    pub fn new(
        error_type: FieldErrorType,
        field: impl Into<String>,
        bad_value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            error_type,
            field: field.into(),
            bad_value,
            detail: detail.into(),
        }
    }

    /// `field: Required value` (with an optional detail).
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Required, field, None, detail)
    }

    /// `field: Invalid value: <value>: <detail>`.
    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Invalid, field, Some(value), detail)
    }

    /// `field: Forbidden: <detail>`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Forbidden, field, None, detail)
    }

    /// `field: Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> Self {
        let list = supported
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        Self::new(
            FieldErrorType::NotSupported,
            field,
            Some(value),
            format!("supported values: {list}"),
        )
    }

    /// The message part after the field path, as `field.Error.ErrorBody()` renders it.
    pub fn body(&self) -> String {
        let mut s = self.error_type.text().to_string();
        if let Some(v) = &self.bad_value
            && matches!(
                self.error_type,
                FieldErrorType::Invalid
                    | FieldErrorType::NotSupported
                    | FieldErrorType::Duplicate
                    | FieldErrorType::TypeInvalid
            )
        {
            s.push_str(": ");
            s.push_str(&render_value(v));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The full message: `spec.x: Invalid value: 5: must be ...`.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }
}

/// Renders a bad value as Go's `%#v`-like output does for simple values (strings quoted).
fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_match_kube_apiserver() {
        assert_eq!(
            FieldError::required("spec.placementName", "").message(),
            "spec.placementName: Required value"
        );
        assert_eq!(
            FieldError::invalid(
                "spec.numberOfClusters",
                json!(-1),
                "must be greater than or equal to 0"
            )
            .message(),
            "spec.numberOfClusters: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(
            FieldError::not_supported("spec.type", json!("Foo"), &["A", "B"]).message(),
            "spec.type: Unsupported value: \"Foo\": supported values: \"A\", \"B\""
        );
    }
}
