//! `tokio::process` with the programs every Unix has, unregistered: the
//! real ones in the plain build, the simulator's built-ins (`true`,
//! `false`, `echo`, `cat`, `sleep`, `yes`, `sh -c`) in the simulation
//! build. The assertions are the same.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

async fn stdout_of(program: &str, args: &[&str]) -> (Vec<u8>, Option<i32>) {
    let output = Command::new(program).args(args).output().await.unwrap();
    (output.stdout, output.status.code())
}

#[tokio::test]
async fn true_false_and_echo() {
    assert_eq!(stdout_of("true", &["ignored"]).await, (vec![], Some(0)));
    assert_eq!(stdout_of("false", &[]).await, (vec![], Some(1)));
    let (out, code) = stdout_of("echo", &["a", "b  c", ""]).await;
    assert_eq!((out.as_slice(), code), (&b"a b  c \n"[..], Some(0)));
    let (out, _) = stdout_of("/bin/echo", &["-n", "no newline"]).await;
    assert_eq!(out, b"no newline");
    let (out, _) = stdout_of("echo", &[]).await;
    assert_eq!(out, b"\n");
}

/// `cat` of its stdin is process.rs's `piped_stdin_reaches_the_program_and
/// _its_stdout_comes_back`; here, of files.
#[tokio::test]
async fn cat_copies_files_and_names_a_missing_one() {
    let dir = std::env::temp_dir().join(format!("compat-cat-{}", std::process::id()));
    tokio::fs::create_dir_all(&dir).await.unwrap();
    tokio::fs::write(dir.join("a"), b"first\n").await.unwrap();
    let output = Command::new("cat")
        .args(["a", "missing", "a"])
        .current_dir(&dir)
        .output()
        .await
        .unwrap();
    assert_eq!(output.stdout, b"first\nfirst\n");
    assert_eq!(output.stderr, b"cat: missing: No such file or directory\n");
    assert_eq!(output.status.code(), Some(1));
    tokio::fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test]
async fn sh_runs_a_script_with_its_parameters() {
    let (out, code) = stdout_of("sh", &["-c", "exit 2"]).await;
    assert_eq!((out, code), (vec![], Some(2)));

    let output = Command::new("sh")
        .arg0("named")
        .args(["-c", "echo $0"])
        .output()
        .await
        .unwrap();
    assert_eq!(output.stdout, b"named\n");

    let script = "echo \"$1\" $2 $#; false || echo 'or ran' && echo and ran; echo $?; exit 4";
    let (out, code) = stdout_of("sh", &["-c", script, "zero", "a  b", "c  d"]).await;
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "a  b c d 2\nor ran\nand ran\n0\n"
    );
    assert_eq!(code, Some(4));

    let (out, code) = stdout_of("sh", &["-c", "true && false; echo $?\nsleep 0; cat"]).await;
    assert_eq!((out.as_slice(), code), (&b"1\n"[..], Some(0)));
}

/// `>&2` and `2>&1` move a command's output between stdout and stderr,
/// applied left to right.
#[tokio::test]
async fn sh_moves_output_between_stdout_and_stderr() {
    let dir = std::env::temp_dir().join(format!("compat-sh-{}", std::process::id()));
    tokio::fs::create_dir_all(&dir).await.unwrap();
    let output = Command::new("sh")
        .args([
            "-c",
            "echo out; echo err >&2; cat missing 2>&1; echo back 2>&1 1>&2; echo away 1>&2 2>&1",
        ])
        .current_dir(&dir)
        .output()
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "out\ncat: missing: No such file or directory\nback\n",
        "left to right: `2>&1 1>&2` leaves stdout where it was"
    );
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "err\naway\n");
    assert_eq!(output.status.code(), Some(0));
    tokio::fs::remove_dir_all(&dir).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn sleep_runs_until_killed() {
    let mut child = Command::new("sleep").arg("5").spawn().unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(child.try_wait().unwrap().is_none(), "still sleeping");
    child.kill().await.unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(Command::new("sleep")
        .arg("0")
        .status()
        .await
        .unwrap()
        .success());
}

#[tokio::test]
async fn yes_dies_of_sigpipe_when_its_reader_goes() {
    let mut child = Command::new("yes")
        .arg("ok")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 9];
    stdout.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"ok\nok\nok\n");
    drop(stdout);
    let status = child.wait().await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE));
}

#[tokio::test]
async fn spawn_needs_a_runtime() {
    let result = std::thread::spawn(|| {
        std::panic::catch_unwind(|| Command::new("true").spawn().map(|_| ())).is_err()
    })
    .join()
    .unwrap();
    assert!(result, "spawn outside a runtime panics");
}

#[tokio::test(start_paused = true)]
async fn yes_into_nothing_runs_until_killed() {
    let mut child = Command::new("yes").stdout(Stdio::null()).spawn().unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(child.try_wait().unwrap().is_none(), "still writing");
    child.kill().await.unwrap();
    assert_eq!(child.wait().await.unwrap().signal(), Some(libc::SIGKILL));
}
