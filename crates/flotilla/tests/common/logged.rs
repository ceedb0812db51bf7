//! A `flotilla … --log-json` child process whose log lines are collected as they come, so
//! tests can wait for what it says (its leader-election identity, "acquired leadership").

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::eventually;

/// A running process and the JSON log lines it has written to stderr.
pub struct LoggedChild {
    /// The process.
    pub child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl LoggedChild {
    /// Spawns `command` (which must log JSON to stderr) with stdout discarded.
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn flotilla");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    sink.lock().unwrap().push(event);
                }
            }
        });
        Self { child, lines }
    }

    /// The messages logged so far.
    pub fn messages(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .filter_map(|l| l["fields"]["message"].as_str().map(str::to_string))
            .collect()
    }

    /// The identity it competes for the controllers' lease as (from its log).
    pub fn identity(&self) -> String {
        eventually("the candidate's identity logged", 30, || {
            let lines = self.lines.lock().unwrap();
            lines
                .iter()
                .find_map(|l| l["fields"]["identity"].as_str().map(str::to_string))
        })
    }

    /// Whether any message so far contains `message`.
    pub fn logged(&self, message: &str) -> bool {
        self.messages().iter().any(|m| m.contains(message))
    }

    /// SIGKILLs the process (no shutdown hooks run).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LoggedChild {
    fn drop(&mut self) {
        self.kill();
    }
}
