//! [`Value`]: what an operation takes and returns, as a history stores it
//! (the shape of JSON and of Jepsen's EDN, so a history is a file).

use std::fmt;

/// An operation's argument or result.
///
/// Integers, strings, booleans, nil and lists cover what checkers compare:
/// a register's value, a key, a set's elements, a transaction's
/// micro-operations. `From` turns the usual Rust types into one.
///
/// ```
/// use sim_history::Value;
///
/// assert_eq!(Value::from(3), Value::Int(3));
/// assert_eq!(Value::from(None::<i64>), Value::Nil);
/// assert_eq!(Value::from(vec![1, 2]).to_string(), "[1 2]");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// Nothing: a read of an absent key, a write's result.
    #[default]
    Nil,
    /// A boolean (a compare-and-set's result).
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string (a key, a name).
    Str(String),
    /// A list (a set's or a queue's elements, a transaction).
    List(Vec<Value>),
}

impl Value {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The list's elements, if this is one.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether this is [`Value::Nil`].
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }
}

/// EDN's spelling: `nil`, `true`, `3`, `"x"`, `[1 2]`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("nil"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl From<()> for Value {
    fn from((): ()) -> Value {
        Value::Nil
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

macro_rules! from_small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Int(i64::from(n))
            }
        }
    )*};
}
from_small_int!(i8, i16, i32, i64, u8, u16, u32);

macro_rules! from_wide_int {
    ($($t:ty),*) => {$(
        /// # Panics
        /// Above `i64::MAX`: record such a number as a string.
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                match i64::try_from(n) {
                    Ok(n) => Value::Int(n),
                    Err(_) => panic!(
                        "sim-history: {n} is above i64::MAX, the largest integer a history \
                         holds; record it as a string (Value::from(n.to_string()))"
                    ),
                }
            }
        }
    )*};
}
from_wide_int!(u64, usize, isize);

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::Str(s.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Nil, Into::into)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value> + Clone> From<&[T]> for Value {
    fn from(items: &[T]) -> Value {
        Value::List(items.iter().cloned().map(Into::into).collect())
    }
}
