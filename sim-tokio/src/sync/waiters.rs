//! A FIFO queue of waiting futures, each known by an id so a dropped future
//! can leave the queue.

use std::collections::VecDeque;
use std::task::Waker;

#[derive(Default, Debug)]
pub(crate) struct Waiters {
    queue: VecDeque<(u64, Waker)>,
    next_id: u64,
}

impl Waiters {
    pub(crate) const fn new() -> Waiters {
        Waiters {
            queue: VecDeque::new(),
            next_id: 1,
        }
    }

    /// Adds a waiter at the back; returns its id.
    pub(crate) fn push(&mut self, waker: &Waker) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.queue.push_back((id, waker.clone()));
        id
    }

    /// Updates a waiter's waker.
    pub(crate) fn update(&mut self, id: u64, waker: &Waker) {
        if let Some((_, w)) = self.queue.iter_mut().find(|(i, _)| *i == id) {
            if !w.will_wake(waker) {
                *w = waker.clone();
            }
        }
    }

    /// Whether `id` is at the front (or the queue is empty and `id` is 0).
    pub(crate) fn is_first(&self, id: u64) -> bool {
        match self.queue.front() {
            Some((front, _)) => *front == id,
            None => id == 0,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Removes a waiter; returns whether it was there.
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        match self.queue.iter().position(|(i, _)| *i == id) {
            Some(index) => {
                self.queue.remove(index);
                true
            }
            None => false,
        }
    }

    /// The front waiter's waker, to wake it (it stays queued).
    pub(crate) fn front_waker(&self) -> Option<Waker> {
        self.queue.front().map(|(_, w)| w.clone())
    }

    pub(crate) fn drain(&mut self) -> Vec<Waker> {
        self.queue.drain(..).map(|(_, w)| w).collect()
    }
}
