//! A forecast for people: the timeline grouped by stage and group, with times relative to the
//! forecast's start (`+2h10m`) and absolute (UTC). Groups larger than
//! [`RenderOptions::member_lines`] are summarised (how many members upgrade, between when,
//! what they waited for or why they were skipped) unless [`RenderOptions::full`] is set.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write};

use flotilla_api::updates::gate::Timing;
use jiff::{SignedDuration, Timestamp};

use super::{End, Entry, Event, Forecast, Subject};

/// How much to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Print every member's lines, whatever the group's size.
    pub full: bool,
    /// Groups with at most this many members get a line per member change; larger ones a
    /// summary.
    pub member_lines: usize,
    /// At most this many reasons of a stuck run are printed (all with `full`).
    pub reasons: usize,
}

impl Default for RenderOptions {
    /// Summaries beyond 20 members a group, 20 reasons.
    fn default() -> Self {
        RenderOptions {
            full: false,
            member_lines: 20,
            reasons: 20,
        }
    }
}

impl fmt::Display for Forecast {
    /// The forecast rendered with the default options.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render(self, &RenderOptions::default()))
    }
}

/// `+3d4h10m`: days, hours, minutes and seconds, the non-zero ones (`+0m` for none).
fn relative(d: SignedDuration) -> String {
    let total = d.as_secs().max(0);
    let (days, hours) = (total / 86_400, total % 86_400 / 3_600);
    let (minutes, seconds) = (total % 3_600 / 60, total % 60);
    let mut text = String::from("+");
    for (value, unit) in [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")] {
        if value > 0 {
            let _ = write!(text, "{value}{unit}");
        }
    }
    if text.len() == 1 {
        text.push_str("0m");
    }
    text
}

/// A duration without the `+`.
fn length(d: SignedDuration) -> String {
    relative(d)[1..].to_string()
}

/// `2026-11-21 06:00` (UTC).
fn absolute(at: Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M").to_string()
}

struct Renderer<'f> {
    forecast: &'f Forecast,
    options: &'f RenderOptions,
    out: String,
}

