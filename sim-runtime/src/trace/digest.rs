//! The digest of one chunk of encoded events: what the run's SHA-256
//! takes in place of the chunk's bytes.
//!
//! SHA-256 over every encoded byte cost about a tenth of a network-heavy
//! run; a chunk's 4 KiB now go through four 64-bit lanes of multiplies
//! (many times SHA-256's speed) and only their 16-byte digest, with
//! the chunk's length, goes to SHA-256. A trace hash tells runs of this
//! simulator apart, it does not stand against an adversary who crafts
//! collisions: a non-cryptographic 128-bit digest, every input word mixed
//! into the output, is enough for that (the test below checks that every
//! one-bit change, length and swap of neighbouring bytes changes it).

/// Odd constants (from the fractional digits of pi) that start and
/// separate the lanes.
const LANES: [u64; 4] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
];
/// The multipliers: large odd numbers with bits spread over the word.
const MULS: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0xd6e8_feb8_6659_fd93,
];

/// The 128-bit product of `a` and `b`, its halves folded together: every
/// input bit moves many output bits.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

/// One step of the two-lane mix: a pair of words into lanes `a` and `b`.
/// Lane A folds the pair; lane B, in another order and with another
/// multiplier, keeps what a fold of two words could cancel.
#[inline(always)]
fn pair_step(a: &mut u64, b: &mut u64, x: u64, y: u64) {
    *a = fold(*a ^ x, MULS[0] ^ y).wrapping_add(a.rotate_left(29));
    *b = fold(b.wrapping_add(y), MULS[1]).wrapping_add(x.rotate_left(17)) ^ b.rotate_left(41);
}

/// The digest of `bytes`: 16 bytes, little-endian. Blocks of 32 bytes go
/// through four independent lanes (one word each, so the CPU runs the four
/// multiply chains side by side: a payload of a full segment digests in
/// about a quarter of the time one chain took); the lanes fold into two,
/// which take the tail.
pub(crate) fn chunk_digest(bytes: &[u8]) -> [u8; 16] {
    let mut lanes = LANES;
    lanes[0] ^= bytes.len() as u64;
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, (state, mul)) in lanes.iter_mut().zip(MULS).enumerate() {
            let w = word(&block[8 * lane..8 * lane + 8]);
            *state = fold(*state ^ w, mul).wrapping_add(state.rotate_left(23));
        }
    }
    let mut a = fold(lanes[0] ^ lanes[2].rotate_left(32), MULS[2]) ^ lanes[1];
    let mut b = fold(lanes[1] ^ lanes[3].rotate_left(32), MULS[3]) ^ lanes[2];
    let mut rest = blocks.remainder();
    if rest.len() >= 16 {
        pair_step(&mut a, &mut b, word(&rest[..8]), word(&rest[8..16]));
        rest = &rest[16..];
    }
    let mut tail = [0u8; 16];
    tail[..rest.len()].copy_from_slice(rest);
    tail[15] ^= rest.len() as u8;
    pair_step(&mut a, &mut b, word(&tail[..8]), word(&tail[8..]));
    // Each lane's last state mixed once more with the other's.
    let a_final = fold(a ^ b.rotate_left(32), MULS[1]);
    let b_final = fold(b ^ a ^ lanes[3], MULS[0]);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a_final.to_le_bytes());
    out[8..].copy_from_slice(&b_final.to_le_bytes());
    out
}

/// `bytes` (at most 8) padded with zeros to a little-endian word, by
/// loads that may overlap, each byte landing where the padded copy has it.
#[inline(always)]
fn padded_word(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!(len <= 8);
    let u32_at = |at: usize| {
        u64::from(u32::from_le_bytes(
            bytes[at..at + 4].try_into().expect("4 bytes"),
        ))
    };
    match len {
        8 => word(bytes),
        4..=7 => u32_at(0) | (u32_at(len - 4) << (8 * (len - 4))),
        1..=3 => {
            let byte = |at: usize| u64::from(bytes[at]) << (8 * at);
            byte(0) | byte(len / 2) | byte(len - 1)
        }
        _ => 0,
    }
}

/// The 32-bit digest of a message's payload that network lines carry
/// (`digest=<hex>`): the chunk digest's halves folded. FNV-1a, before,
/// took a multiply per byte in a chain, 2 µs for a full segment, most of
/// the time of a run moving kilobytes.
pub fn payload_digest(data: &[u8]) -> u32 {
    if data.len() <= 16 {
        // Most messages of a chatty service are small: two independent
        // multiplies (each word's own, so no value of one silences the
        // other) and a final mix, not the chunk digest's full set.
        // The two words of the payload padded with zeros to 16 bytes,
        // read without a copy (copying into a buffer and reading it back
        // whole stalled on each message: the CPU cannot forward the
        // copy's narrow stores to the wide load).
        let (head, tail) = data.split_at(data.len().min(8));
        let (x, y) = (padded_word(head), padded_word(tail));
        let h = fold(x ^ LANES[0], MULS[0]) ^ fold(y ^ LANES[1], MULS[1]);
        let h = fold(h ^ (data.len() as u64) ^ LANES[2], MULS[2]);
        return (h ^ (h >> 32)) as u32;
    }
    let digest = chunk_digest(data);
    let word = |at: usize| u32::from_le_bytes(digest[at..at + 4].try_into().expect("4 bytes"));
    word(0) ^ word(4) ^ word(8) ^ word(12)
}

#[cfg(test)]
mod tests {
    use super::{chunk_digest, payload_digest};
    use std::collections::BTreeSet;

    #[test]
    fn a_padded_word_is_the_bytes_padded_with_zeros() {
        let bytes: Vec<u8> = (1..=8).map(|i| i * 29).collect();
        for len in 0..=8 {
            let mut padded = [0u8; 8];
            padded[..len].copy_from_slice(&bytes[..len]);
            assert_eq!(
                super::padded_word(&bytes[..len]),
                u64::from_le_bytes(padded),
                "{len} bytes"
            );
        }
    }

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

    /// Short payloads (their own path): distinct payloads (every one-bit
    /// change of every length, and zeros of every length) give distinct
    /// digests.
    #[test]
    fn short_payloads_give_different_digests() {
        let base: Vec<u8> = (1..=16u8).collect();
        let mut payloads = BTreeSet::new();
        for len in 0..=16 {
            payloads.insert(base[..len].to_vec());
            payloads.insert(vec![0u8; len]);
            for bit in 0..len * 8 {
                let mut changed = base[..len].to_vec();
                changed[bit / 8] ^= 1 << (bit % 8);
                payloads.insert(changed);
            }
        }
        let digests: BTreeSet<u32> = payloads.iter().map(|p| payload_digest(p)).collect();
        assert_eq!(digests.len(), payloads.len());
    }
}
