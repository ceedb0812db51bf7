//! Label and field selectors, parsed, printed and matched exactly as `k8s.io/apimachinery`'s
//! `labels.Parse` and `fields.ParseSelector` do, so `kubectl get -l ...` / `--field-selector ...`
//! and kube-rs list/watch parameters behave (and fail) as they do against kube-apiserver.

use std::fmt;

use serde_json::{Map, Value};

use crate::{FieldError, FieldErrorType};

/// The operator of one label requirement (`selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `k`: the label is present.
    Exists,
    /// `!k`: the label is absent.
    DoesNotExist,
    /// `k=v`.
    Equals,
    /// `k==v` (same meaning as `=`, kept for faithful printing).
    DoubleEquals,
    /// `k!=v`: absent or different.
    NotEquals,
    /// `k in (a,b)`.
    In,
    /// `k notin (a,b)`: absent or not one of the values.
    NotIn,
    /// `k>5`: present and numerically greater.
    GreaterThan,
    /// `k<5`: present and numerically smaller.
    LessThan,
}

/// One label requirement: key, operator and (sorted, de-duplicated) values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted and de-duplicated (empty for `Exists`/`DoesNotExist`).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether this requirement holds for the given labels (`Requirement.Matches`).
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        let actual = labels.get(&self.key).map(label_text);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                actual.is_some_and(|a| self.values.contains(&a))
            }
            Operator::NotIn | Operator::NotEquals => {
                actual.is_none_or(|a| !self.values.contains(&a))
            }
            Operator::Exists => actual.is_some(),
            Operator::DoesNotExist => actual.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(actual) = actual.and_then(|a| a.parse::<i64>().ok()) else {
                    return false;
                };
                let [wanted] = self.values.as_slice() else {
                    return false;
                };
                let Ok(wanted) = wanted.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }

    /// Builds a requirement with kube's `labels.NewRequirement` checks. `Err` carries the field
    /// errors (paths `key`, `values[i]`, `values[i][<key>]`).
    fn new(
        key: &str,
        operator: Operator,
        mut values: Vec<String>,
    ) -> Result<Self, Vec<FieldError>> {
        values.sort();
        values.dedup();
        let mut errs = Vec::new();
        for msg in qualified_name_errors(key) {
            errs.push(FieldError::invalid(
                "key",
                Value::String(key.to_string()),
                msg,
            ));
        }
        let as_json = || Value::Array(values.iter().cloned().map(Value::String).collect());
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(FieldError::invalid(
                "values",
                as_json(),
                "for 'in', 'notin' operators, values set can't be empty",
            )),
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(FieldError::invalid(
                    "values",
                    as_json(),
                    "exact-match compatibility requires one single value",
                ))
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                errs.push(FieldError::invalid(
                    "values",
                    as_json(),
                    "values set must be empty for exists and does not exist",
                ))
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(FieldError::invalid(
                        "values",
                        as_json(),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(FieldError::invalid(
                            format!("values[{i}]"),
                            Value::String(v.clone()),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let msgs = label_value_errors(v);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("values[{i}][{key}]"),
                    Value::String(v.clone()),
                    msgs.join("; "),
                ));
            }
        }
        if errs.is_empty() {
            Ok(Self {
                key: key.to_string(),
                operator,
                values,
            })
        } else {
            Err(errs)
        }
    }
}

impl fmt::Display for Requirement {
    /// Canonical text, as `Requirement.String()` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.operator {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in (",
            Operator::NotIn => " notin (",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        };
        f.write_str(op)?;
        f.write_str(&self.values.join(","))?;
        if matches!(self.operator, Operator::In | Operator::NotIn) {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A label selector: requirements ANDed together, sorted by key. The empty selector matches
/// everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the string syntax of `kubectl -l` and the `labelSelector` query parameter
    /// (`labels.Parse`). The error text is kube's, e.g. `unable to parse requirement: ...` or
    /// `found '...', expected: ...`; the API server wraps it in a 400.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut requirements = Parser::new(s).parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether this selector has no requirements (and so matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether every requirement holds for `labels` (an object's `metadata.labels`; pass an
    /// empty map when the object has none).
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl fmt::Display for LabelSelector {
    /// Canonical text (`Selector.String()`), which [`LabelSelector::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Converts a `metav1.LabelSelector` JSON object (`matchLabels`, `matchExpressions`) into a
/// selector, with kube's `ValidateLabelSelector` rules; error paths are relative to the selector
/// (`matchExpressions[0].values`). `{}` matches everything. Callers decide what an absent or
/// `null` selector means (for kube, usually "matches nothing"); this function rejects non-objects.
pub fn from_label_selector_json(v: &Value) -> Result<LabelSelector, Vec<FieldError>> {
    from_label_selector_json_at(v, "")
}

/// A selector as kube prints it (`app=web,env in (a,b)`): a LabelSelector object
/// (`matchLabels`/`matchExpressions`), a plain label map (a ReplicationController's selector, a
/// pod template's labels: `k=v` pairs sorted by key), or a string taken as already printed.
/// `None` for anything else or an invalid LabelSelector.
pub fn selector_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) if m.contains_key("matchLabels") || m.contains_key("matchExpressions") => {
            from_label_selector_json(v).ok().map(|s| s.to_string())
        }
        Value::Object(m) => {
            let mut pairs: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect();
            pairs.sort();
            Some(pairs.join(","))
        }
        _ => None,
    }
}

