//! Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) for the core
//! kinds the hub serves.
//!
//! kubectl 1.32's generators (`kubectl create namespace|configmap|secret|deployment|...`)
//! send typed clients' protobuf: the `k8s\0` magic, then a `runtime.Unknown` envelope
//! carrying apiVersion, kind and the object's message. The engine stores JSON, so bodies are
//! decoded here into the same JSON kube-apiserver would produce, using the wire field tables
//! in [`fields`] (generated from Kubernetes' proto definitions). Responses stay JSON, which
//! those clients also accept. Custom kinds never arrive as protobuf.

mod fields;

use serde_json::{Map, Value};

/// The protobuf media type.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

const MAGIC: &[u8] = b"k8s\0";

/// How a field's wire value maps to JSON.
#[derive(Debug)]
pub(crate) enum Ty {
    /// UTF-8 string.
    Str,
    /// Bytes, base64 in JSON.
    Bytes,
    /// Boolean (varint).
    Bool,
    /// Any integer (varint).
    Int,
    /// A nested message, by fully qualified name.
    Msg(&'static str),
    /// `map<string, V>`.
    Map(&'static Ty),
    /// `metav1.Time` / `MicroTime`: RFC 3339 in JSON.
    Time,
    /// `intstr.IntOrString`: a JSON number or string.
    IntOrString,
    /// `resource.Quantity`: its string form.
    Quantity,
    /// `runtime.RawExtension` / `metav1.FieldsV1`: embedded JSON bytes.
    RawJson,
}

/// One field of a message. An empty name marks a Go struct embedded inline: its fields are
/// merged into the parent object.
#[derive(Debug)]
pub(crate) struct Field {
    tag: u32,
    name: &'static str,
    ty: Ty,
    repeated: bool,
}

/// The `runtime.Unknown` envelope of a protobuf body: apiVersion, kind and the raw message.
fn envelope(body: &[u8]) -> Result<(String, String, &[u8]), String> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or("protobuf body lacks the k8s magic prefix")?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    let mut r = Reader(envelope);
    while let Some((tag, wire)) = r.key()? {
        match (tag, wire) {
            (1, 2) => {
                let mut tm = Reader(r.bytes()?);
                while let Some((t, w)) = tm.key()? {
                    match (t, w) {
                        (1, 2) => api_version = tm.string()?,
                        (2, 2) => kind = tm.string()?,
                        _ => tm.skip(w)?,
                    }
                }
            }
            (2, 2) => raw = r.bytes()?,
            _ => r.skip(wire)?,
        }
    }
    Ok((api_version, kind, raw))
}

/// The kind a protobuf body carries when Flotilla has no field table for it, so the request
/// can be refused with 415 (clients then send JSON) rather than 400.
pub fn unsupported_kind(body: &[u8]) -> Option<String> {
    let (api_version, kind, _) = envelope(body).ok()?;
    fields::root(&api_version, &kind)
        .is_none()
        .then(|| format!("{kind} in {api_version:?}"))
}

/// Decodes a protobuf request body into the JSON object it encodes.
///
/// `schema` is the served structural schema of the kind: JSON names are taken from it, so
/// acronyms (`volumeID`, `hostIPC`) come out exactly as the schema spells them.
pub fn decode(body: &[u8], schema: &Value) -> Result<Value, String> {
    let (api_version, kind, raw) = envelope(body)?;
    let root = fields::root(&api_version, &kind).ok_or_else(|| {
        format!("protobuf is not supported for {kind} in {api_version:?}; send application/json")
    })?;
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), Value::String(api_version));
    obj.insert("kind".into(), Value::String(kind));
    if let Value::Object(fields) = message(root, raw, schema)? {
        obj.extend(fields);
    }
    Ok(Value::Object(obj))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.0.split_first().ok_or("truncated varint")?;
            self.0 = rest;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint too long".into())
    }

    fn key(&mut self) -> Result<Option<(u32, u8)>, String> {
        if self.0.is_empty() {
            return Ok(None);
        }
        let k = self.varint()?;
        let tag = u32::try_from(k >> 3).map_err(|_| "field number out of range")?;
        Ok(Some((tag, (k & 7) as u8)))
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = usize::try_from(self.varint()?).map_err(|_| "length out of range")?;
        if len > self.0.len() {
            return Err("truncated length-delimited field".into());
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }

    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "string field is not UTF-8".into())
    }

    fn fixed(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err("truncated fixed-width field".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn skip(&mut self, wire: u8) -> Result<(), String> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.fixed(8).map(drop),
            2 => self.bytes().map(drop),
            5 => self.fixed(4).map(drop),
            other => Err(format!("unsupported protobuf wire type {other}")),
        }
    }
}

/// The schema's spelling of a wire field's JSON name (the tables use lowerCamelCase, which
/// differs from Kubernetes' names only in the case of acronyms).
fn json_name<'a>(schema: &'a Value, name: &'a str) -> &'a str {
    match schema.get("properties").and_then(Value::as_object) {
        Some(props) if !props.contains_key(name) => props
            .keys()
            .find(|k| k.eq_ignore_ascii_case(name))
            .map_or(name, String::as_str),
        _ => name,
    }
}

