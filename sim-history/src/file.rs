//! Histories as files: JSON lines (one event an object a line) and
//! Jepsen's EDN (one event a map a line).
//!
//! ```text
//! {"index":0,"type":"invoke","id":0,"client":"c1","time":1000,"f":"write","key":"x","value":1}
//! {:index 0, :type :invoke, :id 0, :process "c1", :time 1000, :f :write, :key "x", :value 1}
//! ```
//!
//! A Jepsen history (no `:id`, integer processes, no `:key`) reads too:
//! a completion pairs with its process's open operation, and the
//! nemesis's events (a keyword process) are left out.

use crate::history::{Event, History, Kind};
use crate::op::Op;
use crate::value::Value;
use std::borrow::Cow;

impl History {
    /// The history as JSON lines.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for e in self.events() {
            out.push_str(&format!(
                "{{\"index\":{},\"type\":\"{}\",\"id\":{},\"client\":{},\"time\":{},\"f\":{},\"key\":{},\"value\":{}}}\n",
                e.index,
                e.kind.name(),
                e.id,
                json_string(&e.client),
                e.time_ns,
                json_string(&e.op.f),
                json_value(&e.op.key),
                json_value(&e.op.value),
            ));
        }
        out
    }

    /// Reads a history from JSON lines (blank lines are skipped).
    ///
    /// # Errors
    /// Names the line and what is wrong with it.
    pub fn from_jsonl(text: &str) -> Result<History, String> {
        read_lines(text, |line| {
            let mut reader = Reader::new(line);
            let fields = reader.map(Syntax::Json)?;
            Ok(Some(fields))
        })
    }

    /// The history as Jepsen's EDN, a map a line.
    pub fn to_edn(&self) -> String {
        let mut out = String::new();
        for e in self.events() {
            out.push_str(&format!(
                "{{:index {}, :type :{}, :id {}, :process {}, :time {}, :f :{}, :key {}, :value {}}}\n",
                e.index,
                e.kind.name(),
                e.id,
                json_string(&e.client),
                e.time_ns,
                e.op.f,
                e.op.key,
                edn_value(&e.op.value, e.op.f == "txn"),
            ));
        }
        out
    }

    /// Reads a history from EDN, a map a line (Jepsen's `history.edn`).
    ///
    /// # Errors
    /// Names the line and what is wrong with it.
    pub fn from_edn(text: &str) -> Result<History, String> {
        read_lines(text, |line| {
            let mut reader = Reader::new(line);
            let fields = reader.map(Syntax::Edn)?;
            // The nemesis (a keyword process) is no client.
            let nemesis = fields
                .iter()
                .any(|(k, v)| k == "process" && matches!(v, Parsed::Keyword(_)));
            Ok((!nemesis).then_some(fields))
        })
    }
}

/// Each non-blank line's fields, made into an event and pushed.
fn read_lines(
    text: &str,
    mut fields_of: impl FnMut(&str) -> Result<Option<Vec<(String, Parsed)>>, String>,
) -> Result<History, String> {
    let mut history = History::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = |message: String| format!("line {}: {message}", number + 1);
        let Some(fields) = fields_of(line).map_err(at)? else {
            continue;
        };
        let event = event_of(fields, history.events().len() as u64).map_err(at)?;
        history.push(event).map_err(at)?;
    }
    Ok(history)
}

/// An event from its fields: `type`, `f` and `process` (or `client`) are
/// required; `id`, `time`, `key` and `value` default.
fn event_of(fields: Vec<(String, Parsed)>, index: u64) -> Result<Event, String> {
    let mut event = Event {
        index,
        kind: Kind::Invoke,
        id: u64::MAX,
        client: String::new(),
        time_ns: 0,
        op: Op::new("", Value::Nil, Value::Nil),
    };
    let (mut kind, mut f, mut client) = (None, None, None);
    for (name, value) in fields {
        match name.as_str() {
            "type" => kind = Some(Kind::parse(&value.text()).ok_or("an unknown :type")?),
            "f" => f = Some(value.text()),
            "process" | "client" => client = Some(value.text()),
            "id" => event.id = value.int().ok_or("an :id that is no integer")? as u64,
            "time" => event.time_ns = value.int().unwrap_or(0).max(0) as u64,
            "key" => event.op.key = value.into_value(),
            "value" => event.op.value = value.into_value(),
            _ => {}
        }
    }
    event.kind = kind.ok_or("no type")?;
    event.op.f = Cow::Owned(f.ok_or("no f")?);
    event.client = client.ok_or("no process or client")?;
    Ok(event)
}

pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_value(value: &Value) -> String {
    match value {
        Value::Nil => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Str(s) => json_string(s),
        Value::List(items) => {
            let inner: Vec<String> = items.iter().map(json_value).collect();
            format!("[{}]", inner.join(","))
        }
    }
}

/// EDN; in a transaction each micro-operation's name is a keyword, as
/// Jepsen writes it (`[:append "x" 1]`).
fn edn_value(value: &Value, txn: bool) -> String {
    match value {
        Value::List(items) if txn => {
            let mops: Vec<String> = items
                .iter()
                .map(|mop| match mop.as_list() {
                    Some([Value::Str(f), rest @ ..]) => {
                        let rest: Vec<String> = rest.iter().map(|v| edn_value(v, false)).collect();
                        format!("[:{f} {}]", rest.join(" "))
                    }
                    _ => edn_value(mop, false),
                })
                .collect();
            format!("[{}]", mops.join(" "))
        }
        Value::Str(s) => json_string(s),
        Value::List(items) => {
            let inner: Vec<String> = items.iter().map(|v| edn_value(v, false)).collect();
            format!("[{}]", inner.join(" "))
        }
        other => other.to_string(),
    }
}

/// A value as read, before it becomes a [`Value`]: a keyword stays apart
/// so a nemesis's process can be told from a client's.
#[derive(Debug)]
enum Parsed {
    Value(Value),
    Keyword(String),
    List(Vec<Parsed>),
}

impl Parsed {
    fn text(&self) -> String {
        match self {
            Parsed::Keyword(k) => k.clone(),
            Parsed::Value(Value::Str(s)) => s.clone(),
            Parsed::Value(v) => v.to_string(),
            Parsed::List(_) => "list".to_string(),
        }
    }

    fn int(&self) -> Option<i64> {
        match self {
            Parsed::Value(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    fn into_value(self) -> Value {
        match self {
            Parsed::Value(v) => v,
            Parsed::Keyword(k) => Value::Str(k),
            Parsed::List(items) => Value::List(items.into_iter().map(Parsed::into_value).collect()),
        }
    }
}

/// Reads one EDN value at the start of `text`: the value and the rest.
pub(crate) fn read_edn_value(text: &str) -> Result<(Value, &str), String> {
    let mut reader = Reader::new(text);
    let value = reader.value(Syntax::Edn)?.into_value();
    Ok((value, text[reader.at..].trim_start()))
}

#[derive(Clone, Copy, PartialEq)]
enum Syntax {
    Json,
    Edn,
}

/// The most nesting a value read from a file may have.
const DEPTH_MAX: usize = 64;

/// A reader of one line of JSON or EDN.
struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text: text.as_bytes(),
            at: 0,
            depth: 0,
        }
    }