/// Like [`from_label_selector_json`], with error paths prefixed by `path` (for example
/// `spec.policy.affinity.clusterAffinity.clusterSelectorTerms[0].labelSelector`).
pub fn from_label_selector_json_at(
    v: &Value,
    path: &str,
) -> Result<LabelSelector, Vec<FieldError>> {
    let child = |name: &str| {
        if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        }
    };
    let Some(obj) = v.as_object() else {
        let field = if path.is_empty() {
            "<nil>".to_string()
        } else {
            path.to_string()
        };
        return Err(vec![FieldError::new(
            FieldErrorType::TypeInvalid,
            field,
            Some(v.clone()),
            "must be an object",
        )]);
    };
    let mut errs = Vec::new();
    let mut requirements = Vec::new();
    match obj.get("matchLabels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(labels)) => {
            let field = child("matchLabels");
            for (k, v) in labels {
                for msg in qualified_name_errors(k) {
                    errs.push(FieldError::invalid(&field, Value::String(k.clone()), msg));
                }
                let Some(value) = v.as_str() else {
                    errs.push(FieldError::new(
                        FieldErrorType::TypeInvalid,
                        &field,
                        Some(v.clone()),
                        "must be a string",
                    ));
                    continue;
                };
                for msg in label_value_errors(value) {
                    errs.push(FieldError::invalid(&field, v.clone(), msg));
                }
                requirements.push(Requirement {
                    key: k.clone(),
                    operator: Operator::Equals,
                    values: vec![value.to_string()],
                });
            }
        }
        Some(other) => errs.push(FieldError::new(
            FieldErrorType::TypeInvalid,
            child("matchLabels"),
            Some(other.clone()),
            "must be a map of strings",
        )),
    }
    match obj.get("matchExpressions") {
        None | Some(Value::Null) => {}
        Some(Value::Array(exprs)) => {
            for (i, expr) in exprs.iter().enumerate() {
                let at = child(&format!("matchExpressions[{i}]"));
                if let Some(r) = expression(expr, &at, &mut errs) {
                    requirements.push(r);
                }
            }
        }
        Some(other) => errs.push(FieldError::new(
            FieldErrorType::TypeInvalid,
            child("matchExpressions"),
            Some(other.clone()),
            "must be a list",
        )),
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(LabelSelector { requirements })
}

