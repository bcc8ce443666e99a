//! `json_query`: a jq-like filter over a JSON, YAML or TOML document. A documented subset of jq,
//! parsed and run here (no jq binary, no code): paths, iteration, pipes, construction,
//! comparison and arithmetic, and the common built-ins. Bounded: parse depth, steps and output.

use std::cmp::Ordering;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::system::System;
use crate::util::doc::{Format, capped, parse, source};

/// Nesting of the filter (the parser recurses on it).
const MAX_DEPTH: usize = 64;
/// Evaluation steps one call may take (values produced, roughly).
const MAX_STEPS: u64 = 2_000_000;
/// Results one call shows.
const MAX_RESULTS: usize = 1000;

/// The `json_query` tool.
pub struct JsonQuery;

/// Arguments of `json_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The filter, a jq subset: `.a.b`, `.["k"]`, `.[0]`, `.[-1]`, `.[2:5]`, `.[]`, `..`, `?`,
    /// `|`, `,`, `[...]`, `{a: .x, b}`, literals, `== != < <= > >=`, `and or not`, `+ - * / %`,
    /// `//`, `if c then a else b end`, and length keys values type select map has sort sort_by
    /// unique min max add first last reverse to_entries from_entries tostring tonumber join
    /// split ascii_downcase ascii_upcase contains startswith endswith empty not any all flatten
    /// group_by min_by max_by unique_by paths. No variables, reduce or user functions.
    filter: String,
    /// The document as text (or give `file`).
    #[serde(default)]
    text: Option<String>,
    /// A workspace file holding the document (or give `text`).
    #[serde(default)]
    file: Option<String>,
    /// Its format: json, yaml or toml (default: from the extension, else detected).
    #[serde(default)]
    format: Option<Format>,
    /// Print string results without quotes (jq's `-r`).
    #[serde(default)]
    raw: bool,
}

