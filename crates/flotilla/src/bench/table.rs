//! The report of a benchmark: one row per figure, judged against its target and printed as a
//! Markdown table (readable in a terminal, pasteable into `BENCHMARKS.md`).

use std::fmt;

use super::measure::median;

/// What a figure must reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Informational figure, nothing to reach.
    None,
    /// At least this multiple of the etcd figure measured in the same run.
    EtcdRatioAtLeast(f64),
    /// At most this value, in the row's unit.
    AtMost(f64),
    /// At least this value, in the row's unit (a ratio against a peer, say).
    AtLeast(f64),
}

/// One figure of a benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What was measured, e.g. "durable writes, SqliteStore, 64 writers".
    pub figure: String,
    /// The measured value.
    pub value: f64,
    /// The unit of `value` (and of an `AtMost` target).
    pub unit: &'static str,
    /// etcd's figure for the same measurement, when etcd ran side by side.
    pub etcd: Option<f64>,
    /// What the figure must reach.
    pub target: Target,
}

/// Whether a row reached its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Target reached.
    Pass,
    /// Target missed.
    Fail,
    /// No target, or no etcd figure to compare with.
    NotJudged,
}

impl Row {
    /// A row without a target.
    pub fn info(figure: String, value: f64, unit: &'static str) -> Self {
        Self {
            figure,
            value,
            unit,
            etcd: None,
            target: Target::None,
        }
    }

    /// `value / etcd`, when there is an etcd figure.
    pub fn ratio(&self) -> Option<f64> {
        self.etcd.filter(|e| *e > 0.0).map(|e| self.value / e)
    }

    /// Judges the row against its target.
    pub fn verdict(&self) -> Verdict {
        let pass = match self.target {
            Target::None => return Verdict::NotJudged,
            Target::EtcdRatioAtLeast(min) => match self.ratio() {
                Some(ratio) => ratio >= min,
                None => return Verdict::NotJudged,
            },
            Target::AtMost(max) => self.value <= max,
            Target::AtLeast(min) => self.value >= min,
        };
        if pass { Verdict::Pass } else { Verdict::Fail }
    }

    /// The value with its unit, and etcd's figure if any (for progress lines).
    pub fn summary(&self) -> String {
        match self.etcd {
            Some(etcd) => format!(
                "{} {} (etcd {})",
                number(self.value),
                self.unit,
                number(etcd)
            ),
            None => format!("{} {}", number(self.value), self.unit),
        }
    }

    fn cells(&self) -> [String; 7] {
        let target = match self.target {
            Target::None => "—".to_owned(),
            Target::EtcdRatioAtLeast(min) => format!("≥ {min}× etcd"),
            Target::AtMost(max) if self.unit == "×" => format!("≤ {max}×"),
            Target::AtMost(max) => format!("≤ {max} {}", self.unit),
            Target::AtLeast(min) if self.unit == "×" => format!("≥ {min}×"),
            Target::AtLeast(min) => format!("≥ {min} {}", self.unit),
        };
        let verdict = match self.verdict() {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NotJudged if self.target == Target::None => "—",
            Verdict::NotJudged => "n/a (no etcd)",
        };
        [
            self.figure.clone(),
            number(self.value),
            self.unit.to_owned(),
            self.etcd.map_or_else(|| "—".to_owned(), number),
            self.ratio()
                .map_or_else(|| "—".to_owned(), |r| format!("{}×", number(r))),
            target,
            verdict.to_owned(),
        ]
    }
}

/// Rows measured in several runs, reduced to one row per figure: the median value and the
/// median etcd figure. Every run must produce the same figures in the same order.
pub fn median_rows(runs: &[Vec<Row>]) -> Vec<Row> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let values = runs.iter().map(|run| run[i].value).collect();
            let etcd: Vec<f64> = runs.iter().filter_map(|run| run[i].etcd).collect();
            Row {
                value: median(values),
                etcd: (!etcd.is_empty()).then(|| median(etcd)),
                ..row.clone()
            }
        })
        .collect()
}

/// A titled set of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// What ran, with its parameters.
    pub title: String,
    /// The figures.
    pub rows: Vec<Row>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEADER: [&str; 7] = [
            "figure", "value", "unit", "etcd", "ratio", "target", "result",
        ];
        let cells: Vec<[String; 7]> = self.rows.iter().map(Row::cells).collect();
        let widths: Vec<usize> = (0..HEADER.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|row| width(&row[c]))
                    .chain([width(HEADER[c])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |f: &mut fmt::Formatter<'_>, row: &[&str]| -> fmt::Result {
            for (cell, w) in row.iter().zip(&widths) {
                write!(f, "| {cell}{} ", " ".repeat(w - width(cell)))?;
            }
            writeln!(f, "|")
        };
        writeln!(f, "{}\n", self.title)?;
        line(f, &HEADER)?;
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(f, &rule.iter().map(String::as_str).collect::<Vec<_>>())?;
        for row in &cells {
            line(f, &row.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        Ok(())
    }
}

/// Display width of a cell (every character here is one column wide).
fn width(s: &str) -> usize {
    s.chars().count()
}

/// A number with precision that suits its magnitude.
fn number(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        _ => format!("{x:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(value: f64, etcd: Option<f64>, target: Target) -> Row {
        Row {
            figure: "f".into(),
            value,
            unit: "ms",
            etcd,
            target,
        }
    }

    #[test]
    fn verdicts_follow_targets() {
        assert_eq!(
            row(200.0, Some(100.0), Target::EtcdRatioAtLeast(2.0)).verdict(),
            Verdict::Pass
        );
        assert_eq!(
            row(199.0, Some(100.0), Target::EtcdRatioAtLeast(2.0)).verdict(),
            Verdict::Fail
        );
        assert_eq!(
            row(199.0, None, Target::EtcdRatioAtLeast(2.0)).verdict(),
            Verdict::NotJudged
        );
        assert_eq!(
            row(100.0, None, Target::AtMost(100.0)).verdict(),
            Verdict::Pass
        );
        assert_eq!(
            row(101.0, None, Target::AtMost(100.0)).verdict(),
            Verdict::Fail
        );
        assert_eq!(row(1.0, None, Target::None).verdict(), Verdict::NotJudged);
    }

    #[test]
    fn runs_reduce_to_row_wise_medians() {
        let runs = vec![
            vec![row(1.0, Some(10.0), Target::None)],
            vec![row(3.0, Some(30.0), Target::None)],
            vec![row(2.0, Some(20.0), Target::None)],
        ];
        assert_eq!(median_rows(&runs), vec![row(2.0, Some(20.0), Target::None)]);
    }

    #[test]
    fn table_aligns_columns() {
        let report = Report {
            title: "t".into(),
            rows: vec![row(12.5, Some(5.0), Target::EtcdRatioAtLeast(2.0))],
        };
        let text = report.to_string();
        let lines: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| width(l) == width(lines[0])), "{text}");
        assert!(
            lines[2].contains("2.50×") && lines[2].contains("PASS"),
            "{text}"
        );
    }
}
