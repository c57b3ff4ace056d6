//! Multi-producer, single-consumer channels, bounded and unbounded.
//!
//! A bounded channel's capacity is a FIFO semaphore: senders wait for a slot
//! in arrival order, a `send` future dropped while waiting gives up its
//! place without losing anyone else's, and the receiver frees a slot with
//! each value it takes.

mod bounded;
mod chan;
pub mod error;
mod receiver;
mod unbounded;

pub use bounded::{channel, OwnedPermit, Permit, PermitIterator, Receiver, Sender, WeakSender};
pub use unbounded::{unbounded_channel, UnboundedReceiver, UnboundedSender, WeakUnboundedSender};
