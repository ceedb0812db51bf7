//! The JSONPath dialect of `k8s.io/client-go/util/jsonpath`, as printer columns use it: a port
//! of its parser (`{...}` templates, fields with `\.` escapes, `['key']`, indices and slices,
//! `*`, `..`, unions, `[?(@.a == "x")]` filters) and its evaluator with missing keys allowed.

use std::borrow::Cow;

use serde_json::Value;

/// Evaluates a printer-column JSONPath (`.status.conditions[?(@.type=="Ready")].status`) against
/// `obj`, as kube-apiserver does for CRD printer columns (`{<path>}`, missing keys allowed), and
/// returns every result in order. Missing fields give no result rather than an error.
///
/// Kubernetes' dialect, faithfully: `\.` escapes a dot inside a field name
/// (`.metadata.labels.kubernetes-fleet\.io/name`); `['a.b']` is the same as `.a.b` (write
/// `['a\.b']` for a key containing a dot); `[-1]` is the last element; filters compare one
/// value with `==`, `!=`, `<`, `>`, `<=`, `>=` (strings, integers, floats, booleans; comparing
/// different kinds is an error).
pub fn eval_json_path(path: &str, obj: &Value) -> Result<Vec<Value>, String> {
    let template = parse(&format!("{{{path}}}"))?;
    let first = match template.first() {
        Some(Node::List(nodes)) => eval_list(vec![Cow::Borrowed(obj)], nodes)?,
        Some(Node::Text(t)) => vec![Cow::Owned(Value::String(t.clone()))],
        _ => Vec::new(),
    };
    Ok(first.into_iter().map(Cow::into_owned).collect())
}

/// Checks a CRD `additionalPrinterColumns[].jsonPath`: apiextensions' "simple JSON path" rule
/// (non-empty, starts with `.`) and that the path parses. The error is the detail for
/// `field.Invalid(<path>.jsonPath, value, detail)`.
pub fn validate_json_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("must not be empty".to_string());
    }
    if !path.starts_with('.') {
        return Err("must be a simple json path starting with .".to_string());
    }
    parse(&format!("{{{path}}}")).map(|_| ())
}

/// One parsed JSONPath node.
#[derive(Debug, Clone)]
enum Node {
    List(Vec<Node>),
    Text(String),
    Field(String),
    Array([Param; 3]),
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: String,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    Identifier(String),
}

/// One slice parameter (`start:end:step`).
#[derive(Debug, Clone, Copy, Default)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

// ---------------------------------------------------------------------------------------------
// Parser: `jsonpath/parser.go`, state machine for state machine.

/// Parses a template: text outside `{...}` becomes text nodes, each action a list node.
fn parse(text: &str) -> Result<Vec<Node>, String> {
    let mut p = Parser {
        input: text,
        pos: 0,
        start: 0,
        width: 0,
    };
    let mut root = Vec::new();
    loop {
        match p.input[p.pos..].find('{') {
            Some(offset) => {
                p.pos += offset;
                if p.pos > p.start {
                    root.push(Node::Text(p.consume().to_string()));
                }
                p.pos += 1;
                p.consume();
                root.push(Node::List(p.action()?));
            }
            None => {
                p.pos = p.input.len();
                if p.pos > p.start {
                    root.push(Node::Text(p.consume().to_string()));
                }
                return Ok(root);
            }
        }
    }
}

/// Parses the inside of an action (`parseAction`): `{text}`'s single list.
fn parse_action(text: &str) -> Result<Vec<Node>, String> {
    match parse(&format!("{{{text}}}"))?.into_iter().next() {
        Some(Node::List(nodes)) => Ok(nodes),
        _ => Ok(Vec::new()),
    }
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    width: usize,
}

const EOF: char = '\u{FFFF}';

