//! A fixed-size set of small numbers, a bit each.

/// A set of numbers below its capacity.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Bits {
    words: Box<[u64]>,
}

impl Bits {
    /// An empty set of numbers below `capacity`.
    pub fn new(capacity: usize) -> Bits {
        Bits {
            words: vec![0; capacity.div_ceil(64)].into_boxed_slice(),
        }
    }

    #[inline]
    pub fn set(&mut self, n: usize) {
        self.words[n / 64] |= 1 << (n % 64);
    }

    #[inline]
    pub fn clear(&mut self, n: usize) {
        self.words[n / 64] &= !(1 << (n % 64));
    }

    #[inline]
    pub fn contains(&self, n: usize) -> bool {
        self.words[n / 64] & (1 << (n % 64)) != 0
    }

    /// Whether every member of `self` is in `other` (same capacity).
    #[inline]
    pub fn is_subset(&self, other: &Bits) -> bool {
        self.words
            .iter()
            .zip(other.words.iter())
            .all(|(a, b)| a & !b == 0)
    }
}
