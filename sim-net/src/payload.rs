//! A datagram's or a TCP segment's bytes, kept in place when they are few.
//!
//! Most datagrams a simulated service sends are small (heartbeats, acks,
//! DNS questions), and so are many segments (requests and replies of a few
//! bytes). Holding them in a heap buffer costs an allocation at the
//! send and a free at the receive, and the receive's copy reads a line that
//! went cold while the datagram was in flight (with 10,000 hosts, tens of
//! thousands of datagrams are in flight at once). A payload of up to
//! [`INLINE_MAX`] bytes lives inside the record that carries it instead,
//! in the space a heap pointer would take.

use std::ops::Deref;

/// The most bytes a payload keeps in place: what fits beside its length and
/// tag in the 24 bytes a `Vec<u8>` takes.
pub(crate) const INLINE_MAX: usize = 22;

/// The bytes of one datagram or data segment; derefs to `[u8]`.
#[derive(Clone)]
pub(crate) enum Payload {
    /// `bytes[..len]`.
    Inline {
        len: u8,
        bytes: [u8; INLINE_MAX],
    },
    Heap(Box<[u8]>),
}

impl Default for Payload {
    /// No bytes.
    fn default() -> Payload {
        Payload::Inline {
            len: 0,
            bytes: [0; INLINE_MAX],
        }
    }
}

impl From<&[u8]> for Payload {
    #[inline]
    fn from(data: &[u8]) -> Payload {
        if data.len() <= INLINE_MAX {
            let mut bytes = [0u8; INLINE_MAX];
            bytes[..data.len()].copy_from_slice(data);
            Payload::Inline {
                len: data.len() as u8,
                bytes,
            }
        } else {
            Payload::Heap(data.into())
        }
    }
}

impl Deref for Payload {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Payload::Inline { len, bytes } => &bytes[..*len as usize],
            Payload::Heap(bytes) => bytes,
        }
    }
}

// A payload must stay as small as the `Vec<u8>` it replaced: it sits in
// every queued and in-flight datagram and segment.
const _: () = assert!(std::mem::size_of::<Payload>() == 24);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_reads_back_as_written() {
        let data: Vec<u8> = (0..=255).collect();
        for len in [0, 1, 8, INLINE_MAX - 1, INLINE_MAX, INLINE_MAX + 1, 256] {
            let payload = Payload::from(&data[..len]);
            assert_eq!(&*payload, &data[..len]);
            assert_eq!(&*payload.clone(), &data[..len]);
            assert_eq!(
                matches!(payload, Payload::Inline { .. }),
                len <= INLINE_MAX,
                "length {len}"
            );
        }
    }
}
