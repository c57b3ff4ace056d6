//! A harness host's `std::fs` meets the simulated FIFOs too, in a process
//! that builds no runtime through tokio's builder (the hooks are installed
//! before `main`). A file of its own: another test's runtime would install
//! them first. Simulation build only.
#![cfg(simulation)]

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use tokio::sim::Sim;

#[test]
fn a_harness_host_opens_a_fifo_with_std_fs() {
    let mut sim = Sim::new();
    sim.client("writer", async {
        let path = std::env::temp_dir().join("harness-fifo");
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let open = |read: bool| {
            std::fs::OpenOptions::new()
                .read(read)
                .write(!read)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
                .unwrap()
        };
        let mut reader = open(true);
        let mut writer = open(false);
        writer.write_all(b"through").unwrap();
        let mut buf = [0u8; 7];
        reader.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"through");
    });
    sim.run();
}
