//! Table tests for columns, cells and ages.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::*;

fn col(name: &str, column_type: &str, json_path: &str) -> PrinterColumn {
    PrinterColumn {
        name: name.to_string(),
        column_type: column_type.to_string(),
        format: String::new(),
        description: String::new(),
        priority: 0,
        json_path: json_path.to_string(),
    }
}

fn now() -> Timestamp {
    "2024-06-01T12:00:00Z".parse().unwrap()
}

#[test]
fn reads_crd_columns() {
    let c = PrinterColumn::from_crd_json(&json!({
        "name": "Gen", "type": "integer", "format": "int64", "description": "d", "priority": 1,
        "jsonPath": ".metadata.generation"
    }))
    .unwrap();
    assert_eq!(
        c,
        PrinterColumn {
            name: "Gen".into(),
            column_type: "integer".into(),
            format: "int64".into(),
            description: "d".into(),
            priority: 1,
            json_path: ".metadata.generation".into(),
        }
    );
    assert_eq!(
        PrinterColumn::from_crd_json(&json!({"name": "x", "type": "string"})),
        None
    );
    let minimal =
        PrinterColumn::from_crd_json(&json!({"name": "x", "type": "string", "jsonPath": ".a"}))
            .unwrap();
    assert_eq!((minimal.format.as_str(), minimal.priority), ("", 0));
}

#[test]
fn column_definitions_start_with_name() {
    let defs = column_definitions(&[col("Scheduled", "string", ".status.x")]);
    assert_eq!(defs.len(), 2);
    assert_eq!(defs[0]["name"], "Name");
    assert_eq!(defs[0]["format"], "name");
    assert!(
        defs[0]["description"]
            .as_str()
            .unwrap()
            .starts_with("Name must be unique within a namespace.")
    );
    assert_eq!(
        defs[1],
        json!({
            "name": "Scheduled", "type": "string", "format": "",
            "description": "Custom resource definition column (in JSONPath format): .status.x", "priority": 0
        })
    );
    let keys: Vec<&String> = defs[1].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name", "type", "format", "description", "priority"]);

    let default = column_definitions(&[]);
    assert_eq!(default.len(), 2);
    assert_eq!(default[1]["name"], "Age");
    assert_eq!(default[1]["type"], "date");
    assert!(
        default[1]["description"]
            .as_str()
            .unwrap()
            .starts_with("CreationTimestamp is a timestamp")
    );
}

#[test]
fn renders_cells_by_type() {
    let obj = json!({
        "metadata": {"name": "crp-1", "creationTimestamp": "2024-06-01T11:55:00Z", "generation": 3},
        "spec": {"n": 5, "ratio": 2.5, "whole": 4.0, "big": 1e6, "on": true, "list": ["b", "a"], "obj": {"z": 1, "a": "<"}, "none": null},
        "status": {"conditions": [{"type": "Scheduled", "status": "True"}], "at": "nope", "zero": "0001-01-01T00:00:00Z", "empty": ""}
    });
    let cases: Vec<(PrinterColumn, Value)> = vec![
        (
            col(
                "S",
                "string",
                ".status.conditions[?(@.type==\"Scheduled\")].status",
            ),
            json!("True"),
        ),
        (col("S", "string", ".spec.n"), json!("5")),
        (col("S", "string", ".spec.ratio"), json!("2.5")),
        (col("S", "string", ".spec.big"), json!("1e+06")),
        (col("S", "string", ".spec.on"), json!("true")),
        (col("S", "string", ".spec.list"), json!(r#"["b","a"]"#)),
        (
            col("S", "string", ".spec.obj"),
            json!(r#"{"a":"\u003c","z":1}"#),
        ),
        (col("S", "string", ".spec.none"), json!("<no value>")),
        (col("S", "string", ".spec.missing"), Value::Null),
        (col("S", "string", ".spec.list[9]"), Value::Null),
        (col("I", "integer", ".metadata.generation"), json!(3)),
        (col("I", "integer", ".spec.ratio"), json!(2)),
        (col("I", "integer", ".spec.on"), Value::Null),
        (col("N", "number", ".spec.n"), json!(5.0)),
        (col("N", "number", ".spec.ratio"), json!(2.5)),
        (col("B", "boolean", ".spec.on"), json!(true)),
        (col("B", "boolean", ".spec.n"), Value::Null),
        (col("D", "date", ".metadata.creationTimestamp"), json!("5m")),
        (col("D", "date", ".status.at"), json!("<invalid>")),
        (col("D", "date", ".status.zero"), json!("<unknown>")),
        (col("D", "date", ".status.empty"), json!("<unknown>")),
        (col("D", "date", ".spec.n"), Value::Null),
        (col("X", "unknown-type", ".spec.n"), Value::Null),
    ];
    for (c, want) in cases {
        let cells = row_cells(std::slice::from_ref(&c), &obj, now());
        assert_eq!(
            cells,
            vec![json!("crp-1"), want],
            "{} {}",
            c.column_type,
            c.json_path
        );
    }
    assert_eq!(
        row_cells(&[], &obj, now()),
        vec![json!("crp-1"), json!("5m")]
    );
    assert_eq!(
        row_cells(&[], &json!({}), now()),
        vec![json!(""), Value::Null]
    );
}

#[test]
fn dates_parse_as_rfc3339() {
    let c = [col("D", "date", ".t")];
    let cases = [
        ("2024-06-01T11:59:30.123456Z", "29s"),
        ("2024-06-01T13:00:00+01:00", "0s"),
        ("2024-06-01T12:00:01Z", "0s"),
        ("2024-06-01T12:00:02Z", "<invalid>"),
        ("2024-06-01 11:00:00Z", "<invalid>"),
        ("2024-06-01T11:00:00", "<invalid>"),
        ("2024-06-01t11:00:00Z", "<invalid>"),
    ];
    for (t, want) in cases {
        assert_eq!(
            row_cells(&c, &json!({"t": t}), now())[1],
            json!(want),
            "{t}"
        );
    }
}

#[test]
fn human_duration_boundaries() {
    let s = SignedDuration::from_secs;
    let cases = [
        (SignedDuration::from_millis(-1999), "0s"),
        (s(-2), "<invalid>"),
        (s(0), "0s"),
        (s(59), "59s"),
        (s(119), "119s"),
        (s(120), "2m"),
        (s(310), "5m10s"),
        (s(599), "9m59s"),
        (s(600), "10m"),
        (s(3 * 3600 - 1), "179m"),
        (s(3 * 3600), "3h"),
        (s(7 * 3600 + 59 * 60), "7h59m"),
        (s(8 * 3600), "8h"),
        (s(47 * 3600 + 3599), "47h"),
        (s(48 * 3600), "2d"),
        (s(7 * 86400 + 23 * 3600), "7d23h"),
        (s(8 * 86400), "8d"),
        (s(729 * 86400), "729d"),
        (s(730 * 86400), "2y"),
        (s(731 * 86400), "2y1d"),
        (s(8 * 365 * 86400 - 1), "7y364d"),
        (s(8 * 365 * 86400), "8y"),
        (s(30 * 365 * 86400), "30y"),
    ];
    for (d, want) in cases {
        assert_eq!(human_duration(d), want, "{d:?}");
    }
}
