use super::*;

fn disk(seed: u64) -> Disk {
    Disk::new(0, seed, DiskConfig::default(), &skeleton("/work"))
}

/// A disk that does not mirror the real filesystem: unit tests see
/// only what they make.
fn skeleton(cwd: &str) -> Skeleton {
    Skeleton {
        cwd: PathBuf::from(cwd),
        tmp: PathBuf::from("/tmp"),
        mirror_real: false,
    }
}

fn rw_create() -> OpenFlags {
    OpenFlags {
        read: true,
        write: true,
        create: true,
        ..OpenFlags::default()
    }
}

fn write_file(d: &mut Disk, path: &str, bytes: &[u8], sync: bool) {
    let h = d.open(Path::new(path), &rw_create()).unwrap();
    d.write_at(&h, 0, bytes).unwrap();
    if sync {
        d.sync(&h).unwrap();
    }
    d.close(&h);
}

fn read_file(d: &mut Disk, path: &str) -> io::Result<Vec<u8>> {
    let flags = OpenFlags {
        read: true,
        ..OpenFlags::default()
    };
    let h = d.open(Path::new(path), &flags)?;
    let mut buf = vec![0; d.len(&h)? as usize];
    let n = d.read_at(&h, 0, &mut buf)?;
    d.close(&h);
    buf.truncate(n);
    Ok(buf)
}

fn sync_dir(d: &mut Disk, path: &str) {
    let flags = OpenFlags {
        read: true,
        ..OpenFlags::default()
    };
    let h = d.open(Path::new(path), &flags).unwrap();
    d.sync(&h).unwrap();
    d.close(&h);
}

#[test]
fn errors_have_the_real_kinds() {
    let mut d = disk(1);
    let kind = |r: io::Result<()>| r.unwrap_err().kind();
    assert_eq!(
        kind(d.remove_file(Path::new("/nope"))),
        io::ErrorKind::NotFound
    );
    d.create_dir(Path::new("/a"), 0o777).unwrap();
    assert_eq!(
        kind(d.create_dir(Path::new("/a"), 0o777)),
        io::ErrorKind::AlreadyExists
    );
    assert_eq!(
        kind(d.remove_file(Path::new("/a"))),
        io::ErrorKind::IsADirectory
    );
    write_file(&mut d, "/a/f", b"x", false);
    assert_eq!(
        kind(d.remove_dir(Path::new("/a"))),
        io::ErrorKind::DirectoryNotEmpty
    );
    assert_eq!(
        kind(d.create_dir(Path::new("/a/f/g"), 0o777)),
        io::ErrorKind::NotADirectory
    );
    d.set_mode_path(Path::new("/a"), 0o555).unwrap();
    assert_eq!(
        kind(d.create_dir(Path::new("/a/g"), 0o777)),
        io::ErrorKind::PermissionDenied
    );
    d.symlink(Path::new("loop"), Path::new("/loop")).unwrap();
    assert_eq!(
        d.stat_path(Path::new("/loop"), true)
            .unwrap_err()
            .raw_os_error(),
        Some(libc::ELOOP)
    );
}

#[test]
fn relative_paths_start_at_the_working_directory() {
    let mut d = disk(1);
    write_file(&mut d, "rel", b"here", false);
    assert_eq!(read_file(&mut d, "/work/rel").unwrap(), b"here");
    d.symlink(Path::new("../tmp"), Path::new("/work/t"))
        .unwrap();
    write_file(&mut d, "t/x", b"via link", false);
    assert_eq!(read_file(&mut d, "/tmp/x").unwrap(), b"via link");
    assert_eq!(
        d.canonicalize(Path::new("t/x")).unwrap(),
        Path::new("/tmp/x")
    );
}

#[test]
fn a_synced_file_in_a_synced_directory_survives_every_crash() {
    for seed in 0..200 {
        let mut d = disk(seed);
        d.create_dir(Path::new("/data"), 0o777).unwrap();
        sync_dir(&mut d, "/");
        write_file(&mut d, "/data/log", b"acknowledged", true);
        sync_dir(&mut d, "/data");
        write_file(&mut d, "/data/other", b"maybe", false);
        d.crash();
        assert_eq!(
            read_file(&mut d, "/data/log").unwrap(),
            b"acknowledged",
            "seed {seed}"
        );
    }
}

#[test]
fn without_the_directory_sync_a_new_file_can_vanish() {
    let mut vanished = 0;
    let mut kept = 0;
    for seed in 0..100 {
        let mut d = disk(seed);
        write_file(&mut d, "/tmp/log", b"acknowledged", true);
        d.crash();
        match read_file(&mut d, "/tmp/log") {
            Ok(bytes) => {
                assert_eq!(bytes, b"acknowledged");
                kept += 1;
            }
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::NotFound);
                vanished += 1;
            }
        }
    }
    assert!(vanished > 0 && kept > 0, "vanished {vanished}, kept {kept}");
}

#[test]
fn rename_is_all_or_nothing_across_a_crash() {
    let mut outcomes = BTreeSet::new();
    for seed in 0..100 {
        let mut d = disk(seed);
        write_file(&mut d, "/tmp/new", b"v2", true);
        write_file(&mut d, "/tmp/current", b"v1", true);
        sync_dir(&mut d, "/tmp");
        d.rename(Path::new("/tmp/new"), Path::new("/tmp/current"))
            .unwrap();
        d.crash();
        let current = read_file(&mut d, "/tmp/current").unwrap();
        let new_exists = d.stat_path(Path::new("/tmp/new"), false).is_ok();
        // Either the old state (v1 and new) or the new one (v2 alone).
        match (current.as_slice(), new_exists) {
            (b"v1", true) | (b"v2", false) => {}
            other => panic!("seed {seed}: an impossible state {other:?}"),
        }
        outcomes.insert(current);
    }
    assert_eq!(outcomes.len(), 2, "both outcomes happen on some seed");
}

#[test]
fn capacity_gives_short_writes_then_enospc() {
    let mut d = Disk::new(
        0,
        1,
        DiskConfig {
            capacity_bytes: 1000,
            ..DiskConfig::default()
        },
        &skeleton("/"),
    );
    let h = d.open(Path::new("/f"), &rw_create()).unwrap();
    assert_eq!(d.write_at(&h, 0, &[1; 800]).unwrap().0, 800);
    assert_eq!(d.write_at(&h, 800, &[1; 800]).unwrap().0, 200);
    let err = d.write_at(&h, 1000, &[1; 10]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    // Overwriting in place needs no room.
    assert_eq!(d.write_at(&h, 0, &[2; 10]).unwrap().0, 10);
    d.close(&h);
    d.remove_file(Path::new("/f")).unwrap();
    assert_eq!(d.used_bytes(), 0);
}

#[test]
fn an_unlinked_open_file_stays_readable() {
    let mut d = disk(3);
    write_file(&mut d, "/tmp/f", b"still here", false);
    let h = d
        .open(
            Path::new("/tmp/f"),
            &OpenFlags {
                read: true,
                ..OpenFlags::default()
            },
        )
        .unwrap();
    d.remove_file(Path::new("/tmp/f")).unwrap();
    let mut buf = [0; 10];
    assert_eq!(d.read_at(&h, 0, &mut buf).unwrap(), 10);
    assert_eq!(&buf, b"still here");
    d.close(&h);
}