#[derive(Debug, Clone)]
enum Expr {
    Identity,
    Recurse,
    Literal(Value),
    Index(Box<Expr>, Box<Expr>, bool),
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>, bool),
    Iterate(Box<Expr>, bool),
    Pipe(Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    Alt(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    Cmp(&'static str, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Array(Option<Box<Expr>>),
    Object(Vec<(Expr, Expr)>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Dot,
    DotDot,
    Ident(String),
    Field(String),
    Str(String),
    Num(f64),
    Punct(&'static str),
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let at = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let ident = |i: &mut usize| {
            let mut s = String::new();
            while let Some(&c) = chars.get(*i) {
                if c.is_alphanumeric() || c == '_' {
                    s.push(c);
                    *i += 1;
                } else {
                    break;
                }
            }
            s
        };
        if c == '.' {
            if chars.get(i + 1) == Some(&'.') {
                out.push((Tok::DotDot, at));
                i += 2;
            } else if chars
                .get(i + 1)
                .is_some_and(|c| c.is_alphabetic() || *c == '_')
            {
                i += 1;
                out.push((Tok::Field(ident(&mut i)), at));
            } else {
                out.push((Tok::Dot, at));
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            out.push((Tok::Ident(ident(&mut i)), at));
        } else if c.is_ascii_digit() {
            let mut s = String::new();
            while let Some(&c) = chars.get(i) {
                if c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' {
                    s.push(c);
                    i += 1;
                } else {
                    break;
                }
            }
            let n = s
                .parse()
                .map_err(|_| format!("at {}: `{s}` is not a number", at + 1))?;
            out.push((Tok::Num(n), at));
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => return Err(format!("at {}: the string never ends", at + 1)),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let e = chars.get(i + 1).copied().unwrap_or('\\');
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => other,
                        });
                        i += 2;
                    }
                    Some(&c) => {
                        s.push(c);
                        i += 1;
                    }
                }
            }
            out.push((Tok::Str(s), at));
        } else {
            let two: String = chars
                .get(i..i + 2)
                .map(|s| s.iter().collect())
                .unwrap_or_default();
            let p = ["==", "!=", "<=", ">=", "//"]
                .into_iter()
                .find(|p| *p == two)
                .or_else(|| {
                    [
                        "|", ",", ";", "[", "]", "{", "}", "(", ")", ":", "?", "<", ">", "+", "-",
                        "*", "/", "%",
                    ]
                    .into_iter()
                    .find(|p| p.starts_with(c))
                })
                .ok_or_else(|| format!("at {}: unexpected `{c}`", at + 1))?;
            i += p.chars().count();
            out.push((Tok::Punct(p), at));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
    len: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }
    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.len, |(_, a)| *a) + 1
    }
    fn punct(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(x)) if *x == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn word(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(s)) if s == w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.punct(p) {
            Ok(())
        } else {
            Err(format!("at {}: expected `{p}`", self.at()))
        }
    }
    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(format!(
                "the filter is nested more than {MAX_DEPTH} levels deep"
            ))
        } else {
            Ok(())
        }
    }

    fn pipe(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let mut e = self.comma()?;
        while self.punct("|") {
            e = Expr::Pipe(Box::new(e), Box::new(self.comma()?));
        }
        self.depth -= 1;
        Ok(e)
    }
    fn comma(&mut self) -> Result<Expr, String> {
        let mut e = self.alt()?;
        while self.punct(",") {
            e = Expr::Comma(Box::new(e), Box::new(self.alt()?));
        }
        Ok(e)
    }
    fn alt(&mut self) -> Result<Expr, String> {
        let e = self.or()?;
        if self.punct("//") {
            return Ok(Expr::Alt(Box::new(e), Box::new(self.alt()?)));
        }
        Ok(e)
    }
    fn or(&mut self) -> Result<Expr, String> {
        let mut e = self.and()?;
        while self.word("or") {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }
    fn and(&mut self) -> Result<Expr, String> {
        let mut e = self.cmp()?;
        while self.word("and") {
            e = Expr::And(Box::new(e), Box::new(self.cmp()?));
        }
        Ok(e)
    }
    fn cmp(&mut self) -> Result<Expr, String> {
        let e = self.sum()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.peek() == Some(&Tok::Punct(op)) {
                self.pos += 1;
                return Ok(Expr::Cmp(op, Box::new(e), Box::new(self.sum()?)));
            }
        }
        Ok(e)
    }
    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct("+")) => '+',
                Some(Tok::Punct("-")) => '-',
                _ => return Ok(e),
            };
            self.pos += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
    }
    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct("*")) => '*',
                Some(Tok::Punct("/")) => '/',
                Some(Tok::Punct("%")) => '%',
                _ => return Ok(e),
            };
            self.pos += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
    }
    fn unary(&mut self) -> Result<Expr, String> {
        if self.punct("-") {
            self.enter()?;
            let e = Expr::Neg(Box::new(self.unary()?));
            self.depth -= 1;
            return Ok(e);
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Result<Expr, String> {
        let mut e = self.primary()?;
        loop {
            match self.peek() {
                Some(Tok::Field(f)) => {
                    let f = f.clone();
                    self.pos += 1;
                    let opt = self.punct("?");
                    e = Expr::Index(Box::new(e), Box::new(Expr::Literal(Value::String(f))), opt);
                }
                Some(Tok::Dot)
                    if matches!(
                        self.toks.get(self.pos + 1),
                        Some((Tok::Punct("["), _)) | Some((Tok::Str(_), _))
                    ) =>
                {
                    self.pos += 1;
                    if let Some(Tok::Str(s)) = self.peek() {
                        let s = s.clone();
                        self.pos += 1;
                        let opt = self.punct("?");
                        e = Expr::Index(
                            Box::new(e),
                            Box::new(Expr::Literal(Value::String(s))),
                            opt,
                        );
                    }
                }
                Some(Tok::Punct("[")) => {
                    self.pos += 1;
                    e = self.bracket(e)?;
                }
                Some(Tok::Punct("?")) => {
                    self.pos += 1;
                }
                _ => return Ok(e),
            }
        }
    }
    fn bracket(&mut self, on: Expr) -> Result<Expr, String> {
        if self.punct("]") {
            let opt = self.punct("?");
            return Ok(Expr::Iterate(Box::new(on), opt));
        }
        let from = if self.peek() == Some(&Tok::Punct(":")) {
            None
        } else {
            Some(Box::new(self.pipe()?))
        };
        if self.punct(":") {
            let to = if self.peek() == Some(&Tok::Punct("]")) {
                None
            } else {
                Some(Box::new(self.pipe()?))
            };
            self.expect("]")?;
            let opt = self.punct("?");
            return Ok(Expr::Slice(Box::new(on), from, to, opt));
        }
        self.expect("]")?;
        let opt = self.punct("?");
        match from {
            Some(i) => Ok(Expr::Index(Box::new(on), i, opt)),
            None => Err(format!("at {}: empty index", self.at())),
        }
    }
    fn primary(&mut self) -> Result<Expr, String> {
        let at = self.at();
        let Some(tok) = self.peek().cloned() else {
            return Err(format!(
                "at {at}: the filter ends where a value was expected"
            ));
        };
        self.pos += 1;
        match tok {
            Tok::Dot => {
                if let Some(Tok::Str(s)) = self.peek() {
                    let s = s.clone();
                    self.pos += 1;
                    return Ok(Expr::Index(
                        Box::new(Expr::Identity),
                        Box::new(Expr::Literal(Value::String(s))),
                        false,
                    ));
                }
                Ok(Expr::Identity)
            }
            Tok::DotDot => Ok(Expr::Recurse),
            Tok::Field(f) => {
                let opt = self.punct("?");
                Ok(Expr::Index(
                    Box::new(Expr::Identity),
                    Box::new(Expr::Literal(Value::String(f))),
                    opt,
                ))
            }
            Tok::Str(s) => Ok(Expr::Literal(Value::String(s))),
            Tok::Num(n) => Ok(Expr::Literal(num(n))),
            Tok::Punct("(") => {
                let e = self.pipe()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => {
                if self.punct("]") {
                    return Ok(Expr::Array(None));
                }
                let e = self.pipe()?;
                self.expect("]")?;
                Ok(Expr::Array(Some(Box::new(e))))
            }
            Tok::Punct("{") => {
                self.enter()?;
                let mut fields = Vec::new();
                if !self.punct("}") {
                    loop {
                        let key = match self.peek().cloned() {
                            Some(Tok::Ident(k)) | Some(Tok::Str(k)) => {
                                self.pos += 1;
                                k
                            }
                            _ => {
                                return Err(format!(
                                    "at {}: expected a key (a name or a string)",
                                    self.at()
                                ));
                            }
                        };
                        let value = if self.punct(":") {
                            self.alt()?
                        } else {
                            Expr::Index(
                                Box::new(Expr::Identity),
                                Box::new(Expr::Literal(Value::String(key.clone()))),
                                false,
                            )
                        };
                        fields.push((Expr::Literal(Value::String(key)), value));
                        if self.punct("}") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                self.depth -= 1;
                Ok(Expr::Object(fields))
            }
            Tok::Ident(w) => match w.as_str() {
                "true" => Ok(Expr::Literal(Value::Bool(true))),
                "false" => Ok(Expr::Literal(Value::Bool(false))),
                "null" => Ok(Expr::Literal(Value::Null)),
                "if" => {
                    let c = self.pipe()?;
                    if !self.word("then") {
                        return Err(format!("at {}: expected `then`", self.at()));
                    }
                    let a = self.pipe()?;
                    let b = if self.word("elif") {
                        // `elif` is an `else if ... end` sharing this `end`.
                        self.pos -= 1;
                        if let Some((t, _)) = self.toks.get_mut(self.pos) {
                            *t = Tok::Ident("if".to_owned());
                        }
                        let nested = self.primary()?;
                        return Ok(Expr::If(Box::new(c), Box::new(a), Box::new(nested)));
                    } else if self.word("else") {
                        self.pipe()?
                    } else {
                        Expr::Identity
                    };
                    if !self.word("end") {
                        return Err(format!("at {}: expected `end`", self.at()));
                    }
                    Ok(Expr::If(Box::new(c), Box::new(a), Box::new(b)))
                }
                _ => {
                    let mut args = Vec::new();
                    if self.punct("(") {
                        loop {
                            args.push(self.pipe()?);
                            if self.punct(")") {
                                break;
                            }
                            if self.punct(";") {
                                continue;
                            }
                            return Err(format!("at {}: expected `)`", self.at()));
                        }
                    }
                    Ok(Expr::Call(w, args))
                }
            },
            Tok::Punct(p) => Err(format!("at {at}: unexpected `{p}`")),
        }
    }
}

fn num(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false))
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(false) => 1,
        Value::Bool(true) => 2,
        Value::Number(_) => 3,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// jq's order: null < false < true < numbers < strings < arrays < objects.
fn order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&y.as_f64().unwrap_or(0.0))
            .unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut kx: Vec<&String> = x.keys().collect();
            let mut ky: Vec<&String> = y.keys().collect();
            kx.sort();
            ky.sort();
            kx.cmp(&ky).then_with(|| {
                kx.iter()
                    .map(|k| order(&x[k.as_str()], &y[k.as_str()]))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or(Ordering::Equal)
            })
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

struct Eval {
    steps: u64,
}

type Out = Result<Vec<Value>, String>;

impl Eval {
    fn tick(&mut self, n: usize) -> Result<(), String> {
        self.steps += n as u64 + 1;
        if self.steps > MAX_STEPS {
            Err(format!(
                "the filter took more than {MAX_STEPS} steps: narrow it"
            ))
        } else {
            Ok(())
        }
    }

    fn one(&mut self, e: &Expr, v: &Value, what: &str) -> Result<Value, String> {
        let mut out = self.run(e, v)?;
        if out.len() != 1 {
            return Err(format!(
                "{what} must give exactly one value, it gave {}",
                out.len()
            ));
        }
        Ok(out.remove(0))
    }

    fn run(&mut self, e: &Expr, v: &Value) -> Out {
        self.tick(0)?;
        match e {
            Expr::Identity => Ok(vec![v.clone()]),
            Expr::Recurse => {
                let mut out = Vec::new();
                let mut stack = vec![v.clone()];
                while let Some(x) = stack.pop() {
                    self.tick(0)?;
                    match &x {
                        Value::Array(a) => stack.extend(a.iter().rev().cloned()),
                        Value::Object(o) => stack.extend(o.values().rev().cloned()),
                        _ => {}
                    }
                    out.push(x);
                }
                Ok(out)
            }
            Expr::Literal(l) => Ok(vec![l.clone()]),
            Expr::Index(on, idx, opt) => {
                let mut out = Vec::new();
                for base in self.run(on, v)? {
                    for i in self.run(idx, v)? {
                        match (&base, &i) {
                            (Value::Object(o), Value::String(k)) => {
                                out.push(o.get(k).cloned().unwrap_or(Value::Null))
                            }
                            (Value::Array(a), Value::Number(n)) => {
                                let n = n.as_f64().unwrap_or(0.0).floor() as i64;
                                let len = a.len() as i64;
                                let at = if n < 0 { len + n } else { n };
                                out.push(
                                    usize::try_from(at)
                                        .ok()
                                        .and_then(|at| a.get(at))
                                        .cloned()
                                        .unwrap_or(Value::Null),
                                );
                            }
                            (Value::Null, _) => out.push(Value::Null),
                            _ if *opt => {}
                            _ => {
                                return Err(format!(
                                    "cannot index {} with {}",
                                    type_name(&base),
                                    if let Value::String(s) = &i {
                                        format!("\"{s}\"")
                                    } else {
                                        type_name(&i).to_owned()
                                    }
                                ));
                            }
                        }
                    }
                }
                Ok(out)
            }
            Expr::Slice(on, from, to, opt) => {
                let mut out = Vec::new();
                for base in self.run(on, v)? {
                    let bound =
                        |s: &mut Self, b: &Option<Box<Expr>>| -> Result<Option<i64>, String> {
                            match b {
                                None => Ok(None),
                                Some(b) => match s.one(b, v, "a slice bound")? {
                                    Value::Number(n) => Ok(Some(n.as_f64().unwrap_or(0.0) as i64)),
                                    Value::Null => Ok(None),
                                    other => Err(format!(
                                        "a slice bound must be a number, not {}",
                                        type_name(&other)
                                    )),
                                },
                            }
                        };
                    let (f, t) = (bound(self, from)?, bound(self, to)?);
                    let clamp = |x: Option<i64>, len: usize, dflt: usize| -> usize {
                        match x {
                            None => dflt,
                            Some(x) if x < 0 => usize::try_from(len as i64 + x).unwrap_or(0),
                            Some(x) => usize::try_from(x).unwrap_or(0).min(len),
                        }
                    };
                    match &base {
                        Value::Array(a) => {
                            let (s, e) = (clamp(f, a.len(), 0), clamp(t, a.len(), a.len()));
                            out.push(Value::Array(
                                a.get(s..e.max(s)).unwrap_or_default().to_vec(),
                            ));
                        }
                        Value::String(st) => {
                            let cs: Vec<char> = st.chars().collect();
                            let (s, e) = (clamp(f, cs.len(), 0), clamp(t, cs.len(), cs.len()));
                            out.push(Value::String(
                                cs.get(s..e.max(s)).unwrap_or_default().iter().collect(),
                            ));
                        }
                        Value::Null => out.push(Value::Null),
                        _ if *opt => {}
                        other => return Err(format!("cannot slice {}", type_name(other))),
                    }
                }
                Ok(out)
            }
            Expr::Iterate(on, opt) => {
                let mut out = Vec::new();
                for base in self.run(on, v)? {
                    match base {
                        Value::Array(a) => out.extend(a),
                        Value::Object(o) => out.extend(o.into_iter().map(|(_, x)| x)),
                        _ if *opt => {}
                        other => return Err(format!("cannot iterate over {}", type_name(&other))),
                    }
                }
                self.tick(out.len())?;
                Ok(out)
            }
            Expr::Pipe(a, b) => {
                let mut out = Vec::new();
                for x in self.run(a, v)? {
                    out.extend(self.run(b, &x)?);
                }
                Ok(out)
            }
            Expr::Comma(a, b) => {
                let mut out = self.run(a, v)?;
                out.extend(self.run(b, v)?);
                Ok(out)
            }
            Expr::Alt(a, b) => {
                let good: Vec<Value> = self
                    .run(a, v)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(truthy)
                    .collect();
                if good.is_empty() {
                    self.run(b, v)
                } else {
                    Ok(good)
                }
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                let is_and = matches!(e, Expr::And(..));
                let mut out = Vec::new();
                for x in self.run(a, v)? {
                    if is_and != truthy(&x) {
                        out.push(Value::Bool(!is_and));
                        continue;
                    }
                    for y in self.run(b, v)? {
                        out.push(Value::Bool(truthy(&y)));
                    }
                }
                Ok(out)
            }
            Expr::Cmp(op, a, b) => {
                let mut out = Vec::new();
                for y in self.run(b, v)? {
                    for x in self.run(a, v)? {
                        let o = order(&x, &y);
                        out.push(Value::Bool(match *op {
                            "==" => o == Ordering::Equal,
                            "!=" => o != Ordering::Equal,
                            "<" => o == Ordering::Less,
                            "<=" => o != Ordering::Greater,
                            ">" => o == Ordering::Greater,
                            _ => o != Ordering::Less,
                        }));
                    }
                }
                Ok(out)
            }
            Expr::Bin(op, a, b) => {
                let mut out = Vec::new();
                for y in self.run(b, v)? {
                    for x in self.run(a, v)? {
                        out.push(arith(*op, x, y.clone())?);
                    }
                }
                Ok(out)
            }
            Expr::Neg(a) => self
                .run(a, v)?
                .into_iter()
                .map(|x| match x {
                    Value::Number(n) => Ok(num(-n.as_f64().unwrap_or(0.0))),
                    other => Err(format!("cannot negate {}", type_name(&other))),
                })
                .collect(),
            Expr::Array(None) => Ok(vec![Value::Array(Vec::new())]),
            Expr::Array(Some(a)) => Ok(vec![Value::Array(self.run(a, v)?)]),
            Expr::Object(fields) => {
                let mut objs = vec![Map::new()];
                for (k, val) in fields {
                    let keys = self.run(k, v)?;
                    let vals = self.run(val, v)?;
                    let mut next = Vec::new();
                    for o in &objs {
                        for key in &keys {
                            let Value::String(key) = key else {
                                return Err(format!(
                                    "object keys must be strings, not {}",
                                    type_name(key)
                                ));
                            };
                            for x in &vals {
                                let mut o = o.clone();
                                o.insert(key.clone(), x.clone());
                                next.push(o);
                            }
                        }
                    }
                    self.tick(next.len())?;
                    objs = next;
                }
                Ok(objs.into_iter().map(Value::Object).collect())
            }
            Expr::If(c, a, b) => {
                let mut out = Vec::new();
                for x in self.run(c, v)? {
                    out.extend(if truthy(&x) {
                        self.run(a, v)?
                    } else {
                        self.run(b, v)?
                    });
                }
                Ok(out)
            }
            Expr::Call(name, args) => self.call(name, args, v),
        }
    }

    fn call(&mut self, name: &str, args: &[Expr], v: &Value) -> Out {
        let arity = |n: usize| -> Result<(), String> {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "{name}/{} is not defined (it takes {n} argument{})",
                    args.len(),
                    if n == 1 { "" } else { "s" }
                ))
            }
        };
        let arr = |what: &str| -> Result<&Vec<Value>, String> {
            match v {
                Value::Array(a) => Ok(a),
                other => Err(format!("{what} needs an array, not {}", type_name(other))),
            }
        };
        let r = |x: Value| Ok(vec![x]);
        match name {
            "empty" => {
                arity(0)?;
                Ok(Vec::new())
            }
            "not" => {
                arity(0)?;
                r(Value::Bool(!truthy(v)))
            }
            "length" => {
                arity(0)?;
                r(match v {
                    Value::Null => Value::from(0),
                    Value::Bool(_) => return Err("boolean has no length".to_owned()),
                    Value::Number(n) => num(n.as_f64().unwrap_or(0.0).abs()),
                    Value::String(s) => Value::from(s.chars().count()),
                    Value::Array(a) => Value::from(a.len()),
                    Value::Object(o) => Value::from(o.len()),
                })
            }
            "keys" => {
                arity(0)?;
                match v {
                    Value::Object(o) => {
                        let mut k: Vec<&String> = o.keys().collect();
                        k.sort();
                        r(Value::Array(
                            k.into_iter().map(|k| Value::String(k.clone())).collect(),
                        ))
                    }
                    Value::Array(a) => r(Value::Array((0..a.len()).map(Value::from).collect())),
                    other => Err(format!("{} has no keys", type_name(other))),
                }
            }
            "values" => {
                arity(0)?;
                if matches!(v, Value::Null) {
                    Ok(Vec::new())
                } else {
                    r(v.clone())
                }
            }
            "type" => {
                arity(0)?;
                r(Value::String(type_name(v).to_owned()))
            }
            "select" => {
                arity(1)?;
                let keep = self.run(&args[0], v)?.iter().any(truthy);
                Ok(if keep { vec![v.clone()] } else { Vec::new() })
            }
            "map" => {
                arity(1)?;
                let mut out = Vec::new();
                let items: Vec<Value> = match v {
                    Value::Array(a) => a.clone(),
                    Value::Object(o) => o.values().cloned().collect(),
                    other => return Err(format!("map needs an array, not {}", type_name(other))),
                };
                for x in &items {
                    out.extend(self.run(&args[0], x)?);
                }
                r(Value::Array(out))
            }
            "has" => {
                arity(1)?;
                let k = self.one(&args[0], v, "has's key")?;
                r(Value::Bool(match (v, &k) {
                    (Value::Object(o), Value::String(s)) => o.contains_key(s),
                    (Value::Array(a), Value::Number(n)) => n
                        .as_f64()
                        .is_some_and(|n| n >= 0.0 && (n as usize) < a.len()),
                    _ => {
                        return Err(format!(
                            "cannot check whether {} has a {} key",
                            type_name(v),
                            type_name(&k)
                        ));
                    }
                }))
            }
            "sort" | "unique" | "reverse" | "min" | "max" | "add" | "first" | "last"
            | "flatten" | "to_entries" | "from_entries" | "paths"
                if args.is_empty() =>
            {
                self.simple(name, v, arr)
            }
            "first" | "last" if args.len() == 1 => {
                let all = self.run(&args[0], v)?;
                Ok(if name == "first" {
                    all.into_iter().take(1).collect()
                } else {
                    all.into_iter().last().into_iter().collect()
                })
            }
            "sort_by" | "group_by" | "unique_by" | "min_by" | "max_by" => {
                arity(1)?;
                let a = arr(name)?.clone();
                let mut keyed = Vec::new();
                for x in a {
                    let k = Value::Array(self.run(&args[0], &x)?);
                    keyed.push((k, x));
                }
                keyed.sort_by(|p, q| order(&p.0, &q.0));
                match name {
                    "sort_by" => r(Value::Array(keyed.into_iter().map(|(_, x)| x).collect())),
                    "min_by" => r(keyed.into_iter().next().map_or(Value::Null, |(_, x)| x)),
                    "max_by" => r(keyed.into_iter().last().map_or(Value::Null, |(_, x)| x)),
                    _ => {
                        let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
                        for (k, x) in keyed {
                            match groups.last_mut() {
                                Some((gk, g)) if order(gk, &k) == Ordering::Equal => g.push(x),
                                _ => groups.push((k, vec![x])),
                            }
                        }
                        if name == "group_by" {
                            r(Value::Array(
                                groups.into_iter().map(|(_, g)| Value::Array(g)).collect(),
                            ))
                        } else {
                            r(Value::Array(
                                groups
                                    .into_iter()
                                    .filter_map(|(_, g)| g.into_iter().next())
                                    .collect(),
                            ))
                        }
                    }
                }
            }
            "any" | "all" => {
                let a = arr(name)?.clone();
                let mut hits = Vec::new();
                for x in &a {
                    hits.push(match args {
                        [] => truthy(x),
                        [f] => self.run(f, x)?.iter().any(truthy),
                        _ => return Err(format!("{name} takes 0 or 1 arguments")),
                    });
                }
                r(Value::Bool(if name == "any" {
                    hits.iter().any(|h| *h)
                } else {
                    hits.iter().all(|h| *h)
                }))
            }
            "tostring" => {
                arity(0)?;
                r(match v {
                    Value::String(_) => v.clone(),
                    other => Value::String(other.to_string()),
                })
            }
            "tonumber" => {
                arity(0)?;
                match v {
                    Value::Number(_) => r(v.clone()),
                    Value::String(s) => s
                        .trim()
                        .parse::<f64>()
                        .map(num)
                        .map(|n| vec![n])
                        .map_err(|_| format!("cannot parse \"{s}\" as a number")),
                    other => Err(format!("cannot parse {} as a number", type_name(other))),
                }
            }
            "ascii_downcase" | "ascii_upcase" => {
                arity(0)?;
                match v {
                    Value::String(s) => r(Value::String(if name == "ascii_downcase" {
                        s.to_ascii_lowercase()
                    } else {
                        s.to_ascii_uppercase()
                    })),
                    other => Err(format!("{name} needs a string, not {}", type_name(other))),
                }
            }
            "join" | "split" | "startswith" | "endswith" | "contains" => {
                arity(1)?;
                let arg = self.one(&args[0], v, &format!("{name}'s argument"))?;
                match (name, v, &arg) {
                    ("join", Value::Array(a), Value::String(sep)) => r(Value::String(
                        a.iter()
                            .map(|x| match x {
                                Value::String(s) => s.clone(),
                                Value::Null => String::new(),
                                other => other.to_string(),
                            })
                            .collect::<Vec<_>>()
                            .join(sep),
                    )),
                    ("split", Value::String(s), Value::String(sep)) => r(Value::Array(
                        s.split(sep.as_str())
                            .map(|p| Value::String(p.to_owned()))
                            .collect(),
                    )),
                    ("startswith", Value::String(s), Value::String(p)) => {
                        r(Value::Bool(s.starts_with(p.as_str())))
                    }
                    ("endswith", Value::String(s), Value::String(p)) => {
                        r(Value::Bool(s.ends_with(p.as_str())))
                    }
                    ("contains", _, _) => r(Value::Bool(contains(v, &arg))),
                    _ => Err(format!(
                        "{name} cannot take {} with a {} argument",
                        type_name(v),
                        type_name(&arg)
                    )),
                }
            }
            _ => Err(format!(
                "unknown function `{name}` (see the tool's description for the supported subset of jq)"
            )),
        }
    }

    fn simple<'v>(
        &mut self,
        name: &str,
        v: &'v Value,
        arr: impl Fn(&str) -> Result<&'v Vec<Value>, String>,
    ) -> Out {
        let r = |x: Value| Ok(vec![x]);
        match name {
            "to_entries" => match v {
                Value::Object(o) => r(Value::Array(
                    o.iter()
                        .map(|(k, x)| serde_json::json!({"key": k, "value": x}))
                        .collect(),
                )),
                other => Err(format!(
                    "to_entries needs an object, not {}",
                    type_name(other)
                )),
            },
            "from_entries" => {
                let mut o = Map::new();
                for e in arr(name)? {
                    let k = e
                        .get("key")
                        .or_else(|| e.get("name"))
                        .or_else(|| e.get("k"));
                    let key = match k {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) if !other.is_null() => other.to_string(),
                        _ => return Err("from_entries needs objects with a `key`".to_owned()),
                    };
                    o.insert(
                        key,
                        e.get("value")
                            .or_else(|| e.get("v"))
                            .cloned()
                            .unwrap_or(Value::Null),
                    );
                }
                r(Value::Object(o))
            }
            "paths" => {
                let mut out = Vec::new();
                let mut stack: Vec<(Vec<Value>, &Value)> = vec![(Vec::new(), v)];
                while let Some((p, x)) = stack.pop() {
                    self.tick(0)?;
                    if !p.is_empty() {
                        out.push(Value::Array(p.clone()));
                    }
                    match x {
                        Value::Array(a) => {
                            for (i, y) in a.iter().enumerate().rev() {
                                let mut q = p.clone();
                                q.push(Value::from(i));
                                stack.push((q, y));
                            }
                        }
                        Value::Object(o) => {
                            for (k, y) in o.iter().rev() {
                                let mut q = p.clone();
                                q.push(Value::String(k.clone()));
                                stack.push((q, y));
                            }
                        }
                        _ => {}
                    }
                }
                Ok(out)
            }
            _ => {
                let a = arr(name)?;
                self.tick(a.len())?;
                match name {
                    "sort" => {
                        let mut s = a.clone();
                        s.sort_by(order);
                        r(Value::Array(s))
                    }
                    "unique" => {
                        let mut s = a.clone();
                        s.sort_by(order);
                        s.dedup_by(|x, y| order(x, y) == Ordering::Equal);
                        r(Value::Array(s))
                    }
                    "reverse" => r(Value::Array(a.iter().rev().cloned().collect())),
                    "min" => r(a
                        .iter()
                        .min_by(|x, y| order(x, y))
                        .cloned()
                        .unwrap_or(Value::Null)),
                    "max" => r(a
                        .iter()
                        .max_by(|x, y| order(x, y))
                        .cloned()
                        .unwrap_or(Value::Null)),
                    "first" => r(a.first().cloned().unwrap_or(Value::Null)),
                    "last" => r(a.last().cloned().unwrap_or(Value::Null)),
                    "flatten" => {
                        let mut out = Vec::new();
                        let mut stack: Vec<&Value> = a.iter().rev().collect();
                        while let Some(x) = stack.pop() {
                            match x {
                                Value::Array(inner) => stack.extend(inner.iter().rev()),
                                other => out.push(other.clone()),
                            }
                        }
                        r(Value::Array(out))
                    }
                    _ => {
                        let mut acc = Value::Null;
                        for x in a {
                            acc = if acc.is_null() {
                                x.clone()
                            } else {
                                arith('+', acc, x.clone())?
                            };
                        }
                        r(acc)
                    }
                }
            }
        }
    }
}

