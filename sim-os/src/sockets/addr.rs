//! C socket addresses to and from `std::net::SocketAddr`.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// The path of the Unix address `addr` points at (`len` bytes), as bytes
/// (a leading NUL for an abstract name, no terminating NUL); `None` for
/// another family.
///
/// # Safety
/// `addr` points at `len` readable bytes, or is null.
pub(super) unsafe fn read_unix(
    addr: *const libc::sockaddr,
    len: libc::socklen_t,
) -> Option<Vec<u8>> {
    let family_bytes = std::mem::size_of::<libc::sa_family_t>();
    if addr.is_null() || (len as usize) < family_bytes {
        return None;
    }
    // SAFETY: at least the family is readable (checked above).
    if i32::from(unsafe { (*addr).sa_family }) != libc::AF_UNIX {
        return None;
    }
    // SAFETY: the caller's `len` bytes, the path after the family.
    let path = unsafe {
        std::slice::from_raw_parts(
            addr.cast::<u8>().add(family_bytes),
            len as usize - family_bytes,
        )
    };
    // A path name ends at its NUL; an abstract one (leading NUL) is all of
    // its bytes.
    let path = match path.first() {
        Some(0) => path,
        _ => path.split(|&b| b == 0).next().unwrap_or_default(),
    };
    Some(path.to_vec())
}

/// The address `addr` points at (`len` bytes); `None` for another family
/// or a short buffer.
///
/// # Safety
/// `addr` points at `len` readable bytes, or is null.
pub(super) unsafe fn read(addr: *const libc::sockaddr, len: libc::socklen_t) -> Option<SocketAddr> {
    if addr.is_null() || (len as usize) < std::mem::size_of::<libc::sa_family_t>() {
        return None;
    }
    // SAFETY: at least the family is readable (checked above).
    let family = i32::from(unsafe { (*addr).sa_family });
    match family {
        libc::AF_INET if len as usize >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: a sockaddr_in's worth of bytes (checked above);
            // read unaligned, as the caller's buffer may be any bytes.
            let a = unsafe { std::ptr::read_unaligned(addr.cast::<libc::sockaddr_in>()) };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 if len as usize >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, for a sockaddr_in6.
            let a = unsafe { std::ptr::read_unaligned(addr.cast::<libc::sockaddr_in6>()) };
            let ip = Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Writes `value` into the caller's `addr` of `*len` bytes (truncated as
/// the kernel truncates) and sets `*len` to its full size. Null pointers
/// are skipped (`accept` with no address wanted).
///
/// # Safety
/// `addr` points at `*len` writable bytes; `len` is null or valid.
pub(super) unsafe fn write(
    value: SocketAddr,
    addr: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
) {
    if addr.is_null() || len.is_null() {
        return;
    }
    // SAFETY: a plain C struct, valid when zeroed.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let size = match value {
        SocketAddr::V4(v4) => {
            // SAFETY: sockaddr_storage is large and aligned enough for any address.
            let a = unsafe {
                &mut *(&mut storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>()
            };
            a.sin_family = libc::AF_INET as libc::sa_family_t;
            a.sin_port = v4.port().to_be();
            a.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(v6) => {
            // SAFETY: as above.
            let a = unsafe {
                &mut *(&mut storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            a.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            a.sin6_port = v6.port().to_be();
            a.sin6_addr.s6_addr = v6.ip().octets();
            a.sin6_flowinfo = v6.flowinfo();
            a.sin6_scope_id = v6.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    // SAFETY: the caller's contract: `*len` bytes are writable at `addr`.
    unsafe {
        let room = (*len as usize).min(size);
        std::ptr::copy_nonoverlapping(
            (&storage as *const libc::sockaddr_storage).cast::<u8>(),
            addr.cast::<u8>(),
            room,
        );
        *len = size as libc::socklen_t;
    }
}

/// Writes a Unix address for `path` (empty: unnamed, the family alone; a
/// leading NUL: an abstract name, without a terminating NUL; otherwise a
/// path with one) into the caller's `addr` of `*len` bytes, truncated as
/// the kernel truncates.
///
/// # Safety
/// As [`write`].
pub(super) unsafe fn write_unix(path: &[u8], addr: *mut libc::sockaddr, len: *mut libc::socklen_t) {
    if addr.is_null() || len.is_null() {
        return;
    }
    let mut bytes = (libc::AF_UNIX as libc::sa_family_t).to_ne_bytes().to_vec();
    bytes.extend_from_slice(path);
    if path.first().is_some_and(|&b| b != 0) {
        bytes.push(0);
    }
    // SAFETY: the caller's contract: `*len` bytes are writable at `addr`.
    unsafe {
        let room = (*len as usize).min(bytes.len());
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr.cast::<u8>(), room);
        *len = bytes.len() as libc::socklen_t;
    }
}
