//! `calculate`: a safe calculator with its own parser (nothing is evaluated as code). Integers
//! stay exact up to 128 bits, the rest is double precision; errors point at the position.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;

/// Characters of one expression.
const MAX_LEN: usize = 2000;
/// Nesting of parentheses and unary signs; the parser recurses on them.
const MAX_DEPTH: usize = 64;

/// The `calculate` tool.
pub struct Calculate;

/// Arguments of `calculate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The expression, e.g. `(2^64 - 1) % 7`, `sqrt(2) * pi`, `200 + 15%`, `10!`. Operators:
    /// `+ - * /`, `%` (modulo between numbers, percent after one), `^` (power), `!` (factorial).
    /// Functions: sqrt cbrt abs exp ln log (base 10, or log(x, base)) log2 sin cos tan asin
    /// acos atan atan2 sinh cosh tanh floor ceil round trunc min max hypot; trig in radians
    /// (deg(x) and rad(x) convert). Constants: pi e tau phi. Numbers may be 1_000, 1.5e3, 0x1f,
    /// 0b101.
    expression: String,
}

/// A value: an exact integer while it fits, else a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// An error at a character position.
#[derive(Debug, PartialEq)]
pub(crate) struct CalcError {
    pub(crate) at: usize,
    pub(crate) message: String,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

type R<T> = Result<T, CalcError>;

fn err<T>(at: usize, message: impl Into<String>) -> R<T> {
    Err(CalcError {
        at,
        message: message.into(),
    })
}

fn finite(at: usize, v: f64) -> R<Num> {
    if v.is_nan() {
        err(
            at,
            "the result is not a number (e.g. sqrt or log of a negative, 0/0)",
        )
    } else if v.is_infinite() {
        err(
            at,
            "overflow: the result is too large for a double (over 1.8e308)",
        )
    } else {
        Ok(Num::Float(v))
    }
}

impl Parser {
    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(
                self.pos,
                format!("nested more than {MAX_DEPTH} levels deep"),
            );
        }
        Ok(())
    }

    /// expr := term (('+' | '-') term)*; `a + b%` is a plus b percent of a.
    fn expr(&mut self) -> R<Num> {
        let mut acc = self.term()?.0;
        loop {
            let at = self.pos;
            let op = match self.peek() {
                Some(c @ ('+' | '-')) => c,
                Some('−') => '-',
                _ => return Ok(acc),
            };
            self.pos += 1;
            let (rhs, percent) = self.term()?;
            let rhs = if percent { mul(at, acc, rhs)? } else { rhs };
            acc = if op == '+' {
                add(at, acc, rhs)?
            } else {
                sub(at, acc, rhs)?
            };
        }
    }

    /// term := unary (('*' | '/' | '%' | 'mod') unary)*; whether it is a lone percentage.
    fn term(&mut self) -> R<(Num, bool)> {
        let (mut acc, mut percent) = self.unary()?;
        loop {
            let at = self.pos;
            let op = match self.peek() {
                Some('*' | '×') => '*',
                Some('/' | '÷') => '/',
                Some('%') => '%',
                Some('m') if self.word_at(self.pos) == "mod" => {
                    self.pos += 2;
                    '%'
                }
                _ => return Ok((acc, percent)),
            };
            self.pos += 1;
            let rhs = self.unary()?.0;
            percent = false;
            acc = match op {
                '*' => mul(at, acc, rhs)?,
                '/' => div(at, acc, rhs)?,
                _ => rem(at, acc, rhs)?,
            };
        }
    }

    fn word_at(&self, at: usize) -> String {
        self.chars
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
            .collect()
    }

    /// unary := ('-' | '+') unary | power
    fn unary(&mut self) -> R<(Num, bool)> {
        let at = self.pos;
        if self.eat('-') || self.eat('−') {
            self.enter()?;
            let (v, p) = self.unary()?;
            self.depth -= 1;
            return Ok((neg(at, v)?, p));
        }
        if self.eat('+') {
            self.enter()?;
            let r = self.unary();
            self.depth -= 1;
            return r;
        }
        self.power()
    }

    /// power := postfix ('^' | '**') unary, right-associative: 2^3^2 = 2^9, -2^2 = -4.
    fn power(&mut self) -> R<(Num, bool)> {
        let (base, percent) = self.postfix()?;
        let at = self.pos;
        let is_pow = if self.eat('^') {
            true
        } else if self.peek() == Some('*') && self.chars.get(self.pos + 1) == Some(&'*') {
            self.pos += 2;
            true
        } else {
            false
        };
        if !is_pow {
            return Ok((base, percent));
        }
        self.enter()?;
        let exp = self.unary()?.0;
        self.depth -= 1;
        Ok((pow(at, base, exp)?, false))
    }

    /// postfix := primary ('!' | '%')*; `%` is a percentage only when no operand follows.
    fn postfix(&mut self) -> R<(Num, bool)> {
        let mut v = self.primary()?;
        let mut percent = false;
        loop {
            let at = self.pos;
            if self.eat('!') {
                v = factorial(at, v)?;
                percent = false;
            } else if self.peek() == Some('%') {
                let save = self.pos;
                self.pos += 1;
                let next = self.peek();
                let operand_follows = next
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '(' || c == '.' || c == '_');
                if operand_follows {
                    self.pos = save;
                    return Ok((v, percent));
                }
                v = div(at, v, Num::Int(100))?;
                percent = true;
            } else {
                return Ok((v, percent));
            }
        }
    }

    fn primary(&mut self) -> R<Num> {
        let at = {
            self.skip_ws();
            self.pos
        };
        match self.peek() {
            None => err(at, "the expression ends where a number was expected"),
            Some('(') => {
                self.pos += 1;
                self.enter()?;
                let v = self.expr()?;
                self.depth -= 1;
                if !self.eat(')') {
                    return err(self.pos, "expected `)` to close the `(`");
                }
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == 'π' => self.name(),
            Some(c) => err(at, format!("unexpected `{c}`")),
        }
    }

    fn number(&mut self) -> R<Num> {
        let at = self.pos;
        let rest: String = self.chars.get(at..).unwrap_or_default().iter().collect();
        for (prefix, radix) in [("0x", 16), ("0X", 16), ("0b", 2), ("0B", 2), ("0o", 8)] {
            if let Some(tail) = rest.strip_prefix(prefix) {
                let digits: String = tail
                    .chars()
                    .take_while(|c| c.is_digit(radix) || *c == '_')
                    .collect();
                self.pos += 2 + digits.chars().count();
                let clean = digits.replace('_', "");
                return i128::from_str_radix(&clean, radix)
                    .map(Num::Int)
                    .or_else(|_| {
                        err(
                            at,
                            format!("`{prefix}{digits}` is not a valid number or is over 128 bits"),
                        )
                    });
            }
        }
        let mut text = String::new();
        let mut is_float = false;
        let mut chars = rest.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() || c == '_' {
                text.push(c);
            } else if c == '.' && !is_float {
                is_float = true;
                text.push(c);
            } else if (c == 'e' || c == 'E') && !text.contains(['e', 'E']) {
                // An exponent only when digits follow (so `2e` is 2 times e, refused below).
                let mut look = chars.clone();
                look.next();
                let sign = look.peek().copied().filter(|s| *s == '+' || *s == '-');
                if sign.is_some() {
                    look.next();
                }
                if !look.peek().is_some_and(char::is_ascii_digit) {
                    break;
                }
                is_float = true;
                text.push(c);
                chars.next();
                if let Some(s) = sign {
                    text.push(s);
                    chars.next();
                }
                continue;
            } else {
                break;
            }
            chars.next();
        }
        self.pos += text.chars().count();
        let clean = text.replace('_', "");
        if !is_float && let Ok(i) = clean.parse::<i128>() {
            return Ok(Num::Int(i));
        }
        match clean.parse::<f64>() {
            Ok(f) => finite(at, f),
            Err(_) => err(at, format!("`{text}` is not a number")),
        }
    }

    fn name(&mut self) -> R<Num> {
        let at = self.pos;
        if self.chars.get(at) == Some(&'π') {
            self.pos += 1;
            return Ok(Num::Float(std::f64::consts::PI));
        }
        let word = self.word_at(at).to_ascii_lowercase();
        self.pos += word.chars().count();
        match word.as_str() {
            "pi" => return Ok(Num::Float(std::f64::consts::PI)),
            "e" => return Ok(Num::Float(std::f64::consts::E)),
            "tau" => return Ok(Num::Float(std::f64::consts::TAU)),
            "phi" => return Ok(Num::Float(1.618_033_988_749_895)),
            "inf" | "infinity" | "nan" => {
                return err(at, "infinity and NaN are not numbers here");
            }
            _ => {}
        }
        if !self.eat('(') {
            return err(
                at,
                format!(
                    "unknown name `{word}` (constants: pi, e, tau, phi; functions need parentheses)"
                ),
            );
        }
        self.enter()?;
        let mut args = Vec::new();
        if !self.eat(')') {
            loop {
                args.push(self.expr()?);
                if self.eat(',') || self.eat(';') {
                    continue;
                }
                if self.eat(')') {
                    break;
                }
                return err(
                    self.pos,
                    format!("expected `,` or `)` in the arguments of {word}"),
                );
            }
        }
        self.depth -= 1;
        call(at, &word, &args)
    }
}

