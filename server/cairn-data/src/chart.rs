//! The chart renderer behind the chart tools: bar, line, scatter and histogram charts drawn with
//! plotters as SVG text or PNG bytes, both [`WIDTH`]×[`HEIGHT`].
//!
//! The tools fill a [`Chart`] from query results and call [`svg`] or [`png`]; this module checks
//! the input first (empty, mismatched lengths, all values missing, too many bars, series or
//! points) and answers with a [`ChartError`] the model can act on, then draws. Text is rendered
//! with an embedded DejaVu Sans, so PNGs look the same on every machine and need no system fonts.
//!
//! Conventions: `NaN` (and ±infinity) is a missing point: a bar is left out, a line breaks, a
//! scatter point is skipped. Finite values beyond ±[`LIMIT`] are drawn at that limit, so ranges
//! and their padding stay finite. A degenerate range (one point, identical values) is widened.
//! The x axis of categories is drawn by this module (thinned and rotated labels), as are time
//! ticks (on whole seconds, minutes, hours, days, months or years, formatted for the span).

use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontTransform, RGBColor};

/// Width of every chart, in pixels (the SVG's user units).
pub const WIDTH: u32 = 960;
/// Height of every chart, in pixels.
pub const HEIGHT: u32 = 600;
/// Most bars (categories) in a bar chart: beyond this labels are unreadable.
pub const MAX_BARS: usize = 60;
/// Most series in one chart: one per palette colour, so colours stay distinct.
pub const MAX_SERIES: usize = PALETTE.len();
/// Most points (x values × series) in a line or scatter chart: keeps SVGs small and PNGs fast.
pub const MAX_POINTS: usize = 50_000;
/// Most bins in a histogram.
pub const MAX_BINS: usize = 200;
/// Values are clamped to ±LIMIT so that spans and padding never overflow to infinity.
pub const LIMIT: f64 = 1e300;

/// What kind of chart to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One bar per x value; several series are grouped side by side.
    Bar,
    /// One line per series; a missing value breaks the line.
    Line,
    /// One dot per point; several series in different colours.
    Scatter,
    /// Touching bars between bin edges: `x` holds n+1 edges, the one series n counts.
    Histogram,
}

/// The x values of a chart.
#[derive(Debug, Clone, PartialEq)]
pub enum Axis {
    /// Labels, drawn in the given order (bar and line charts).
    Categories(Vec<String>),
    /// Numbers; NaN or infinite ones make their points missing.
    Numbers(Vec<f64>),
    /// Instants in milliseconds since the Unix epoch, UTC.
    Times(Vec<i64>),
}

impl Axis {
    /// How many x values there are.
    pub fn len(&self) -> usize {
        match self {
            Axis::Categories(v) => v.len(),
            Axis::Numbers(v) => v.len(),
            Axis::Times(v) => v.len(),
        }
    }

    /// Whether there are no x values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One named row of y values, as long as the x axis (NaN = missing).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Shown in the legend (when there are two or more series).
    pub name: String,
    /// One value per x value (per bin in a histogram).
    pub values: Vec<f64>,
}

/// What to draw; the tools fill it from query results.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub kind: Kind,
    /// Drawn above the plot; may be empty.
    pub title: String,
    /// The x axis' description, under its tick labels; may be empty.
    pub x_label: String,
    /// The y axis' description, along it; may be empty.
    pub y_label: String,
    /// The x values (bin edges for a histogram).
    pub x: Axis,
    /// One or more series of y values, at most [`MAX_SERIES`].
    pub series: Vec<Series>,
}

/// Why a chart was not drawn. Messages are written for the model: they say what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// No x values or no series.
    #[error("nothing to chart: {0}")]
    Empty(&'static str),
    /// A series is not as long as the x axis (or, in a histogram, one shorter than the edges).
    #[error("series '{series}' has {found} values but {expected} were expected{hint}")]
    Mismatch {
        series: String,
        expected: usize,
        found: usize,
        hint: &'static str,
    },
    /// Every value is missing (NaN or infinite), so there is nothing to draw.
    #[error("nothing to chart: every value is missing (NaN or infinite)")]
    AllMissing,
    /// More bars, series, points or bins than a readable chart holds.
    #[error("too many {what}: {count}, at most {max}; {hint}")]
    TooMany {
        what: &'static str,
        count: usize,
        max: usize,
        hint: &'static str,
    },
    /// The input does not fit the kind of chart (e.g. a scatter over categories).
    #[error("{0}")]
    Invalid(String),
    /// Drawing or encoding failed (a bug or a resource problem, not the input).
    #[error("the chart could not be drawn: {0}")]
    Render(String),
}

/// Renders the chart as an SVG document.
pub fn svg(chart: &Chart) -> Result<String, ChartError> {
    let plan = Plan::new(chart)?;
    ensure_font()?;
    let mut out = String::new();
    guarded(|| {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, &plan)?;
        root.present().map_err(render)
    })?;
    Ok(out)
}

/// Renders the chart as a PNG image (8-bit RGB).
pub fn png(chart: &Chart) -> Result<Vec<u8>, ChartError> {
    let plan = Plan::new(chart)?;
    ensure_font()?;
    let mut pixels = vec![255u8; WIDTH as usize * HEIGHT as usize * 3];
    guarded(|| {
        let root = BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, &plan)?;
        root.present().map_err(render)
    })?;
    let mut out = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut out, WIDTH, HEIGHT);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(render)?;
    writer.write_image_data(&pixels).map_err(render)?;
    writer.finish().map_err(render)?;
    Ok(out)
}

/// Runs a drawing; a panic inside plotters becomes an error instead of taking the server down.
fn guarded(f: impl FnOnce() -> Result<(), ChartError>) -> Result<(), ChartError> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Err(ChartError::Render(message))
        }
    }
}

fn render(e: impl std::fmt::Display) -> ChartError {
    ChartError::Render(e.to_string())
}

static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

/// Registers the embedded font once; plotters keeps it in a process-wide table.
fn ensure_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(ChartError::Render(
            "the embedded font could not be loaded".into(),
        ))
    }
}

/// Tableau 10: distinct hues that stay apart for most colour-blind readers.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);

const TITLE_SIZE: f64 = 28.0;
const DESC_SIZE: f64 = 19.0;
const LABEL_SIZE: f64 = 16.0;
const MARGIN: i32 = 16;
const Y_AREA: i32 = 84;
/// The legend's column right of the plot: as wide as its longest name, within these bounds.
const LEGEND_WIDTH: (i32, i32) = (90, 230);
/// Longest category, legend or tick label in characters before it is cut with an ellipsis.
const MAX_LABEL_CHARS: usize = 28;

/// A checked chart, ready to draw: x as positions, values clamped, ranges padded, ticks chosen.
struct Plan {
    kind: Kind,
    title: String,
    x_label: String,
    y_label: String,
    /// x position of each point (category index, number, or milliseconds).
    xs: Vec<f64>,
    /// The series, values clamped to ±LIMIT, non-finite ones as NaN.
    series: Vec<(String, Vec<f64>)>,
    x_range: (f64, f64),
    y_range: (f64, f64),
    x_ticks: XTicks,
}

/// How the x axis is labelled.
enum XTicks {
    /// One label per category at positions 0, 1, 2, …
    Categories(Vec<String>),
    /// Labels at chosen positions (numbers and times).
    At(Vec<(f64, String)>),
}

