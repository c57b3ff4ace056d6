//! A UDP socket's receive queue: its oldest datagram in place, the rest in
//! a ring.
//!
//! Most sockets hold one datagram at a time (it arrives, its reader takes
//! it). Keeping that one in the socket's own record spares the ring's
//! buffer, a line of its own that has left the cache by the next delivery
//! when thousands of hosts take turns. The record has room: a socket's
//! slot is as large as a TCP end's.

use crate::payload::Payload;
use std::collections::VecDeque;
use std::net::SocketAddr;

/// A datagram as its socket keeps it: its bytes and its sender.
pub(crate) type Queued = (Payload, SocketAddr);

/// First in, first out; `head` is empty only when `rest` is.
#[derive(Default)]
pub(crate) struct DatagramQueue {
    head: Option<Queued>,
    rest: VecDeque<Queued>,
}

impl DatagramQueue {
    pub(crate) fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    pub(crate) fn push_back(&mut self, datagram: Queued) {
        if self.head.is_none() {
            debug_assert!(self.rest.is_empty(), "the head is the oldest");
            self.head = Some(datagram);
        } else {
            self.rest.push_back(datagram);
        }
    }

    pub(crate) fn pop_front(&mut self) -> Option<Queued> {
        let oldest = self.head.take()?;
        self.head = self.rest.pop_front();
        Some(oldest)
    }

    pub(crate) fn front(&self) -> Option<&Queued> {
        self.head.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a `VecDeque`, through pushes and pops in every mix.
    #[test]
    fn the_queue_matches_a_ring() {
        let mut queue = DatagramQueue::default();
        let mut model: VecDeque<u8> = VecDeque::new();
        let from: SocketAddr = "10.0.0.1:9".parse().unwrap();
        let mut x: u32 = 0x9e37_79b9;
        for step in 0..10_000u32 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if x % 3 == 0 {
                let byte = step as u8;
                queue.push_back((Payload::from(&[byte][..]), from));
                model.push_back(byte);
            } else {
                let popped = queue.pop_front().map(|(data, _)| data[0]);
                assert_eq!(popped, model.pop_front());
            }
            assert_eq!(queue.len(), model.len());
            assert_eq!(queue.is_empty(), model.is_empty());
            assert_eq!(
                queue.front().map(|(data, _)| data[0]),
                model.front().copied()
            );
        }
    }
}
