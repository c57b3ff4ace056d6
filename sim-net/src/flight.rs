//! Messages on the wire: a datagram or a segment between its send and its
//! delivery lives here, and its delivery event on the runtime's queue
//! names its entry (`Core::schedule_with`). Where each was a boxed
//! callback, a message now costs no allocation: entries are reused, the
//! last freed first (still in the cache when the next send fills it).

/// A table of messages in flight, of one kind.
pub(crate) struct Flight<T> {
    entries: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Flight<T> {
    fn default() -> Self {
        Flight {
            entries: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Flight<T> {
    /// Keeps `message`; returns its entry's number.
    #[inline]
    pub(crate) fn put(&mut self, message: T) -> u64 {
        match self.free.pop() {
            Some(index) => {
                // The next put fills the entry freed before this one: with
                // thousands in flight it has left the cache, so it is
                // fetched now, while this message's send goes on.
                if let Some(&next) = self.free.last() {
                    sim_runtime::prefetch::lines(&self.entries[next as usize], 2);
                }
                let entry = &mut self.entries[index as usize];
                debug_assert!(entry.is_none(), "a free entry is empty");
                *entry = Some(message);
                u64::from(index)
            }
            None => {
                let index = u32::try_from(self.entries.len())
                    .expect("sim: fewer than 4G messages in flight at once");
                self.entries.push(Some(message));
                u64::from(index)
            }
        }
    }

    /// Fetches entry `index` into the cache (its delivery is next).
    #[inline]
    pub(crate) fn prefetch(&self, index: u64) {
        if let Some(entry) = self.entries.get(index as usize) {
            sim_runtime::prefetch::lines(entry, 2);
        }
    }

    /// Takes the message of entry `index` (once: the entry is free after).
    #[inline]
    pub(crate) fn take(&mut self, index: u64) -> Option<T> {
        let message = self.entries.get_mut(index as usize)?.take()?;
        self.free.push(index as u32);
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::Flight;

    #[test]
    fn entries_are_taken_once_and_reused() {
        let mut flight = Flight::default();
        let a = flight.put("a");
        let b = flight.put("b");
        assert_ne!(a, b);
        assert_eq!(flight.take(a), Some("a"));
        assert_eq!(flight.take(a), None, "taken once");
        let c = flight.put("c");
        assert_eq!(c, a, "the last freed entry is reused first");
        assert_eq!(flight.take(b), Some("b"));
        assert_eq!(flight.take(c), Some("c"));
        assert_eq!(flight.take(99), None);
    }
}