/// Whether the schema declares `name` (an unknown schema, e.g. in tests, declares everything).
fn known_to(schema: &Value, name: &str) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|props| props.contains_key(name))
}

/// The schema of a field's values (list items, map values, or the field itself).
fn field_schema<'a>(schema: &'a Value, name: &str, field: &Field) -> &'a Value {
    let prop = schema
        .get("properties")
        .and_then(|p| p.get(name))
        .unwrap_or(&Value::Null);
    match (&field.ty, field.repeated) {
        (Ty::Map(_), _) => prop.get("additionalProperties").unwrap_or(&Value::Null),
        (_, true) => prop.get("items").unwrap_or(&Value::Null),
        _ => prop,
    }
}

fn message(name: &str, bytes: &[u8], schema: &Value) -> Result<Value, String> {
    let fields = fields::message(name).ok_or_else(|| format!("no wire table for {name}"))?;
    let mut out = Map::new();
    let mut r = Reader(bytes);
    while let Some((tag, wire)) = r.key()? {
        let Some(field) = fields.iter().find(|f| f.tag == tag) else {
            r.skip(wire)?;
            continue;
        };
        let name = json_name(schema, field.name);
        if !field.name.is_empty() && !known_to(schema, name) {
            // A field newer than the served schema: dropped, as kube-apiserver drops unknown
            // protobuf fields.
            r.skip(wire)?;
            continue;
        }
        let sub = if field.name.is_empty() {
            schema
        } else {
            field_schema(schema, name, field)
        };
        if let Ty::Map(value_ty) = &field.ty {
            let mut entry = Reader(r.bytes()?);
            let (mut k, mut v) = (String::new(), Value::Null);
            while let Some((t, w)) = entry.key()? {
                match t {
                    1 => k = entry.string()?,
                    2 => v = value(value_ty, w, &mut entry, sub)?,
                    _ => entry.skip(w)?,
                }
            }
            let map = out.entry(name).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = map {
                m.insert(k, v);
            }
            continue;
        }
        if field.repeated && wire == 2 && matches!(field.ty, Ty::Int | Ty::Bool) {
            // Packed repeated scalars.
            let mut packed = Reader(r.bytes()?);
            while !packed.0.is_empty() {
                let v = value(&field.ty, 0, &mut packed, sub)?;
                push(&mut out, name, v);
            }
            continue;
        }
        let v = value(&field.ty, wire, &mut r, sub)?;
        if field.name.is_empty() {
            if let Value::Object(inline) = v {
                out.extend(inline);
            }
        } else if field.repeated {
            push(&mut out, name, v);
        } else {
            out.insert(name.to_string(), v);
        }
    }
    // Go's protobuf writes zero values of non-pointer fields; JSON omits them.
    out.retain(|_, v| !matches!(v, Value::Null) && !matches!(v, Value::String(s) if s.is_empty()));
    Ok(Value::Object(out))
}

fn push(out: &mut Map<String, Value>, name: &str, v: Value) {
    if let Value::Array(a) = out.entry(name).or_insert_with(|| Value::Array(vec![])) {
        a.push(v);
    }
}

