//! `metadata.managedFields` entries: decoding, encoding and kube-apiserver's ordering.

use serde_json::{Map, Value};

use super::ManagedFieldsError;
use super::field_set::FieldSet;

/// The kind of write that produced a managed-fields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// Server-side apply; the entry holds exactly the fields of the manager's last applied
    /// configuration.
    Apply,
    /// Any other write (create, update, patch); the entry accumulates the fields it changed.
    Update,
}

impl Operation {
    /// The wire spelling, `Apply` or `Update`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One `metadata.managedFields` entry (`metav1.ManagedFieldsEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedFieldsEntry {
    /// The field manager (`fieldManager` query parameter or the client's user agent).
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version the manager wrote in.
    pub api_version: String,
    /// When the manager last changed something (RFC 3339), if recorded.
    pub time: Option<String>,
    /// The subresource written through (`status`), if any.
    pub subresource: Option<String>,
    /// The owned fields (`fieldsV1`).
    pub fields: FieldSet,
}

impl ManagedFieldsEntry {
    /// Whether this entry belongs to the manager identified by these attributes. As in
    /// kube-apiserver, an Update manager is identified per API version, an Apply manager is not.
    pub(crate) fn is(
        &self,
        manager: &str,
        operation: Operation,
        api_version: &str,
        subresource: Option<&str>,
    ) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
            && (operation == Operation::Apply || self.api_version == api_version)
    }

    /// Encodes the entry as Kubernetes writes it (field order included).
    pub fn to_value(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("manager".into(), self.manager.clone().into());
        entry.insert("operation".into(), self.operation.as_str().into());
        entry.insert("apiVersion".into(), self.api_version.clone().into());
        if let Some(time) = &self.time {
            entry.insert("time".into(), time.clone().into());
        }
        entry.insert("fieldsType".into(), "FieldsV1".into());
        entry.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if let Some(subresource) = &self.subresource {
            entry.insert("subresource".into(), subresource.clone().into());
        }
        Value::Object(entry)
    }

    fn from_value(value: &Value, index: usize) -> Result<Self, ManagedFieldsError> {
        let invalid = |message: &str| ManagedFieldsError::InvalidEntry {
            index,
            message: message.to_owned(),
        };
        let entry = value
            .as_object()
            .ok_or_else(|| invalid("must be an object"))?;
        let string = |name: &str| -> Result<Option<String>, ManagedFieldsError> {
            match entry.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(_) => Err(invalid(&format!("{name} must be a string"))),
            }
        };
        let operation = match string("operation")?.as_deref() {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            _ => return Err(invalid("operation must be Apply or Update")),
        };
        if let Some(fields_type) = string("fieldsType")?
            && fields_type != "FieldsV1"
        {
            return Err(invalid("fieldsType must be FieldsV1"));
        }
        let fields = match entry.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::new(),
            Some(fields) => FieldSet::from_fields_v1(fields)?,
        };
        Ok(Self {
            manager: string("manager")?.unwrap_or_default(),
            operation,
            api_version: string("apiVersion")?.unwrap_or_default(),
            time: string("time")?,
            subresource: string("subresource")?.filter(|subresource| !subresource.is_empty()),
            fields,
        })
    }
}

/// Decodes `metadata.managedFields` of `object` (absent means none). Use it to validate
/// managed fields a client sends; [`apply`](super::apply) and
/// [`record_update`](super::record_update) instead reset undecodable entries, as kube-apiserver
/// does.
pub fn managed_fields(object: &Value) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    match object.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(entries)) => entries
            .iter()
            .enumerate()
            .map(|(index, entry)| ManagedFieldsEntry::from_value(entry, index))
            .collect(),
        Some(_) => Err(ManagedFieldsError::InvalidEntry {
            index: 0,
            message: "metadata.managedFields must be a list".to_owned(),
        }),
    }
}

/// Writes `entries` to `metadata.managedFields` of `object`: empty entries are dropped, the
/// rest sorted as kube-apiserver sorts them (Apply before Update, then by time, manager, API
/// version and subresource); no entries removes the field.
pub(crate) fn write_managed_fields(object: &mut Value, mut entries: Vec<ManagedFieldsEntry>) {
    entries.retain(|entry| !entry.fields.is_empty());
    entries.sort_by(|a, b| {
        (
            a.operation,
            seconds(&a.time),
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                b.operation,
                seconds(&b.time),
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let Some(object) = object.as_object_mut() else {
        return;
    };
    if entries.is_empty() {
        if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
            metadata.shift_remove("managedFields");
        }
        return;
    }
    let encoded = Value::Array(entries.iter().map(ManagedFieldsEntry::to_value).collect());
    if let Value::Object(metadata) = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        metadata.insert("managedFields".to_owned(), encoded);
    }
}

/// Seconds since the epoch of an entry's time (`0` when absent or unparsable, like Go's nil).
pub(super) fn seconds(time: &Option<String>) -> i64 {
    time.as_deref()
        .and_then(|time| time.parse::<jiff::Timestamp>().ok())
        .map_or(0, |time| time.as_second())
}
