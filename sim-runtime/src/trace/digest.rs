//! The digest of one chunk of encoded events: what the run's SHA-256
//! takes in place of the chunk's bytes.
//!
//! SHA-256 over every encoded byte cost about a tenth of a network-heavy
//! run; a chunk's 4 KiB now go through two 64-bit lanes of multiplies
//! (about ten times SHA-256's speed) and only their 16-byte digest, with
//! the chunk's length, goes to SHA-256. A trace hash tells runs of this
//! simulator apart, it does not stand against an adversary who crafts
//! collisions: a non-cryptographic 128-bit digest, every input word mixed
//! into both lanes, is enough for that (the test below checks that every
//! one-bit change, length and swap of neighbouring bytes changes it).

/// Two odd constants (from the fractional digits of pi) that start and
/// separate the lanes.
const LANE_A: u64 = 0x243f_6a88_85a3_08d3;
const LANE_B: u64 = 0x1319_8a2e_0370_7344;
/// The multipliers: large odd numbers with bits spread over the word.
const MUL_A: u64 = 0x9e37_79b9_7f4a_7c15;
const MUL_B: u64 = 0xc2b2_ae3d_27d4_eb4f;

/// The 128-bit product of `a` and `b`, its halves folded together: every
/// input bit moves many output bits.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The digest of `bytes`: 16 bytes, lane A then lane B, little-endian.
pub(crate) fn chunk_digest(bytes: &[u8]) -> [u8; 16] {
    let mut a = LANE_A ^ bytes.len() as u64;
    let mut b = LANE_B;
    let mut blocks = bytes.chunks_exact(16);
    for block in &mut blocks {
        let (x, y) = block.split_at(8);
        let x = u64::from_le_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(y.try_into().expect("8 bytes"));
        // Lane A folds the pair; lane B, in another order and with other
        // multipliers, keeps what a fold of two words could cancel.
        a = fold(a ^ x, MUL_A ^ y).wrapping_add(a.rotate_left(29));
        b = fold(b.wrapping_add(y), MUL_B).wrapping_add(x.rotate_left(17)) ^ b.rotate_left(41);
    }
    let mut tail = [0u8; 16];
    let rest = blocks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    tail[15] ^= rest.len() as u8;
    let x = u64::from_le_bytes(tail[..8].try_into().expect("8 bytes"));
    let y = u64::from_le_bytes(tail[8..].try_into().expect("8 bytes"));
    a = fold(a ^ x, MUL_A ^ y).wrapping_add(a.rotate_left(29));
    b = fold(b.wrapping_add(y), MUL_B).wrapping_add(x.rotate_left(17)) ^ b.rotate_left(41);
    // Each lane's last state mixed once more with the other's.
    let a_final = fold(a ^ b.rotate_left(32), MUL_B);
    let b_final = fold(b ^ a, MUL_A);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a_final.to_le_bytes());
    out[8..].copy_from_slice(&b_final.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::chunk_digest;
    use std::collections::BTreeSet;

    /// Every one-bit change of a chunk, every length, and every swap of
    /// two neighbouring bytes gives a digest of its own.
    #[test]
    fn small_changes_give_different_digests() {
        let base: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        let mut seen = BTreeSet::new();
        assert!(seen.insert(chunk_digest(&base)));
        for bit in 0..base.len() * 8 {
            let mut changed = base.clone();
            changed[bit / 8] ^= 1 << (bit % 8);
            assert!(seen.insert(chunk_digest(&changed)), "bit {bit}");
        }
        for len in 0..base.len() {
            assert!(seen.insert(chunk_digest(&base[..len])), "length {len}");
        }
        for at in 0..base.len() - 1 {
            let mut swapped = base.clone();
            swapped.swap(at, at + 1);
            if swapped != base {
                assert!(seen.insert(chunk_digest(&swapped)), "swap at {at}");
            }
        }
        // Zeros of different lengths, and a zero word at any place.
        for len in 0..64 {
            assert!(
                seen.insert(chunk_digest(&vec![0u8; len + 1000])),
                "zeros {len}"
            );
        }
    }
}
