//! The target page's catalogue chart: unique items per kind over the kept
//! history as inline SVG (no JavaScript), with silent shrinks, announced
//! shrinks, growths and list_changed notices marked.

use crate::verdict::clock;
use crate::verdict::history::{Mark, Point};
use maud::{html, Markup};
use mcp_listing::Kind;
use std::collections::{BTreeMap, VecDeque};

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 34.0;

fn colour(kind: Kind) -> &'static str {
    match kind {
        Kind::Tools => "#1f6feb",
        Kind::Prompts => "#8250df",
        Kind::Resources => "#1a7f37",
        Kind::ResourceTemplates => "#bc4c00",
    }
}

/// Each kind its own stroke pattern, so lines that coincide stay apart to
/// the eye (and without colour).
fn dashes(kind: Kind) -> &'static str {
    match kind {
        Kind::Tools => "none",
        Kind::Prompts => "9 4",
        Kind::Resources => "2 3",
        Kind::ResourceTemplates => "12 3 2 3",
    }
}

/// Each kind drawn a few pixels above or below its true height: kinds with
/// equal counts show as parallel lines, not one line hiding three.
fn lane(kind: Kind) -> f64 {
    match kind {
        Kind::Tools => -4.5,
        Kind::Prompts => -1.5,
        Kind::Resources => 1.5,
        Kind::ResourceTemplates => 4.5,
    }
}

/// The chart, or a sentence when no complete listing is kept yet.
pub fn catalogue_chart(points: &BTreeMap<Kind, VecDeque<Point>>) -> Markup {
    let Some(scale) = Scale::of(points) else {
        return html! { p.muted { "No complete listing yet." } };
    };
    html! {
        svg.chart role="img" aria-label="unique items per kind over time"
            viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } width=(WIDTH) height=(HEIGHT)
            xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="system-ui,sans-serif" {
            (axes(&scale))
            @for (kind, pts) in points {
                @if !pts.is_empty() {
                    (line(&scale, *kind, pts))
                    @for p in pts {
                        (marks(&scale, *kind, p))
                    }
                }
            }
        }
        (legend(points.keys()))
    }
}

/// Time and item count to chart coordinates: the kept history spans the
/// width, 0 to the largest count the height.
struct Scale {
    t0: f64,
    t1: f64,
    span: f64,
    max_items: u32,
}

impl Scale {
    /// `None` without a single point.
    fn of(points: &BTreeMap<Kind, VecDeque<Point>>) -> Option<Scale> {
        let all = || points.values().flat_map(|v| v.iter());
        let t0 = all().map(|p| p.at_unix_seconds).reduce(f64::min)?;
        let t1 = all().map(|p| p.at_unix_seconds).fold(t0, f64::max);
        let max_items = all().map(|p| p.unique_items).max().unwrap_or(0).max(1);
        Some(Scale {
            t0,
            t1,
            span: (t1 - t0).max(1.0),
            max_items,
        })
    }

    fn x(&self, t: f64) -> f64 {
        let plot_w = WIDTH - LEFT - RIGHT;
        LEFT + (t - self.t0) / self.span * plot_w
    }

    fn y(&self, v: u64) -> f64 {
        let plot_h = HEIGHT - TOP - BOTTOM;
        TOP + plot_h - (v as f64 / f64::from(self.max_items)) * plot_h
    }
}

/// One decimal: chart coordinates.
fn d1(v: f64) -> String {
    format!("{v:.1}")
}

/// Three horizontal guides with their counts, and the first and last time.
fn axes(scale: &Scale) -> Markup {
    html! {
        @for step in 0..=2u64 {
            @let v = u64::from(scale.max_items) * step / 2;
            @let yy = d1(scale.y(v));
            line x1=(LEFT) y1=(yy) x2=(d1(WIDTH - RIGHT)) y2=(yy) stroke="#e3e6ea" {}
            text x=(d1(LEFT - 6.0)) y=(d1(scale.y(v) + 4.0)) text-anchor="end" fill="#6b7280" { (v) }
        }
        text x=(LEFT) y=(d1(HEIGHT - 8.0)) fill="#6b7280" { (clock(scale.t0)) }
        text x=(d1(WIDTH - RIGHT)) y=(d1(HEIGHT - 8.0)) text-anchor="end" fill="#6b7280" { (clock(scale.t1)) }
    }
}

/// One kind's unique items over time.
fn line(scale: &Scale, kind: Kind, pts: &VecDeque<Point>) -> Markup {
    let path: Vec<String> = pts
        .iter()
        .map(|p| {
            format!(
                "{:.1},{:.1}",
                scale.x(p.at_unix_seconds),
                scale.y(u64::from(p.unique_items)) + lane(kind)
            )
        })
        .collect();
    html! {
        polyline class={ "kind " (kind) } fill="none" stroke=(colour(kind)) stroke-width="2"
            stroke-dasharray=(dashes(kind)) points=(path.join(" ")) {
            title { (kind) }
        }
    }
}