impl Plan {
    fn new(chart: &Chart) -> Result<Plan, ChartError> {
        let n = chart.x.len();
        if n == 0 {
            return Err(ChartError::Empty(
                "the x axis has no values (did the query return no rows?)",
            ));
        }
        if chart.series.is_empty() {
            return Err(ChartError::Empty("no series of y values was given"));
        }
        if chart.series.len() > MAX_SERIES {
            return Err(ChartError::TooMany {
                what: "series",
                count: chart.series.len(),
                max: MAX_SERIES,
                hint: "keep the most important series or group the rest into 'other'",
            });
        }
        let (expected, hint) = match chart.kind {
            Kind::Histogram => (
                n.saturating_sub(1),
                " (a histogram has one count per bin, one fewer than its edges)",
            ),
            _ => (n, " (one per x value)"),
        };
        for s in &chart.series {
            if s.values.len() != expected {
                return Err(ChartError::Mismatch {
                    series: s.name.clone(),
                    expected,
                    found: s.values.len(),
                    hint,
                });
            }
        }
        let series: Vec<(String, Vec<f64>)> = chart
            .series
            .iter()
            .map(|s| (s.name.clone(), s.values.iter().map(|&v| clamp(v)).collect()))
            .collect();
        match chart.kind {
            Kind::Bar => Self::bar(chart, series),
            Kind::Line | Kind::Scatter => Self::xy(chart, series),
            Kind::Histogram => Self::histogram(chart, series),
        }
    }

    fn base(chart: &Chart, series: Vec<(String, Vec<f64>)>, xs: Vec<f64>) -> Plan {
        Plan {
            kind: chart.kind,
            title: chart.title.clone(),
            x_label: chart.x_label.clone(),
            y_label: chart.y_label.clone(),
            xs,
            series,
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
            x_ticks: XTicks::At(Vec::new()),
        }
    }

    fn bar(chart: &Chart, series: Vec<(String, Vec<f64>)>) -> Result<Plan, ChartError> {
        let n = chart.x.len();
        if n > MAX_BARS {
            return Err(ChartError::TooMany {
                what: "bars",
                count: n,
                max: MAX_BARS,
                hint: "chart the top n by value (ORDER BY … LIMIT) or group the rest into 'other'",
            });
        }
        let labels: Vec<String> = match &chart.x {
            Axis::Categories(c) => c.clone(),
            Axis::Numbers(v) => v.iter().map(|&x| format_plain(x)).collect(),
            Axis::Times(t) => {
                let unit = time_label_unit(t);
                t.iter().map(|&ms| format_time(ms, unit)).collect()
            }
        };
        let y = value_range(&series).ok_or(ChartError::AllMissing)?;
        let mut plan = Self::base(chart, series, (0..n).map(|i| i as f64).collect());
        plan.x_range = (-0.5, n as f64 - 0.5);
        plan.y_range = pad_range(y, true);
        plan.x_ticks = XTicks::Categories(labels);
        Ok(plan)
    }

    fn xy(chart: &Chart, mut series: Vec<(String, Vec<f64>)>) -> Result<Plan, ChartError> {
        let n = chart.x.len();
        let points = n.saturating_mul(series.len());
        if points > MAX_POINTS {
            return Err(ChartError::TooMany {
                what: "points",
                count: points,
                max: MAX_POINTS,
                hint: "sample the rows, aggregate or resample by time, or chart fewer series",
            });
        }
        let xs: Vec<f64> = match &chart.x {
            Axis::Categories(_) if chart.kind == Kind::Scatter => {
                return Err(ChartError::Invalid(
                    "a scatter chart needs numbers or times on the x axis; use a bar or line chart for categories".into(),
                ));
            }
            Axis::Categories(_) => (0..n).map(|i| i as f64).collect(),
            Axis::Numbers(v) => v.iter().map(|&x| clamp(x)).collect(),
            Axis::Times(t) => t.iter().map(|&ms| ms as f64).collect(),
        };
        // A point needs both coordinates; treat a missing x as missing values.
        for (_, values) in &mut series {
            for (v, x) in values.iter_mut().zip(&xs) {
                if x.is_nan() {
                    *v = f64::NAN;
                }
            }
        }
        let y = value_range(&series).ok_or(ChartError::AllMissing)?;
        let present = |i: usize| series.iter().any(|(_, v)| v[i].is_finite());
        let x = finite_range((0..n).filter(|&i| present(i)).map(|i| xs[i]))
            .ok_or(ChartError::AllMissing)?;

        // Lines are drawn in x order, whatever order the rows came in (categories keep theirs).
        let (xs, series) = if matches!(chart.x, Axis::Categories(_)) || chart.kind == Kind::Scatter
        {
            (xs, series)
        } else {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
            let sorted_xs = order.iter().map(|&i| xs[i]).collect();
            let sorted = series
                .into_iter()
                .map(|(name, v)| (name, order.iter().map(|&i| v[i]).collect()))
                .collect();
            (sorted_xs, sorted)
        };

        let mut plan = Self::base(chart, series, xs);
        plan.y_range = pad_range(y, false);
        match &chart.x {
            Axis::Categories(c) => {
                plan.x_range = (-0.5, n as f64 - 0.5);
                plan.x_ticks = XTicks::Categories(c.clone());
            }
            Axis::Numbers(_) => {
                plan.x_range = pad_range(x, false);
                plan.x_ticks = XTicks::At(number_ticks(plan.x_range));
            }
            Axis::Times(_) => {
                plan.x_range = pad_time_range(x);
                plan.x_ticks = XTicks::At(time_ticks(plan.x_range));
            }
        }
        Ok(plan)
    }

    fn histogram(chart: &Chart, series: Vec<(String, Vec<f64>)>) -> Result<Plan, ChartError> {
        let Axis::Numbers(edges) = &chart.x else {
            return Err(ChartError::Invalid(
                "a histogram needs its bin edges as numbers on the x axis".into(),
            ));
        };
        if series.len() != 1 {
            return Err(ChartError::Invalid(format!(
                "a histogram has exactly one series of counts, not {}",
                series.len()
            )));
        }
        if edges.len() < 2 {
            return Err(ChartError::Empty(
                "a histogram needs at least two bin edges (one bin)",
            ));
        }
        if edges.len() - 1 > MAX_BINS {
            return Err(ChartError::TooMany {
                what: "bins",
                count: edges.len() - 1,
                max: MAX_BINS,
                hint: "use fewer, wider bins",
            });
        }
        let edges: Vec<f64> = edges.iter().map(|&e| clamp(e)).collect();
        if edges.iter().any(|e| e.is_nan()) || edges.windows(2).any(|w| w[0] >= w[1]) {
            return Err(ChartError::Invalid(
                "histogram bin edges must be finite and strictly increasing".into(),
            ));
        }
        let y = value_range(&series).ok_or(ChartError::AllMissing)?;
        let x = (edges[0], edges[edges.len() - 1]);
        let mut plan = Self::base(chart, series, edges);
        plan.x_range = pad_range(x, false);
        plan.y_range = pad_range(y, true);
        plan.x_ticks = XTicks::At(number_ticks(plan.x_range));
        Ok(plan)
    }
}

/// Finite values clamped to ±LIMIT; NaN and ±infinity become NaN (missing).
fn clamp(v: f64) -> f64 {
    if v.is_finite() {
        v.clamp(-LIMIT, LIMIT)
    } else {
        f64::NAN
    }
}

fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

fn value_range(series: &[(String, Vec<f64>)]) -> Option<(f64, f64)> {
    finite_range(series.iter().flat_map(|(_, v)| v.iter().copied()))
}

/// Pads a range by 5% on each side (not below a zero baseline), widening a degenerate one.
fn pad_range((lo, hi): (f64, f64), include_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = if include_zero {
        (lo.min(0.0), hi.max(0.0))
    } else {
        (lo, hi)
    };
    // A span too small for the magnitude (or none) gives no ticks: widen it around the middle.
    let magnitude = lo.abs().max(hi.abs());
    if magnitude == 0.0 {
        // All zero: a unit range (above the baseline when there is one).
        return if include_zero {
            (0.0, 1.0)
        } else {
            (-1.0, 1.0)
        };
    }
    if hi - lo <= magnitude * 1e-9 {
        let d = if magnitude == 0.0 {
            1.0
        } else {
            magnitude * 0.1
        };
        if !(include_zero && lo == 0.0) {
            lo -= d;
        }
        if !(include_zero && hi == 0.0) {
            hi += d;
        }
    }
    let pad = (hi - lo) * 0.05;
    let lo = if include_zero && lo == 0.0 {
        0.0
    } else {
        lo - pad
    };
    let hi = if include_zero && hi == 0.0 {
        0.0
    } else {
        hi + pad
    };
    (lo, hi)
}

const SECOND: f64 = 1000.0;
const MINUTE: f64 = 60.0 * SECOND;
const HOUR: f64 = 60.0 * MINUTE;
const DAY: f64 = 24.0 * HOUR;

fn pad_time_range((lo, hi): (f64, f64)) -> (f64, f64) {
    if hi - lo < SECOND {
        // One instant: show the day around it.
        return (lo - DAY / 2.0, hi + DAY / 2.0);
    }
    let pad = (hi - lo) * 0.03;
    (lo - pad, hi + pad)
}

/// "Nice" ticks (1, 2 or 5 × 10^k apart), about 8 of them.
fn number_ticks((lo, hi): (f64, f64)) -> Vec<(f64, String)> {
    let step = nice_step((hi - lo) / 8.0);
    if !(step.is_finite() && step > 0.0) {
        return Vec::new();
    }
    let first = (lo / step).ceil();
    let mut ticks = Vec::new();
    for k in 0..=20 {
        let v = (first + k as f64) * step;
        if v > hi + step * 1e-9 {
            break;
        }
        // Snap -0 and rounding noise to the tick grid.
        let v = if (v / step).abs() < 1e-9 { 0.0 } else { v };
        ticks.push((v, format_tick(v, step)));
    }
    ticks
}

fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return f64::NAN;
    }
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let f = raw / base;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// A tick label with as many decimals as the step needs; k/M/B/T for large values.
fn format_tick(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs().max(step.abs());
    if !(1e-6..1e15).contains(&a) {
        return trim_exp(format!("{v:.2e}"));
    }
    let (div, suffix) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "B")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let scaled_step = step / div;
    let decimals = if scaled_step >= 1.0 {
        0
    } else {
        (-scaled_step.log10()).ceil().clamp(0.0, 12.0) as usize
    };
    format!("{:.*}{suffix}", decimals, v / div)
}

