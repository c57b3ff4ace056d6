use super::Id;
use std::any::Any;
use std::fmt;
use std::io;
use std::sync::Mutex;

/// Why a task gave no output: it was cancelled, or it panicked.
pub struct JoinError {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    id: Id,
    repr: Repr,
}

enum Repr {
    Cancelled,
    // A Mutex makes the error Sync, as tokio's is, around a payload that is
    // only Send.
    Panic(Mutex<Box<dyn Any + Send + 'static>>),
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> JoinError {
        JoinError {
            _unwind: std::marker::PhantomData,
            id,
            repr: Repr::Cancelled,
        }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError {
            _unwind: std::marker::PhantomData,
            id,
            repr: Repr::Panic(Mutex::new(payload)),
        }
    }

    /// Whether the task was cancelled.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// Whether the task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic's payload, to resume it with `std::panic::resume_unwind`.
    ///
    /// # Panics
    /// When the error is not a panic.
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError` reason is not a panic.")
    }

    /// The panic's payload, or the error itself when it is not a panic.
    ///
    /// # Errors
    /// When the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(payload) => Ok(payload.into_inner().unwrap_or_else(|e| e.into_inner())),
            repr => Err(JoinError {
                _unwind: std::marker::PhantomData,
                id: self.id,
                repr,
            }),
        }
    }

    /// The id of the task.
    pub fn id(&self) -> Id {
        self.id
    }

    fn panic_message(&self) -> Option<String> {
        let Repr::Panic(payload) = &self.repr else {
            return None;
        };
        let payload = payload.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = payload.downcast_ref::<&'static str>() {
            Some((*s).to_string())
        } else {
            payload.downcast_ref::<String>().cloned()
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => write!(f, "task {} was cancelled", self.id),
            (Repr::Panic(_), Some(message)) => {
                write!(f, "task {} panicked with message {:?}", self.id, message)
            }
            (Repr::Panic(_), None) => write!(f, "task {} panicked", self.id),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => write!(f, "JoinError::Cancelled({:?})", self.id),
            (Repr::Panic(_), Some(message)) => {
                write!(f, "JoinError::Panic({:?}, {:?}, ...)", self.id, message)
            }
            (Repr::Panic(_), None) => write!(f, "JoinError::Panic({:?}, ...)", self.id),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for io::Error {
    fn from(src: JoinError) -> io::Error {
        io::Error::other(match src.repr {
            Repr::Cancelled => "task was cancelled",
            Repr::Panic(_) => "task panicked",
        })
    }
}
