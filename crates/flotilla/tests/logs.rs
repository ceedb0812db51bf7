//! What `flotilla up` writes to a log file: plain text without terminal colour codes, or
//! with `--log-json` one JSON object per line, the simulated members' agents included.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `flotilla up --members 1 EXTRA` with stderr to a file until it has served for a
/// moment, and returns what it logged.
fn log_of(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("up.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut up = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args([
            "up",
            "--members",
            "1",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .args(extra)
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let joined = || {
        std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .contains("joined")
    };
    while !joined() && Instant::now() < deadline {
        assert!(up.try_wait().unwrap().is_none(), "flotilla up exited early");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = up.kill();
    let _ = up.wait();
    std::fs::read_to_string(&log_path).unwrap()
}

#[test]
fn logs_to_a_file_are_plain_text_or_json_lines() {
    let plain = log_of(&[]);
    assert!(plain.contains("joined"), "{plain}");
    assert!(
        !plain.contains('\x1b'),
        "terminal escape codes in a log file:\n{plain}"
    );
    let json = log_of(&["--log-json"]);
    let lines: Vec<&str> = json.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() > 1, "{json}");
    for line in lines {
        let event: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        assert!(
            event["level"].is_string() && event["timestamp"].is_string(),
            "{line}"
        );
    }
}
