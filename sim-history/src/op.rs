//! [`Op`]: what a client asked for, and [`Mop`]: one step of a
//! transaction.

use crate::value::Value;
use std::borrow::Cow;
use std::fmt;

/// What a client asked for: a function (`read`, `write`, `cas`, `txn`...),
/// the key it acts on and its argument.
///
/// The key is what the checkers partition by (`Value::Nil` for a
/// transaction, which spans keys); the built-in models read the function
/// and argument as the constructors below write them.
///
/// ```
/// use sim_history::Op;
///
/// assert_eq!(Op::write("x", 3).to_string(), "write \"x\" 3");
/// assert_eq!(Op::cas("x", 3, 4).to_string(), "cas \"x\" [3 4]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    /// The function: `read`, `write`, `cas`, `add`, `enqueue`, `dequeue`,
    /// `txn`, or a user model's own.
    pub f: Cow<'static, str>,
    /// The key the operation acts on (`Nil`: none, or many).
    pub key: Value,
    /// The argument (for a completion in a history: the result).
    pub value: Value,
}

impl Op {
    /// An operation of function `f` on `key` with argument `value`.
    pub fn new(
        f: impl Into<Cow<'static, str>>,
        key: impl Into<Value>,
        value: impl Into<Value>,
    ) -> Op {
        Op {
            f: f.into(),
            key: key.into(),
            value: value.into(),
        }
    }

    /// Reads `key` (a register, a map's key, a set, a counter).
    pub fn read(key: impl Into<Value>) -> Op {
        Op::new("read", key, Value::Nil)
    }

    /// Writes `value` to `key`.
    pub fn write(key: impl Into<Value>, value: impl Into<Value>) -> Op {
        Op::new("write", key, value)
    }

    /// Sets `key` to `to` if it holds `from`. Its result is `true`, or
    /// `false` when `key` held something else.
    pub fn cas(key: impl Into<Value>, from: impl Into<Value>, to: impl Into<Value>) -> Op {
        Op::new("cas", key, Value::List(vec![from.into(), to.into()]))
    }

    /// Adds `value` to `key`: an element to a set, an amount to a counter.
    pub fn add(key: impl Into<Value>, value: impl Into<Value>) -> Op {
        Op::new("add", key, value)
    }

    /// Puts `value` at the back of the queue `key`.
    pub fn enqueue(key: impl Into<Value>, value: impl Into<Value>) -> Op {
        Op::new("enqueue", key, value)
    }

    /// Takes the front of the queue `key`. Its result is the value taken,
    /// or `Nil` for an empty queue.
    pub fn dequeue(key: impl Into<Value>) -> Op {
        Op::new("dequeue", key, Value::Nil)
    }

    /// A transaction of micro-operations, in order. Its result is the same
    /// list with each read's value filled in.
    pub fn txn(mops: impl IntoIterator<Item = Mop>) -> Op {
        Op::new(
            "txn",
            Value::Nil,
            Value::List(mops.into_iter().map(Value::from).collect()),
        )
    }

    /// A transaction's micro-operations (an operation of another function,
    /// or a malformed list, has none).
    pub fn mops(&self) -> Vec<Mop> {
        self.value
            .as_list()
            .map(|items| items.iter().filter_map(Mop::from_value).collect())
            .unwrap_or_default()
    }
}

/// `write "x" 3`: the function, the key (unless `Nil`), the argument
/// (unless `Nil`).
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.f)?;
        if !self.key.is_nil() {
            write!(f, " {}", self.key)?;
        }
        if !self.value.is_nil() {
            write!(f, " {}", self.value)?;
        }
        Ok(())
    }
}

/// One step of a transaction: an append to a list, a read or a write of a
/// register.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mop {
    /// What the step does.
    pub kind: MopKind,
    /// The key it acts on.
    pub key: Value,
    /// An append's or a write's value; a read's result (`Nil` before the
    /// transaction completes).
    pub value: Value,
}

/// What a transaction's step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MopKind {
    /// Appends a value to the list at the key (Elle's list-append).
    Append,
    /// Reads the key: a list for list-append, a value for a register.
    Read,
    /// Writes a value to the register at the key.
    Write,
}

impl MopKind {
    /// Jepsen's name: `append`, `r`, `w`.
    pub fn name(self) -> &'static str {
        match self {
            MopKind::Append => "append",
            MopKind::Read => "r",
            MopKind::Write => "w",
        }
    }
}

impl Mop {
    /// Appends `value` to the list at `key`.
    pub fn append(key: impl Into<Value>, value: impl Into<Value>) -> Mop {
        Mop {
            kind: MopKind::Append,
            key: key.into(),
            value: value.into(),
        }
    }

    /// Reads `key`.
    pub fn read(key: impl Into<Value>) -> Mop {
        Mop {
            kind: MopKind::Read,
            key: key.into(),
            value: Value::Nil,
        }
    }

    /// A read of `key` that returned `value` (a completed transaction's
    /// step).
    pub fn read_of(key: impl Into<Value>, value: impl Into<Value>) -> Mop {
        Mop {
            kind: MopKind::Read,
            key: key.into(),
            value: value.into(),
        }
    }

    /// Writes `value` to the register at `key`.
    pub fn write(key: impl Into<Value>, value: impl Into<Value>) -> Mop {
        Mop {
            kind: MopKind::Write,
            key: key.into(),
            value: value.into(),
        }
    }

    /// The step a history stores as `[f key value]`.
    pub fn from_value(value: &Value) -> Option<Mop> {
        let [f, key, value] = value.as_list()? else {
            return None;
        };
        let kind = match f.as_str()? {
            "append" => MopKind::Append,
            "r" | "read" => MopKind::Read,
            "w" | "write" => MopKind::Write,
            _ => return None,
        };
        Some(Mop {
            kind,
            key: key.clone(),
            value: value.clone(),
        })
    }
}

impl Mop {
    /// The step a history stores as `[f key value]`, taken apart without a
    /// copy (a read's list may be long).
    pub fn from_owned(value: Value) -> Option<Mop> {
        let Value::List(parts) = value else {
            return None;
        };
        let [f, key, value]: [Value; 3] = parts.try_into().ok()?;
        let kind = match f.as_str()? {
            "append" => MopKind::Append,
            "r" | "read" => MopKind::Read,
            "w" | "write" => MopKind::Write,
            _ => return None,
        };
        Some(Mop { kind, key, value })
    }
}

impl From<Mop> for Value {
    fn from(mop: Mop) -> Value {
        Value::List(vec![Value::from(mop.kind.name()), mop.key, mop.value])
    }
}

/// `[append "x" 3]`, `[r "x" [1 2]]`.
impl fmt::Display for Mop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{} {} {}]", self.kind.name(), self.key, self.value)
    }
}
