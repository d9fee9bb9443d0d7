//! The validation page's figure as SVG: predicted against measured time on log axes (the
//! diagonal is a perfect prediction, the dashed lines ±25 %), and the error of each row by
//! message size with the target bands (±25 % from 1 MiB, ±35 % below). One colour per
//! system; rows shown but not counted are hollow. Written by hand so that the page and its
//! figure come from one command with no plotting dependency.

use super::svg::xml_escape;
use crate::model::Bytes;
use std::fmt::Write;

/// One measured row placed on the figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotPoint {
    pub bytes: u64,
    pub measured_us: f64,
    pub predicted_us: f64,
    /// Counted in the summary (filled), or shown only (hollow).
    pub counted: bool,
}

/// One system's rows under its label.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSeries {
    pub label: String,
    pub points: Vec<PlotPoint>,
}

/// Distinct colours for up to twenty systems, readable on white; past twenty the colours come
/// round again with another marker (`Marker`).
const PALETTE: [&str; 20] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22", "#393b79", "#637939", "#e6550d", "#31a354", "#756bb1", "#3182bd",
    "#a55194", "#843c39", "#8c6d31", "#636363",
];

const PANEL: f64 = 360.0;
const MARGIN_LEFT: f64 = 70.0;
const MARGIN_TOP: f64 = 50.0;
const GAP: f64 = 110.0;
const LEGEND_WIDTH: f64 = 250.0;
/// The error panel's vertical range (%): rows further off sit on its edge as open triangles.
const ERROR_RANGE: f64 = 100.0;

/// Height of one legend line, px.
const LEGEND_LINE: f64 = 18.0;

/// A system's marker: the colours' first round draws circles, the second squares, the third
/// diamonds, so that no two of sixty systems look alike.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Marker {
    Circle,
    Square,
    Diamond,
}

impl Marker {
    /// The marker and colour of the `n`th system drawn.
    fn of(n: usize) -> (Marker, &'static str) {
        let marker = match (n / PALETTE.len()) % 3 {
            0 => Marker::Circle,
            1 => Marker::Square,
            _ => Marker::Diamond,
        };
        (marker, PALETTE[n % PALETTE.len()])
    }

    /// The marker centred on (x, y), `r` from its centre to its edge; `class` names what it
    /// stands for (a row on the time panel, its error, or nothing for the legend).
    fn draw(self, class: &str, (x, y): (f64, f64), r: f64, fill: &str, stroke: &str) -> String {
        let class = if class.is_empty() {
            String::new()
        } else {
            format!(r#"class="{class}" "#)
        };
        match self {
            Marker::Circle => format!(
                r#"<circle {class}cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}" stroke="{stroke}"/>"#
            ),
            Marker::Square => format!(
                r#"<rect {class}x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="{stroke}"/>"#,
                x - r,
                y - r,
                2.0 * r,
                2.0 * r
            ),
            Marker::Diamond => format!(
                r#"<path {class}d="M{x:.1},{:.1} L{:.1},{y:.1} L{x:.1},{:.1} L{:.1},{y:.1} Z" fill="{fill}" stroke="{stroke}"/>"#,
                y - r - 1.0,
                x + r + 1.0,
                y + r + 1.0,
                x - r - 1.0
            ),
        }
    }
}

/// A linear map from `[lo, hi]` to `[a, b]` (pixels).
fn scale(x: f64, lo: f64, hi: f64, a: f64, b: f64) -> f64 {
    a + (x - lo) / (hi - lo) * (b - a)
}

/// Whole steps of `log` (log10 or log2) covering every positive finite value, as (low, high);
/// at least one step wide.
fn log_range(values: impl Iterator<Item = f64>, log: fn(f64) -> f64) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if hi <= 0.0 {
        return (0.0, 1.0);
    }
    let (lo, hi) = (log(lo).floor(), log(hi).ceil());
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

/// Decades covering every time on the figure, as (log10 low, log10 high).
fn time_decades(series: &[PlotSeries]) -> (f64, f64) {
    let times = series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [p.measured_us, p.predicted_us]);
    log_range(times, f64::log10)
}

