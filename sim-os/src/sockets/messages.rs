//! The message calls on simulated sockets: `sendmsg`, `recvmsg`,
//! `sendmmsg` and `recvmmsg` (quinn-udp sends and receives with them). A
//! message's buffers are gathered or scattered around the socket's `send`
//! and `recv`; its address is the datagram's destination or source. Of
//! ancillary data, a receive gives the destination address
//! (`IP_PKTINFO`, `IPV6_PKTINFO`) when the socket asked for it; ECN marks
//! and timestamps are not simulated, and a send that asks for
//! segmentation offload (`UDP_SEGMENT`, which `setsockopt` refuses) is
//! refused.

use super::calls::{fail, to_isize};
use super::{addr, sim_fd, SocketHooks};
use crate::symbols::real;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The bytes of `msg`'s buffers, in order.
///
/// # Safety
/// `msg`'s `msg_iov` points at `msg_iovlen` valid buffers.
unsafe fn gather(msg: &libc::msghdr) -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in 0..msg.msg_iovlen {
        // SAFETY: the caller's contract.
        let iov = unsafe { &*msg.msg_iov.add(i) };
        // SAFETY: each buffer is `iov_len` readable bytes.
        bytes.extend_from_slice(unsafe {
            std::slice::from_raw_parts(iov.iov_base.cast::<u8>(), iov.iov_len)
        });
    }
    bytes
}

/// Copies `data` into `msg`'s buffers, in order.
///
/// # Safety
/// As [`gather`], with writable buffers.
unsafe fn scatter(msg: &libc::msghdr, mut data: &[u8]) {
    for i in 0..msg.msg_iovlen {
        if data.is_empty() {
            return;
        }
        // SAFETY: the caller's contract.
        let iov = unsafe { &*msg.msg_iov.add(i) };
        let n = iov.iov_len.min(data.len());
        // SAFETY: each buffer is `iov_len` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), iov.iov_base.cast::<u8>(), n) };
        data = &data[n..];
    }
}

/// The room of `msg`'s buffers.
///
/// # Safety
/// As [`gather`].
unsafe fn room(msg: &libc::msghdr) -> usize {
    // SAFETY: the caller's contract.
    (0..msg.msg_iovlen)
        .map(|i| unsafe { (*msg.msg_iov.add(i)).iov_len })
        .sum()
}

