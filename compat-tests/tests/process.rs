//! `tokio::process`: real programs in the plain build (`echo`, `cat`, `sh`,
//! ...), simulated programs of the same names in the simulation build (the
//! built-ins, and those `programs()` registers, at the bottom). The
//! assertions are the same.

use std::io::ErrorKind;
use std::process::Stdio;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

#[tokio::test]
async fn output_collects_stdout_stderr_and_the_exit_code() {
    programs();
    let output = Command::new("echo")
        .args(["hello", "world"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success());
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, b"hello world\n");
    assert!(output.stderr.is_empty());

    let output = Command::new("sh")
        .args(["-c", "echo oops >&2; exit 3"])
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(!output.status.success());
    assert_eq!(output.stderr, b"oops\n");
    assert!(output.stdout.is_empty());

    let status = Command::new("false").status().await.unwrap();
    assert_eq!(status.code(), Some(1));
}

#[tokio::test]
async fn piped_stdin_reaches_the_program_and_its_stdout_comes_back() {
    programs();
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"one\ntwo\n").await.unwrap();
    drop(stdin);
    let mut back = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut back)
        .await
        .unwrap();
    assert_eq!(back, "one\ntwo\n");
    assert!(child.wait().await.unwrap().success());
}

#[tokio::test]
async fn wait_closes_stdin_first() {
    programs();
    // `cat` exits at the end of its input: without wait closing stdin,
    // this would wait forever.
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(child.stdin.is_some());
    assert!(child.wait().await.unwrap().success());
    assert!(child.stdin.is_none());
    assert_eq!(child.id(), None);
}

#[tokio::test]
async fn output_larger_than_a_pipe_does_not_deadlock() {
    programs();
    let output = Command::new("head")
        .args(["-c", "200000", "/dev/zero"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout.len(), 200_000);
    assert!(output.stdout.iter().all(|&b| b == 0));
}

#[tokio::test]
async fn kill_ends_the_program_with_sigkill() {
    use std::os::unix::process::ExitStatusExt;
    programs();
    let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
    assert!(child.id().is_some());
    assert!(child.try_wait().unwrap().is_none());
    child.kill().await.unwrap();
    let status = child.try_wait().unwrap().expect("killed and reaped");
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_eq!(status.code(), None);
    assert_eq!(child.id(), None);
    // Killing an exited child again is fine.
    child.start_kill().unwrap();
}

#[tokio::test]
async fn a_signal_sent_to_the_pid_terminates_the_program() {
    use std::os::unix::process::ExitStatusExt;
    programs();
    let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
    let pid = child.id().unwrap() as libc::pid_t;
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = child.wait().await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
}

#[tokio::test]
async fn one_programs_stdout_feeds_anothers_stdin() {
    programs();
    let mut first = Command::new("echo")
        .arg("through a pipe")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout: Stdio = first.stdout.take().unwrap().try_into().unwrap();
    let second = Command::new("cat")
        .stdin(stdout)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let output = second.wait_with_output().await.unwrap();
    assert_eq!(output.stdout, b"through a pipe\n");
    assert!(first.wait().await.unwrap().success());
}

#[tokio::test]
async fn writing_to_an_exited_programs_stdin_is_a_broken_pipe() {
    programs();
    let mut child = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    assert!(child.wait().await.unwrap().success());
    let error = stdin.write_all(b"nobody reads this").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::BrokenPipe);
}

#[tokio::test]
async fn environment_and_working_directory() {
    programs();
    let output = Command::new("env")
        .env_clear()
        .env("ALPHA", "1")
        .env("BETA", "2")
        .env_remove("BETA")
        .output()
        .await
        .unwrap();
    assert_eq!(output.stdout, b"ALPHA=1\n");

    let output = Command::new("pwd").current_dir("/").output().await.unwrap();
    assert_eq!(output.stdout, b"/\n");
}

#[tokio::test]
async fn a_program_that_does_not_exist_fails_spawn_with_not_found() {
    programs();
    let error = Command::new("no-such-program-anywhere-3f9a")
        .spawn()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    let error = Command::new("no-such-program-anywhere-3f9a")
        .output()
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
}

#[tokio::test]
async fn command_keeps_its_settings() {
    let mut command = Command::new("echo");
    command.arg("a").kill_on_drop(true);
    assert!(command.get_kill_on_drop());
    assert_eq!(command.as_std().get_program(), "echo");
    assert_eq!(command.as_std().get_args().collect::<Vec<_>>(), ["a"]);
    command.as_std_mut().arg("b");
    let std = command.into_std();
    assert_eq!(std.get_args().collect::<Vec<_>>(), ["a", "b"]);
    let back = Command::from(std);
    assert!(!back.get_kill_on_drop());
    assert!(format!("{back:?}").contains("kill_on_drop: false"));
}

/// The real programs exist in the plain build.
#[cfg(not(simulation))]
fn programs() {}

/// Simulated programs with the real ones' behaviour for what these tests
/// use, beyond the built-ins (`echo`, `cat`, `true`, `false`, `sleep`,
/// `sh`).
#[cfg(simulation)]
fn programs() {
    use tokio::sim::process::{register, Invocation};

    fn args(inv: &Invocation) -> Vec<String> {
        inv.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    register("head", |mut inv| async move {
        // `head -c N /dev/zero`.
        let n: usize = args(&inv)[1].parse().unwrap();
        inv.stdout.write_all(&vec![0u8; n]).await.unwrap();
        0
    });
    register("env", |mut inv| async move {
        for (key, value) in &inv.env {
            let line = format!("{}={}\n", key.to_string_lossy(), value.to_string_lossy());
            inv.stdout.write_all(line.as_bytes()).await.unwrap();
        }
        0
    });
    register("pwd", |mut inv| async move {
        let dir = inv.current_dir.clone().unwrap();
        let line = format!("{}\n", dir.display());
        inv.stdout.write_all(line.as_bytes()).await.unwrap();
        0
    });
}
