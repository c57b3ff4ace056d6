//! `setsockopt` and `getsockopt` on a simulated socket: the options the
//! simulated network acts on (`TCP_NODELAY`, `IP_TTL`, `SO_LINGER`, the
//! timeouts), the ones it reports (`SO_ERROR`, `SO_TYPE`,
//! `SO_ACCEPTCONN`), and the rest kept as set and read back.

use super::{errno_of, lock, on_net, Phase, Shared};
use std::time::Duration;

/// `SO_RCVBUF`'s value before any is set (Linux's default).
const RCVBUF_DEFAULT_BYTES: i32 = 131_072;
/// `SO_SNDBUF`'s value before any is set (Linux's default).
const SNDBUF_DEFAULT_BYTES: i32 = 16_384;

fn int_of(value: &[u8]) -> Result<i32, i32> {
    let bytes: [u8; 4] = value
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or(libc::EINVAL)?;
    Ok(i32::from_ne_bytes(bytes))
}

fn int(value: i32) -> Vec<u8> {
    value.to_ne_bytes().to_vec()
}

fn duration_of(value: &[u8]) -> Result<Option<Duration>, i32> {
    if value.len() < std::mem::size_of::<libc::timeval>() {
        return Err(libc::EINVAL);
    }
    // SAFETY: a timeval's worth of bytes (checked), read unaligned.
    let tv = unsafe { std::ptr::read_unaligned(value.as_ptr().cast::<libc::timeval>()) };
    if tv.tv_sec < 0 || !(0..1_000_000).contains(&tv.tv_usec) {
        return Err(libc::EDOM);
    }
    let d = Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
    Ok((!d.is_zero()).then_some(d))
}

fn timeval(d: Option<Duration>) -> Vec<u8> {
    let d = d.unwrap_or_default();
    let tv = libc::timeval {
        tv_sec: d.as_secs() as libc::time_t,
        tv_usec: libc::suseconds_t::from(d.subsec_micros() as i32),
    };
    // SAFETY: a plain C struct viewed as its bytes.
    unsafe {
        std::slice::from_raw_parts(
            (&tv as *const libc::timeval).cast::<u8>(),
            std::mem::size_of::<libc::timeval>(),
        )
    }
    .to_vec()
}

fn linger_of(value: &[u8]) -> Result<Option<Duration>, i32> {
    if value.len() < std::mem::size_of::<libc::linger>() {
        return Err(libc::EINVAL);
    }
    // SAFETY: a linger's worth of bytes (checked), read unaligned.
    let l = unsafe { std::ptr::read_unaligned(value.as_ptr().cast::<libc::linger>()) };
    Ok((l.l_onoff != 0).then(|| Duration::from_secs(l.l_linger.max(0) as u64)))
}

fn linger(d: Option<Duration>) -> Vec<u8> {
    let l = libc::linger {
        l_onoff: i32::from(d.is_some()),
        l_linger: d.map_or(0, |d| d.as_secs().min(i32::MAX as u64) as i32),
    };
    // SAFETY: a plain C struct viewed as its bytes.
    unsafe {
        std::slice::from_raw_parts(
            (&l as *const libc::linger).cast::<u8>(),
            std::mem::size_of::<libc::linger>(),
        )
    }
    .to_vec()
}

/// `setsockopt`.
pub(super) fn set(sock: &Shared, level: i32, name: i32, value: &[u8]) -> Result<(), i32> {
    if level == libc::SOL_UDP && (name == libc::UDP_SEGMENT || name == libc::UDP_GRO) {
        // No segmentation offload in the simulated network: a sender that
        // probes for it (quinn-udp) sends one datagram per call.
        return Err(libc::ENOPROTOOPT);
    }
    let (core, phase) = {
        let s = lock(sock);
        (s.core, s.phase)
    };
    let conn = match phase {
        Phase::Connected(id) | Phase::Connecting(id) => Some(id),
        _ => None,
    };
    if let Phase::Datagram(id) = phase {
        match (level, name) {
            (libc::IPPROTO_IP, libc::IP_TTL) => {
                let ttl = u32::try_from(int_of(value)?).map_err(|_| libc::EINVAL)?;
                return on_net(core, |net| net.udp_set_ttl(id, ttl))?.map_err(|e| errno_of(&e));
            }
            (libc::SOL_SOCKET, libc::SO_BROADCAST) => {
                let on = int_of(value)? != 0;
                return on_net(core, |net| net.udp_set_broadcast(id, on))?
                    .map_err(|e| errno_of(&e));
            }
            _ => {}
        }
    }
    match (level, name) {
        (libc::SOL_SOCKET, libc::SO_RCVTIMEO) => lock(sock).read_timeout = duration_of(value)?,
        (libc::SOL_SOCKET, libc::SO_SNDTIMEO) => lock(sock).write_timeout = duration_of(value)?,
        (libc::SOL_SOCKET, libc::SO_RCVBUF | libc::SO_SNDBUF) => {
            // Linux keeps twice the value asked for (room for its
            // bookkeeping), at least its minimum.
            let doubled = int_of(value)?.clamp(0, i32::MAX / 2) * 2;
            let least = if name == libc::SO_RCVBUF { 2304 } else { 4608 };
            lock(sock)
                .kept
                .insert((level, name), int(doubled.max(least)));
        }
        (libc::IPPROTO_TCP, libc::TCP_NODELAY) if conn.is_some() => {
            let on = int_of(value)? != 0;
            let id = conn.expect("checked");
            on_net(core, |net| net.tcp_set_nodelay(id, on))?.map_err(|e| errno_of(&e))?;
        }
        (libc::IPPROTO_IP, libc::IP_TTL) if conn.is_some() => {
            let ttl = u32::try_from(int_of(value)?).map_err(|_| libc::EINVAL)?;
            let id = conn.expect("checked");
            on_net(core, |net| net.tcp_set_ttl(id, ttl))?.map_err(|e| errno_of(&e))?;
        }
        (libc::SOL_SOCKET, libc::SO_LINGER) if conn.is_some() => {
            let l = linger_of(value)?;
            let id = conn.expect("checked");
            on_net(core, |net| net.tcp_set_linger(id, l))?.map_err(|e| errno_of(&e))?;
        }
        _ => {
            lock(sock).kept.insert((level, name), value.to_vec());
        }
    }
    Ok(())
}

