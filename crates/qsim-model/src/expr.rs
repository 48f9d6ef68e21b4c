//! The expression language of derived metrics (`[metrics]`).
//!
//! Numbers, `+ - * / ^`, parentheses, unary minus, variables (identifiers
//! that may contain dots, e.g. `stations.cpu.utilization`) and the functions
//! `min(a, b)`, `max(a, b)`, `sqrt(x)`, `ln(x)`, `exp(x)`, `abs(x)`.
//! `^` binds tighter than unary minus and is right-associative, so `-2^2` is
//! -4 and `2^3^2` is 512.
//!
//! ```
//! use qsim_model::Expr;
//! let e = Expr::parse("0.45 * 60 * throughput_per_s").unwrap();
//! assert_eq!(e.variables(), vec!["throughput_per_s".to_string()]);
//! let x = e.eval(&|name| (name == "throughput_per_s").then_some(100.0)).unwrap();
//! assert!((x - 2700.0).abs() < 1e-9);
//! ```

use qsim_kernel::{Metric, MetricScope, metric, metrics};
use std::fmt;
use thiserror::Error;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    node: Node,
    source: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(f64),
    Var(String),
    Neg(Box<Node>),
    Bin(Op, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Min,
    Max,
    Sqrt,
    Ln,
    Exp,
    Abs,
}

impl Func {
    fn from_name(s: &str) -> Option<Func> {
        Some(match s {
            "min" => Func::Min,
            "max" => Func::Max,
            "sqrt" => Func::Sqrt,
            "ln" => Func::Ln,
            "exp" => Func::Exp,
            "abs" => Func::Abs,
            _ => return None,
        })
    }

    fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max => 2,
            _ => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Sqrt => "sqrt",
            Func::Ln => "ln",
            Func::Exp => "exp",
            Func::Abs => "abs",
        }
    }
}

/// A syntax error in an expression.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message} at character {}", offset + 1)]
pub struct ExprError {
    /// What was found and what was expected.
    pub message: String,
    /// Byte offset in the expression text where the problem is.
    pub offset: usize,
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The lookup function knew no value for this variable.
    #[error("unknown variable {0}")]
    UnknownVariable(String),
    /// A division by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// A result that is not a finite number (e.g. `sqrt(-1)`, `ln(0)`).
    #[error("{0} is not a finite number")]
    NotFinite(String),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Sym(char),
}