impl Parser<'_> {
    fn consume(&mut self) -> &str {
        let s = &self.input[self.start..self.pos];
        self.start = self.pos;
        s
    }

    fn next(&mut self) -> char {
        match self.input[self.pos..].chars().next() {
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                c
            }
            None => {
                self.width = 0;
                EOF
            }
        }
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> char {
        let c = self.next();
        self.backup();
        c
    }

    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    /// `parseInsideAction` until the closing `}`.
    fn action(&mut self) -> Result<Vec<Node>, String> {
        let mut cur = Vec::new();
        loop {
            if self.rest().starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(cur);
            }
            if self.rest().starts_with("[?(") {
                self.filter(&mut cur)?;
                continue;
            }
            if self.rest().starts_with("..") {
                if matches!(cur.last(), Some(Node::Recursive)) {
                    return Err("invalid multiple recursive descent".to_string());
                }
                self.pos += 2;
                self.consume();
                cur.push(Node::Recursive);
                if is_alphanumeric(self.peek()) {
                    self.field(&mut cur);
                }
                continue;
            }
            match self.next() {
                EOF | '\r' | '\n' => return Err("unclosed action".to_string()),
                ' ' | '@' | '$' => {
                    self.consume();
                }
                '[' => self.array(&mut cur)?,
                q @ ('"' | '\'') => self.quote(&mut cur, q)?,
                '.' => self.field(&mut cur),
                c if c == '+' || c == '-' || c.is_ascii_digit() => {
                    self.backup();
                    self.number(&mut cur)?;
                }
                c if is_alphanumeric(c) => {
                    self.backup();
                    self.identifier(&mut cur);
                }
                c => {
                    return Err(format!(
                        "unrecognized character in action: U+{:04X} '{c}'",
                        c as u32
                    ));
                }
            }
        }
    }

    fn field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            let c = self.next();
            if c == '\\' {
                self.next();
            } else if is_terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        cur.push(if value == "*" {
            Node::Wildcard
        } else {
            Node::Field(value.replace('\\', ""))
        });
    }

    fn identifier(&mut self, cur: &mut Vec<Node>) {
        loop {
            if is_terminator(self.next()) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        cur.push(match value {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            other => Node::Identifier(other.to_string()),
        });
    }

    fn number(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if matches!(self.peek(), '+' | '-') {
            self.next();
        }
        loop {
            let c = self.next();
            if c != '.' && !c.is_ascii_digit() {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        if let Ok(i) = value.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Ok(f) = value.parse::<f64>() {
            cur.push(Node::Float(f));
        } else {
            return Err(format!("cannot parse number {value}"));
        }
        Ok(())
    }

    fn array(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        loop {
            match self.next() {
                EOF | '\n' => return Err("unterminated array".to_string()),
                ']' => break,
                _ => {}
            }
        }
        let whole = self.consume();
        let mut text = &whole[1..whole.len() - 1];
        if text == "*" {
            text = ":";
        }
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 1 {
            let union = parts
                .iter()
                .map(|part| parse_action(&format!("[{}]", part.trim_matches(' '))))
                .collect::<Result<_, _>>()?;
            cur.push(Node::Union(union));
            return Ok(());
        }
        if let Some(key) = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            cur.extend(parse_action(&format!(".{key}"))?);
            return Ok(());
        }
        cur.push(Node::Array(slice_params(text)?));
        Ok(())
    }

    fn filter(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end) = (false, false);
        let mut pair = '\0';
        loop {
            let c = self.next();
            match c {
                EOF | '\n' => return Err("unterminated filter".to_string()),
                '"' | '\'' => {
                    if !begin {
                        begin = true;
                        pair = c;
                        continue;
                    }
                    if self.input.as_bytes()[self.pos - 2] != b'\\' && c == pair {
                        end = true;
                    }
                }
                ')' if begin == end => break,
                _ => {}
            }
        }
        if self.next() != ']' {
            return Err("unclosed array expect ]".to_string());
        }
        let whole = self.consume();
        let text = &whole[..whole.len() - 2];
        match split_comparison(text) {
            Some((left, op, right)) => cur.push(Node::Filter {
                left: parse_action(left)?,
                right: parse_action(right)?,
                op: op.to_string(),
            }),
            None => cur.push(Node::Filter {
                left: parse_action(text)?,
                right: Vec::new(),
                op: "exists".to_string(),
            }),
        }
        Ok(())
    }

    fn quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), String> {
        loop {
            let c = self.next();
            if c == EOF || c == '\n' {
                return Err("unterminated quoted string".to_string());
            }
            if c == end && self.input.as_bytes()[self.pos - 2] != b'\\' {
                break;
            }
        }
        let value = self.consume();
        let text = unquote(value).map_err(|e| format!("unquote string {value} error {e}"))?;
        cur.push(Node::Text(text));
        Ok(())
    }
}