/// One `matchExpressions` entry (`ValidateLabelSelectorRequirement`).
fn expression(expr: &Value, at: &str, errs: &mut Vec<FieldError>) -> Option<Requirement> {
    let before = errs.len();
    let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
    let operator = expr
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut values = Vec::new();
    match expr.get("values") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (j, item) in items.iter().enumerate() {
                match item.as_str() {
                    Some(s) => values.push(s.to_string()),
                    None => errs.push(FieldError::new(
                        FieldErrorType::TypeInvalid,
                        format!("{at}.values[{j}]"),
                        Some(item.clone()),
                        "must be a string",
                    )),
                }
            }
        }
        Some(other) => errs.push(FieldError::new(
            FieldErrorType::TypeInvalid,
            format!("{at}.values"),
            Some(other.clone()),
            "must be a list of strings",
        )),
    }
    let op = match operator {
        "In" | "NotIn" => {
            if values.is_empty() {
                errs.push(FieldError::required(
                    format!("{at}.values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
            if operator == "In" {
                Operator::In
            } else {
                Operator::NotIn
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errs.push(FieldError::forbidden(
                    format!("{at}.values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
            if operator == "Exists" {
                Operator::Exists
            } else {
                Operator::DoesNotExist
            }
        }
        _ => {
            errs.push(FieldError::invalid(
                format!("{at}.operator"),
                Value::String(operator.to_string()),
                "not a valid selector operator",
            ));
            Operator::Exists
        }
    };
    for msg in qualified_name_errors(key) {
        errs.push(FieldError::invalid(
            format!("{at}.key"),
            Value::String(key.to_string()),
            msg,
        ));
    }
    for (j, v) in values.iter().enumerate() {
        for msg in label_value_errors(v) {
            errs.push(FieldError::invalid(
                format!("{at}.values[{j}]"),
                Value::String(v.clone()),
                msg,
            ));
        }
    }
    if errs.len() > before {
        return None;
    }
    values.sort();
    values.dedup();
    Some(Requirement {
        key: key.to_string(),
        operator: op,
        values,
    })
}

/// The text of a label value as matching sees it (labels are strings; anything else is compared
/// by its JSON text).
fn label_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Name and value syntax (`k8s.io/apimachinery/pkg/util/validation`).

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// `validation.RegexError`: the message plus examples and the regex.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = msg.to_string();
    if !examples.is_empty() {
        out.push_str(" (e.g. ");
        for (i, e) in examples.iter().enumerate() {
            if i > 0 {
                out.push_str(" or ");
            }
            out.push_str(&format!("'{e}', "));
        }
        out.push_str(&format!("regex used for validation is '{fmt}')"));
    } else {
        out.push_str(&format!(" (regex used for validation is '{fmt}')"));
    }
    out
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, without a regex engine.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A lowercase RFC 1123 subdomain (without the length check).
fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            match (b.first(), b.last()) {
                (Some(f), Some(l)) => {
                    (f.is_ascii_lowercase() || f.is_ascii_digit())
                        && (l.is_ascii_lowercase() || l.is_ascii_digit())
                        && b.iter()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                }
                _ => false,
            }
        })
}

/// `validation.IsQualifiedName`: label keys (`[prefix/]name`).
fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 characters".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_ERR,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `validation.IsValidLabelValue`.
fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// The label selector lexer and parser, token for token as `labels/selector.go`.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Splits the input into tokens (kube lexes everything before parsing).
fn lex(s: &str) -> Vec<(Token, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < b.len() && is_whitespace(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() || b[pos] == 0 {
            out.push((Token::EndOfString, String::new()));
            return out;
        }
        let start = pos;
        if is_special(b[pos]) {
            let mut last: Option<(Token, usize)> = None;
            while pos < b.len() && is_special(b[pos]) {
                pos += 1;
                match keyword(&s[start..pos]) {
                    Some(t) => last = Some((t, pos)),
                    None if last.is_some() => {
                        pos -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match last {
                Some((t, end)) => {
                    pos = end;
                    out.push((t, s[start..end].to_string()));
                }
                None => out.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            while pos < b.len() && b[pos] != 0 && !is_special(b[pos]) && !is_whitespace(b[pos]) {
                pos += 1;
            }
            let lit = &s[start..pos];
            out.push((keyword(lit).unwrap_or(Token::Identifier), lit.to_string()));
        }
    }
}

/// Which tokens count as identifiers: in `Values` context `in`/`notin` are plain words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

impl Parser {
    fn new(s: &str) -> Self {
        Self {
            items: lex(s),
            pos: 0,
        }
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        let (tok, lit) = self.items[self.pos.min(self.items.len() - 1)].clone();
        (Self::in_context(tok, ctx), lit)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.lookahead(ctx);
        if self.pos < self.items.len() - 1 {
            self.pos += 1;
        }
        item
    }

    fn in_context(tok: Token, ctx: Context) -> Token {
        if ctx == Context::Values && matches!(tok, Token::In | Token::NotIn) {
            Token::Identifier
        } else {
            tok
        }
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return Requirement::new(&key, op, Vec::new()).map_err(aggregate);
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, operator, values).map_err(aggregate)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let msgs = qualified_name_errors(&lit);
        if !msgs.is_empty() {
            return Err(
                FieldError::invalid("<nil>", Value::String(lit), msgs.join("; ")).message(),
            );
        }
        let (t, _) = self.lookahead(Context::Values);
        if (t == Token::EndOfString || t == Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((lit, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values = Vec::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    values.push(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if tok2 == Token::Comma {
                        self.consume(Context::Values);
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// `utilerrors.Aggregate.Error()`: one message alone, several as `[a, b]` (duplicates dropped).
fn aggregate(errs: Vec<FieldError>) -> String {
    let mut msgs: Vec<String> = Vec::new();
    for e in errs {
        let m = e.message();
        if !msgs.contains(&m) {
            msgs.push(m);
        }
    }
    if msgs.len() == 1 {
        msgs.remove(0)
    } else {
        format!("[{}]", msgs.join(", "))
    }
}

// ---------------------------------------------------------------------------------------------
// Field selectors (`k8s.io/apimachinery/pkg/fields`).

/// One field selector term: `field=value` or `field!=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTerm {
    /// The field label, e.g. `metadata.name` (kept verbatim, as kube does).
    pub field: String,
    /// The unescaped value.
    pub value: String,
    /// `true` for `!=`.
    pub negated: bool,
}

/// A field selector: terms ANDed together. The empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Parses `fieldSelector` syntax (`fields.ParseSelector`): `a=b`, `a==b`, `a!=b`,
    /// comma-ANDed; values may escape `\,` `\=` `\\`. Errors are kube's text, e.g.
    /// `invalid selector: 'x'; can't understand 'x'`.
    pub fn parse(s: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(s);
        parts.sort_unstable();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let value = unescape_value(rhs)?;
            terms.push(FieldTerm {
                field: lhs.to_string(),
                value,
                negated: op == "!=",
            });
        }
        Ok(FieldSelector { terms })
    }

    /// The terms, in canonical (sorted) order.
    pub fn terms(&self) -> &[FieldTerm] {
        &self.terms
    }

    /// The field labels used, so the server can answer 400 `field label not supported: <f>`
    /// for fields the kind does not index.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().map(|t| t.field.as_str())
    }

    /// Whether this selector has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value `field` must equal, when the selector pins it with `=` (`RequiresExactMatch`);
    /// lets the server turn `metadata.name=x` into a single-key read.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| !t.negated && t.field == field)
            .map(|t| t.value.as_str())
    }

    /// Whether every term holds; `get` returns a field's value (`None` = absent, which
    /// compares as the empty string, as in kube's `fields.Set`).
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let actual = get(&t.field).unwrap_or_default();
            (actual == t.value) != t.negated
        })
    }
}

impl fmt::Display for FieldSelector {
    /// Canonical text with values escaped, which [`FieldSelector::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if t.negated { "!=" } else { "=" };
            write!(f, "{}{op}{}", t.field, escape_value(&t.value))?;
        }
        Ok(())
    }
}

/// Splits on unescaped commas, keeping escapes in place.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// Splits at the first operator (`!=` and `==` win over `=` at the same position).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], op, value));
            }
        }
    }
    None
}