fn value(ty: &Ty, wire: u8, r: &mut Reader<'_>, schema: &Value) -> Result<Value, String> {
    let expect = |want: u8| {
        if wire == want {
            Ok(())
        } else {
            Err(format!("unexpected wire type {wire} for {ty:?}"))
        }
    };
    Ok(match ty {
        Ty::Str => {
            expect(2)?;
            Value::String(r.string()?)
        }
        Ty::Bytes => {
            expect(2)?;
            Value::String(base64(r.bytes()?))
        }
        Ty::Bool => {
            expect(0)?;
            Value::Bool(r.varint()? != 0)
        }
        Ty::Int => {
            expect(0)?;
            Value::from(r.varint()? as i64)
        }
        Ty::Msg(name) => {
            expect(2)?;
            message(name, r.bytes()?, schema)?
        }
        Ty::Map(_) => return Err("nested map values are not supported".into()),
        Ty::Time => {
            expect(2)?;
            let mut t = Reader(r.bytes()?);
            let (mut seconds, mut nanos) = (0i64, 0i64);
            while let Some((tag, w)) = t.key()? {
                match tag {
                    1 => seconds = t.varint()? as i64,
                    2 => nanos = t.varint()? as i64,
                    _ => t.skip(w)?,
                }
            }
            if seconds == 0 && nanos == 0 {
                Value::Null
            } else {
                let ts = jiff::Timestamp::new(seconds, nanos as i32).map_err(|e| e.to_string())?;
                Value::String(crate::clock::rfc3339(ts))
            }
        }
        Ty::IntOrString => {
            expect(2)?;
            let mut t = Reader(r.bytes()?);
            let (mut kind, mut int, mut s) = (0u64, 0i64, String::new());
            while let Some((tag, w)) = t.key()? {
                match tag {
                    1 => kind = t.varint()?,
                    2 => int = t.varint()? as i64,
                    3 => s = t.string()?,
                    _ => t.skip(w)?,
                }
            }
            if kind == 1 {
                Value::String(s)
            } else {
                Value::from(int)
            }
        }
        Ty::Quantity => {
            expect(2)?;
            let mut t = Reader(r.bytes()?);
            let mut s = String::new();
            while let Some((tag, w)) = t.key()? {
                if tag == 1 {
                    s = t.string()?
                } else {
                    t.skip(w)?
                }
            }
            Value::String(s)
        }
        Ty::RawJson => {
            expect(2)?;
            let mut t = Reader(r.bytes()?);
            let mut v = Value::Null;
            while let Some((tag, w)) = t.key()? {
                if tag == 1 {
                    v = serde_json::from_slice(t.bytes()?)
                        .map_err(|e| format!("embedded JSON: {e}"))?;
                } else {
                    t.skip(w)?;
                }
            }
            v
        }
    })
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn field(tag: u32, payload: &[u8], out: &mut Vec<u8>) {
        varint(u64::from(tag) << 3 | 2, out);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    #[test]
    fn decodes_a_configmap_envelope_like_kubectl_sends() {
        let mut meta = Vec::new();
        field(1, b"cfg", &mut meta);
        field(2, b"", &mut meta);
        let mut entry = Vec::new();
        field(1, b"color", &mut entry);
        field(2, b"blue", &mut entry);
        let mut bin = Vec::new();
        field(1, b"k", &mut bin);
        field(2, b"hi!", &mut bin);
        let mut cm = Vec::new();
        field(1, &meta, &mut cm);
        field(2, &entry, &mut cm);
        field(3, &bin, &mut cm);
        let mut type_meta = Vec::new();
        field(1, b"v1", &mut type_meta);
        field(2, b"ConfigMap", &mut type_meta);
        let mut body = MAGIC.to_vec();
        field(1, &type_meta, &mut body);
        field(2, &cm, &mut body);
        let v = decode(&body, &Value::Null).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                "data": {"color": "blue"}, "binaryData": {"k": "aGkh"}})
        );
    }

    #[test]
    fn rejects_garbage_and_unknown_kinds() {
        assert!(decode(b"{}", &Value::Null).is_err());
        assert!(decode(b"k8s\0\x0a\x05", &Value::Null).is_err());
        let mut type_meta = Vec::new();
        field(1, b"example.com/v1", &mut type_meta);
        field(2, b"Widget", &mut type_meta);
        let mut body = MAGIC.to_vec();
        field(1, &type_meta, &mut body);
        assert!(
            decode(&body, &Value::Null)
                .unwrap_err()
                .contains("send application/json")
        );
    }

    const NEWER_THAN_SCHEMA: &[&str] = &["workloadRef"];

    /// Every wire field's JSON name exists in the served schema at the same place, so decoded
    /// objects never carry fields the schema would prune.
    #[test]
    fn wire_field_names_match_the_served_schemas() {
        fn check(msg: &str, schema: &Value, path: &str, depth: usize) {
            if depth > 12 {
                return;
            }
            let props = &schema["properties"];
            assert!(props.is_object(), "{path} has no properties in the schema");
            for f in fields::message(msg).unwrap_or_else(|| panic!("no table for {msg}")) {
                if f.name.is_empty() {
                    if let Ty::Msg(m) = &f.ty {
                        check(m, schema, path, depth + 1);
                    }
                    continue;
                }
                let name = json_name(schema, f.name);
                let prop = &props[name];
                // Fields newer than the served schema are dropped by the decoder, as an older
                // kube-apiserver drops unknown protobuf fields; only these may be missing.
                if NEWER_THAN_SCHEMA.contains(&f.name) {
                    continue;
                }
                assert!(
                    prop.is_object(),
                    "{path}.{} (tag {}) missing from the schema",
                    f.name,
                    f.tag
                );
                let inner = if f.repeated { &prop["items"] } else { prop };
                match &f.ty {
                    Ty::Msg(m) => check(m, inner, &format!("{path}.{}", f.name), depth + 1),
                    Ty::Map(Ty::Msg(m)) => check(
                        m,
                        &inner["additionalProperties"],
                        &format!("{path}.{}", f.name),
                        depth + 1,
                    ),
                    _ => {}
                }
            }
        }
        let mut roots = 0;
        for crd in flotilla_api::core_crds() {
            let crd = serde_json::to_value(crd).unwrap();
            let group = crd["spec"]["group"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let kind = crd["spec"]["names"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            for v in crd["spec"]["versions"].as_array().unwrap() {
                let api_version = crate::registry::api_version(&group, v["name"].as_str().unwrap());
                if let Some(root) = fields::root(&api_version, &kind) {
                    roots += 1;
                    check(root, &v["schema"]["openAPIV3Schema"], &kind, 0);
                }
            }
        }
        assert_eq!(
            roots, 31,
            "the built-in kinds clients create as protobuf have wire tables"
        );
    }

    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