fn trim_exp(s: String) -> String {
    // "1.50e9" → "1.5e9", "2.00e9" → "2e9".
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// A number as a category label: shortest exact form, scientific when very large or small.
fn format_plain(v: f64) -> String {
    if !v.is_finite() {
        return "(missing)".into();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e15).contains(&a) {
        trim_exp(format!("{v:.3e}"))
    } else {
        let mut s = format!("{v}");
        if s.len() > 12 {
            s = format!("{v:.6}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string();
        }
        s
    }
}

/// How finely times are labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeUnit {
    Year,
    Month,
    Day,
    Minute,
    Second,
}

/// The unit that labels a set of instants without losing what sets them apart.
fn time_label_unit(times: &[i64]) -> TimeUnit {
    let mut unit = TimeUnit::Year;
    for &ms in times {
        let (_, month, day, h, m, _) = civil(ms);
        let u = if ms.rem_euclid(60_000) != 0 {
            TimeUnit::Second
        } else if h != 0 || m != 0 {
            TimeUnit::Minute
        } else if day != 1 {
            TimeUnit::Day
        } else if month != 1 {
            TimeUnit::Month
        } else {
            TimeUnit::Year
        };
        unit = finer(unit, u);
    }
    unit
}

fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    let rank = |u| match u {
        TimeUnit::Year => 0,
        TimeUnit::Month => 1,
        TimeUnit::Day => 2,
        TimeUnit::Minute => 3,
        TimeUnit::Second => 4,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn format_time(ms: i64, unit: TimeUnit) -> String {
    let (y, mo, d, h, mi, s) = civil(ms);
    match unit {
        TimeUnit::Year => format!("{y}"),
        TimeUnit::Month => format!("{y}-{mo:02}"),
        TimeUnit::Day => format!("{y}-{mo:02}-{d:02}"),
        TimeUnit::Minute => format!("{y}-{mo:02}-{d:02} {h:02}:{mi:02}"),
        TimeUnit::Second => format!("{y}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
    }
}

/// (year, month, day, hour, minute, second) of a UTC instant (Howard Hinnant's civil_from_days).
fn civil(ms: i64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (sod / 3600) as u32,
        (sod % 3600 / 60) as u32,
        (sod % 60) as u32,
    )
}

/// Days since the epoch of a civil date (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A tick label: sub-day ticks drop the year so that about 8 of them fit side by side.
fn time_tick_label(ms: i64, unit: TimeUnit) -> String {
    let (_, mo, d, h, mi, s) = civil(ms);
    match unit {
        TimeUnit::Second => format!("{h:02}:{mi:02}:{s:02}"),
        TimeUnit::Minute => format!("{mo:02}-{d:02} {h:02}:{mi:02}"),
        _ => format_time(ms, unit),
    }
}

/// Ticks on whole calendar units, at most about 8, labelled for their step.
fn time_ticks((lo, hi): (f64, f64)) -> Vec<(f64, String)> {
    let span = hi - lo;
    const FIXED: [f64; 20] = [
        SECOND,
        2.0 * SECOND,
        5.0 * SECOND,
        10.0 * SECOND,
        15.0 * SECOND,
        30.0 * SECOND,
        MINUTE,
        2.0 * MINUTE,
        5.0 * MINUTE,
        10.0 * MINUTE,
        15.0 * MINUTE,
        30.0 * MINUTE,
        HOUR,
        2.0 * HOUR,
        3.0 * HOUR,
        6.0 * HOUR,
        12.0 * HOUR,
        DAY,
        2.0 * DAY,
        7.0 * DAY,
    ];
    if let Some(&step) = FIXED.iter().find(|&&s| span / s <= 8.0) {
        let unit = if step < MINUTE {
            TimeUnit::Second
        } else if step < DAY {
            TimeUnit::Minute
        } else {
            TimeUnit::Day
        };
        // Weeks start on Mondays; the epoch was a Thursday, four days later.
        let shift = if step == 7.0 * DAY { 4.0 * DAY } else { 0.0 };
        let first = ((lo - shift) / step).ceil();
        return (0..=10)
            .map(|k| (first + k as f64) * step + shift)
            .take_while(|&v| v <= hi)
            .map(|v| (v, time_tick_label(v as i64, unit)))
            .collect();
    }
    // Months and years: step in months, ticks on the first of a month.
    let months_span = span / (30.44 * DAY);
    let step = [
        1i64, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200, 2400, 6000, 12000, 24000,
    ]
    .into_iter()
    .find(|&s| months_span / s as f64 <= 8.0)
    .unwrap_or_else(|| {
        // Beyond a few thousand years: nice multiples of a year.
        (nice_step(months_span / 12.0 / 8.0).max(1.0) as i64).saturating_mul(12)
    });
    let unit = if step < 12 {
        TimeUnit::Month
    } else {
        TimeUnit::Year
    };
    let (y, m, ..) = civil(lo as i64);
    let mut index = (y.saturating_mul(12) + i64::from(m) - 1).saturating_add(1);
    index = index
        .div_euclid(step)
        .saturating_add(1)
        .saturating_mul(step);
    // Step back one: the first month boundary may still be inside the range.
    index = index.saturating_sub(step);
    let mut ticks = Vec::new();
    for _ in 0..12 {
        let (ty, tm) = (index.div_euclid(12), index.rem_euclid(12) as u32 + 1);
        let v = days_from_civil(ty, tm, 1) as f64 * DAY;
        if v > hi {
            break;
        }
        if v >= lo {
            ticks.push((v, format_time(v as i64, unit)));
        }
        index = index.saturating_add(step);
    }
    ticks
}

/// Cuts a label to `max` characters with an ellipsis; control characters (newlines, tabs)
/// become spaces, as a label is drawn on one line.
fn shorten(s: &str, max: usize) -> String {
    let clean = s.chars().map(|c| if c.is_control() { ' ' } else { c });
    if s.chars().count() <= max {
        clean.collect()
    } else {
        let mut out: String = clean.take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

fn font(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

/// How the labels of a categorical x axis are laid out.
struct CategoryLayout {
    labels: Vec<String>,
    every: usize,
    rotated: bool,
    height: i32,
}

fn layout_categories<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &[String],
    plot_width: i32,
) -> Result<CategoryLayout, ChartError> {
    let style = font(LABEL_SIZE);
    let labels: Vec<String> = labels.iter().map(|l| shorten(l, MAX_LABEL_CHARS)).collect();
    // Measuring is per glyph: on long axes measure only the labels with the most characters.
    let mut longest: Vec<&String> = labels.iter().collect();
    longest.sort_by_key(|l| std::cmp::Reverse(l.chars().count()));
    longest.truncate(64);
    let mut widest = 0i32;
    let mut line = 0i32;
    for l in longest {
        let (w, h) = root.estimate_text_size(l, &style).map_err(render)?;
        widest = widest.max(w as i32);
        line = line.max(h as i32);
    }
    let n = labels.len().max(1) as i32;
    let slot = plot_width / n;
    if widest + 6 <= slot {
        return Ok(CategoryLayout {
            labels,
            every: 1,
            rotated: false,
            height: line + 8,
        });
    }
    // Vertical labels need about a line height each; show every k-th when they do not fit.
    let needed = line + 4;
    let every = ((needed * n) as f64 / plot_width.max(1) as f64)
        .ceil()
        .max(1.0) as usize;
    Ok(CategoryLayout {
        labels,
        every,
        rotated: true,
        height: widest + 10,
    })
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, plan: &Plan) -> Result<(), ChartError> {
    root.fill(&WHITE).map_err(render)?;
    let title = shorten(plan.title.trim(), 70);
    let body = if title.is_empty() {
        root.margin(MARGIN, 0, 0, 0)
    } else {
        root.margin(8, 0, 0, 0)
            .titled(&title, font(TITLE_SIZE))
            .map_err(render)?
    };
    let legend = plan.series.len() > 1;
    let (main, legend_area) = if legend {
        let (w, _) = body.dim_in_pixel();
        let style = font(LABEL_SIZE);
        let mut widest = 0;
        for label in legend_labels(plan) {
            widest = widest.max(root.estimate_text_size(&label, &style).map_err(render)?.0 as i32);
        }
        let width = (widest + 44).clamp(LEGEND_WIDTH.0, LEGEND_WIDTH.1);
        let (a, b) = body.split_horizontally(w as i32 - width);
        (a, Some(b))
    } else {
        (body, None)
    };

    let (main_w, _) = main.dim_in_pixel();
    let plot_width = main_w as i32 - 2 * MARGIN - Y_AREA;
    let categories = match &plan.x_ticks {
        XTicks::Categories(labels) => Some(layout_categories(root, labels, plot_width)?),
        XTicks::At(_) => None,
    };
    let tick_area = match &categories {
        Some(c) => c.height.min(200),
        None => 26,
    };
    let desc_area = if plan.x_label.trim().is_empty() {
        4
    } else {
        26
    };

    let mut chart = ChartBuilder::on(&main)
        .margin(MARGIN)
        .x_label_area_size(tick_area + desc_area)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(
            plan.x_range.0..plan.x_range.1,
            plan.y_range.0..plan.y_range.1,
        )
        .map_err(render)?;

    let y_step = nice_step((plan.y_range.1 - plan.y_range.0) / 8.0);
    let y_format = |v: &f64| format_tick(*v, y_step);
    let y_desc = shorten(plan.y_label.trim(), 60);
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .disable_x_axis()
        .y_labels(9)
        .y_max_light_lines(0)
        .bold_line_style(GRID)
        .axis_style(INK)
        .label_style(font(LABEL_SIZE))
        .axis_desc_style(font(DESC_SIZE))
        .y_label_formatter(&y_format);
    if !y_desc.is_empty() {
        mesh.y_desc(y_desc);
    }
    mesh.draw().map_err(render)?;

    let (px, py) = chart.plotting_area().get_pixel_range();
    let (left, right, bottom) = (px.start, px.end, py.end);

    // The x axis: line, ticks, labels (and light vertical grid lines at numeric/time ticks).
    let axis = |a: (i32, i32), b: (i32, i32), c: RGBColor| PathElement::new(vec![a, b], c);
    root.draw(&axis((left, bottom), (right, bottom), INK))
        .map_err(render)?;
    let draw_tick = |x: f64, label: &str, rotated: bool| -> Result<(), ChartError> {
        let (tx, _) = chart.backend_coord(&(x, plan.y_range.0));
        root.draw(&axis((tx, bottom), (tx, bottom + 5), INK))
            .map_err(render)?;
        let style = if rotated {
            font(LABEL_SIZE)
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Right, VPos::Center))
        } else {
            font(LABEL_SIZE).pos(Pos::new(HPos::Center, VPos::Top))
        };
        root.draw_text(label, &style, (tx, bottom + 8))
            .map_err(render)
    };
    match (&plan.x_ticks, &categories) {
        (XTicks::Categories(_), Some(layout)) => {
            for (i, label) in layout.labels.iter().enumerate() {
                if i % layout.every == 0 {
                    draw_tick(i as f64, label, layout.rotated)?;
                }
            }
        }
        (XTicks::At(ticks), _) => {
            for (x, label) in ticks {
                draw_tick(*x, label, false)?;
            }
        }
        _ => {}
    }
    if let XTicks::At(ticks) = &plan.x_ticks {
        for (x, _) in ticks {
            let (tx, _) = chart.backend_coord(&(*x, plan.y_range.0));
            root.draw(&axis((tx, py.start), (tx, bottom - 1), GRID))
                .map_err(render)?;
        }
    }
    let x_desc = shorten(plan.x_label.trim(), 90);
    if !x_desc.is_empty() {
        let style = font(DESC_SIZE).pos(Pos::new(HPos::Center, VPos::Bottom));
        let y = bottom + tick_area + desc_area;
        root.draw_text(&x_desc, &style, ((left + right) / 2, y))
            .map_err(render)?;
    }

    // A baseline at zero when values go negative (at the top edge when all are).
    if plan.y_range.0 < 0.0 && plan.y_range.1 >= 0.0 {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(plan.x_range.0, 0.0), (plan.x_range.1, 0.0)],
                INK.mix(0.6),
            )))
            .map_err(render)?;
    }

    match plan.kind {
        Kind::Bar => draw_bars(&mut chart, plan)?,
        Kind::Line => draw_lines(&mut chart, plan)?,
        Kind::Scatter => draw_scatter(&mut chart, plan)?,
        Kind::Histogram => draw_histogram(&mut chart, plan)?,
    }

    if let Some(area) = legend_area {
        draw_legend(&area, plan)?;
    }
    Ok(())
}

