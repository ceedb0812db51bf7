//! Response shapes negotiated from `Accept`: full objects and lists, server-side Tables (with
//! priority columns and ages computed here), and PartialObjectMetadata for metadata clients.

use flotilla_apimachinery::table;
use http::{HeaderMap, header};
use serde_json::{Value, json};

use bytes::Bytes;

use crate::engine::{ObjectList, Page};
use crate::registry::ResourceInfo;

/// What the client asked the server to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Plain objects and `<Kind>List`s.
    Objects,
    /// `meta.k8s.io/v1` Tables; `include` chooses what each row carries.
    Table {
        /// `includeObject`: None, Metadata (default) or Object.
        include: Include,
    },
    /// `PartialObjectMetadata` / `PartialObjectMetadataList`.
    Metadata,
}

/// The `includeObject` choice of Table requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Include {
    /// No object in rows.
    None,
    /// PartialObjectMetadata in rows (default).
    Metadata,
    /// The full object in rows.
    Object,
}

/// The `Accept` header of a request, or `""`.
pub(crate) fn accept_of(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

impl Output {
    /// Negotiates from the `Accept` header (and `includeObject` in the query, read by caller).
    pub fn from_accept(headers: &HeaderMap) -> Self {
        let accept = accept_of(headers);
        // The first acceptable media range wins, as in kube-apiserver's negotiation.
        for range in accept.split(',') {
            let range = range.replace(' ', "");
            if range.contains("as=Table") {
                return Self::Table {
                    include: Include::Metadata,
                };
            }
            if range.contains("as=PartialObjectMetadata") {
                return Self::Metadata;
            }
            if range.starts_with("application/json") || range.starts_with("*/*") || range.is_empty()
            {
                return Self::Objects;
            }
        }
        Self::Objects
    }

    /// Applies `includeObject=None|Metadata|Object` to a Table output.
    pub fn with_include(self, include: Option<&str>) -> Self {
        match (self, include) {
            (Self::Table { .. }, Some("None")) => Self::Table {
                include: Include::None,
            },
            (Self::Table { .. }, Some("Object")) => Self::Table {
                include: Include::Object,
            },
            (other, _) => other,
        }
    }

    /// The object of one watch event in this output (Tables carry one row per event; column
    /// definitions only on the first).
    pub fn watch_object(
        &self,
        info: &ResourceInfo,
        obj: Value,
        event_type: &str,
        first: bool,
        now: jiff::Timestamp,
    ) -> Value {
        match self {
            _ if matches!(event_type, "ERROR" | "BOOKMARK") => obj,
            Self::Objects => obj,
            Self::Metadata => partial_metadata(&obj),
            Self::Table { include } => {
                let mut t = table_of(info, std::slice::from_ref(&obj), *include, now, None);
                if !first {
                    t["columnDefinitions"] = json!([]);
                }
                t
            }
        }
    }
}

fn partial_metadata(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))})
}

fn table_of(
    info: &ResourceInfo,
    items: &[Value],
    include: Include,
    now: jiff::Timestamp,
    list_meta: Option<Value>,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|obj| {
            let mut row = json!({"cells": table::row_cells(&info.columns, obj, now)});
            match include {
                Include::None => {}
                Include::Metadata => row["object"] = partial_metadata(obj),
                Include::Object => row["object"] = obj.clone(),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta.unwrap_or_else(|| json!({})),
        "columnDefinitions": table::column_definitions(&info.columns),
        "rows": rows,
    })
}

fn list_metadata<T>(list: &Page<T>) -> Value {
    let mut meta = json!({"resourceVersion": list.resource_version.to_string()});
    if let Some(c) = &list.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(r) = list.remaining {
        meta["remainingItemCount"] = json!(r);
    }
    meta
}

/// A plain `<Kind>List` assembled from stored JSON bytes (see [`crate::raw`]).
pub fn raw_list(info: &ResourceInfo, page: Page<Bytes>) -> Vec<u8> {
    let head = json!({"kind": info.list_kind, "apiVersion": info.api_version(), "metadata": list_metadata(&page)});
    let mut out = serde_json::to_vec(&head).unwrap_or_default();
    out.pop(); // the closing brace; items follow
    let size: usize = page.items.iter().map(|b| b.len() + 1).sum();
    out.reserve(size + 16);
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in page.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item);
    }
    out.extend_from_slice(b"]}");
    out
}

/// A list response in the negotiated output.
pub fn list(output: &Output, info: &ResourceInfo, list: ObjectList, now: jiff::Timestamp) -> Value {
    let meta = list_metadata(&list);
    match output {
        Output::Objects => {
            // Items move into the response (json! would deep-copy them).
            let mut out = serde_json::Map::new();
            out.insert("kind".into(), json!(info.list_kind));
            out.insert("apiVersion".into(), json!(info.api_version()));
            out.insert("metadata".into(), meta);
            out.insert("items".into(), Value::Array(list.items));
            Value::Object(out)
        }
        Output::Metadata => json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "items": list.items.iter().map(partial_metadata).collect::<Vec<_>>()
        }),
        Output::Table { include } => table_of(info, &list.items, *include, now, Some(meta)),
    }
}

/// A single-object response in the negotiated output.
pub fn object(output: &Output, info: &ResourceInfo, obj: Value, now: jiff::Timestamp) -> Value {
    match output {
        Output::Objects => obj,
        Output::Metadata => partial_metadata(&obj),
        Output::Table { include } => {
            let rv = obj
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            table_of(
                info,
                std::slice::from_ref(&obj),
                *include,
                now,
                Some(json!({"resourceVersion": rv})),
            )
        }
    }
}