fn call(at: usize, name: &str, args: &[Num]) -> R<Num> {
    let one = |f: fn(f64) -> f64| -> R<Num> {
        match args {
            [x] => finite(at, f(x.f())),
            _ => err(
                at,
                format!("{name} takes one argument, {} given", args.len()),
            ),
        }
    };
    let domain = |ok: bool, what: &str| -> R<()> {
        if ok {
            Ok(())
        } else {
            err(at, format!("{name} is only defined for {what}"))
        }
    };
    match name {
        "sqrt" => {
            if let [x] = args {
                domain(x.f() >= 0.0, "numbers ≥ 0")?;
                if let Num::Int(i) = x {
                    let r = (*i as f64).sqrt().round() as i128;
                    if r.checked_mul(r) == Some(*i) {
                        return Ok(Num::Int(r));
                    }
                }
            }
            one(f64::sqrt)
        }
        "cbrt" => one(f64::cbrt),
        "abs" => match args {
            [Num::Int(i)] => i
                .checked_abs()
                .map(Num::Int)
                .ok_or(())
                .or_else(|_| finite(at, (*i as f64).abs())),
            _ => one(f64::abs),
        },
        "exp" => one(f64::exp),
        "ln" => {
            if let [x] = args {
                domain(x.f() > 0.0, "numbers > 0")?;
            }
            one(f64::ln)
        }
        "log2" => {
            if let [x] = args {
                domain(x.f() > 0.0, "numbers > 0")?;
            }
            one(f64::log2)
        }
        "log" | "log10" => match args {
            [x] => {
                domain(x.f() > 0.0, "numbers > 0")?;
                finite(at, x.f().log10())
            }
            [x, b] if name == "log" => {
                domain(
                    x.f() > 0.0 && b.f() > 0.0 && b.f() != 1.0,
                    "x > 0 and a base > 0, ≠ 1",
                )?;
                finite(at, x.f().ln() / b.f().ln())
            }
            _ => err(at, format!("{name} takes one argument (or log(x, base))")),
        },
        "sin" => one(f64::sin),
        "cos" => one(f64::cos),
        "tan" => one(f64::tan),
        "asin" => one(f64::asin),
        "acos" => one(f64::acos),
        "atan" => one(f64::atan),
        "sinh" => one(f64::sinh),
        "cosh" => one(f64::cosh),
        "tanh" => one(f64::tanh),
        "deg" => one(f64::to_degrees),
        "rad" => one(f64::to_radians),
        "floor" | "ceil" | "round" | "trunc" => match args {
            [Num::Int(i)] => Ok(Num::Int(*i)),
            [Num::Float(f)] => {
                let r = match name {
                    "floor" => f.floor(),
                    "ceil" => f.ceil(),
                    "round" => f.round(),
                    _ => f.trunc(),
                };
                if r.abs() < 1e36 {
                    Ok(Num::Int(r as i128))
                } else {
                    finite(at, r)
                }
            }
            _ => err(
                at,
                format!("{name} takes one argument, {} given", args.len()),
            ),
        },
        "atan2" | "hypot" => match args {
            [y, x] => finite(
                at,
                if name == "atan2" {
                    y.f().atan2(x.f())
                } else {
                    y.f().hypot(x.f())
                },
            ),
            _ => err(at, format!("{name} takes two arguments")),
        },
        "min" | "max" => {
            let mut it = args.iter().copied();
            let Some(mut best) = it.next() else {
                return err(at, format!("{name} needs at least one argument"));
            };
            for v in it {
                let better = if name == "min" {
                    v.f() < best.f()
                } else {
                    v.f() > best.f()
                };
                if better {
                    best = v;
                }
            }
            Ok(best)
        }
        _ => err(
            at,
            format!("unknown function `{name}` (see the tool's description for the list)"),
        ),
    }
}