/// Whether `msg`'s ancillary data asks for segmentation offload.
///
/// # Safety
/// `msg`'s control buffer is `msg_controllen` readable bytes.
unsafe fn asks_segmentation(msg: &libc::msghdr) -> bool {
    if msg.msg_control.is_null() || msg.msg_controllen == 0 {
        return false;
    }
    // SAFETY: libc's walk over the caller's control buffer; bounded by
    // its length (`CMSG_NXTHDR` gives null at the end).
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_UDP && (*cmsg).cmsg_type == libc::UDP_SEGMENT {
                return true;
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    false
}

/// One `sendmsg` on simulated socket `fd`.
///
/// # Safety
/// `msg` is a valid message (libc's contract).
unsafe fn send_one(
    h: &dyn SocketHooks,
    fd: i32,
    msg: &libc::msghdr,
    flags: i32,
) -> Result<usize, i32> {
    // SAFETY: the caller's message.
    if unsafe { asks_segmentation(msg) } {
        return Err(libc::EOPNOTSUPP);
    }
    let to = if msg.msg_name.is_null() || msg.msg_namelen == 0 {
        None
    } else {
        // SAFETY: the caller's address of `msg_namelen` bytes.
        Some(
            unsafe { addr::read(msg.msg_name.cast(), msg.msg_namelen) }
                .ok_or(libc::EAFNOSUPPORT)?,
        )
    };
    // SAFETY: the caller's message.
    let bytes = unsafe { gather(msg) };
    h.send(fd, &bytes, flags, to)
}

/// One `recvmsg` on simulated socket `fd`: no ancillary data.
///
/// # Safety
/// `msg` is a valid message with writable buffers (libc's contract).
unsafe fn recv_one(
    h: &dyn SocketHooks,
    fd: i32,
    msg: &mut libc::msghdr,
    flags: i32,
) -> Result<usize, i32> {
    // SAFETY: the caller's message.
    let mut buf = vec![0u8; unsafe { room(msg) }];
    let (n, from) = h.recv(fd, &mut buf, flags)?;
    // SAFETY: the caller's message.
    unsafe { scatter(msg, &buf[..n]) };
    let from = from.or_else(|| h.peer_addr(fd).ok());
    match from {
        // SAFETY: the caller's address buffer of `msg_namelen` bytes.
        Some(from) if !msg.msg_name.is_null() => unsafe {
            addr::write(from, msg.msg_name.cast(), &mut msg.msg_namelen)
        },
        _ => msg.msg_namelen = 0,
    }
    // SAFETY: the caller's message.
    msg.msg_controllen = unsafe { write_pktinfo(h, fd, msg, from) };
    msg.msg_flags = 0;
    Ok(n)
}

/// Whether option `level`/`name` of `fd` is set to a nonzero integer.
fn flag(h: &dyn SocketHooks, fd: i32, level: i32, name: i32) -> bool {
    h.option(fd, level, name)
        .ok()
        .and_then(|v| {
            v.get(..4)
                .and_then(|b| b.try_into().ok())
                .map(i32::from_ne_bytes)
        })
        .is_some_and(|v| v != 0)
}

/// The address a datagram from `from` came to on `fd`: the socket's own,
/// or, bound to the unspecified address, loopback for a datagram from
/// loopback (in the socket's family).
fn destination(h: &dyn SocketHooks, fd: i32, from: Option<SocketAddr>) -> Option<IpAddr> {
    let local = h.local_addr(fd).ok()?.ip();
    if !local.is_unspecified() {
        return Some(local);
    }
    let from_loopback = from.is_some_and(|f| match f.ip() {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
        IpAddr::V4(v4) => v4.is_loopback(),
    });
    Some(match (local, from_loopback) {
        (IpAddr::V4(_), true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        (IpAddr::V6(_), true) if from.is_some_and(|f| f.is_ipv4()) => {
            IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped())
        }
        (IpAddr::V6(_), true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        (other, false) => other,
    })
}

/// Writes the destination address of the datagram just received (from
/// `from`) into `msg`'s control buffer when the socket asked for it
/// (`IP_PKTINFO`, `IPV6_RECVPKTINFO`); returns the control bytes written.
///
/// # Safety
/// `msg`'s control buffer is `msg_controllen` writable bytes.
unsafe fn write_pktinfo(
    h: &dyn SocketHooks,
    fd: i32,
    msg: &mut libc::msghdr,
    from: Option<SocketAddr>,
) -> usize {
    let Some(dst) = destination(h, fd, from) else {
        return 0;
    };
    let (level, kind, data): (i32, i32, Vec<u8>) = match dst {
        IpAddr::V4(v4) if flag(h, fd, libc::IPPROTO_IP, libc::IP_PKTINFO) => {
            // SAFETY: a plain C struct, valid when zeroed.
            let mut info: libc::in_pktinfo = unsafe { std::mem::zeroed() };
            info.ipi_ifindex = 1;
            info.ipi_spec_dst.s_addr = u32::from(v4).to_be();
            info.ipi_addr.s_addr = u32::from(v4).to_be();
            (libc::IPPROTO_IP, libc::IP_PKTINFO, bytes_of(&info))
        }
        IpAddr::V6(v6) if flag(h, fd, libc::IPPROTO_IPV6, libc::IPV6_RECVPKTINFO) => {
            // SAFETY: a plain C struct, valid when zeroed.
            let mut info: libc::in6_pktinfo = unsafe { std::mem::zeroed() };
            info.ipi6_ifindex = 1;
            info.ipi6_addr.s6_addr = v6.octets();
            (libc::IPPROTO_IPV6, libc::IPV6_PKTINFO, bytes_of(&info))
        }
        _ => return 0,
    };
    // SAFETY: the sizes libc computes for a payload of `data.len()` bytes.
    let space = unsafe { libc::CMSG_SPACE(data.len() as u32) } as usize;
    if msg.msg_control.is_null() || msg.msg_controllen < space {
        return 0;
    }
    // SAFETY: the control buffer holds `space` bytes (checked), so the
    // first header and its data fit.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(msg);
        (*cmsg).cmsg_level = level;
        (*cmsg).cmsg_type = kind;
        (*cmsg).cmsg_len = libc::CMSG_LEN(data.len() as u32) as usize;
        std::ptr::copy_nonoverlapping(data.as_ptr(), libc::CMSG_DATA(cmsg), data.len());
    }
    space
}

/// A plain C struct's bytes.
fn bytes_of<T: Copy>(value: &T) -> Vec<u8> {
    // SAFETY: a `Copy` C struct viewed as its bytes.
    unsafe {
        std::slice::from_raw_parts((value as *const T).cast::<u8>(), std::mem::size_of::<T>())
    }
    .to_vec()
}

/// `sendmsg`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn sendmsg(fd: i32, msg: *const libc::msghdr, flags: i32) -> isize {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's message.
        return to_isize(unsafe { send_one(h, fd, &*msg, flags) });
    }
    real!(
        c"sendmsg",
        fn(fd: i32, msg: *const libc::msghdr, flags: i32) -> isize
    )
}