impl Renderer<'_> {
    /// `+2h10m (2026-11-21 02:10)`.
    fn when(&self, at: Timestamp) -> String {
        format!(
            "{} ({})",
            relative(at.duration_since(self.forecast.start)),
            absolute(at)
        )
    }

    fn subject(entry: &Entry) -> String {
        match &entry.subject {
            Subject::Run => "run".to_string(),
            Subject::Stage => format!("stage {}", entry.stage),
            Subject::Group => format!("group {}", entry.group.as_deref().unwrap_or_default()),
            Subject::Member(name) => name.clone(),
            Subject::Gate {
                timing,
                gate_type,
                display_name,
                ..
            } => {
                let timing = match timing {
                    Timing::Before => "before",
                    Timing::After => "after",
                };
                match display_name {
                    Some(display) => format!("{gate_type:?} gate {display:?} ({timing})"),
                    None => format!("{gate_type:?} gate ({timing})"),
                }
            }
            Subject::Wait => "after-stage wait".to_string(),
        }
    }

    fn event(&self, entry: &Entry) -> String {
        match &entry.event {
            Event::Started => "starts".to_string(),
            Event::Resumed => "resumes".to_string(),
            Event::Upgrading { to, takes, assumed } => format!(
                "starts upgrading to {} (about {}{})",
                to.join(", "),
                length(*takes),
                if *assumed { ", assumed durations" } else { "" }
            ),
            Event::InFlight { until } => {
                format!("is upgrading; expected to finish at {}", self.when(*until))
            }
            Event::Pending {
                message,
                until: Some(until),
                ..
            } => format!("pending until {}: {message}", self.when(*until)),
            Event::Pending { message, .. } => format!("pending: {message}"),
            Event::GateReached {
                needs_approval,
                until,
            } => {
                let name = match &entry.subject {
                    Subject::Gate { name: Some(n), .. } => n.as_str(),
                    _ => "NAME",
                };
                match (needs_approval, until) {
                    (true, Some(at)) => format!(
                        "reached: needs approval: `flotilla gate approve {name}` (assumed approved at {})",
                        self.when(*at)
                    ),
                    (true, None) => format!(
                        "reached: needs approval: `flotilla gate approve {name}` (assumed never approved)"
                    ),
                    (false, Some(at)) => format!("reached: starts at {}", self.when(*at)),
                    (false, None) => "reached".to_string(),
                }
            }
            Event::Waiting { until } => format!("runs until {}", self.when(*until)),
            Event::Completed => "completes".to_string(),
            Event::Skipped(why) => format!("skipped: {why}"),
            Event::Failed(why) => format!("fails: {why}"),
        }
    }

    fn line(&mut self, indent: usize, entry: &Entry) {
        let rel = relative(entry.at.duration_since(self.forecast.start));
        let _ = writeln!(
            self.out,
            "{:indent$}{rel:>10}  {}  {}  {}",
            "",
            absolute(entry.at),
            Self::subject(entry),
            self.event(entry)
        );
    }

    fn span(&self, entries: &[&Entry]) -> String {
        match (entries.first(), entries.last()) {
            (Some(first), Some(last)) => format!(
                "{} → {}",
                relative(first.at.duration_since(self.forecast.start)),
                relative(last.at.duration_since(self.forecast.start))
            ),
            _ => "nothing happens".to_string(),
        }
    }

    fn header(&mut self) {
        let f = self.forecast;
        let _ = writeln!(self.out, "Forecast of update run {}: {}", f.run, f.upgrade);
        let how = if f.from_scratch {
            "not started: planned as if started now"
        } else {
            "continuing from its status"
        };
        let _ = writeln!(self.out, "From {} UTC ({how})", absolute(f.start));
        match &f.end {
            End::Finished { at, state, message } => {
                let _ = write!(self.out, "Predicted finish: {}, {state:?}", self.when(*at));
                if let Some(message) = message {
                    let _ = write!(self.out, ": {message}");
                }
                self.out.push('\n');
            }
            End::Stuck { since, reasons } => {
                let _ = writeln!(
                    self.out,
                    "STUCK: the run makes no progress after {}",
                    self.when(*since)
                );
                let shown = if self.options.full {
                    reasons.len()
                } else {
                    self.options.reasons
                };
                for reason in reasons.iter().take(shown) {
                    let _ = writeln!(self.out, "  - {reason}");
                }
                if reasons.len() > shown {
                    let _ = writeln!(
                        self.out,
                        "  - and {} more (print in full to see them)",
                        reasons.len() - shown
                    );
                }
            }
        }
    }

    fn group(&mut self, name: &str, size: usize, entries: &[&Entry]) {
        let _ = writeln!(
            self.out,
            "  group {name} ({size} member{}): {}",
            if size == 1 { "" } else { "s" },
            self.span(entries)
        );
        if self.options.full || size <= self.options.member_lines {
            for entry in entries {
                self.line(4, entry);
            }
            return;
        }
        let mut upgrading = Vec::new();
        let mut outcomes: BTreeMap<String, (usize, &Entry)> = BTreeMap::new();
        let mut closing = Vec::new();
        for entry in entries {
            let Subject::Member(_) = entry.subject else {
                match &entry.event {
                    _ if toggle(entry) => {}
                    Event::Completed | Event::Skipped(_) | Event::Failed(_) => closing.push(*entry),
                    _ => self.line(4, entry),
                }
                continue;
            };
            let key = match &entry.event {
                Event::Upgrading { .. } | Event::InFlight { .. } => {
                    upgrading.push(*entry);
                    continue;
                }
                Event::Completed => continue,
                Event::Pending { code, .. } => format!("pending ({code})"),
                Event::Skipped(_) => "skipped".to_string(),
                Event::Failed(_) => "failed".to_string(),
                _ => continue,
            };
            outcomes.entry(key).or_insert((0, entry)).0 += 1;
        }
        if let (Some(first), Some(last)) = (upgrading.first(), upgrading.last()) {
            let _ = writeln!(
                self.out,
                "    {} member upgrades start between {} and {}",
                upgrading.len(),
                self.when(first.at),
                self.when(last.at)
            );
        }
        for (what, (count, example)) in outcomes {
            let _ = writeln!(
                self.out,
                "    {count} × {what}, e.g. {} at {}: {}",
                Self::subject(example),
                self.when(example.at),
                self.event(example)
            );
        }
        let last_member = entries
            .iter()
            .rev()
            .find(|e| matches!(e.subject, Subject::Member(_)));
        for entry in last_member.into_iter().chain(&closing) {
            self.line(4, entry);
        }
    }

    fn stages(&mut self) {
        let f = self.forecast;
        let mut by_place: HashMap<(&str, Option<&str>), Vec<&Entry>> = HashMap::new();
        for entry in &f.entries {
            by_place
                .entry((entry.stage.as_str(), entry.group.as_deref()))
                .or_default()
                .push(entry);
        }
        let run_entries = by_place.remove(&("", None)).unwrap_or_default();
        for entry in run_entries.iter().filter(|e| e.event == Event::Started) {
            self.line(0, entry);
        }
        let run_entries: Vec<&Entry> = run_entries.into_iter().filter(|e| !toggle(e)).collect();
        for stage in &f.status.stages {
            let own = by_place
                .remove(&(stage.name.as_str(), None))
                .unwrap_or_default();
            let mut all: Vec<&Entry> = own.clone();
            for group in &stage.groups {
                if let Some(entries) = by_place.get(&(stage.name.as_str(), Some(&group.name))) {
                    all.extend(entries);
                }
            }
            all.sort_by_key(|e| e.at);
            let _ = writeln!(self.out, "\nStage {}: {}", stage.name, self.span(&all));
            let (before, after): (Vec<&Entry>, Vec<&Entry>) =
                own.iter().filter(|e| !toggle(e)).partition(|e| {
                    e.event == Event::Started
                        || matches!(
                            e.subject,
                            Subject::Gate {
                                timing: Timing::Before,
                                ..
                            }
                        )
                });
            for entry in before {
                self.line(2, entry);
            }
            for group in &stage.groups {
                let entries = by_place
                    .remove(&(stage.name.as_str(), Some(group.name.as_str())))
                    .unwrap_or_default();
                self.group(&group.name, group.members.len(), &entries);
            }
            for entry in after {
                self.line(2, entry);
            }
        }
        self.out.push('\n');
        for entry in run_entries.iter().filter(|e| e.event != Event::Started) {
            self.line(0, entry);
        }
    }

    fn notes(&mut self) {
        let f = self.forecast;
        if !f.defaulted.is_empty() {
            let d = f.assumptions.default_durations;
            let names: Vec<&str> = f.defaulted.iter().take(10).map(String::as_str).collect();
            let more = f.defaulted.len().saturating_sub(names.len());
            let _ = writeln!(
                self.out,
                "\nNote: {} member(s) report no expected durations; assumed {} for the control plane and {} a node: {}{}",
                f.defaulted.len(),
                length(SignedDuration::from_secs(d.control_plane_seconds as i64)),
                length(SignedDuration::from_secs(d.node_seconds as i64)),
                names.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        let approvals = match f.assumptions.approval_delay {
            Some(d) if d.is_zero() => {
                "approval gates are assumed approved as soon as reached".to_string()
            }
            Some(d) => format!(
                "approval gates are assumed approved {} after they are reached",
                length(d)
            ),
            None => "approval gates are assumed never approved".to_string(),
        };
        let _ = writeln!(
            self.out,
            "Note: {approvals}; every upgrade is assumed to succeed in its expected time."
        );
    }
}

/// Whether an entry is a run, stage or group being held or resumed: told by its members and
/// gates, so left out of summaries.
fn toggle(entry: &Entry) -> bool {
    matches!(
        entry.subject,
        Subject::Run | Subject::Stage | Subject::Group
    ) && matches!(entry.event, Event::Resumed | Event::Pending { .. })
}

/// The forecast as text: a header with the predicted finish (or why the run is stuck), then
/// per stage its gates, waits and groups with their members' changes, and notes on the
/// assumptions made.
pub fn render(forecast: &Forecast, options: &RenderOptions) -> String {
    let mut renderer = Renderer {
        forecast,
        options,
        out: String::new(),
    };
    renderer.header();
    renderer.stages();
    renderer.notes();
    renderer.out
}