/// `fields.EscapeValue`.
fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `fields.UnescapeValue`, with kube's error texts.
fn unescape_value(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn parses_every_operator_to_canonical_text() {
        let cases = [
            ("", ""),
            ("x", "x"),
            ("!x", "!x"),
            ("x=a", "x=a"),
            ("x==a", "x==a"),
            ("x!=a", "x!=a"),
            ("x in (b,a,b)", "x in (a,b)"),
            ("x notin (a)", "x notin (a)"),
            ("x>5", "x>5"),
            ("x<5", "x<5"),
            (" b = c , a ", "a,b=c"),
            ("x in ()", "x in ()"),
            ("x in (,a)", "x in (,a)"),
            ("x=", "x="),
            ("example.com/app=web,tier", "example.com/app=web,tier"),
            ("in in (in,notin)", "in in (in,notin)"),
            ("x=a,x!=b", "x=a,x!=b"),
        ];
        for (input, want) in cases {
            let sel = LabelSelector::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(sel.to_string(), want, "{input}");
            assert_eq!(sel.is_empty(), want.is_empty());
        }
    }

    #[test]
    fn parse_errors_match_kube() {
        let name_err = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let value_err = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let cases = [
            ("x=a=b", "found '=', expected: ',' or 'end of string'".to_string()),
            ("x=a b", "found 'b', expected: ',' or 'end of string'".to_string()),
            ("x,", "found '', expected: identifier after ','".to_string()),
            ("=a", "found '=', expected: !, identifier, or 'end of string'".to_string()),
            ("!x=a", "found '=', expected: ',' or 'end of string'".to_string()),
            ("x in a", "unable to parse requirement: found 'a' expected: '('".to_string()),
            ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'".to_string()),
            ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'".to_string()),
            ("x in =", "unable to parse requirement: found '=' expected: '('".to_string()),
            ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier".to_string()),
            ("x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt".to_string()),
            ("x=(", "unable to parse requirement: found '(', expected: identifier".to_string()),
            ("!", "unable to parse requirement: found '', expected: identifier".to_string()),
            (
                "x>a",
                "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer".to_string(),
            ),
            ("Bad_=x", format!("unable to parse requirement: <nil>: Invalid value: \"Bad_\": {name_err}")),
            ("x=-bad", format!("unable to parse requirement: values[0][x]: Invalid value: \"-bad\": {value_err}")),
            (
                "x>-1",
                format!(
                    "unable to parse requirement: values[0][x]: Invalid value: \"-1\": {value_err}"
                ),
            ),
            (
                "x>a_",
                format!(
                    "unable to parse requirement: [values[0]: Invalid value: \"a_\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"a_\": {value_err}]"
                ),
            ),
            (
                "/x",
                "unable to parse requirement: <nil>: Invalid value: \"/x\": prefix part must be non-empty".to_string(),
            ),
            (
                "a/b/c",
                "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string(),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(LabelSelector::parse(input).unwrap_err(), want, "{input}");
        }
    }

    #[test]
    fn matches_like_kube() {
        let l = labels(json!({"env": "prod", "tier": "5"}));
        let cases = [
            ("", true),
            ("env=prod", true),
            ("env==prod", true),
            ("env=dev", false),
            ("env!=prod", false),
            ("missing!=x", true),
            ("env in (dev,prod)", true),
            ("env in (dev)", false),
            ("missing in (dev)", false),
            ("env notin (prod)", false),
            ("missing notin (a)", true),
            ("env", true),
            ("missing", false),
            ("!env", false),
            ("!missing", true),
            ("tier>4", true),
            ("tier>5", false),
            ("tier<6", true),
            ("tier<4", false),
            ("env>1", false),
            ("missing>1", false),
            ("env=prod,tier>6", false),
        ];
        for (input, want) in cases {
            assert_eq!(
                LabelSelector::parse(input).unwrap().matches(&l),
                want,
                "{input}"
            );
        }
        assert!(LabelSelector::parse("!env").unwrap().matches(&Map::new()));
    }

    #[test]
    fn converts_metav1_label_selectors() {
        let sel = from_label_selector_json(&json!({
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [
                {"key": "c", "operator": "In", "values": ["y", "x"]},
                {"key": "d", "operator": "DoesNotExist"},
            ]
        }))
        .unwrap();
        assert_eq!(sel.to_string(), "a=1,b=2,c in (x,y),!d");
        assert!(sel.matches(&labels(json!({"a": "1", "b": "2", "c": "x"}))));
        assert!(!sel.matches(&labels(json!({"a": "1", "b": "2", "c": "x", "d": ""}))));
        assert!(from_label_selector_json(&json!({})).unwrap().is_empty());

        let errs = from_label_selector_json_at(
            &json!({"matchExpressions": [
                {"key": "c", "operator": "In"},
                {"key": "d", "operator": "Exists", "values": ["x"]},
                {"key": "e", "operator": "Gt", "values": ["1"]},
                {"key": "-f", "operator": "Exists"},
            ]}),
            "spec.selector",
        )
        .unwrap_err();
        let msgs: Vec<String> = errs.iter().map(FieldError::message).collect();
        assert_eq!(
            msgs,
            [
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                "spec.selector.matchExpressions[2].operator: Invalid value: \"Gt\": not a valid selector operator",
                "spec.selector.matchExpressions[3].key: Invalid value: \"-f\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ]
        );
        let errs = from_label_selector_json(&json!({"matchLabels": {"a": "-x"}})).unwrap_err();
        assert_eq!(errs[0].field, "matchLabels");
        assert!(from_label_selector_json(&json!("x")).is_err());
    }

    #[test]
    fn field_selectors() {
        let sel = FieldSelector::parse("metadata.namespace!=bar,metadata.name==foo").unwrap();
        assert_eq!(sel.to_string(), "metadata.name=foo,metadata.namespace!=bar");
        assert_eq!(
            sel.fields().collect::<Vec<_>>(),
            ["metadata.name", "metadata.namespace"]
        );
        assert_eq!(sel.requires_exact_match("metadata.name"), Some("foo"));
        assert_eq!(sel.requires_exact_match("metadata.namespace"), None);
        let get = |ns: &'static str| {
            move |f: &str| match f {
                "metadata.name" => Some("foo".to_string()),
                "metadata.namespace" => Some(ns.to_string()),
                _ => None,
            }
        };
        assert!(sel.matches(get("default")));
        assert!(!sel.matches(get("bar")));

        let escaped = FieldSelector::parse(r"a=x\,y\=z\\w").unwrap();
        assert_eq!(escaped.terms()[0].value, r"x,y=z\w");
        assert_eq!(escaped.to_string(), r"a=x\,y\=z\\w");

        assert!(FieldSelector::parse("").unwrap().is_empty());
        assert!(FieldSelector::parse(",").unwrap().is_empty());
        let absent = FieldSelector::parse("spec.x=").unwrap();
        assert!(absent.matches(|_| None));
        assert!(!FieldSelector::parse("spec.x!=").unwrap().matches(|_| None));

        let errors = [
            ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
            ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
            (
                "a=b=c",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                r"a=b\x",
                r"invalid field selector: invalid escape sequence: \x",
            ),
            (
                r"a=b\",
                r"invalid field selector: invalid escape sequence: \",
            ),
        ];
        for (input, want) in errors {
            assert_eq!(FieldSelector::parse(input).unwrap_err(), want, "{input}");
        }
    }

    fn requirement_text() -> impl Strategy<Value = String> {
        let key = (
            "([a-z]{1,4}\\.io/)?",
            "[a-zA-Z0-9]([a-z0-9._-]{0,6}[a-z0-9])?",
        )
            .prop_map(|(p, n)| format!("{p}{n}"));
        let value = "([A-Za-z0-9]([A-Za-z0-9_.-]{0,5}[A-Za-z0-9])?)?";
        // Sorted and de-duplicated: kube itself rejects `(a,,)`-style lists ending in commas.
        let values = proptest::collection::btree_set(value, 1..4)
            .prop_map(|v| v.into_iter().collect::<Vec<_>>());
        (key, 0..9usize, values, 0u32..100_000).prop_map(|(k, op, values, n)| match op {
            0 => k,
            1 => format!("!{k}"),
            2 => format!("{k}={}", values[0]),
            3 => format!("{k}=={}", values[0]),
            4 => format!("{k} != {}", values[0]),
            5 => format!("{k} in ({})", values.join(",")),
            6 => format!("{k} notin ({})", values.join(",")),
            7 => format!("{k}>{n}"),
            _ => format!("{k}<{n}"),
        })
    }

    proptest! {
        #[test]
        fn label_selector_round_trips(reqs in proptest::collection::vec(requirement_text(), 0..5)) {
            let sel = LabelSelector::parse(&reqs.join(", ")).unwrap();
            let again = LabelSelector::parse(&sel.to_string()).unwrap();
            prop_assert_eq!(&again, &sel);
            prop_assert_eq!(again.to_string(), sel.to_string());
        }

        #[test]
        fn field_selector_round_trips(
            terms in proptest::collection::vec(("[a-z][a-z.]{0,8}", any::<bool>(), "[a-z=,!\\\\ ]{0,6}"), 0..4)
        ) {
            let text = terms
                .iter()
                .map(|(f, neg, v)| format!("{f}{}{}", if *neg { "!=" } else { "=" }, escape_value(v)))
                .collect::<Vec<_>>()
                .join(",");
            let sel = FieldSelector::parse(&text).unwrap();
            let canonical = FieldSelector::parse(&sel.to_string()).unwrap();
            prop_assert_eq!(FieldSelector::parse(&canonical.to_string()).unwrap(), canonical.clone());
            let mut a = sel.terms().to_vec();
            let mut b = canonical.terms().to_vec();
            a.sort_by(|x, y| (&x.field, &x.value, x.negated).cmp(&(&y.field, &y.value, y.negated)));
            b.sort_by(|x, y| (&x.field, &x.value, x.negated).cmp(&(&y.field, &y.value, y.negated)));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn label_parser_never_panics(s in "[a-z0-9=!(),<> .\\-/_]{0,30}") {
            let _ = LabelSelector::parse(&s);
            let _ = FieldSelector::parse(&s);
        }
    }
}
