//! The seed tree's named streams, a part of the core: harness decisions,
//! tests and the user's randomness draw from streams of their own, so a new
//! stream shifts no other.

use crate::rng::Rng;
use std::collections::BTreeMap;

/// The streams of one run.
pub(crate) struct Streams {
    seed: u64,
    /// Named streams (`rng::Rng::named`), made on first use.
    named: BTreeMap<Box<str>, Rng>,
    /// The user's randomness (what `getrandom` returns during a run).
    user: Rng,
}

impl Streams {
    /// The streams of `seed`.
    pub(crate) fn new(seed: u64) -> Streams {
        Streams {
            seed,
            named: BTreeMap::new(),
            user: Rng::new(seed, 2),
        }
    }

    /// Runs `f` on the stream named `label`, made on first use (the name is
    /// copied once per stream, not once per draw).
    pub(crate) fn with<R>(&mut self, label: &str, f: impl FnOnce(&mut Rng) -> R) -> R {
        if let Some(rng) = self.named.get_mut(label) {
            return f(rng);
        }
        let seed = self.seed;
        f(self
            .named
            .entry(label.into())
            .or_insert_with(|| Rng::named(seed, label)))
    }

    /// Fills `buf` from the user's stream.
    pub(crate) fn fill_user(&mut self, buf: &mut [u8]) {
        self.user.fill(buf);
    }
}
