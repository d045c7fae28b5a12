//! Small hand-written SVG charts: grouped horizontal bars and line series.

use std::fmt::Write;

const WIDTH: f64 = 720.0;
const COLORS: [&str; 4] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn header(height: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{x}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{t}</text>\n",
        x = WIDTH / 2.0,
        t = escape(title)
    )
}

/// Horizontal bars, one per `(label, value)`, each `series` index coloured alike; values are
/// labelled with `format(value)`.
pub fn bars(
    title: &str,
    unit: &str,
    rows: &[(String, usize, f64)],
    series_names: &[&str],
    format: impl Fn(f64) -> String,
) -> String {
    let row_h = 24.0;
    let top = 60.0;
    let left = 190.0;
    let right = 110.0;
    let height = top + rows.len() as f64 * row_h + 40.0;
    let max = rows
        .iter()
        .map(|r| r.2)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = (WIDTH - left - right) / max;
    let mut svg = header(height, title);
    for (i, name) in series_names.iter().enumerate() {
        let x = left + i as f64 * 150.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{x}\" y=\"34\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"45\">{}</text>",
            COLORS[i % COLORS.len()],
            x + 16.0,
            escape(name)
        );
    }
    for (i, (label, series, value)) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h;
        let w = (value * scale).max(1.0);
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            left - 8.0,
            y + 15.0,
            escape(label),
            row_h - 6.0,
            COLORS[series % COLORS.len()],
            left + w + 6.0,
            y + 15.0,
            escape(&format(*value))
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n</svg>",
        left + (WIDTH - left - right) / 2.0,
        height - 12.0,
        escape(unit)
    );
    svg
}

/// Line series over x = 1..=n.
pub fn lines(title: &str, x_label: &str, y_label: &str, series: &[(&str, Vec<f64>)]) -> String {
    let height = 420.0;
    let (left, right, top, bottom) = (80.0, 30.0, 60.0, 60.0);
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(1).max(2);
    let max = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let nice = nice_ceiling(max);
    let plot_w = WIDTH - left - right;
    let plot_h = height - top - bottom;
    let x = |i: usize| left + plot_w * i as f64 / (n - 1) as f64;
    let y = |v: f64| top + plot_h * (1.0 - v / nice);
    let mut svg = header(height, title);
    for tick in 0..=5 {
        let v = nice * tick as f64 / 5.0;
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - right,
            left - 6.0,
            y(v) + 4.0,
            group_digits(v.round() as u64),
            yy = y(v)
        );
    }
    for i in 0..n {
        if matches!(i % 2, 0) || n <= 10 {
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x(i),
                top + plot_h + 18.0,
                i + 1
            );
        }
    }
    for (s, (name, values)) in series.iter().enumerate() {
        let color = COLORS[s % COLORS.len()];
        let points: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v)))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2.5\" points=\"{}\"/>",
            points.join(" ")
        );
        let lx = left + 10.0 + s as f64 * 200.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{lx}\" y=\"34\" width=\"12\" height=\"12\" fill=\"{color}\"/><text x=\"{}\" y=\"45\">{}</text>",
            lx + 16.0,
            escape(name)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\
         <text x=\"16\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\" transform=\"rotate(-90 16 {})\">{}</text>\n</svg>",
        left + plot_w / 2.0,
        height - 16.0,
        escape(x_label),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        escape(y_label)
    );
    svg
}

fn nice_ceiling(value: f64) -> f64 {
    let magnitude = 10f64.powf(value.log10().floor());
    for step in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if step * magnitude >= value {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && matches!((digits.len() - i) % 3, 0) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