/// A point's mark (shrink, growth, churn) and its list_changed ring.
fn marks(scale: &Scale, kind: Kind, p: &Point) -> Markup {
    let (px, py) = (
        scale.x(p.at_unix_seconds),
        scale.y(u64::from(p.unique_items)) + lane(kind),
    );
    let when = clock(p.at_unix_seconds);
    html! {
        @if let Some(mark) = p.mark {
            @let (shape, fill, what) = match mark {
                Mark::SilentShrink => (triangle_down(px, py), "#b3261e", "silent shrink"),
                Mark::Shrink => (triangle_down(px, py), "#9a6700", "announced shrink"),
                Mark::Growth => (triangle_up(px, py), "#0a7d32", "growth"),
                Mark::Churn => (diamond(px, py), "#6b7280", "names changed"),
            };
            polygon class={ "mark " (what.replace(' ', "-")) } points=(shape) fill=(fill) {
                title { (kind) " " (what) " to " (p.unique_items) " at " (when) }
            }
        }
        @if p.list_changed {
            circle.mark.list-changed cx=(d1(px)) cy=(d1(py)) r="6" fill="none" stroke="#1f6feb" stroke-width="1.5" {
                title { (kind) " list_changed at " (when) }
            }
        }
    }
}

/// The legend is HTML so it reads without the SVG.
fn legend<'a>(kinds: impl Iterator<Item = &'a Kind>) -> Markup {
    html! {
        p.legend {
            @for kind in kinds {
                span style={ "color:" (colour(*kind)) } {
                    svg width="26" height="8" aria-hidden="true" {
                        line x1="0" y1="4" x2="26" y2="4" stroke=(colour(*kind)) stroke-width="2" stroke-dasharray=(dashes(*kind)) {}
                    }
                    " " (kind)
                }
                " "
            }
            span style="color:#b3261e" { "▼ silent shrink" } " "
            span style="color:#9a6700" { "▼ announced shrink" } " "
            span style="color:#0a7d32" { "▲ growth" } " "
            span style="color:#1f6feb" { "○ list_changed" }
        }
    }
}

fn triangle_down(x: f64, y: f64) -> String {
    format!(
        "{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        x - 5.0,
        y - 9.0,
        x + 5.0,
        y - 9.0,
        x,
        y - 1.0
    )
}

fn triangle_up(x: f64, y: f64) -> String {
    format!(
        "{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        x - 5.0,
        y + 9.0,
        x + 5.0,
        y + 9.0,
        x,
        y + 1.0
    )
}

fn diamond(x: f64, y: f64) -> String {
    format!(
        "{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        x,
        y - 5.0,
        x + 5.0,
        y,
        x,
        y + 5.0,
        x - 5.0,
        y
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t: f64, n: u32, mark: Option<Mark>, list_changed: bool) -> Point {
        Point {
            at_unix_seconds: t,
            unique_items: n,
            mark,
            list_changed,
        }
    }

    #[test]
    fn kinds_with_equal_counts_stay_apart() {
        let mut points = BTreeMap::new();
        for kind in Kind::ALL {
            points.insert(
                kind,
                VecDeque::from(vec![
                    point(0.0, 8, None, false),
                    point(60.0, 8, None, false),
                ]),
            );
        }
        let svg = catalogue_chart(&points).into_string();
        let lines: Vec<&str> = svg.split("<polyline").skip(1).collect();
        assert_eq!(lines.len(), 4, "{svg}");
        let attr = |line: &str, name: &str| {
            let start = line.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
            line[start..start + line[start..].find('"').expect("quote")].to_string()
        };
        let strokes: std::collections::BTreeSet<String> =
            lines.iter().map(|l| attr(l, "stroke-dasharray")).collect();
        let heights: std::collections::BTreeSet<String> =
            lines.iter().map(|l| attr(l, "points")).collect();
        assert_eq!(strokes.len(), 4, "{svg}");
        assert_eq!(heights.len(), 4, "{svg}");
        // The legend draws each kind's stroke as the chart does.
        for kind in Kind::ALL {
            assert!(
                svg.contains(&format!(
                    "stroke-dasharray=\"{}\"></line></svg> {kind}",
                    dashes(kind)
                )),
                "{svg}"
            );
        }
    }

    #[test]
    fn marks_every_shrink_growth_and_notice() {
        let mut points = BTreeMap::new();
        points.insert(
            Kind::Tools,
            VecDeque::from(vec![
                point(0.0, 20, None, false),
                point(60.0, 19, Some(Mark::SilentShrink), false),
                point(120.0, 21, Some(Mark::Growth), true),
                point(180.0, 20, Some(Mark::Shrink), true),
            ]),
        );
        let svg = catalogue_chart(&points).into_string();
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("class=\"mark silent-shrink\"").count(), 1);
        assert_eq!(svg.matches("class=\"mark growth\"").count(), 1);
        assert_eq!(svg.matches("class=\"mark announced-shrink\"").count(), 1);
        assert_eq!(svg.matches("class=\"mark list-changed\"").count(), 2);
        assert!(svg.contains("tools silent shrink to 19 at 1970-01-01 00:01:00 UTC"));
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn nothing_kept_says_so() {
        assert!(catalogue_chart(&BTreeMap::new())
            .into_string()
            .contains("No complete listing yet"));
    }

    #[test]
    fn one_point_does_not_divide_by_zero() {
        let mut points = BTreeMap::new();
        points.insert(
            Kind::Tools,
            VecDeque::from(vec![point(5.0, 0, None, false)]),
        );
        let svg = catalogue_chart(&points).into_string();
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
}