fn is_terminator(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | EOF | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
    )
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

/// `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$` and the parameter rules of `parseArray`.
fn slice_params(text: &str) -> Result<[Param; 3], String> {
    let groups: Vec<&str> = text.split(':').collect();
    let well_formed = groups.len() <= 3
        && groups.iter().all(|g| {
            g.strip_prefix('-')
                .unwrap_or(g)
                .bytes()
                .all(|b| b.is_ascii_digit())
        });
    if !well_formed {
        return Err(format!("invalid array index {text}"));
    }
    let mut params = [Param::default(); 3];
    for i in 0..3 {
        match groups.get(i) {
            Some(g) if !g.is_empty() => {
                let value = g
                    .parse::<i64>()
                    .map_err(|_| format!("array index {g} is not a number"))?;
                params[i] = Param {
                    value,
                    known: true,
                    derived: false,
                };
            }
            Some(_) if i > 0 => params[i] = Param::default(),
            _ if i == 1 => {
                params[1] = Param {
                    value: params[0].value + 1,
                    known: true,
                    derived: true,
                }
            }
            _ => params[i] = Param::default(),
        }
    }
    Ok(params)
}

/// `^([^!<>=]+)([!<>=]+)(.+?)$`.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let op_start = text.find(is_op)?;
    if op_start == 0 {
        return None;
    }
    let op_len = text[op_start..].find(|c: char| !is_op(c))?;
    let right = &text[op_start + op_len..];
    if right.is_empty() || right.contains('\n') {
        return None;
    }
    Some((&text[..op_start], &text[op_start..op_start + op_len], right))
}

/// `UnquoteExtend`: Go string-literal unquoting for `"..."` and `'...'`.
fn unquote(s: &str) -> Result<String, String> {
    let syntax = || "invalid syntax".to_string();
    let quote = s.chars().next().ok_or_else(syntax)?;
    if s.len() < 2 || !s.ends_with(quote) || !matches!(quote, '"' | '\'') {
        return Err(syntax());
    }
    let body = &s[1..s.len() - 1];
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return Err(syntax());
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next().ok_or_else(syntax)?;
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Result<u32, String> {
            let digits: String = chars.take(n).collect();
            if digits.len() != n {
                return Err(syntax());
            }
            u32::from_str_radix(&digits, 16).map_err(|_| syntax())
        };
        match e {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '\'' | '"' if e == quote => out.push(e),
            'x' => out.push(char::from_u32(hex(&mut chars, 2)?).ok_or_else(syntax)?),
            'u' => out.push(char::from_u32(hex(&mut chars, 4)?).ok_or_else(syntax)?),
            'U' => out.push(char::from_u32(hex(&mut chars, 8)?).ok_or_else(syntax)?),
            '0'..='7' => {
                let rest: String = chars.by_ref().take(2).collect();
                let code = u32::from_str_radix(&format!("{e}{rest}"), 8).map_err(|_| syntax())?;
                if rest.len() != 2 || code > 255 {
                    return Err(syntax());
                }
                out.push(char::from_u32(code).ok_or_else(syntax)?);
            }
            _ => return Err(syntax()),
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Evaluator: `jsonpath/jsonpath.go` with `AllowMissingKeys(true)`.

type Values<'a> = Vec<Cow<'a, Value>>;

fn eval_list<'a>(input: Values<'a>, nodes: &[Node]) -> Result<Values<'a>, String> {
    nodes.iter().try_fold(input, walk)
}

