//! The seeded generators. Each run derives separate streams from its seed
//! (scheduling, user randomness), so that a test drawing more random numbers
//! does not shift the scheduler's choices.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A seeded PCG stream.
pub struct Rng {
    pcg: Pcg64Mcg,
    /// The branch epoch it last drew in (see [`branch`]).
    epoch: u32,
}

/// The branch epoch of the process's run: 0 until a branch run reaches
/// its branch point (`crate::property::branch`), one more at each point.
static EPOCH: AtomicU32 = AtomicU32::new(0);
/// The salt of the latest branch point.
static SALT: AtomicU64 = AtomicU64::new(0);

/// From now on, every stream of the run draws afresh: at its next draw,
/// each one (made before or after) rekeys from its own state and `salt`.
/// So a branch run is its seed's run up to the branch point, and another
/// after it, the same for the same salt. A run that never branches draws
/// exactly as before: one relaxed load per draw.
pub fn branch(salt: u64) {
    SALT.store(salt, Ordering::Relaxed);
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// A new run starts unbranched.
pub fn reset_branch() {
    EPOCH.store(0, Ordering::Release);
}

/// SplitMix64: spreads a seed and a stream number over 128 bits of state;
/// also a cheap, well-spread hash of a counter (the poll cost of
/// `Core::charge_work`).
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of the stream named `label` under `root`: the seed tree. A
/// child depends on its root and its own name only, so a new stream (a new
/// host, a new kind of fault) reshuffles no other stream's draws.
pub fn child_seed(root: u64, label: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(b"sim seed tree\0");
    hasher.update(root.to_le_bytes());
    hasher.update(label.as_bytes());
    let digest = hasher.finalize();
    u64::from_le_bytes(
        digest[..8]
            .try_into()
            .expect("a SHA-256 digest has 32 bytes"),
    )
}

impl Rng {
    /// The stream named `label` of the tree rooted at `root`.
    pub fn named(root: u64, label: &str) -> Rng {
        Rng::new(child_seed(root, label), 0)
    }

    /// Stream `stream` of `seed`.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut state = seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        bytes[8..].copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        Rng {
            pcg: Pcg64Mcg::from_seed(bytes),
            epoch: 0,
        }
    }

    /// The generator, rekeyed first if the run branched since its last
    /// draw.
    #[inline]
    fn pcg(&mut self) -> &mut Pcg64Mcg {
        let epoch = EPOCH.load(Ordering::Relaxed);
        if epoch != self.epoch {
            self.rekey(epoch);
        }
        &mut self.pcg
    }

    #[cold]
    fn rekey(&mut self, epoch: u32) {
        let mut state = self.pcg.next_u64() ^ SALT.load(Ordering::Relaxed);
        let tail = self.pcg.next_u64() ^ u64::from(epoch);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        bytes[8..].copy_from_slice(&(splitmix64(&mut state) ^ tail).to_le_bytes());
        self.pcg = Pcg64Mcg::from_seed(bytes);
        self.epoch = epoch;
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.pcg().next_u64()
    }

    /// A draw in `0..n` (multiply-shift: no division, a bias below 2^-64·n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0, "a draw needs a non-empty range");
        scale(self.pcg().next_u64(), n)
    }

    /// What the next two draws of [`Rng::below`] will be, for ranges `n`
    /// and then `n - 1`, without drawing them: the stream is not moved (a
    /// copy of its 128-bit state draws). The scheduler guesses its next
    /// picks with it, to fetch their memory early.
    #[inline]
    pub fn peek_below_two(&self, n: u64) -> (u64, u64) {
        debug_assert!(n > 1, "two draws need a range of two or more");
        // A guess only (the scheduler prefetches with it): past a branch
        // point it may guess from the old key until the next draw.
        let mut ahead = self.pcg.clone();
        let first = scale(ahead.next_u64(), n);
        (first, scale(ahead.next_u64(), n - 1))
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        self.pcg().fill_bytes(buf);
    }
}

/// A uniform 64-bit draw scaled to `0..n`.
#[inline]
fn scale(bits: u64, n: u64) -> u64 {
    ((bits as u128 * n as u128) >> 64) as u64
}

/// A random u64 from the operating system, never from the simulation (a
/// fresh seed is drawn this way).
pub fn os_random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    let mut filled = 0;
    // Bounded: getrandom returns at most the requested bytes per call and
    // only fails on EINTR-like conditions; give up after a few tries.
    for _ in 0..16 {
        // SAFETY: the buffer is valid for the length given.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getrandom,
                bytes[filled..].as_mut_ptr(),
                bytes.len() - filled,
                0,
            )
        };
        if n > 0 {
            filled += n as usize;
            if filled == bytes.len() {
                break;
            }
        }
    }
    if filled < bytes.len() {
        // No OS randomness at all: fall back to the real clock's
        // nanoseconds (a raw call: libc's clock may be the simulation's).
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec to write.
        unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_REALTIME, &mut ts) };
        let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        return ns ^ u64::from(std::process::id());
    }
    u64::from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_seed_depends_on_its_root_and_its_name_only() {
        assert_eq!(child_seed(7, "link/a->b"), child_seed(7, "link/a->b"));
        assert_ne!(child_seed(7, "link/a->b"), child_seed(7, "link/b->a"));
        assert_ne!(child_seed(7, "link/a->b"), child_seed(8, "link/a->b"));
        // Pinned: a stream's draws are part of every recorded trace.
        assert_eq!(child_seed(0x2a, "test"), 0xb7e0_c1b3_a82d_6f8b);
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 2);
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(8, 1);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn a_peek_sees_the_next_two_draws_and_moves_nothing() {
        let mut r = Rng::new(7, 3);
        for n in [2u64, 3, 10, 1000, 100_000] {
            let (first, second) = r.peek_below_two(n);
            assert_eq!(r.peek_below_two(n), (first, second), "a peek draws nothing");
            assert_eq!(r.below(n), first);
            assert_eq!(r.below(n - 1), second);
        }
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1, 1);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = r.below(5) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}

#[cfg(test)]
mod branch_tests {
    use super::*;

    /// A stream rekeyed at a branch point draws as evenly as before.
    #[test]
    fn a_rekeyed_stream_draws_evenly() {
        let mut sums = [0u64; 2];
        for (i, salt) in [0u64, 0x5ec6_6926_4972_0593].into_iter().enumerate() {
            reset_branch();
            let mut rng = Rng::new(7, 3);
            if salt != 0 {
                branch(salt);
            }
            sums[i] = (0..20_000).map(|_| rng.below(20)).sum();
        }
        reset_branch();
        for sum in sums {
            let mean = sum as f64 / 20_000.0;
            assert!((9.3..9.7).contains(&mean), "{sums:?}");
        }
    }
}