    fn skip_space(&mut self) {
        while self.at < self.text.len()
            && (self.text[self.at].is_ascii_whitespace() || self.text[self.at] == b',')
        {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!(
                "expected '{}' at column {}",
                byte as char,
                self.at + 1
            ))
        }
    }

    /// A map of string or keyword keys.
    fn map(&mut self, syntax: Syntax) -> Result<Vec<(String, Parsed)>, String> {
        self.expect(b'{')?;
        let mut fields = Vec::new();
        while self.peek() != Some(b'}') {
            if self.peek().is_none() {
                return Err("the map is not closed".to_string());
            }
            let key = match self.value(syntax)? {
                Parsed::Keyword(k) => k,
                Parsed::Value(Value::Str(s)) => s,
                other => return Err(format!("a map key that is no name: {other:?}")),
            };
            if syntax == Syntax::Json {
                self.expect(b':')?;
            }
            fields.push((key, self.value(syntax)?));
        }
        self.at += 1;
        Ok(fields)
    }

    fn value(&mut self, syntax: Syntax) -> Result<Parsed, String> {
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return Err(format!("values nested deeper than {DEPTH_MAX}"));
        }
        let parsed = match self.peek().ok_or("the line ends inside a value")? {
            b'"' => Parsed::Value(Value::Str(self.string()?)),
            b'[' => self.list(b']', syntax)?,
            b'(' if syntax == Syntax::Edn => self.list(b')', syntax)?,
            b'#' if syntax == Syntax::Edn && self.text.get(self.at + 1) == Some(&b'{') => {
                self.at += 1;
                self.list(b'}', syntax)?
            }
            b':' if syntax == Syntax::Edn => {
                self.at += 1;
                Parsed::Keyword(self.word())
            }
            b'-' | b'0'..=b'9' => Parsed::Value(Value::Int(self.number()?)),
            _ => match self.word().as_str() {
                "null" | "nil" => Parsed::Value(Value::Nil),
                "true" => Parsed::Value(Value::Bool(true)),
                "false" => Parsed::Value(Value::Bool(false)),
                word => return Err(format!("an unknown word '{word}' at column {}", self.at)),
            },
        };
        self.depth -= 1;
        Ok(parsed)
    }

    fn list(&mut self, close: u8, syntax: Syntax) -> Result<Parsed, String> {
        self.at += 1;
        let mut items = Vec::new();
        while self.peek() != Some(close) {
            if self.peek().is_none() {
                return Err("a list is not closed".to_string());
            }
            items.push(self.value(syntax)?);
        }
        self.at += 1;
        Ok(Parsed::List(items))
    }

    fn word(&mut self) -> String {
        let start = self.at;
        while self.at < self.text.len()
            && !self.text[self.at].is_ascii_whitespace()
            && !b",{}[]()\":".contains(&self.text[self.at])
        {
            self.at += 1;
        }
        String::from_utf8_lossy(&self.text[start..self.at]).into_owned()
    }

    fn number(&mut self) -> Result<i64, String> {
        let word = self.word();
        word.parse::<i64>().or_else(|_| {
            // A float (Jepsen's times sometimes are): its integer part.
            word.parse::<f64>()
                .map(|f| f as i64)
                .map_err(|_| format!("'{word}' is no number"))
        })
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let byte = *self.text.get(self.at).ok_or("a string is not closed")?;
            self.at += 1;
            match byte {
                b'"' => break,
                b'\\' => {
                    let escaped = *self.text.get(self.at).ok_or("a string is not closed")?;
                    self.at += 1;
                    match escaped {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let hex = self
                                .text
                                .get(self.at..self.at + 4)
                                .ok_or("a short \\u escape")?;
                            let code = u32::from_str_radix(&String::from_utf8_lossy(hex), 16)
                                .map_err(|_| "a bad \\u escape")?;
                            self.at += 4;
                            let c = char::from_u32(code).unwrap_or('\u{fffd}');
                            out.extend_from_slice(c.to_string().as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
        String::from_utf8(out).map_err(|_| "a string that is not UTF-8".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Mop;

    fn sample() -> History {
        let mut h = History::new();
        let a = h.invoke("c1", 10, Op::write("x", 1));
        let b = h.invoke("c2", 11, Op::txn([Mop::append("y", 2), Mop::read("y")]));
        h.complete(a, Kind::Ok, 20, Value::Nil);
        h.complete(
            b,
            Kind::Ok,
            21,
            Value::List(vec![
                Mop::append("y", 2).into(),
                Mop::read_of("y", vec![2]).into(),
            ]),
        );
        let c = h.invoke("c1", 30, Op::read("x \"quoted\"\n"));
        h.complete(c, Kind::Info, 40, Value::Nil);
        h
    }

    #[test]
    fn json_lines_read_back_what_they_wrote() {
        let h = sample();
        assert_eq!(History::from_jsonl(&h.to_jsonl()).unwrap(), h);
    }

    #[test]
    fn edn_reads_back_what_it_wrote() {
        let h = sample();
        assert_eq!(History::from_edn(&h.to_edn()).unwrap(), h);
    }

    #[test]
    fn a_jepsen_history_reads_without_ids_or_keys_and_without_the_nemesis() {
        let text = "{:type :invoke, :f :txn, :value [[:append 9 1] [:r 8 nil]], :time 23, :process 0, :index 0}\n\
                    {:type :info, :f :start-partition, :value nil, :process :nemesis, :time 24}\n\
                    {:type :invoke, :f :read, :value nil, :process 1, :time 25, :index 1}\n\
                    {:type :ok, :f :txn, :value [[:append 9 1] [:r 8 [3]]], :time 26, :process 0, :index 2}\n";
        let h = History::from_edn(text).unwrap();
        let ops = h.operations();
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0].client, "0");
        assert_eq!(
            ops[0].output().unwrap().to_string(),
            "[[\"append\" 9 1] [\"r\" 8 [3]]]"
        );
        assert_eq!(ops[0].op.mops()[1], Mop::read(8));
        assert_eq!(ops[1].outcome, crate::history::Outcome::Info);
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = History::from_jsonl("\n{\"type\":\"ok\",\"f\":\"read\",\"client\":\"c\"}\n")
            .unwrap_err();
        assert!(err.starts_with("line 2: "), "{err}");
        let err = History::from_jsonl("{\"type\":\"invoke\",\"f\":\"read\"").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
    }
}