fn walk<'a>(input: Values<'a>, node: &Node) -> Result<Values<'a>, String> {
    match node {
        Node::List(nodes) => eval_list(input, nodes),
        Node::Text(t) => Ok(vec![Cow::Owned(Value::String(t.clone()))]),
        Node::Int(i) => Ok(input.iter().map(|_| Cow::Owned(Value::from(*i))).collect()),
        Node::Float(f) => Ok(input.iter().map(|_| Cow::Owned(Value::from(*f))).collect()),
        Node::Bool(b) => Ok(input.iter().map(|_| Cow::Owned(Value::Bool(*b))).collect()),
        Node::Field(name) => Ok(field(input, name)),
        Node::Array(params) => array(input, params),
        Node::Filter { left, right, op } => filter(input, left, right, op),
        Node::Wildcard => Ok(input.into_iter().flat_map(children).collect()),
        Node::Recursive => Ok(recursive(input)),
        Node::Union(lists) => {
            let mut out = Vec::new();
            for list in lists {
                out.extend(eval_list(input.clone(), list)?);
            }
            Ok(out)
        }
        Node::Identifier(name) => Err(format!("unrecognized identifier {name}")),
    }
}

/// Keys of objects; `null`s are skipped; an empty name (`{.}`) is the value itself.
fn field<'a>(input: Values<'a>, name: &str) -> Values<'a> {
    input
        .into_iter()
        .filter(|v| !v.is_null())
        .filter_map(|v| {
            if name.is_empty() {
                return Some(v);
            }
            match v {
                Cow::Borrowed(Value::Object(m)) => m.get(name).map(Cow::Borrowed),
                Cow::Owned(Value::Object(mut m)) => m.remove(name).map(Cow::Owned),
                _ => None,
            }
        })
        .collect()
}

/// Go's name for a value's dynamic type, for error messages.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Elements of a list at an index or slice.
fn array<'a>(input: Values<'a>, params: &[Param; 3]) -> Result<Values<'a>, String> {
    let mut out = Vec::new();
    for v in input.into_iter().filter(|v| !v.is_null()) {
        let len = match v.as_ref() {
            Value::Array(items) => items.len() as i64,
            other => return Err(format!("{} is not array or slice", go_type(other))),
        };
        let mut p = *params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        if p[1].value == p[0].value {
            continue;
        }
        if p[0].value >= len || p[0].value < 0 {
            return Err(format!(
                "array index out of bounds: index {}, length {len}",
                p[0].value
            ));
        }
        if p[1].value > len || p[1].value < 0 {
            return Err(format!(
                "array index out of bounds: index {}, length {len}",
                p[1].value - 1
            ));
        }
        if p[0].value > p[1].value {
            return Err(format!(
                "starting index {} is greater than ending index {}",
                p[0].value, p[1].value
            ));
        }
        let step = if p[2].known {
            if p[2].value <= 0 {
                return Err("step must be > 0".to_string());
            }
            p[2].value as usize
        } else {
            1
        };
        let (start, end) = (p[0].value as usize, p[1].value as usize);
        match v {
            Cow::Borrowed(Value::Array(items)) => {
                out.extend(items[start..end].iter().step_by(step).map(Cow::Borrowed))
            }
            Cow::Owned(Value::Array(items)) => out.extend(
                items
                    .into_iter()
                    .skip(start)
                    .take(end - start)
                    .step_by(step)
                    .map(Cow::Owned),
            ),
            _ => {}
        }
    }
    Ok(out)
}

