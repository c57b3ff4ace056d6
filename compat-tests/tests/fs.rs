//! `tokio::fs` semantics: on the real disk in the plain build (inside a
//! scratch directory under the temporary directory), on the host's
//! simulated disk under `cargo sim test`.

use std::io::{ErrorKind, SeekFrom};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use tokio::fs::{self, File, OpenOptions};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

/// A fresh, empty directory for one test, made with tokio::fs so it exists
/// on whichever disk the build uses.
async fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("compat-fs-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir).await;
    fs::create_dir_all(&dir).await.unwrap();
    dir
}

#[tokio::test]
async fn write_read_and_read_to_string() {
    let dir = scratch("write-read").await;
    let path = dir.join("greeting");
    fs::write(&path, b"hello").await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"hello");
    // write truncates.
    fs::write(&path, "hi").await.unwrap();
    assert_eq!(fs::read_to_string(&path).await.unwrap(), "hi");
    fs::write(&path, [0xff, 0xfe]).await.unwrap();
    let err = fs::read_to_string(&path).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    let err = fs::read(dir.join("missing")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn file_read_write_seek_and_set_len() {
    let dir = scratch("file-rws").await;
    let path = dir.join("data");
    let mut file = File::create(&path).await.unwrap();
    file.write_all(b"0123456789").await.unwrap();
    file.flush().await.unwrap();
    assert_eq!(file.metadata().await.unwrap().len(), 10);
    // A file from `create` is write-only.
    let mut buf = [0u8; 4];
    assert!(file.read(&mut buf).await.is_err());

    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .await
        .unwrap();
    assert_eq!(file.seek(SeekFrom::Start(3)).await.unwrap(), 3);
    file.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"3456");
    assert_eq!(file.stream_position().await.unwrap(), 7);
    assert_eq!(file.seek(SeekFrom::End(-2)).await.unwrap(), 8);
    file.write_all(b"AB").await.unwrap();
    assert_eq!(file.seek(SeekFrom::Current(-4)).await.unwrap(), 6);
    let mut rest = String::new();
    file.read_to_string(&mut rest).await.unwrap();
    assert_eq!(rest, "67AB");
    assert!(file.seek(SeekFrom::Current(-100)).await.is_err());

    file.set_len(4).await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"0123");
    file.set_len(6).await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"0123\0\0");
    file.sync_all().await.unwrap();
    file.sync_data().await.unwrap();
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn open_options_flags() {
    let dir = scratch("open-options").await;
    let path = dir.join("f");
    // Missing, without create.
    let err = OpenOptions::new()
        .write(true)
        .open(&path)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    // No access mode at all, and create without write: refused.
    let err = OpenOptions::new().open(&path).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = OpenOptions::new()
        .read(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    File::create_new(&path).await.unwrap();
    let err = File::create_new(&path).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);

    let mut appender = OpenOptions::new().append(true).open(&path).await.unwrap();
    appender.write_all(b"one,").await.unwrap();
    appender.write_all(b"two").await.unwrap();
    // tokio writes in the background: flush before reading elsewhere.
    appender.flush().await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"one,two");

    let mut truncating = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .await
        .unwrap();
    truncating.write_all(b"x").await.unwrap();
    truncating.flush().await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"x");

    let created = dir.join("with-mode");
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&created)
        .await
        .unwrap();
    let mode = fs::metadata(&created).await.unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // A directory opens for reading (to sync it), never for writing.
    File::open(&dir).await.unwrap().sync_all().await.unwrap();
    let err = OpenOptions::new().write(true).open(&dir).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IsADirectory);
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn std_open_options_convert() {
    let dir = scratch("std-open-options").await;
    let path = dir.join("f");
    let mut std_options = std::fs::OpenOptions::new();
    std_options.write(true).create(true).truncate(true);
    let mut file = OpenOptions::from(std_options).open(&path).await.unwrap();
    file.write_all(b"converted").await.unwrap();
    file.flush().await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"converted");
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn directories() {
    let dir = scratch("dirs").await;
    let nested = dir.join("a/b/c");
    let err = fs::create_dir(&nested).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    fs::create_dir_all(&nested).await.unwrap();
    // Again: fine.
    fs::create_dir_all(&nested).await.unwrap();
    let err = fs::create_dir(&nested).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.join("x/y"))
        .await
        .unwrap();
    let mode = fs::metadata(dir.join("x/y"))
        .await
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let err = fs::DirBuilder::new()
        .create(dir.join("x/y"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);

    fs::write(dir.join("a/file"), b"x").await.unwrap();
    let err = fs::remove_dir(dir.join("a")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DirectoryNotEmpty);
    let err = fs::remove_file(dir.join("a/b")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IsADirectory);
    let err = fs::remove_dir(dir.join("a/file")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotADirectory);
    let err = fs::create_dir(dir.join("a/file/sub")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotADirectory);
    fs::remove_dir(&nested).await.unwrap();
    fs::remove_dir_all(dir.join("a")).await.unwrap();
    assert!(!fs::try_exists(dir.join("a")).await.unwrap());
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn read_dir_lists_every_entry() {
    let dir = scratch("read-dir").await;
    for name in ["c", "a", "b"] {
        fs::write(dir.join(name), name).await.unwrap();
    }
    fs::create_dir(dir.join("sub")).await.unwrap();
    let mut entries = fs::read_dir(&dir).await.unwrap();
    let mut seen = Vec::new();
    while let Some(entry) = entries.next_entry().await.unwrap() {
        let file_type = entry.file_type().await.unwrap();
        let metadata = entry.metadata().await.unwrap();
        assert_eq!(file_type.is_dir(), metadata.is_dir());
        assert_eq!(entry.path(), dir.join(entry.file_name()));
        assert_eq!(entry.ino(), metadata.ino());
        seen.push((entry.file_name().into_string().unwrap(), file_type.is_dir()));
    }
    // The order is the disk's: compare as a set.
    seen.sort();
    assert_eq!(
        seen,
        [
            ("a".to_string(), false),
            ("b".to_string(), false),
            ("c".to_string(), false),
            ("sub".to_string(), true)
        ]
    );
    let err = fs::read_dir(dir.join("a")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotADirectory);
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn rename_links_and_copy() {
    let dir = scratch("rename").await;
    let (a, b) = (dir.join("a"), dir.join("b"));
    fs::write(&a, b"first").await.unwrap();
    fs::write(&b, b"second").await.unwrap();
    // rename replaces the destination.
    fs::rename(&a, &b).await.unwrap();
    assert_eq!(fs::read(&b).await.unwrap(), b"first");
    assert!(!fs::try_exists(&a).await.unwrap());
    let err = fs::rename(&a, &b).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);

    fs::hard_link(&b, &a).await.unwrap();
    assert_eq!(fs::metadata(&a).await.unwrap().nlink(), 2);
    assert_eq!(
        fs::metadata(&a).await.unwrap().ino(),
        fs::metadata(&b).await.unwrap().ino()
    );
    let err = fs::hard_link(&b, &a).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);

    let link = dir.join("link");
    fs::symlink("b", &link).await.unwrap();
    assert_eq!(fs::read_link(&link).await.unwrap(), PathBuf::from("b"));
    assert_eq!(fs::read(&link).await.unwrap(), b"first");
    assert!(fs::symlink_metadata(&link)
        .await
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::metadata(&link).await.unwrap().is_file());
    assert_eq!(
        fs::canonicalize(&link).await.unwrap(),
        fs::canonicalize(&dir).await.unwrap().join("b")
    );
    let err = fs::read_link(&b).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    fs::symlink("nowhere", dir.join("dangling")).await.unwrap();
    assert!(!fs::try_exists(dir.join("dangling")).await.unwrap());

    fs::set_permissions(&b, std::fs::Permissions::from_mode(0o640))
        .await
        .unwrap();
    let copied = fs::copy(&b, dir.join("copy")).await.unwrap();
    assert_eq!(copied, 5);
    assert_eq!(fs::read(dir.join("copy")).await.unwrap(), b"first");
    let mode = fs::metadata(dir.join("copy"))
        .await
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn file_handles_share_position_and_outlive_their_name() {
    let dir = scratch("handles").await;
    let path = dir.join("f");
    fs::write(&path, b"abcdef").await.unwrap();
    let mut file = File::open(&path).await.unwrap();
    let mut clone = file.try_clone().await.unwrap();
    let mut buf = [0u8; 2];
    file.read_exact(&mut buf).await.unwrap();
    clone.read_exact(&mut buf).await.unwrap();
    // The clone continued where the original stopped.
    assert_eq!(&buf, b"cd");
    fs::remove_file(&path).await.unwrap();
    let mut rest = Vec::new();
    file.read_to_end(&mut rest).await.unwrap();
    assert_eq!(rest, b"ef");
    assert_eq!(file.metadata().await.unwrap().nlink(), 0);
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn metadata_and_permissions() {
    let dir = scratch("metadata").await;
    let path = dir.join("f");
    fs::write(&path, vec![1u8; 1234]).await.unwrap();
    let meta = fs::metadata(&path).await.unwrap();
    assert!(meta.is_file() && !meta.is_dir());
    assert_eq!(meta.len(), 1234);
    assert!(meta.modified().is_ok());
    let dir_meta = fs::metadata(&dir).await.unwrap();
    assert!(dir_meta.is_dir());
    let file = File::open(&path).await.unwrap();
    let mut perm = file.metadata().await.unwrap().permissions();
    perm.set_readonly(true);
    file.set_permissions(perm).await.unwrap();
    assert!(fs::metadata(&path).await.unwrap().permissions().readonly());
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    let file = OpenOptions::new().read(true).open(&path).await.unwrap();
    file.set_modified(when).await.unwrap();
    assert_eq!(fs::metadata(&path).await.unwrap().modified().unwrap(), when);
    let later = when + std::time::Duration::from_secs(60);
    file.set_times(fs::FileTimes::new().set_accessed(later).set_modified(later))
        .await
        .unwrap();
    let meta = fs::metadata(&path).await.unwrap();
    assert_eq!(meta.modified().unwrap(), later);
    assert_eq!(meta.accessed().unwrap(), later);
    fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn concurrent_appends_all_land() {
    let dir = scratch("appends").await;
    let path = dir.join("log");
    let mut tasks = tokio::task::JoinSet::new();
    for writer in 0..8u8 {
        let path = path.clone();
        tasks.spawn(async move {
            let mut log = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .await
                .unwrap();
            for _ in 0..10 {
                log.write_all(&[b'a' + writer; 4]).await.unwrap();
            }
            log.flush().await.unwrap();
        });
    }
    while let Some(result) = tasks.join_next().await {
        result.unwrap();
    }
    let log = fs::read(&path).await.unwrap();
    assert_eq!(log.len(), 8 * 10 * 4);
    // Each 4-byte record is whole: appends never interleave inside one.
    for record in log.chunks(4) {
        assert!(record.iter().all(|&b| b == record[0]));
    }
    fs::remove_dir_all(&dir).await.unwrap();
}

#[test]
fn file_is_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<File>();
    check::<fs::ReadDir>();
    check::<fs::DirEntry>();
    check::<OpenOptions>();
}

/// The common test pattern: a scratch directory from `tempfile` (which
/// uses std::fs), then tokio::fs inside it, and std::fs again to check.
/// Both see one disk: the real one in the plain build, the host's
/// simulated one under the simulator.
#[tokio::test]
async fn tempfile_scratch_directories_work_with_tokio_fs_and_std_fs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    fs::write(&path, br#"{"term":3}"#).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), br#"{"term":3}"#);
    std::fs::write(dir.path().join("from-std"), b"std").unwrap();
    assert_eq!(fs::read(dir.path().join("from-std")).await.unwrap(), b"std");
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    assert!(fs::metadata(dir.path().join("a/b")).await.unwrap().is_dir());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 10);

    let mut named = tempfile::NamedTempFile::new_in(dir.path()).unwrap();
    std::io::Write::write_all(&mut named, b"named").unwrap();
    named.as_file().sync_all().unwrap();
    assert_eq!(fs::read(named.path()).await.unwrap(), b"named");

    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.contains(&"state.json".to_string()));
    std::fs::rename(&path, dir.path().join("renamed")).unwrap();
    assert!(!fs::try_exists(&path).await.unwrap());
    assert!(std::fs::canonicalize(dir.path().join("renamed")).is_ok());

    let kept = dir.path().to_path_buf();
    drop(named);
    // TempDir's drop removes the tree with std::fs::remove_dir_all.
    dir.close().unwrap();
    assert!(!fs::try_exists(&kept).await.unwrap());
}