fn add(at: usize, a: Num, b: Num) -> R<Num> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x
            .checked_add(y)
            .map_or_else(|| finite(at, a.f() + b.f()), |r| Ok(Num::Int(r))),
        _ => finite(at, a.f() + b.f()),
    }
}

fn sub(at: usize, a: Num, b: Num) -> R<Num> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x
            .checked_sub(y)
            .map_or_else(|| finite(at, a.f() - b.f()), |r| Ok(Num::Int(r))),
        _ => finite(at, a.f() - b.f()),
    }
}

fn mul(at: usize, a: Num, b: Num) -> R<Num> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x
            .checked_mul(y)
            .map_or_else(|| finite(at, a.f() * b.f()), |r| Ok(Num::Int(r))),
        _ => finite(at, a.f() * b.f()),
    }
}

fn neg(at: usize, a: Num) -> R<Num> {
    match a {
        Num::Int(x) => x
            .checked_neg()
            .map_or_else(|| finite(at, -a.f()), |r| Ok(Num::Int(r))),
        _ => finite(at, -a.f()),
    }
}

fn div(at: usize, a: Num, b: Num) -> R<Num> {
    if b.f() == 0.0 {
        return err(at, "division by zero");
    }
    match (a, b) {
        (Num::Int(x), Num::Int(y)) if x.checked_rem(y) == Some(0) => x
            .checked_div(y)
            .map(Num::Int)
            .map_or_else(|| finite(at, a.f() / b.f()), Ok),
        _ => finite(at, a.f() / b.f()),
    }
}