fn contains(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.contains(y.as_str()),
        (Value::Array(x), Value::Array(y)) => y.iter().all(|q| x.iter().any(|p| contains(p, q))),
        (Value::Object(x), Value::Object(y)) => y
            .iter()
            .all(|(k, q)| x.get(k).is_some_and(|p| contains(p, q))),
        _ => a == b,
    }
}

fn arith(op: char, a: Value, b: Value) -> Result<Value, String> {
    let bad =
        |a: &Value, b: &Value| format!("cannot compute {} {op} {}", type_name(a), type_name(b));
    match (op, a, b) {
        ('+', Value::Null, x) | ('+', x, Value::Null) => Ok(x),
        (_, Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            if (op == '/' || op == '%') && y == 0.0 {
                return Err("division by zero".to_owned());
            }
            let z = match op {
                '+' => x + y,
                '-' => x - y,
                '*' => x * y,
                '/' => x / y,
                _ => (x.trunc() as i64)
                    .checked_rem(y.trunc() as i64)
                    .map_or(f64::NAN, |r| r as f64),
            };
            if z.is_finite() {
                Ok(num(z))
            } else {
                Err("the result is not a finite number".to_owned())
            }
        }
        ('+', Value::String(x), Value::String(y)) => Ok(Value::String(x + &y)),
        ('+', Value::Array(mut x), Value::Array(y)) => {
            x.extend(y);
            Ok(Value::Array(x))
        }
        ('+', Value::Object(mut x), Value::Object(y)) => {
            x.extend(y);
            Ok(Value::Object(x))
        }
        ('-', Value::Array(x), Value::Array(y)) => Ok(Value::Array(
            x.into_iter().filter(|p| !y.contains(p)).collect(),
        )),
        ('/', Value::String(x), Value::String(y)) => Ok(Value::Array(
            x.split(y.as_str())
                .map(|p| Value::String(p.to_owned()))
                .collect(),
        )),
        (_, a, b) => Err(bad(&a, &b)),
    }
}

