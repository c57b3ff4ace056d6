//! A host's port table: which socket (by slab index) holds each bound
//! port. A delivery looks its port up on a host it has not touched for a
//! while, so the table's usual few ports live inline, in the host's first
//! cache line; a host with more ports keeps them all in a map.

use std::collections::BTreeMap;

/// Ports kept inline before the table moves to its map.
const INLINE_MAX: usize = 4;

/// Bound ports and their sockets' slab indexes. What a lookup reads comes
/// first (the map's own fields would be another cache line).
#[derive(Default)]
#[repr(C)]
pub(crate) struct PortMap {
    inline_len: u8,
    /// Whether the ports are in `spill`.
    spilled: bool,
    /// The first `inline_len` lanes hold ports, in no order.
    inline: [(u16, u32); INLINE_MAX],
    /// Every port once more than `INLINE_MAX` were bound at once (then
    /// `inline_len` is 0); back inline when it falls to none.
    spill: BTreeMap<u16, u32>,
}

impl PortMap {
    /// The socket bound to `port`.
    #[inline]
    pub(crate) fn get(&self, port: &u16) -> Option<&u32> {
        if !self.spilled {
            return self.inline[..usize::from(self.inline_len)]
                .iter()
                .find(|(p, _)| p == port)
                .map(|(_, index)| index);
        }
        self.spill.get(port)
    }

    /// Whether `port` is bound.
    #[inline]
    pub(crate) fn contains_key(&self, port: &u16) -> bool {
        self.get(port).is_some()
    }

    /// Binds `port` to `index`; returns the index it had.
    pub(crate) fn insert(&mut self, port: u16, index: u32) -> Option<u32> {
        if !self.spilled {
            let len = usize::from(self.inline_len);
            if let Some(lane) = self.inline[..len].iter_mut().find(|(p, _)| *p == port) {
                return Some(std::mem::replace(&mut lane.1, index));
            }
            if len < INLINE_MAX {
                self.inline[len] = (port, index);
                self.inline_len += 1;
                return None;
            }
            // Full: every port moves to the map.
            self.spill.extend(self.inline[..len].iter().copied());
            self.inline_len = 0;
            self.spilled = true;
        }
        self.spill.insert(port, index)
    }

    /// Unbinds `port`; returns the index it had.
    pub(crate) fn remove(&mut self, port: &u16) -> Option<u32> {
        if !self.spilled {
            let len = usize::from(self.inline_len);
            let lane = self.inline[..len].iter().position(|(p, _)| p == port)?;
            let (_, index) = self.inline[lane];
            self.inline[lane] = self.inline[len - 1];
            self.inline_len -= 1;
            return Some(index);
        }
        let index = self.spill.remove(port);
        self.spilled = !self.spill.is_empty();
        index
    }

    /// Unbinds every port.
    pub(crate) fn clear(&mut self) {
        self.inline_len = 0;
        self.spilled = false;
        self.spill.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::PortMap;
    use std::collections::BTreeMap;

    /// Against a map, through binds and unbinds that cross the inline
    /// limit both ways.
    #[test]
    fn the_table_matches_a_map() {
        let mut ports = PortMap::default();
        let mut model = BTreeMap::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let port = (x % 9) as u16;
            match (x >> 8) % 3 {
                0 | 1 => assert_eq!(ports.insert(port, step), model.insert(port, step)),
                _ => assert_eq!(ports.remove(&port), model.remove(&port)),
            }
            for p in 0..10u16 {
                assert_eq!(ports.get(&p), model.get(&p), "port {p} at step {step}");
            }
            if step % 5_000 == 4_999 {
                ports.clear();
                model.clear();
            }
        }
    }
}