/// `getsockopt`.
pub(super) fn get(sock: &Shared, level: i32, name: i32) -> Result<Vec<u8>, i32> {
    let (core, phase) = {
        let s = lock(sock);
        (s.core, s.phase)
    };
    let conn = match phase {
        Phase::Connected(id) | Phase::Connecting(id) => Some(id),
        _ => None,
    };
    Ok(match (level, name) {
        (libc::SOL_SOCKET, libc::SO_ERROR) => {
            let mut s = lock(sock);
            match s.phase {
                // Reported once, as the kernel clears it.
                Phase::Failed(e) => {
                    s.phase = Phase::Failed(0);
                    int(e)
                }
                _ => int(0),
            }
        }
        (libc::SOL_SOCKET, libc::SO_TYPE) => int(if lock(sock).udp {
            libc::SOCK_DGRAM
        } else {
            libc::SOCK_STREAM
        }),
        (libc::SOL_SOCKET, libc::SO_DOMAIN) => int(if lock(sock).ipv6 {
            libc::AF_INET6
        } else {
            libc::AF_INET
        }),
        (libc::SOL_SOCKET, libc::SO_PROTOCOL) => int(if lock(sock).udp {
            libc::IPPROTO_UDP
        } else {
            libc::IPPROTO_TCP
        }),
        (libc::IPPROTO_IP, libc::IP_TTL) if matches!(phase, Phase::Datagram(_)) => {
            let Phase::Datagram(id) = phase else {
                unreachable!("matched")
            };
            int(on_net(core, |net| net.udp_ttl(id))?.map_err(|e| errno_of(&e))? as i32)
        }
        (libc::SOL_SOCKET, libc::SO_BROADCAST) if matches!(phase, Phase::Datagram(_)) => {
            let Phase::Datagram(id) = phase else {
                unreachable!("matched")
            };
            int(i32::from(
                on_net(core, |net| net.udp_broadcast(id))?.map_err(|e| errno_of(&e))?,
            ))
        }
        (libc::SOL_SOCKET, libc::SO_ACCEPTCONN) => {
            int(i32::from(matches!(phase, Phase::Listening(_))))
        }
        (libc::SOL_SOCKET, libc::SO_RCVTIMEO) => timeval(lock(sock).read_timeout),
        (libc::SOL_SOCKET, libc::SO_SNDTIMEO) => timeval(lock(sock).write_timeout),
        (libc::IPPROTO_TCP, libc::TCP_NODELAY) if conn.is_some() => {
            let id = conn.expect("checked");
            let on = on_net(core, |net| net.tcp_nodelay(id))?.map_err(|e| errno_of(&e))?;
            int(i32::from(on))
        }
        (libc::IPPROTO_IP, libc::IP_TTL) if conn.is_some() => {
            let id = conn.expect("checked");
            let ttl = on_net(core, |net| net.tcp_ttl(id))?.map_err(|e| errno_of(&e))?;
            int(ttl as i32)
        }
        (libc::SOL_SOCKET, libc::SO_LINGER) if conn.is_some() => {
            let id = conn.expect("checked");
            linger(on_net(core, |net| net.tcp_linger(id))?.map_err(|e| errno_of(&e))?)
        }
        _ => match lock(sock).kept.get(&(level, name)) {
            Some(bytes) => bytes.clone(),
            None => default(level, name),
        },
    })
}

/// An option's value before any is set.
fn default(level: i32, name: i32) -> Vec<u8> {
    match (level, name) {
        (libc::SOL_SOCKET, libc::SO_RCVBUF) => int(RCVBUF_DEFAULT_BYTES),
        (libc::SOL_SOCKET, libc::SO_SNDBUF) => int(SNDBUF_DEFAULT_BYTES),
        (libc::IPPROTO_IP, libc::IP_TTL) => int(64),
        (libc::SOL_SOCKET, libc::SO_LINGER) => linger(None),
        _ => int(0),
    }
}
