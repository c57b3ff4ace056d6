//! Names: `getaddrinfo` and `freeaddrinfo` answer with the simulation's hosts
//! during a run.

use super::RESOLVER;
use crate::symbols::libc_fn;
use std::collections::BTreeSet;
use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Mutex;

/// The lists this module allocated, so `freeaddrinfo` frees them itself
/// and hands everything else to libc.
static OURS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// One `addrinfo` and its address in one allocation.
#[repr(C)]
struct Node {
    info: libc::addrinfo,
    addr: libc::sockaddr_in6,
}

/// The `addrinfo` list for `ips` and `port`, filtered by `hints` as
/// `getaddrinfo` filters; freed by our `freeaddrinfo`.
///
/// # Safety
/// Nothing beyond the call itself: the list is allocated here (`unsafe`
/// for the raw allocation and its links).
unsafe fn build(ips: &[IpAddr], port: u16, hints: Option<&libc::addrinfo>) -> *mut libc::addrinfo {
    let family = hints.map_or(libc::AF_UNSPEC, |h| h.ai_family);
    let socktypes: Vec<libc::c_int> = match hints.map_or(0, |h| h.ai_socktype) {
        0 => vec![libc::SOCK_STREAM, libc::SOCK_DGRAM],
        t => vec![t],
    };
    let mut head: *mut libc::addrinfo = std::ptr::null_mut();
    let mut tail: *mut *mut libc::addrinfo = &mut head;
    for ip in ips {
        let ip_family = if ip.is_ipv4() {
            libc::AF_INET
        } else {
            libc::AF_INET6
        };
        if family != libc::AF_UNSPEC && family != ip_family {
            continue;
        }
        for socktype in &socktypes {
            let node = libc::calloc(1, std::mem::size_of::<Node>()) as *mut Node;
            if node.is_null() {
                return head;
            }
            let (addr_len, proto) = match ip {
                IpAddr::V4(v4) => {
                    let sin =
                        &mut *(std::ptr::addr_of_mut!((*node).addr) as *mut libc::sockaddr_in);
                    sin.sin_family = libc::AF_INET as libc::sa_family_t;
                    sin.sin_port = port.to_be();
                    sin.sin_addr.s_addr = u32::from_ne_bytes(v4.octets());
                    (std::mem::size_of::<libc::sockaddr_in>(), *socktype)
                }
                IpAddr::V6(v6) => {
                    let sin6 = &mut (*node).addr;
                    sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                    sin6.sin6_port = port.to_be();
                    sin6.sin6_addr.s6_addr = v6.octets();
                    (std::mem::size_of::<libc::sockaddr_in6>(), *socktype)
                }
            };
            let info = &mut (*node).info;
            info.ai_family = ip_family;
            info.ai_socktype = proto;
            info.ai_protocol = if proto == libc::SOCK_DGRAM {
                libc::IPPROTO_UDP
            } else {
                libc::IPPROTO_TCP
            };
            info.ai_addrlen = addr_len as libc::socklen_t;
            info.ai_addr = std::ptr::addr_of_mut!((*node).addr) as *mut libc::sockaddr;
            *tail = node as *mut libc::addrinfo;
            tail = &mut info.ai_next;
        }
    }
    head
}

/// libc's `getaddrinfo`: during a run, names are the simulation's hosts
/// (never DNS); outside a run, libc's own.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn getaddrinfo(
    node: *const libc::c_char,
    service: *const libc::c_char,
    hints: *const libc::addrinfo,
    res: *mut *mut libc::addrinfo,
) -> libc::c_int {
    let in_run = sim_runtime::context::with_simulation(|_| ()).is_some();
    let resolver = RESOLVER.get().copied();
    if in_run {
        if let Some(resolver) = resolver {
            let hints_ref = hints.as_ref();
            let port = if service.is_null() {
                0
            } else {
                match CStr::from_ptr(service)
                    .to_str()
                    .ok()
                    .and_then(|s| s.parse::<u16>().ok())
                {
                    Some(port) => port,
                    // Named services would need /etc/services: outside
                    // the simulation.
                    None => return libc::EAI_SERVICE,
                }
            };
            let ips: Vec<IpAddr> = if node.is_null() {
                let passive = hints_ref.is_some_and(|h| h.ai_flags & libc::AI_PASSIVE != 0);
                if passive {
                    vec![
                        IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                        IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                    ]
                } else {
                    vec![
                        IpAddr::V4(Ipv4Addr::LOCALHOST),
                        IpAddr::V6(Ipv6Addr::LOCALHOST),
                    ]
                }
            } else {
                let Ok(name) = CStr::from_ptr(node).to_str() else {
                    return libc::EAI_NONAME;
                };
                match resolver(name) {
                    Some(Ok(ips)) => ips,
                    Some(Err(_)) => return libc::EAI_NONAME,
                    None => return real_getaddrinfo(node, service, hints, res),
                }
            };
            let list = build(&ips, port, hints_ref);
            if list.is_null() {
                return libc::EAI_NONAME;
            }
            OURS.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(list as usize);
            *res = list;
            return 0;
        }
    }
    real_getaddrinfo(node, service, hints, res)
}

/// libc's own `getaddrinfo`, the definition past ours.
///
/// # Safety
/// The arguments are what `getaddrinfo` takes (passed on as they are).
unsafe fn real_getaddrinfo(
    node: *const libc::c_char,
    service: *const libc::c_char,
    hints: *const libc::addrinfo,
    res: *mut *mut libc::addrinfo,
) -> libc::c_int {
    let next = libc_fn!(
        c"getaddrinfo",
        fn(
            *const libc::c_char,
            *const libc::c_char,
            *const libc::addrinfo,
            *mut *mut libc::addrinfo,
        ) -> libc::c_int
    );
    match next {
        Some(f) => f(node, service, hints, res),
        None => libc::EAI_FAIL,
    }
}

/// libc's `freeaddrinfo`, freeing this module's lists itself.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn freeaddrinfo(res: *mut libc::addrinfo) {
    if res.is_null() {
        return;
    }
    let ours = OURS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(res as usize));
    if ours {
        let mut node = res;
        // Bounded by the list this module built.
        while !node.is_null() {
            let next = (*node).ai_next;
            libc::free(node as *mut libc::c_void);
            node = next;
        }
    } else if let Some(f) = libc_fn!(c"freeaddrinfo", fn(*mut libc::addrinfo) -> ()) {
        f(res);
    }
}