type Ctx<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_bars<DB: DrawingBackend>(chart: &mut Ctx<'_, DB>, plan: &Plan) -> Result<(), ChartError> {
    let k = plan.series.len() as f64;
    let width = 0.8 / k;
    for (s, (_, values)) in plan.series.iter().enumerate() {
        let color = PALETTE[s % PALETTE.len()];
        let bars = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, &v)| {
                let x0 = i as f64 - 0.4 + s as f64 * width;
                // A hair of space between grouped bars keeps them apart.
                let gap = if k > 1.0 { width * 0.06 } else { 0.0 };
                Rectangle::new(
                    [(x0 + gap, v.max(0.0)), (x0 + width - gap, v.min(0.0))],
                    color.filled(),
                )
            });
        chart.draw_series(bars).map_err(render)?;
    }
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(chart: &mut Ctx<'_, DB>, plan: &Plan) -> Result<(), ChartError> {
    for (s, (_, values)) in plan.series.iter().enumerate() {
        let color = PALETTE[s % PALETTE.len()];
        let points: Vec<Option<(f64, f64)>> = plan
            .xs
            .iter()
            .zip(values)
            .map(|(&x, &y)| (x.is_finite() && y.is_finite()).then_some((x, y)))
            .collect();
        // Runs of present points: a missing value breaks the line.
        let runs = points.split(|p| p.is_none()).filter(|r| !r.is_empty());
        let few = points.iter().flatten().count() <= 60;
        for run in runs {
            let run: Vec<(f64, f64)> = run.iter().flatten().copied().collect();
            chart
                .draw_series(std::iter::once(PathElement::new(
                    run.clone(),
                    color.stroke_width(2),
                )))
                .map_err(render)?;
            // Markers when there are few points, and always for a point standing alone.
            if few || run.len() == 1 {
                chart
                    .draw_series(run.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                    .map_err(render)?;
            }
        }
    }
    Ok(())
}

fn draw_scatter<DB: DrawingBackend>(
    chart: &mut Ctx<'_, DB>,
    plan: &Plan,
) -> Result<(), ChartError> {
    for (s, (_, values)) in plan.series.iter().enumerate() {
        let color = PALETTE[s % PALETTE.len()];
        let dots = plan
            .xs
            .iter()
            .zip(values)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(&x, &y)| Circle::new((x, y), 3, color.mix(0.75).filled()));
        chart.draw_series(dots).map_err(render)?;
    }
    Ok(())
}