fn lex(s: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let text: String = s[start..i].chars().filter(|&c| c != '_').collect();
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => out.push((Tok::Num(v), start)),
                _ => {
                    return Err(ExprError {
                        message: format!("expected a number, found {}", &s[start..i]),
                        offset: start,
                    });
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            let name = &s[start..i];
            if name.ends_with('.') || name.contains("..") {
                return Err(ExprError {
                    message: format!("expected a variable name, found {name}"),
                    offset: start,
                });
            }
            out.push((Tok::Ident(name.to_string()), start));
        } else if b"+-*/^(),".contains(&c) {
            out.push((Tok::Sym(c as char), i));
            i += 1;
        } else {
            let ch = s[i..].chars().next().unwrap_or('?');
            return Err(ExprError {
                message: format!(
                    "unexpected character '{ch}'; expected a number, a name, an operator (+ - * / ^) or a parenthesis"
                ),
                offset: i,
            });
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    len: usize,
    src: &'a str,
    depth: usize,
}

const MAX_DEPTH: usize = 200;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn offset(&self) -> usize {
        self.toks.get(self.pos).map_or(self.len, |t| t.1)
    }

    fn found(&self) -> String {
        match self.toks.get(self.pos) {
            None => "the end".to_string(),
            Some((Tok::Num(_), o)) | Some((Tok::Ident(_), o)) | Some((Tok::Sym(_), o)) => {
                let rest = &self.src[*o..];
                let word: String = rest
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(12)
                    .collect();
                format!("'{word}'")
            }
        }
    }

    fn error<T>(&self, expected: &str) -> Result<T, ExprError> {
        Err(ExprError {
            message: format!("expected {expected}, found {}", self.found()),
            offset: self.offset(),
        })
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError {
                message: "expression nested too deeply".into(),
                offset: self.offset(),
            });
        }
        Ok(())
    }

    // sum := product (('+'|'-') product)*
    fn sum(&mut self) -> Result<Node, ExprError> {
        self.enter()?;
        let mut lhs = self.product()?;
        loop {
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                break;
            };
            let rhs = self.product()?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        self.depth -= 1;
        Ok(lhs)
    }

    // product := unary (('*'|'/') unary)*
    fn product(&mut self) -> Result<Node, ExprError> {
        let mut lhs = self.unary()?;
        loop {
            let op = if self.eat('*') {
                Op::Mul
            } else if self.eat('/') {
                Op::Div
            } else {
                break;
            };
            let rhs = self.unary()?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    // unary := '-' unary | '+' unary | power
    fn unary(&mut self) -> Result<Node, ExprError> {
        self.enter()?;
        let n = if self.eat('-') {
            Node::Neg(Box::new(self.unary()?))
        } else if self.eat('+') {
            self.unary()?
        } else {
            self.power()?
        };
        self.depth -= 1;
        Ok(n)
    }

    // power := atom ('^' unary)?   (right-associative, binds tighter than unary minus on its left)
    fn power(&mut self) -> Result<Node, ExprError> {
        let base = self.atom()?;
        if self.eat('^') {
            let exp = self.unary()?;
            return Ok(Node::Bin(Op::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Node, ExprError> {
        match self.peek().cloned() {
            Some(Tok::Num(v)) => {
                self.pos += 1;
                Ok(Node::Num(v))
            }
            Some(Tok::Ident(name)) => {
                let at = self.offset();
                self.pos += 1;
                if self.peek() == Some(&Tok::Sym('(')) {
                    let Some(f) = Func::from_name(&name) else {
                        return Err(ExprError {
                            message: format!(
                                "unknown function {name}; expected one of: min, max, sqrt, ln, exp, abs"
                            ),
                            offset: at,
                        });
                    };
                    self.pos += 1;
                    let mut args = Vec::new();
                    if !self.eat(')') {
                        loop {
                            args.push(self.sum()?);
                            if self.eat(',') {
                                continue;
                            }
                            if self.eat(')') {
                                break;
                            }
                            return self.error("',' or ')'");
                        }
                    }
                    if args.len() != f.arity() {
                        return Err(ExprError {
                            message: format!(
                                "{}() takes {} argument{}, found {}",
                                f.name(),
                                f.arity(),
                                if f.arity() == 1 { "" } else { "s" },
                                args.len()
                            ),
                            offset: at,
                        });
                    }
                    Ok(Node::Call(f, args))
                } else {
                    Ok(Node::Var(name))
                }
            }
            Some(Tok::Sym('(')) => {
                self.pos += 1;
                let inner = self.sum()?;
                if !self.eat(')') {
                    return self.error("')'");
                }
                Ok(inner)
            }
            _ => self.error("a number, a name or '('"),
        }
    }
}

impl Expr {
    /// Parses an expression.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let toks = lex(text)?;
        let mut p = Parser {
            toks,
            pos: 0,
            len: text.len(),
            src: text,
            depth: 0,
        };
        let node = p.sum()?;
        if p.pos < p.toks.len() {
            return p.error("an operator or the end");
        }
        Ok(Expr {
            node,
            source: text.trim().to_string(),
        })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variables the expression uses, sorted, without duplicates.
    pub fn variables(&self) -> Vec<String> {
        fn walk(n: &Node, out: &mut Vec<String>) {
            match n {
                Node::Num(_) => {}
                Node::Var(v) => out.push(v.clone()),
                Node::Neg(a) => walk(a, out),
                Node::Bin(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = Vec::new();
        walk(&self.node, &mut out);
        out.sort();
        out.dedup();
        out
    }

    /// Evaluates the expression; `lookup` gives the value of each variable.
    /// The result is always a finite number.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<f64>) -> Result<f64, EvalError> {
        let v = eval(&self.node, lookup)?;
        finite(v, &self.source)
    }
}

fn finite(v: f64, what: &str) -> Result<f64, EvalError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(EvalError::NotFinite(what.to_string()))
    }
}

fn eval(n: &Node, lookup: &dyn Fn(&str) -> Option<f64>) -> Result<f64, EvalError> {
    Ok(match n {
        Node::Num(v) => *v,
        Node::Var(name) => {
            let v = lookup(name).ok_or_else(|| EvalError::UnknownVariable(name.clone()))?;
            finite(v, name)?
        }
        Node::Neg(a) => -eval(a, lookup)?,
        Node::Bin(op, a, b) => {
            let (x, y) = (eval(a, lookup)?, eval(b, lookup)?);
            match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => {
                    if y == 0.0 {
                        return Err(EvalError::DivisionByZero);
                    }
                    x / y
                }
                Op::Pow => finite(x.powf(y), &format!("{x}^{y}"))?,
            }
        }
        Node::Call(f, args) => {
            let x = eval(&args[0], lookup)?;
            let r = match f {
                Func::Min => x.min(eval(&args[1], lookup)?),
                Func::Max => x.max(eval(&args[1], lookup)?),
                Func::Sqrt => x.sqrt(),
                Func::Ln => x.ln(),
                Func::Exp => x.exp(),
                Func::Abs => x.abs(),
            };
            finite(r, &format!("{}({x})", f.name()))?
        }
    })
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// The scopes derived metrics can name: the system (bare metric names),
/// stations and classes (`stations.NAME.metric`, `classes.NAME.metric`).
const VARIABLE_SCOPES: [MetricScope; 3] = [
    MetricScope::System,
    MetricScope::Station,
    MetricScope::Class,
];

/// The variables a derived metric may use, every one a metric of the one
/// table (`qsim_kernel::METRICS`) under its key path: system metrics by
/// name (`throughput_per_s`), station and class metrics as
/// `stations.NAME.utilization`, `classes.NAME.response_time_s`, and the
/// figures of a class at a station for each of `station_classes` (items
/// `STATION.classes.CLASS`) as `stations.cpu.classes.web.mean_jobs`. With
/// `aliases`, the older spellings still accepted are included
/// (`throughput`, `stations.NAME.response_time`, ...).
pub fn variable_names(
    stations: &[&str],
    classes: &[&str],
    station_classes: &[String],
    aliases: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for item in station_classes {
        out.extend(metrics(MetricScope::StationClass).map(|m| m.path(item)));
    }
    for scope in VARIABLE_SCOPES {
        let items: &[&str] = match scope {
            MetricScope::System => &["system"],
            MetricScope::Station => stations,
            _ => classes,
        };
        for item in items {
            for m in metrics(scope) {
                out.push(m.path(item));
                if aliases {
                    out.extend(m.aliases.iter().map(|a| match scope {
                        MetricScope::System => a.to_string(),
                        s => format!("{}.{item}.{a}", s.key()),
                    }));
                }
            }
        }
    }
    out
}

/// A sentence listing the variable forms, for error messages:
/// `throughput_per_s, ..., stations.NAME.{...}, stations.NAME.classes.CLASS.{...}
/// or classes.NAME.{...}`.
pub fn variables_help() -> String {
    let list = |scope: MetricScope| metrics(scope).map(|m| m.name).collect::<Vec<_>>().join(",");
    format!(
        "{}, {}.NAME.{{{}}}, {}.NAME.classes.CLASS.{{{}}} (multi-class models) or {}.NAME.{{{}}}",
        metrics(MetricScope::System)
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", "),
        MetricScope::Station.key(),
        list(MetricScope::Station),
        MetricScope::Station.key(),
        list(MetricScope::StationClass),
        MetricScope::Class.key(),
        list(MetricScope::Class)
    )
}

/// Splits a variable name into its scope, item name (`None` for the system;
/// `STATION.classes.CLASS` for a class at a station) and metric, accepting
/// the older spellings; `None` for a name that is not a metric path (the
/// item itself is not checked).
pub fn resolve_variable(name: &str) -> Option<(MetricScope, Option<&str>, &'static Metric)> {
    if let Some(m) = metric(MetricScope::System, name) {
        return Some((MetricScope::System, None, m));
    }
    let (scope, rest) = name.split_once('.')?;
    let (item, field) = rest.rsplit_once('.')?;
    if scope == MetricScope::Station.key()
        && item.contains(".classes.")
        && let Some(m) = metric(MetricScope::StationClass, field)
    {
        return Some((MetricScope::StationClass, Some(item), m));
    }
    let scope = VARIABLE_SCOPES
        .into_iter()
        .find(|s| *s != MetricScope::System && s.key() == scope)?;
    Some((scope, Some(item), metric(scope, field)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> Result<f64, EvalError> {
        Expr::parse(s).unwrap().eval(&|name| match name {
            "x" => Some(2.0),
            "stations.cpu.utilization" => Some(0.5),
            "zero" => Some(0.0),
            _ => None,
        })
    }

    #[test]
    fn precedence_and_functions() {
        let cases = [
            ("1 + 2 * 3", 7.0),
            ("(1 + 2) * 3", 9.0),
            ("-2^2", -4.0),
            ("2^3^2", 512.0),
            ("2^-1", 0.5),
            ("10 - 4 - 3", 3.0),
            ("12 / 4 / 3", 1.0),
            ("--x", 2.0),
            ("min(x, 3) + max(1, x)", 4.0),
            ("sqrt(16) + abs(-1) + ln(exp(2))", 7.0),
            ("stations.cpu.utilization * 100", 50.0),
            ("1.5e3 + .5", 1500.5),
            ("1_000", 1000.0),
        ];
        for (s, want) in cases {
            let got = ev(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert!((got - want).abs() < 1e-12, "{s}: {got} != {want}");
        }
    }

    #[test]
    fn eval_errors() {
        assert_eq!(ev("1 / zero"), Err(EvalError::DivisionByZero));
        assert_eq!(ev("y + 1"), Err(EvalError::UnknownVariable("y".into())));
        assert!(matches!(ev("sqrt(-1)"), Err(EvalError::NotFinite(_))));
        assert!(matches!(ev("ln(zero)"), Err(EvalError::NotFinite(_))));
        assert!(matches!(ev("exp(1000)"), Err(EvalError::NotFinite(_))));
    }

    #[test]
    fn syntax_errors_say_where() {
        let cases = [
            (
                "1 +",
                "expected a number, a name or '(', found the end at character 4",
            ),
            ("(1 + 2", "expected ')', found the end at character 7"),
            ("2 $ 3", "unexpected character '$'"),
            ("foo(1)", "unknown function foo"),
            ("min(1)", "min() takes 2 arguments, found 1"),
            (
                "1 2",
                "expected an operator or the end, found '2' at character 3",
            ),
            (
                "",
                "expected a number, a name or '(', found the end at character 1",
            ),
            ("a..b", "expected a variable name"),
        ];
        for (s, want) in cases {
            let e = Expr::parse(s).unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
        let deep = "(".repeat(10_000);
        assert!(Expr::parse(&deep).is_err());
        let neg = "-".repeat(10_000);
        assert!(Expr::parse(&neg).is_err());
    }

    #[test]
    fn variables_are_sorted_and_unique() {
        let e = Expr::parse("b + a * b + max(c, 1)").unwrap();
        assert_eq!(e.variables(), vec!["a", "b", "c"]);
    }
}
