//! The real kubectl, pointed at one kubeconfig with a private discovery cache (so tests never
//! share or race on `~/.kube/cache`).

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// kubectl with `kubeconfig` and a private discovery cache, stdin closed.
pub fn command(kubeconfig: &Path, cache: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("kubectl");
    cmd.env("KUBECONFIG", kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .stdin(Stdio::null());
    cmd
}

/// Runs `command` to completion with `stdin` as its input.
pub fn run_with_stdin(mut command: Command, stdin: &str) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("output")
}

/// The server URL of a kubeconfig file's (first) cluster, `https://127.0.0.1:PORT`.
pub fn server_of(kubeconfig: &Path) -> String {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    text.lines()
        .find_map(|line| line.trim().strip_prefix("server: "))
        .expect("a server in the kubeconfig")
        .to_string()
}

/// Stdout of a finished kubectl, panicking with both streams if it failed.
pub fn ok(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