/// `filter` run over `input`: its results, or why not.
pub(crate) fn query(filter: &str, input: &Value) -> Result<Vec<Value>, String> {
    let toks = lex(filter)?;
    let mut p = Parser {
        len: filter.chars().count(),
        toks,
        pos: 0,
        depth: 0,
    };
    let e = p.pipe()?;
    if p.pos < p.toks.len() {
        return Err(format!("at {}: unexpected input after the filter", p.at()));
    }
    Eval { steps: 0 }.run(&e, input)
}

impl Tool for JsonQuery {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "json_query";
    const TITLE: &'static str = "Query JSON/YAML/TOML";
    const DESCRIPTION: &'static str = "Run a jq-style filter (a documented subset of jq: paths, `.[]`, pipes, select, map, sort_by, group_by, construction, arithmetic...) over a JSON, YAML or TOML document given as text or a workspace file; results capped at 1000 values and 256 KiB.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.file.as_deref())
    }

    async fn call(host: &System, args: Args, _: CallContext) -> CallToolResult {
        let ws = host.workspace.clone();
        let run = move || {
            let format = args
                .format
                .or_else(|| args.file.as_deref().and_then(Format::of_path));
            let src = source(ws.as_deref(), args.text, args.file.as_deref(), "document")?;
            let (doc, _) = parse(&src, format)?;
            let results =
                query(&args.filter, &doc).map_err(|e| format!("filter `{}`: {e}", args.filter))?;
            let total = results.len();
            let mut lines: Vec<String> = results
                .into_iter()
                .take(MAX_RESULTS)
                .map(|v| match v {
                    Value::String(s) if args.raw => s,
                    other => serde_json::to_string_pretty(&other).unwrap_or_default(),
                })
                .collect();
            if total > MAX_RESULTS {
                lines.push(format!(
                    "… ({} more results not shown)",
                    total - MAX_RESULTS
                ));
            }
            if total == 0 {
                return Ok::<_, String>("(no results)".to_owned());
            }
            Ok(capped(lines.join("\n")))
        };
        match tokio::task::spawn_blocking(run).await {
            Ok(Ok(t)) => text(t),
            Ok(Err(e)) => error(e),
            Err(e) => error(format!("internal error: json_query failed ({e})")),
        }
    }
}