fn draw_histogram<DB: DrawingBackend>(
    chart: &mut Ctx<'_, DB>,
    plan: &Plan,
) -> Result<(), ChartError> {
    let color = PALETTE[0];
    let edge = RGBColor(0x2f, 0x4b, 0x68);
    let Some((_, counts)) = plan.series.first() else {
        return Ok(());
    };
    for (i, &c) in counts.iter().enumerate() {
        if !c.is_finite() {
            continue;
        }
        let corners = [(plan.xs[i], c.max(0.0)), (plan.xs[i + 1], c.min(0.0))];
        chart
            .draw_series([
                Rectangle::new(corners, color.filled()),
                Rectangle::new(corners, edge.stroke_width(1)),
            ])
            .map_err(render)?;
    }
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plan: &Plan,
) -> Result<(), ChartError> {
    let style = font(LABEL_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    let top = MARGIN + 8;
    for (s, label) in legend_labels(plan).iter().enumerate() {
        let y = top + s as i32 * 24;
        let color = PALETTE[s % PALETTE.len()];
        // The swatch looks like the marks: a line with a dot for lines, a box otherwise.
        if plan.kind == Kind::Line {
            area.draw(&PathElement::new(
                vec![(2, y), (22, y)],
                color.stroke_width(2),
            ))
            .map_err(render)?;
            area.draw(&Circle::new((12, y), 3, color.filled()))
                .map_err(render)?;
        } else {
            area.draw(&Rectangle::new([(5, y - 7), (19, y + 7)], color.filled()))
                .map_err(render)?;
        }
        area.draw_text(label, &style, (30, y)).map_err(render)?;
    }
    Ok(())
}

/// Series names as the legend shows them: shortened, and numbered when blank.
fn legend_labels(plan: &Plan) -> Vec<String> {
    plan.series
        .iter()
        .enumerate()
        .map(|(s, (name, _))| {
            let mut label = shorten(name.trim(), 20);
            if label.is_empty() {
                let _ = write!(label, "series {}", s + 1);
            }
            label
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn series(name: &str, values: &[f64]) -> Series {
        Series {
            name: name.into(),
            values: values.to_vec(),
        }
    }

    fn chart(kind: Kind, x: Axis, series: Vec<Series>) -> Chart {
        Chart {
            kind,
            title: "Sales by region".into(),
            x_label: "Region".into(),
            y_label: "Revenue (EUR)".into(),
            x,
            series,
        }
    }

    fn cats(names: &[&str]) -> Axis {
        Axis::Categories(names.iter().map(|s| s.to_string()).collect())
    }

    fn grouped_bars() -> Chart {
        chart(
            Kind::Bar,
            cats(&["North", "South", "East"]),
            vec![
                series("2023", &[120.0, 80.0, 95.5]),
                series("2024", &[140.0, -20.0, 101.0]),
            ],
        )
    }

    /// A small well-formedness check: tags balance and the document is one <svg> element.
    fn assert_xmlish(svg: &str) {
        let body = svg.trim_start();
        let body = match body.strip_prefix("<?xml") {
            Some(rest) => &rest[rest.find("?>").map(|i| i + 2).unwrap_or(0)..],
            None => body,
        };
        assert!(
            body.trim_start().starts_with("<svg"),
            "{}",
            &body[..body.len().min(80)]
        );
        let mut stack: Vec<String> = Vec::new();
        let mut rest = body;
        while let Some(start) = rest.find('<') {
            let end = rest[start..]
                .find('>')
                .map(|e| start + e)
                .unwrap_or_else(|| panic!("unclosed tag"));
            let tag = &rest[start + 1..end];
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(
                    stack.pop().as_deref(),
                    Some(name.trim()),
                    "mismatched </{name}>"
                );
            } else if !tag.ends_with('/') && !tag.starts_with('!') && !tag.starts_with('?') {
                let name = tag.split_whitespace().next().unwrap_or_default();
                stack.push(name.to_string());
            }
            rest = &rest[end + 1..];
        }
        assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    }

    /// plotters' SVG puts each text on its own line inside <text>.
    fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!(">\n{text}\n</text>"))
    }

    fn rects_with_fill(svg: &str, color: RGBColor) -> usize {
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
        svg.split("<rect")
            .skip(1)
            .filter(|r| r[..r.find('>').unwrap_or(r.len())].contains(&fill))
            .count()
    }

    fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let decoder = ::png::Decoder::new(png_bytes);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, ::png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn pixel(buf: &[u8], x: u32, y: u32) -> (u8, u8, u8) {
        let i = (y * WIDTH + x) as usize * 3;
        (buf[i], buf[i + 1], buf[i + 2])
    }

    #[test]
    fn svg_bar_has_title_axis_labels_grouped_bars_and_legend() {
        let svg = svg(&grouped_bars()).unwrap();
        assert_xmlish(&svg);
        assert!(
            svg.contains(&format!("width=\"{WIDTH}\""))
                && svg.contains(&format!("height=\"{HEIGHT}\""))
        );
        for text in [
            "Sales by region",
            "Region",
            "Revenue (EUR)",
            "North",
            "South",
            "East",
            "2023",
            "2024",
        ] {
            assert!(has_text(&svg, text), "missing text {text}");
        }
        // Three bars per series plus one legend swatch each.
        assert_eq!(rects_with_fill(&svg, PALETTE[0]), 4);
        assert_eq!(rects_with_fill(&svg, PALETTE[1]), 4);
    }

    #[test]
    fn text_is_escaped_and_kept_on_one_line() {
        let mut c = grouped_bars();
        c.title = "<b>Tom & Jerry</b>\nsecond line".into();
        c.x = cats(&["a\tb", "<", "&"]);
        let svg = svg(&c).unwrap();
        assert_xmlish(&svg);
        assert!(has_text(
            &svg,
            "&lt;b&gt;Tom &amp; Jerry&lt;/b&gt; second line"
        ));
        assert!(has_text(&svg, "a b") && has_text(&svg, "&lt;") && has_text(&svg, "&amp;"));
        assert!(png(&c).is_ok());
    }

    #[test]
    fn the_largest_accepted_inputs_render() {
        let n = MAX_POINTS / 2;
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin() * i as f64).collect();
        let ys = |k: f64| Series {
            name: format!("s{k}"),
            values: xs.iter().map(|x| x * k + (x * 3.1).cos()).collect(),
        };
        let scatter = chart(
            Kind::Scatter,
            Axis::Numbers(xs.clone()),
            vec![ys(1.0), ys(-0.5)],
        );
        let labels: Vec<String> = (0..n).map(|i| format!("day {i}")).collect();
        let line = chart(Kind::Line, Axis::Categories(labels), vec![ys(1.0), ys(2.0)]);
        for c in [&scatter, &line] {
            let started = std::time::Instant::now();
            let svg_len = svg(c).unwrap().len();
            let png_len = png(c).unwrap().len();
            assert!(svg_len < 8_000_000, "svg {svg_len} bytes");
            assert!(png_len > 10_000);
            eprintln!(
                "{:?}: {:?}, svg {svg_len} bytes, png {png_len} bytes",
                c.kind,
                started.elapsed()
            );
        }
    }

    #[test]
    fn single_series_has_no_legend() {
        let c = chart(
            Kind::Bar,
            cats(&["a", "b"]),
            vec![series("only-one", &[1.0, 2.0])],
        );
        let svg = svg(&c).unwrap();
        assert!(!has_text(&svg, "only-one"));
        assert_eq!(rects_with_fill(&svg, PALETTE[0]), 2);
    }

    #[test]
    fn png_is_a_png_of_the_stated_size_with_bars_and_title_text() {
        let bytes = png(&grouped_bars()).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let (w, h, buf) = decode(&bytes);
        assert_eq!((w, h), (WIDTH, HEIGHT));
        // Bars: many pixels of the first and second palette colours in the plot area.
        let count = |c: RGBColor| {
            (80..h - 60)
                .flat_map(|y| (90..w - LEGEND_WIDTH.1 as u32).map(move |x| (x, y)))
                .filter(|&(x, y)| pixel(&buf, x, y) == (c.0, c.1, c.2))
                .count()
        };
        assert!(
            count(PALETTE[0]) > 2000,
            "first series bars: {}",
            count(PALETTE[0])
        );
        assert!(
            count(PALETTE[1]) > 2000,
            "second series bars: {}",
            count(PALETTE[1])
        );
        // Title text: dark pixels in the top band around the centre.
        let dark = (0..45)
            .flat_map(|y| (300..660).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let (r, g, b) = pixel(&buf, x, y);
                r < 120 && g < 120 && b < 120
            })
            .count();
        assert!(dark > 100, "title pixels: {dark}");
    }

    #[test]
    fn every_kind_renders_both_formats_and_samples_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let keep = std::env::var_os("CAIRN_CHART_SAMPLES").map(std::path::PathBuf::from);
        let day = 86_400_000i64;
        let jan = days_from_civil(2024, 1, 1) * day;
        let times: Vec<i64> = (0..120).map(|i| jan + i * day).collect();
        let wave = |k: f64| {
            (0..120)
                .map(|i| (i as f64 / 9.0 + k).sin() * 40.0 + 100.0)
                .collect::<Vec<_>>()
        };
        let mut gaps = wave(1.0);
        gaps[30] = f64::NAN;
        gaps[31] = f64::NAN;
        let months: Vec<String> = (1..=12).map(|m| format!("2024-{m:02}")).collect();
        let xs: Vec<f64> = (0..300)
            .map(|i| (i as f64 * 0.37).sin() * 10.0 + i as f64 / 30.0)
            .collect();
        let samples = [
            (
                "bar",
                chart(
                    Kind::Bar,
                    Axis::Categories(months),
                    vec![
                        series(
                            "Online",
                            &[
                                12.0, 15.5, 14.0, 18.0, 21.0, 19.5, 24.0, 26.0, 22.0, 20.0, 27.0,
                                31.0,
                            ],
                        ),
                        series(
                            "Retail",
                            &[
                                9.0, 8.5, 10.0, 11.0, 10.5, 12.0, 13.5, 12.5, 11.0, 9.5, 14.0, 18.0,
                            ],
                        ),
                        series(
                            "Partners",
                            &[3.0, 4.0, 2.5, 5.0, 6.0, 5.5, 7.0, 6.5, 6.0, 5.0, 8.0, 9.5],
                        ),
                    ],
                ),
            ),
            (
                "line",
                chart(
                    Kind::Line,
                    Axis::Times(times),
                    vec![
                        Series {
                            name: "visits".into(),
                            values: wave(0.0),
                        },
                        Series {
                            name: "signups (with gaps)".into(),
                            values: gaps,
                        },
                    ],
                ),
            ),
            (
                "scatter",
                chart(
                    Kind::Scatter,
                    Axis::Numbers(xs.clone()),
                    vec![
                        Series {
                            name: "a".into(),
                            values: xs.iter().map(|x| x * 2.0 + x.cos() * 5.0).collect(),
                        },
                        Series {
                            name: "b".into(),
                            values: xs.iter().map(|x| -x + 12.0).collect(),
                        },
                    ],
                ),
            ),
            (
                "histogram",
                chart(
                    Kind::Histogram,
                    Axis::Numbers((0..=10).map(|i| i as f64 * 5.0).collect()),
                    vec![series(
                        "count",
                        &[2.0, 5.0, 11.0, 19.0, 27.0, 24.0, 15.0, 8.0, 3.0, 1.0],
                    )],
                ),
            ),
        ];
        for (name, c) in &samples {
            let svg_text = svg(c).unwrap();
            assert_xmlish(&svg_text);
            let png_bytes = png(c).unwrap();
            assert_eq!(decode(&png_bytes).0, WIDTH);
            for out in std::iter::once(dir.path()).chain(keep.as_deref()) {
                std::fs::write(out.join(format!("{name}.svg")), &svg_text).unwrap();
                std::fs::write(out.join(format!("{name}.png")), &png_bytes).unwrap();
            }
            let svg_len = std::fs::metadata(dir.path().join(format!("{name}.svg")))
                .unwrap()
                .len();
            let png_len = std::fs::metadata(dir.path().join(format!("{name}.png")))
                .unwrap()
                .len();
            // Real drawings: more than an empty frame, far less than a runaway document.
            assert!(
                (3_000..3_000_000).contains(&svg_len),
                "{name}.svg is {svg_len} bytes"
            );
            assert!(
                (5_000..1_000_000).contains(&png_len),
                "{name}.png is {png_len} bytes"
            );
        }
    }

    #[test]
    fn histogram_bars_touch() {
        let c = chart(
            Kind::Histogram,
            Axis::Numbers(vec![0.0, 1.0, 2.0, 3.0]),
            vec![series("n", &[3.0, 5.0, 2.0])],
        );
        let svg = svg(&c).unwrap();
        let mut spans: Vec<(i64, i64)> = svg
            .split("<rect")
            .skip(1)
            .filter(|r| {
                r.contains(&format!(
                    "fill=\"#{:02X}{:02X}{:02X}\"",
                    PALETTE[0].0, PALETTE[0].1, PALETTE[0].2
                ))
            })
            .map(|r| {
                let attr = |name: &str| -> i64 {
                    let at = r.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                    r[at..at + r[at..].find('"').unwrap()].parse().unwrap()
                };
                (attr("x"), attr("x") + attr("width"))
            })
            .collect();
        spans.sort();
        assert_eq!(spans.len(), 3);
        for w in spans.windows(2) {
            assert!((w[1].0 - w[0].1).abs() <= 1, "gap between bins: {spans:?}");
        }
    }

    #[test]
    fn time_axes_are_labelled_as_dates_for_their_span() {
        let day = 86_400_000i64;
        let jan = days_from_civil(2024, 1, 1) * day;
        let line = |times: Vec<i64>| {
            let n = times.len();
            chart(
                Kind::Line,
                Axis::Times(times),
                vec![Series {
                    name: "v".into(),
                    values: (0..n).map(|i| i as f64).collect(),
                }],
            )
        };
        let year = svg(&line((0..365).map(|i| jan + i * day).collect())).unwrap();
        assert!(
            has_text(&year, "2024-03") && has_text(&year, "2024-07"),
            "month ticks"
        );
        let weeks = svg(&line((0..20).map(|i| jan + 14 * day + i * day).collect())).unwrap();
        assert!(
            has_text(&weeks, "2024-01-22") && has_text(&weeks, "2024-01-29"),
            "day ticks"
        );
        let hours = svg(&line((0..12).map(|i| jan + i * 3_600_000).collect())).unwrap();
        assert!(has_text(&hours, "01-01 02:00"), "hour ticks");
        let decades = svg(&line(
            (0..40)
                .map(|i| days_from_civil(1990 + i, 6, 1) * day)
                .collect(),
        ))
        .unwrap();
        assert!(
            has_text(&decades, "2000") && has_text(&decades, "2020"),
            "year ticks"
        );
        // Bars over months are labelled by month.
        let months: Vec<i64> = (1..=3).map(|m| days_from_civil(2024, m, 1) * day).collect();
        let bars = chart(
            Kind::Bar,
            Axis::Times(months),
            vec![series("v", &[1.0, 2.0, 3.0])],
        );
        assert!(has_text(&svg(&bars).unwrap(), "2024-02"));
    }

    #[test]
    fn line_over_categories_and_unsorted_numbers() {
        let c = chart(
            Kind::Line,
            cats(&["Mon", "Tue", "Wed"]),
            vec![series("load", &[3.0, f64::NAN, 4.0])],
        );
        assert!(has_text(&svg(&c).unwrap(), "Tue"));
        let c = chart(
            Kind::Line,
            Axis::Numbers(vec![3.0, 1.0, 2.0]),
            vec![series("y", &[30.0, 10.0, 20.0])],
        );
        let plan = Plan::new(&c).unwrap();
        assert_eq!(plan.xs, vec![1.0, 2.0, 3.0]);
        assert_eq!(plan.series[0].1, vec![10.0, 20.0, 30.0]);
    }

    #[test]
    fn many_categories_are_thinned_and_rotated_up_to_the_cap() {
        let names: Vec<String> = (0..MAX_BARS)
            .map(|i| format!("customer number {i}"))
            .collect();
        let values: Vec<f64> = (0..MAX_BARS).map(|i| i as f64).collect();
        let c = chart(
            Kind::Bar,
            Axis::Categories(names),
            vec![Series {
                name: "v".into(),
                values,
            }],
        );
        let svg = svg(&c).unwrap();
        assert!(svg.contains("rotate("), "long labels are rotated");
        let shown = (0..MAX_BARS)
            .filter(|i| has_text(&svg, &format!("customer number {i}")))
            .count();
        assert!((10..MAX_BARS).contains(&shown), "labels shown: {shown}");
        let bytes = png(&c).unwrap();
        if let Some(dir) = std::env::var_os("CAIRN_CHART_SAMPLES") {
            std::fs::write(std::path::Path::new(&dir).join("many.png"), bytes).unwrap();
        }
    }

    #[test]
    fn degenerate_and_extreme_inputs_render() {
        let n = |v: &[f64]| Axis::Numbers(v.to_vec());
        let cases = [
            chart(Kind::Line, n(&[1.0]), vec![series("one", &[5.0])]),
            chart(
                Kind::Scatter,
                n(&[2.0, 2.0, 2.0]),
                vec![series("same", &[7.0, 7.0, 7.0])],
            ),
            chart(Kind::Bar, cats(&["zero"]), vec![series("z", &[0.0])]),
            chart(
                Kind::Bar,
                cats(&["a", "b"]),
                vec![series("neg", &[-5.0, -1e-12])],
            ),
            chart(
                Kind::Line,
                n(&[0.0, 1.0, 2.0]),
                vec![series("huge", &[f64::MAX, -f64::MAX, 1e308])],
            ),
            chart(
                Kind::Scatter,
                n(&[f64::INFINITY, 1.0, 2.0]),
                vec![series("inf", &[1.0, f64::NEG_INFINITY, 3.0])],
            ),
            chart(
                Kind::Line,
                n(&[1e-300, 2e-300]),
                vec![series("tiny", &[1e-300, 1.0000000001e-300])],
            ),
            chart(
                Kind::Line,
                Axis::Times(vec![i64::MIN, 0, i64::MAX]),
                vec![series("t", &[1.0, 2.0, 3.0])],
            ),
            chart(
                Kind::Line,
                Axis::Times(vec![1_700_000_000_000]),
                vec![series("t", &[1.0])],
            ),
            chart(
                Kind::Histogram,
                n(&[-1e300, 0.0, 1e300]),
                vec![series("h", &[1.0, f64::NAN])],
            ),
            chart(
                Kind::Bar,
                cats(&["", "ünïcødé ✓", &"x".repeat(500)]),
                vec![series("", &[1.0, 2.0, 3.0]), series("", &[1.0, 2.0, 3.0])],
            ),
        ];
        let keep = std::env::var_os("CAIRN_CHART_SAMPLES").map(std::path::PathBuf::from);
        for (i, c) in cases.iter().enumerate() {
            let s = svg(c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            assert_xmlish(&s);
            let bytes = png(c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            if let Some(dir) = &keep {
                std::fs::write(dir.join(format!("edge-{i}.png")), bytes).unwrap();
            }
        }
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let one = || vec![series("s", &[1.0])];
        let empty = chart(Kind::Bar, cats(&[]), vec![series("s", &[])]);
        assert!(matches!(svg(&empty), Err(ChartError::Empty(_))));
        assert!(matches!(png(&empty), Err(ChartError::Empty(_))));
        assert!(matches!(
            svg(&chart(Kind::Line, cats(&["a"]), vec![])),
            Err(ChartError::Empty(_))
        ));

        let mismatch = chart(Kind::Line, cats(&["a", "b"]), one());
        assert_eq!(
            svg(&mismatch),
            Err(ChartError::Mismatch {
                series: "s".into(),
                expected: 2,
                found: 1,
                hint: " (one per x value)"
            })
        );
        let hist = chart(
            Kind::Histogram,
            Axis::Numbers(vec![0.0, 1.0, 2.0]),
            vec![series("s", &[1.0, 2.0, 3.0])],
        );
        assert!(matches!(
            svg(&hist),
            Err(ChartError::Mismatch {
                expected: 2,
                found: 3,
                ..
            })
        ));

        let nan = chart(
            Kind::Bar,
            cats(&["a", "b"]),
            vec![series("s", &[f64::NAN, f64::INFINITY])],
        );
        assert_eq!(png(&nan), Err(ChartError::AllMissing));
        let no_x = chart(Kind::Scatter, Axis::Numbers(vec![f64::NAN]), one());
        assert_eq!(svg(&no_x), Err(ChartError::AllMissing));

        let names: Vec<String> = (0..=MAX_BARS).map(|i| i.to_string()).collect();
        let bars = chart(
            Kind::Bar,
            Axis::Categories(names),
            vec![Series {
                name: "s".into(),
                values: vec![1.0; MAX_BARS + 1],
            }],
        );
        let err = svg(&bars).unwrap_err();
        assert!(matches!(
            err,
            ChartError::TooMany {
                what: "bars",
                count: 61,
                max: MAX_BARS,
                ..
            }
        ));
        let msg = err.to_string();
        assert!(
            msg.contains("at most 60") && msg.contains("top n") && msg.contains("other"),
            "{msg}"
        );

        let many: Vec<Series> = (0..=MAX_SERIES)
            .map(|i| series(&i.to_string(), &[1.0]))
            .collect();
        assert!(matches!(
            svg(&chart(Kind::Line, cats(&["a"]), many)),
            Err(ChartError::TooMany { what: "series", .. })
        ));
        let points = chart(
            Kind::Scatter,
            Axis::Numbers(vec![0.0; MAX_POINTS + 1]),
            vec![Series {
                name: "s".into(),
                values: vec![0.0; MAX_POINTS + 1],
            }],
        );
        assert!(matches!(
            svg(&points),
            Err(ChartError::TooMany { what: "points", .. })
        ));
        let bins = chart(
            Kind::Histogram,
            Axis::Numbers((0..=MAX_BINS + 1).map(|i| i as f64).collect()),
            vec![Series {
                name: "s".into(),
                values: vec![1.0; MAX_BINS + 1],
            }],
        );
        assert!(matches!(
            svg(&bins),
            Err(ChartError::TooMany { what: "bins", .. })
        ));

        assert!(matches!(
            svg(&chart(Kind::Scatter, cats(&["a"]), one())),
            Err(ChartError::Invalid(_))
        ));
        assert!(matches!(
            svg(&chart(Kind::Histogram, cats(&["a", "b"]), one())),
            Err(ChartError::Invalid(_))
        ));
        let unsorted = chart(
            Kind::Histogram,
            Axis::Numbers(vec![0.0, 2.0, 1.0]),
            vec![series("s", &[1.0, 1.0])],
        );
        assert!(matches!(svg(&unsorted), Err(ChartError::Invalid(_))));
        let two = chart(
            Kind::Histogram,
            Axis::Numbers(vec![0.0, 1.0]),
            vec![series("a", &[1.0]), series("b", &[1.0])],
        );
        assert!(matches!(svg(&two), Err(ChartError::Invalid(_))));
        let one_edge = chart(
            Kind::Histogram,
            Axis::Numbers(vec![0.0]),
            vec![series("a", &[])],
        );
        assert!(matches!(svg(&one_edge), Err(ChartError::Empty(_))));
    }

    #[test]
    fn ranges_pad_include_zero_for_bars_and_widen_degenerate_ones() {
        assert_eq!(pad_range((10.0, 20.0), true), (0.0, 21.0));
        assert_eq!(pad_range((-20.0, -10.0), true), (-21.0, 0.0));
        let (lo, hi) = pad_range((5.0, 5.0), false);
        assert!(lo < 5.0 && hi > 5.0);
        let (lo, hi) = pad_range((0.0, 0.0), true);
        assert!(lo <= 0.0 && hi > 0.0 && lo < hi);
        let (lo, hi) = pad_range((-LIMIT, LIMIT), false);
        assert!(lo.is_finite() && hi.is_finite());
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(format_tick(0.30000000000000004, 0.1), "0.3");
        assert_eq!(format_tick(2_500_000.0, 500_000.0), "2.5M");
        assert_eq!(format_tick(40_000.0, 10_000.0), "40k");
        assert_eq!(format_tick(-3.0, 1.0), "-3");
        assert_eq!(format_tick(2e20, 1e20), "2e20");
        assert_eq!(format_plain(2024.0), "2024");
        let ticks = number_ticks((0.0, 10.0));
        assert_eq!(ticks.first().map(|t| t.1.as_str()), Some("0"));
        assert!(ticks.len() >= 5 && ticks.len() <= 12);
    }

    #[test]
    fn civil_dates_round_trip() {
        for (y, m, d) in [
            (1970, 1, 1),
            (2000, 2, 29),
            (2024, 12, 31),
            (1969, 12, 31),
            (1600, 3, 1),
        ] {
            let ms = days_from_civil(y, m, d) * 86_400_000 + 3_723_000;
            assert_eq!(civil(ms), (y, m, d, 1, 2, 3));
        }
        assert_eq!(format_time(0, TimeUnit::Day), "1970-01-01");
    }
}