fn rem(at: usize, a: Num, b: Num) -> R<Num> {
    if b.f() == 0.0 {
        return err(at, "modulo by zero");
    }
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x
            .checked_rem(y)
            .map_or_else(|| finite(at, a.f() % b.f()), |r| Ok(Num::Int(r))),
        _ => finite(at, a.f() % b.f()),
    }
}

fn pow(at: usize, a: Num, b: Num) -> R<Num> {
    if let (Num::Int(x), Num::Int(y)) = (a, b)
        && let Ok(y) = u32::try_from(y)
        && let Some(r) = x.checked_pow(y)
    {
        return Ok(Num::Int(r));
    }
    if a.f() == 0.0 && b.f() < 0.0 {
        return err(at, "division by zero (0 to a negative power)");
    }
    finite(at, a.f().powf(b.f()))
}

fn factorial(at: usize, a: Num) -> R<Num> {
    let n = match a {
        Num::Int(n) if n >= 0 => n,
        _ => return err(at, "factorial is only defined here for whole numbers ≥ 0"),
    };
    if n > 170 {
        return err(
            at,
            format!("{n}! is too large (over 1.8e308; the largest is 170!)"),
        );
    }
    let mut acc = Num::Int(1);
    for k in 2..=n {
        acc = mul(at, acc, Num::Int(k))?;
    }
    Ok(acc)
}

/// `src` evaluated.
pub(crate) fn evaluate(src: &str) -> Result<Num, CalcError> {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let v = p.expr()?;
    if let Some(c) = p.peek() {
        let hint = if c == ')' {
            "a `)` with no `(`".to_owned()
        } else {
            format!("unexpected `{c}` (is an operator missing?)")
        };
        return err(p.pos, hint);
    }
    Ok(v)
}

/// `v` as shown: integers exactly, doubles to 15 significant digits (so 0.1 + 0.2 shows 0.3).
pub(crate) fn show(v: Num) -> String {
    match v {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => {
            let rounded: f64 = format!("{f:.14e}").parse().unwrap_or(f);
            if rounded == rounded.trunc() && rounded.abs() < 1e21 {
                format!("{rounded:.0}")
            } else if rounded.abs() >= 1e21 || rounded.abs() < 1e-7 {
                format!("{rounded:e}")
            } else {
                rounded.to_string()
            }
        }
    }
}

impl Tool for Calculate {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "calculate";
    const TITLE: &'static str = "Calculator";
    const DESCRIPTION: &'static str = "Evaluate an arithmetic expression safely (no code runs): + - * / % ^ !, parentheses, percentages (`200 + 15%`), functions like sqrt, ln, log, sin, round, min, constants pi and e; integers exact up to 128 bits, else double precision. Use it instead of mental arithmetic.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        let src = args.expression.trim();
        if src.chars().count() > MAX_LEN {
            return error(format!("the expression is over {MAX_LEN} characters"));
        }
        if src.is_empty() {
            return error("the expression is empty");
        }
        match evaluate(src) {
            Ok(v) => text(format!("{src} = {}", show(v))),
            Err(e) => {
                let caret: String = " ".repeat(e.at) + "^";
                error(format!(
                    "cannot evaluate, at character {}: {}\n{src}\n{caret}",
                    e.at + 1,
                    e.message
                ))
            }
        }
    }
}