/// Powers of two covering every size, as (log2 low, log2 high).
fn size_range(series: &[PlotSeries]) -> (f64, f64) {
    let sizes = series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.bytes.max(1) as f64);
    log_range(sizes, f64::log2)
}

/// "1 µs", "10 ms", ...: a decade's label.
fn decade_label(log10_us: f64) -> String {
    let k = log10_us.round() as i32;
    let (unit, base) = match k {
        i32::MIN..=-1 => ("ns", -3),
        0..=2 => ("µs", 0),
        3..=5 => ("ms", 3),
        _ => ("s", 6),
    };
    format!("{} {unit}", 10u64.pow((k - base).clamp(0, 18) as u32))
}

/// The figure for `series`.
pub fn validation_svg(title: &str, series: &[PlotSeries]) -> String {
    let width = MARGIN_LEFT + PANEL + GAP + PANEL + 40.0 + LEGEND_WIDTH;
    // Tall enough for the panels and for every system's line of the legend.
    let drawn = series.iter().filter(|s| !s.points.is_empty()).count();
    let legend_bottom = MARGIN_TOP + 6.0 + (drawn as f64 + 1.0) * LEGEND_LINE + 12.0;
    let height = (MARGIN_TOP + PANEL + 70.0).max(legend_bottom.ceil());
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r##"<rect width="{width}" height="{height}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{MARGIN_LEFT}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        xml_escape(title)
    );
    let (t_lo, t_hi) = time_decades(series);
    let (b_lo, b_hi) = size_range(series);
    let top = MARGIN_TOP;
    let bottom = MARGIN_TOP + PANEL;
    // Left panel: predicted against measured time.
    let left = MARGIN_LEFT;
    let right = left + PANEL;
    let tx = |us: f64| scale(us.log10(), t_lo, t_hi, left, right);
    let ty = |us: f64| scale(us.log10(), t_lo, t_hi, bottom, top);
    frame(&mut s, left, top, PANEL);
    let mut d = t_lo;
    while d <= t_hi + 1e-9 {
        let (x, y) = (
            scale(d, t_lo, t_hi, left, right),
            scale(d, t_lo, t_hi, bottom, top),
        );
        let label = decade_label(d);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#e6e6e6"/><line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#e6e6e6"/>"##
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#,
            bottom + 16.0,
            left - 6.0,
            y + 4.0
        );
        d += 1.0;
    }
    // The diagonal and the ±25 % lines, clipped to the panel.
    let (a, b) = (10f64.powf(t_lo), 10f64.powf(t_hi));
    for (factor, dash) in [
        (1.0, ""),
        (1.25, r#" stroke-dasharray="5 4""#),
        (0.75, r#" stroke-dasharray="5 4""#),
    ] {
        let (x1, y1) = if factor >= 1.0 {
            (a, a * factor)
        } else {
            (a / factor, a)
        };
        let (x2, y2) = if factor >= 1.0 {
            (b / factor, b)
        } else {
            (b, b * factor)
        };
        let _ = writeln!(
            s,
            r##"<line class="guide" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#555555"{dash}/>"##,
            tx(x1),
            ty(y1),
            tx(x2),
            ty(y2)
        );
    }
    axis_titles(
        &mut s,
        (left, right),
        (top, bottom),
        "measured time",
        "predicted time",
    );
    // Right panel: error by message size.
    let left2 = right + GAP;
    let right2 = left2 + PANEL;
    let ex = |bytes: u64| scale((bytes.max(1) as f64).log2(), b_lo, b_hi, left2, right2);
    let ey = |pct: f64| scale(pct, -ERROR_RANGE, ERROR_RANGE, bottom, top);
    frame(&mut s, left2, top, PANEL);
    for pct in [-100.0, -50.0, 0.0, 50.0, 100.0] {
        let y = ey(pct);
        let _ = writeln!(
            s,
            r##"<line x1="{left2}" y1="{y:.1}" x2="{right2}" y2="{y:.1}" stroke="#e6e6e6"/><text x="{:.1}" y="{:.1}" text-anchor="end">{pct:+.0} %</text>"##,
            left2 - 6.0,
            y + 4.0
        );
    }
    let step = ((b_hi - b_lo) / 6.0).ceil().max(1.0);
    let mut e = b_lo;
    while e <= b_hi + 1e-9 {
        let x = scale(e, b_lo, b_hi, left2, right2);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#e6e6e6"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            bottom + 16.0,
            Bytes(2f64.powf(e) as u64)
        );
        e += step;
    }
    // Target bands: ±35 % below 1 MiB, ±25 % from 1 MiB.
    let mib = ex(1 << 20).clamp(left2, right2);
    for (x1, x2, bound) in [(left2, mib, 35.0), (mib, right2, 25.0)] {
        if x2 > x1 {
            let _ = writeln!(
                s,
                r##"<rect class="band" x="{x1:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#2ca02c" fill-opacity="0.08" stroke="#2ca02c" stroke-opacity="0.4" stroke-dasharray="4 3"/>"##,
                ey(bound),
                x2 - x1,
                ey(-bound) - ey(bound)
            );
        }
    }
    let _ = writeln!(
        s,
        r##"<line x1="{left2}" y1="{:.1}" x2="{right2}" y2="{:.1}" stroke="#555555"/>"##,
        ey(0.0),
        ey(0.0)
    );
    axis_titles(
        &mut s,
        (left2, right2),
        (top, bottom),
        "message size",
        "error (predicted / measured − 1)",
    );
    // The rows, one colour per system.
    let legend_x = right2 + 40.0;
    let mut legend_y = top + 6.0;
    for (n, series) in series.iter().filter(|s| !s.points.is_empty()).enumerate() {
        let (marker, color) = Marker::of(n);
        let _ = writeln!(
            s,
            r#"<g class="series" data-label="{}">"#,
            xml_escape(&series.label)
        );
        for p in &series.points {
            if !(p.measured_us > 0.0 && p.predicted_us > 0.0) {
                continue;
            }
            let fill = if p.counted { color } else { "none" };
            let _ = writeln!(
                s,
                "{}",
                marker.draw(
                    "row",
                    (tx(p.measured_us), ty(p.predicted_us)),
                    3.0,
                    fill,
                    color
                )
            );
            let pct = (p.predicted_us / p.measured_us - 1.0) * 100.0;
            let (x, y) = (ex(p.bytes), ey(pct.clamp(-ERROR_RANGE, ERROR_RANGE)));
            if pct.abs() > ERROR_RANGE {
                // Off the scale: an open triangle on the edge, pointing the way it went.
                let dy = if pct > 0.0 { -5.0 } else { 5.0 };
                let _ = writeln!(
                    s,
                    r#"<path class="off-scale" d="M{:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="none" stroke="{color}"/>"#,
                    x - 4.0,
                    y,
                    x + 4.0,
                    y,
                    x,
                    y + dy
                );
            } else {
                let _ = writeln!(s, "{}", marker.draw("error", (x, y), 3.0, fill, color));
            }
        }
        let _ = writeln!(s, "</g>");
        let _ = writeln!(
            s,
            r#"{}<text x="{:.1}" y="{:.1}">{}</text>"#,
            marker.draw("", (legend_x + 4.0, legend_y), 4.0, color, color),
            legend_x + 14.0,
            legend_y + 4.0,
            xml_escape(&series.label)
        );
        legend_y += LEGEND_LINE;
    }
    let _ = writeln!(
        s,
        r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="none" stroke="#555555"/><text x="{:.1}" y="{:.1}">hollow: shown, not counted</text>"##,
        legend_x + 4.0,
        legend_y + 8.0,
        legend_x + 14.0,
        legend_y + 12.0
    );
    s.push_str("</svg>\n");
    s
}