/// The direct children of an object or list (`*`); scalars have none.
fn children(v: Cow<'_, Value>) -> Values<'_> {
    match v {
        Cow::Borrowed(Value::Object(m)) => m.values().map(Cow::Borrowed).collect(),
        Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Object(m)) => m.into_iter().map(|(_, v)| Cow::Owned(v)).collect(),
        Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
        _ => Vec::new(),
    }
}

/// `..`: every container and, after it, its descendants.
fn recursive(input: Values<'_>) -> Values<'_> {
    let mut out = Vec::new();
    for v in input.into_iter().filter(|v| !v.is_null()) {
        let kids = children(v.clone());
        if !kids.is_empty() {
            out.push(v);
            out.extend(recursive(kids));
        }
    }
    out
}

/// `[?(left op right)]` over list elements.
fn filter<'a>(
    input: Values<'a>,
    left: &[Node],
    right: &[Node],
    op: &str,
) -> Result<Values<'a>, String> {
    let mut out = Vec::new();
    for v in input {
        let elements: Values<'a> = match v {
            Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
            other => {
                return Err(format!(
                    "{} is not array or slice and cannot be filtered",
                    other.as_ref()
                ));
            }
        };
        for element in elements {
            let lefts = eval_list(vec![element.clone()], left);
            if op == "exists" {
                if lefts.is_ok_and(|l| !l.is_empty()) {
                    out.push(element);
                }
                continue;
            }
            let lefts = lefts?;
            let l = match lefts.as_slice() {
                [] => continue,
                [one] => one.as_ref(),
                _ => return Err("can only compare one element at a time".to_string()),
            };
            let rights = eval_list(vec![element.clone()], right)?;
            let r = match rights.as_slice() {
                [] => continue,
                [one] => one.as_ref(),
                _ => return Err("can only compare one element at a time".to_string()),
            };
            if compare(l, r, op)? {
                out.push(element);
            }
        }
    }
    Ok(out)
}

/// A comparable value, as Go templates classify them.
#[derive(PartialEq, PartialOrd)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

fn basic(v: &Value) -> Result<Basic<'_>, String> {
    match v {
        Value::Bool(b) => Ok(Basic::Bool(*b)),
        Value::Number(n) => Ok(n
            .as_i64()
            .map_or_else(|| Basic::Float(n.as_f64().unwrap_or(f64::NAN)), Basic::Int)),
        Value::String(s) => Ok(Basic::Str(s)),
        _ => Err("invalid type for comparison".to_string()),
    }
}