/// `recvmsg`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn recvmsg(fd: i32, msg: *mut libc::msghdr, flags: i32) -> isize {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's message.
        return to_isize(unsafe { recv_one(h, fd, &mut *msg, flags) });
    }
    real!(
        c"recvmsg",
        fn(fd: i32, msg: *mut libc::msghdr, flags: i32) -> isize
    )
}

/// `sendmmsg`: each message in turn, until one fails (then the count sent
/// so far, or the error for the first).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn sendmmsg(
    fd: i32,
    msgs: *mut libc::mmsghdr,
    count: u32,
    flags: i32,
) -> i32 {
    if let Some(h) = sim_fd(fd) {
        for i in 0..count as usize {
            // SAFETY: the caller's `count` messages.
            let m = unsafe { &mut *msgs.add(i) };
            // SAFETY: as above.
            match unsafe { send_one(h, fd, &m.msg_hdr, flags) } {
                Ok(n) => m.msg_len = n as u32,
                Err(e) if i == 0 => return fail(e),
                Err(_) => return i as i32,
            }
        }
        return count as i32;
    }
    real!(
        c"sendmmsg",
        fn(fd: i32, msgs: *mut libc::mmsghdr, count: u32, flags: i32) -> i32
    )
}

/// `recvmmsg`: the first message as `flags` ask (waiting in virtual time
/// on a blocking socket), then those ready now. The timeout is not
/// simulated: a blocking call returns after its first message.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn recvmmsg(
    fd: i32,
    msgs: *mut libc::mmsghdr,
    count: u32,
    flags: i32,
    timeout: *mut libc::timespec,
) -> i32 {
    if let Some(h) = sim_fd(fd) {
        let first_flags = flags & !libc::MSG_WAITFORONE;
        for i in 0..count as usize {
            let flags = if i == 0 {
                first_flags
            } else {
                first_flags | libc::MSG_DONTWAIT
            };
            // SAFETY: the caller's `count` messages.
            let m = unsafe { &mut *msgs.add(i) };
            // SAFETY: as above.
            match unsafe { recv_one(h, fd, &mut m.msg_hdr, flags) } {
                Ok(n) => m.msg_len = n as u32,
                Err(e) if i == 0 => return fail(e),
                Err(_) => return i as i32,
            }
        }
        return count as i32;
    }
    real!(
        c"recvmmsg",
        fn(
            fd: i32,
            msgs: *mut libc::mmsghdr,
            count: u32,
            flags: i32,
            timeout: *mut libc::timespec,
        ) -> i32
    )
}