/// Files in the source tree (fixtures, configuration) read the same with
/// tokio::fs and std::fs, in both builds.
#[tokio::test]
async fn source_tree_files_are_readable() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let text = fs::read_to_string(manifest).await.unwrap();
    assert!(text.contains("name = \"compat-tests\""));
    assert_eq!(std::fs::read_to_string(manifest).unwrap(), text);
    let mut names = Vec::new();
    let mut entries = fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests"))
        .await
        .unwrap();
    while let Some(entry) = entries.next_entry().await.unwrap() {
        names.push(entry.file_name().into_string().unwrap());
    }
    assert!(names.contains(&"fs.rs".to_string()), "{names:?}");
    // Relative paths start at the working directory (the package's, under
    // cargo test).
    assert_eq!(fs::read_to_string("Cargo.toml").await.unwrap(), text);
}

#[tokio::test]
async fn a_file_writes_every_buffer_of_a_vectored_write() {
    let dir = scratch("vectored").await;
    let path = dir.join("joined");
    let mut file = File::create(&path).await.unwrap();
    assert!(tokio::io::AsyncWrite::is_write_vectored(&file));
    let bufs = [std::io::IoSlice::new(b"ab"), std::io::IoSlice::new(b"cd")];
    assert_eq!(file.write_vectored(&bufs).await.unwrap(), 4);
    file.flush().await.unwrap();
    drop(file);
    assert_eq!(fs::read(&path).await.unwrap(), b"abcd");
    // A read of nothing is done at once, with nothing read.
    let mut file = File::open(&path).await.unwrap();
    assert_eq!(file.read(&mut []).await.unwrap(), 0);
    let mut rest = String::new();
    file.read_to_string(&mut rest).await.unwrap();
    assert_eq!(rest, "abcd");
    // Debug has tokio's form.
    let shown = format!("{file:?}");
    assert!(
        shown.starts_with("tokio::fs::File { std: File { fd: "),
        "{shown}"
    );
}