/// The template comparison functions (`eq`, `ne`, `lt`, `gt`, `le`, `ge`).
fn compare(l: &Value, r: &Value, op: &str) -> Result<bool, String> {
    let (l, r) = (basic(l)?, basic(r)?);
    if std::mem::discriminant(&l) != std::mem::discriminant(&r) {
        return Err("incompatible types for comparison".to_string());
    }
    let ordered = || {
        if matches!(l, Basic::Bool(_)) {
            Err("invalid type for comparison".to_string())
        } else {
            Ok(())
        }
    };
    match op {
        "==" => Ok(l == r),
        "!=" => Ok(l != r),
        "<" => ordered().map(|_| l < r),
        ">" => ordered().map(|_| l > r),
        "<=" => ordered().map(|_| l <= r),
        ">=" => ordered().map(|_| l >= r),
        other => Err(format!("unrecognized filter operator {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Value {
        json!({
            "metadata": {"name": "crp", "labels": {"kubernetes-fleet.io/name": "x", "a": {"b": "nested"}}},
            "spec": {"list": [1, 2, 3], "weights": [{"w": 2.5}], "flag": true, "none": null},
            "status": {
                "properties": {"kubernetes-fleet.io/node-count": {"value": "3"}},
                "conditions": [
                    {"type": "ClusterResourcePlacementScheduled", "status": "True", "observedGeneration": 2},
                    {"status": "Unknown"},
                    {"type": "Ready", "status": "False", "observedGeneration": 1}
                ]
            }
        })
    }

    #[test]
    fn evaluates_printer_column_paths() {
        let o = obj();
        let cases: Vec<(&str, Vec<Value>)> = vec![
            (".metadata.name", vec![json!("crp")]),
            (
                r".status.properties.kubernetes-fleet\.io/node-count.value",
                vec![json!("3")],
            ),
            (
                r".metadata.labels.kubernetes-fleet\.io/name",
                vec![json!("x")],
            ),
            (
                r".metadata.labels['kubernetes-fleet\.io/name']",
                vec![json!("x")],
            ),
            (".metadata.labels['a.b']", vec![json!("nested")]),
            (
                ".status.conditions[?(@.type==\"ClusterResourcePlacementScheduled\")].status",
                vec![json!("True")],
            ),
            (
                ".status.conditions[?(@.type=='Ready')].status",
                vec![json!("False")],
            ),
            (
                ".status.conditions[?(@.type!=\"Ready\")].status",
                vec![json!("True")],
            ),
            (
                ".status.conditions[?(@.observedGeneration>1)].type",
                vec![json!("ClusterResourcePlacementScheduled")],
            ),
            (
                ".status.conditions[?(@.type)].type",
                vec![json!("ClusterResourcePlacementScheduled"), json!("Ready")],
            ),
            (".spec.list[0]", vec![json!(1)]),
            (".spec.list[-1]", vec![json!(3)]),
            (".spec.list[*]", vec![json!(1), json!(2), json!(3)]),
            (".spec.list[1:]", vec![json!(2), json!(3)]),
            (".spec.list[0:3:2]", vec![json!(1), json!(3)]),
            (".spec.list[0,2]", vec![json!(1), json!(3)]),
            (".spec.weights[0].w", vec![json!(2.5)]),
            (".spec.none", vec![Value::Null]),
            (".spec.none.deeper", vec![]),
            (".spec.missing", vec![]),
            (".missing.deeper[0]", vec![]),
            (".spec.flag", vec![json!(true)]),
            ("..w", vec![json!(2.5)]),
        ];
        for (path, want) in cases {
            assert_eq!(
                eval_json_path(path, &o).unwrap_or_else(|e| panic!("{path}: {e}")),
                want,
                "{path}"
            );
        }
        assert_eq!(eval_json_path(".", &o).unwrap(), vec![o.clone()]);
    }

    #[test]
    fn evaluation_errors() {
        let o = obj();
        let cases = [
            (
                ".spec.list[5]",
                "array index out of bounds: index 5, length 3",
            ),
            (".metadata.name[0]", "string is not array or slice"),
            (
                ".status.conditions[?(@.observedGeneration==\"2\")]",
                "incompatible types for comparison",
            ),
            ("status", "unrecognized identifier status"),
        ];
        for (path, want) in cases {
            assert_eq!(eval_json_path(path, &o).unwrap_err(), want, "{path}");
        }
    }

    #[test]
    fn validates_column_paths() {
        assert_eq!(validate_json_path(""), Err("must not be empty".to_string()));
        assert_eq!(
            validate_json_path("spec.x"),
            Err("must be a simple json path starting with .".to_string())
        );
        assert_eq!(
            validate_json_path(".spec.x[0"),
            Err("unterminated array".to_string())
        );
        assert_eq!(
            validate_json_path(".spec[?(@.x==\"a\""),
            Err("unterminated filter".to_string())
        );
        assert_eq!(
            validate_json_path(".spec #"),
            Err("unrecognized character in action: U+0023 '#'".to_string())
        );
        assert_eq!(
            validate_json_path(".spec.x[a]"),
            Err("invalid array index a".to_string())
        );
        assert_eq!(
            validate_json_path(".spec....x"),
            Err("invalid multiple recursive descent".to_string())
        );
        assert!(validate_json_path(".status.conditions[?(@.type==\"Ready\")].status").is_ok());
        assert!(validate_json_path(r".a.b\.c['d'][*][-1]").is_ok());
    }
}
