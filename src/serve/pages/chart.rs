//! The timeline chart: changes per run over time, one stacked bar per run (high at the bottom,
//! then medium, then low), as inline SVG that stretches to the page width, with its scale and
//! dates as HTML beneath (text inside a stretched SVG would stretch too). Pure; the only text
//! is dates and counts, escaped anyway.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::super::store::ChangeView;
use crate::report::html::escape;

/// At most this many runs are drawn (the most recent ones).
pub const MAX_BARS: usize = 60;

const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 100.0;
const TOP: f64 = 2.0;
const BOTTOM: f64 = 1.0;

/// The changes of one run, by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bar {
    /// When the run observed them.
    pub observed_at: DateTime<Utc>,
    /// High, medium and low counts.
    pub counts: [usize; 3],
}

impl Bar {
    fn total(&self) -> usize {
        self.counts.iter().sum()
    }
}

/// One bar per distinct `observed_at`, oldest first, the last [`MAX_BARS`] only.
pub fn bars<'a>(changes: impl IntoIterator<Item = &'a ChangeView>) -> Vec<Bar> {
    let mut runs: BTreeMap<DateTime<Utc>, [usize; 3]> = BTreeMap::new();
    for change in changes {
        let counts = runs.entry(change.observed_at).or_default();
        match change.severity.as_str() {
            "high" => counts[0] += 1,
            "medium" => counts[1] += 1,
            _ => counts[2] += 1,
        }
    }
    let skip = runs.len().saturating_sub(MAX_BARS);
    runs.into_iter()
        .skip(skip)
        .map(|(observed_at, counts)| Bar {
            observed_at,
            counts,
        })
        .collect()
}

/// The SVG of `bars` (a sentence instead when there is nothing to draw).
pub fn render(bars: &[Bar], label: &str) -> String {
    if bars.is_empty() {
        return "<p class=\"muted\" id=\"timeline-empty\">No change recorded yet.</p>\n".into();
    }
    let most = bars.iter().map(Bar::total).max().unwrap_or(1).max(1) as f64;
    let slot = WIDTH / bars.len() as f64;
    let bar_width = (slot * 0.7).max(1.0);
    let plot = HEIGHT - TOP - BOTTOM;
    let mut svg = String::with_capacity(256 + bars.len() * 400);
    let _ = write!(
        svg,
        "<figure class=\"timeline\"><svg class=\"timeline\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>\
         <line x1=\"0\" y1=\"{base}\" x2=\"{WIDTH}\" y2=\"{base}\" class=\"axis\"/>",
        escape(label),
        escape(label),
        base = HEIGHT - BOTTOM
    );
    for (index, bar) in bars.iter().enumerate() {
        let x = index as f64 * slot + (slot - bar_width) / 2.0;
        let mut y = HEIGHT - BOTTOM;
        let when = bar.observed_at.format("%Y-%m-%d %H:%M UTC").to_string();
        let _ = write!(
            svg,
            "<g class=\"run\" data-total=\"{}\"><title>{}: {} high, {} medium, {} low</title>",
            bar.total(),
            escape(&when),
            bar.counts[0],
            bar.counts[1],
            bar.counts[2]
        );
        for (count, class) in bar.counts.iter().zip(["high", "medium", "low"]) {
            if *count == 0 {
                continue;
            }
            let height = *count as f64 / most * plot;
            y -= height;
            let _ = write!(
                svg,
                "<rect class=\"bar-{class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar_width:.1}\" height=\"{height:.1}\"/>"
            );
        }
        svg.push_str("</g>");
    }
    let date = |bar: &Bar| escape(&bar.observed_at.format("%Y-%m-%d %H:%M").to_string());
    let _ = writeln!(
        svg,
        "</svg><figcaption class=\"ticks\"><span>{}</span><span>{} runs with changes; \
         tallest bar {most} changes</span><span>{}</span></figcaption></figure>",
        date(&bars[0]),
        bars.len(),
        date(&bars[bars.len() - 1]),
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(at: &str, severity: &str) -> ChangeView {
        ChangeView {
            observed_at: at.parse().unwrap(),
            change_class: "tool_added".into(),
            tool_name: None,
            field: "tool".into(),
            severity: severity.into(),
            values: None,
        }
    }

    #[test]
    fn changes_are_grouped_by_run_and_severity() {
        let changes = [
            view("2026-01-02T00:00:00Z", "low"),
            view("2026-01-01T00:00:00Z", "high"),
            view("2026-01-01T00:00:00Z", "high"),
            view("2026-01-01T00:00:00Z", "medium"),
        ];
        let bars = bars(&changes);
        assert_eq!(bars.len(), 2);
        assert_eq!(bars[0].counts, [2, 1, 0]);
        assert_eq!(bars[1].counts, [0, 0, 1]);
        let svg = render(&bars, "Changes per run");
        assert_eq!(svg.matches("<g class=\"run\"").count(), 2);
        assert_eq!(svg.matches("<rect class=\"bar-high\"").count(), 1);
        assert!(svg.contains("2026-01-01 00:00 UTC: 2 high, 1 medium, 0 low"));
    }

    #[test]
    fn only_the_most_recent_runs_are_drawn() {
        let changes: Vec<ChangeView> = (0..100)
            .map(|minute| view(&format!("2026-01-01T01:{:02}:00Z", minute % 60), "low"))
            .chain((0..40).map(|minute| view(&format!("2026-01-01T02:{minute:02}:00Z"), "low")))
            .collect();
        let bars = bars(&changes);
        assert_eq!(bars.len(), MAX_BARS);
        assert_eq!(bars[MAX_BARS - 1].observed_at, changes[139].observed_at);
        assert!(render(&[], "x").contains("No change recorded yet."));
    }
}