/// A panel's titles: `x` under it, `y` up its left side.
fn axis_titles(
    s: &mut String,
    (left, right): (f64, f64),
    (top, bottom): (f64, f64),
    x: &str,
    y: &str,
) {
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{x}</text>"#,
        (left + right) / 2.0,
        bottom + 36.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle">{y}</text>"#,
        left - 52.0,
        (top + bottom) / 2.0
    );
}

/// A panel's border.
fn frame(s: &mut String, left: f64, top: f64, size: f64) {
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#999999"/>"##
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades_read_as_round_times() {
        let labels: Vec<String> = (-1..=7).map(|d| decade_label(f64::from(d))).collect();
        assert_eq!(
            labels,
            [
                "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"
            ]
        );
    }

    #[test]
    fn points_land_where_their_numbers_say() {
        let series = vec![PlotSeries {
            label: "A<B".into(),
            points: vec![
                PlotPoint {
                    bytes: 4 << 20,
                    measured_us: 10.0,
                    predicted_us: 10.0,
                    counted: true,
                },
                PlotPoint {
                    bytes: 1 << 10,
                    measured_us: 1.0,
                    predicted_us: 100.0,
                    counted: false,
                },
            ],
        }];
        let svg = validation_svg("t", &series);
        // Times span 1 µs to 100 µs: two decades over 360 px. 10 µs sits in the middle.
        let mid_x = MARGIN_LEFT + PANEL / 2.0;
        let mid_y = MARGIN_TOP + PANEL / 2.0;
        assert!(
            svg.contains(&format!(r#"cx="{mid_x:.1}" cy="{mid_y:.1}""#)),
            "{svg}"
        );
        // The second row is +9,900 %: off the error scale, drawn as a triangle, hollow.
        assert_eq!(svg.matches(r#"class="off-scale""#).count(), 1);
        assert_eq!(svg.matches(r#"class="error""#).count(), 1);
        assert!(svg.contains(r##"fill="none" stroke="#1f77b4""##));
        assert!(svg.contains("A&lt;B"));
        // Sizes span 1 KiB to 4 MiB: both bands, split at 1 MiB (10 of 12 doublings in).
        assert_eq!(svg.matches(r#"class="band""#).count(), 2);
        let split = MARGIN_LEFT + PANEL + GAP + PANEL * 10.0 / 12.0;
        assert!(
            svg.contains(&format!(r#"class="band" x="{split:.1}""#)),
            "{svg}"
        );
    }

    #[test]
    fn more_systems_than_colours_get_other_markers_and_the_legend_fits() {
        let series: Vec<PlotSeries> = (0..42)
            .map(|i| PlotSeries {
                label: format!("S{i}"),
                points: vec![PlotPoint {
                    bytes: 1 << 20,
                    measured_us: 10.0,
                    predicted_us: 11.0,
                    counted: true,
                }],
            })
            .collect();
        let svg = validation_svg("t", &series);
        // 20 circles, 20 squares, 2 diamonds: on each panel, and one each in the legend.
        assert_eq!(svg.matches(r#"<circle class="row""#).count(), 20);
        assert_eq!(svg.matches(r#"<rect class="row""#).count(), 20);
        assert_eq!(svg.matches(r#"<path class="row""#).count(), 2);
        assert_eq!(svg.matches(r#"<rect class="error""#).count(), 20);
        // System 21 wears system 1's colour, as a square.
        assert!(svg.contains(r##"<rect class="row" x="##));
        assert_eq!(
            svg.matches(r##"fill="#1f77b4" stroke="#1f77b4""##).count(),
            9
        );
        // 42 systems and the hollow key, 18 px each from 56 px down, and 12 px under them:
        // 50 + 6 + 43 × 18 + 12 = 842 px, taller than the panels' 480.
        assert!(svg.contains(r#"height="842""#), "{}", &svg[..200]);
    }
}
