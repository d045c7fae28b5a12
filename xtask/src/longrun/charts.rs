//! The long-run charts, drawn with `plotters`' SVG backend: cumulative input tokens by turn
//! per mode, and success (overall, recall, tool use) per mode.

use std::path::Path;

use plotters::prelude::*;

use super::report::Totals;
use super::ModeRun;

/// One colour per mode, in the order the modes run.
const PALETTE: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
];

fn series_name(run: &ModeRun, runs: &[ModeRun]) -> String {
    let models = runs
        .iter()
        .map(|r| r.model.as_str())
        .collect::<std::collections::BTreeSet<_>>();
    if models.len() > 1 {
        format!("{} {}", run.model, run.mode)
    } else {
        run.mode.clone()
    }
}

/// A line per mode: the input tokens sent so far, after each turn.
///
/// # Errors
/// What plotters reports (a file that cannot be written).
pub fn cumulative_input_tokens(runs: &[ModeRun], path: &Path) -> Result<(), String> {
    let turns = runs.iter().map(|r| r.turns.len()).max().unwrap_or(0).max(1);
    let highest = runs
        .iter()
        .map(|r| r.turns.iter().map(|t| t.input_tokens).sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let root = SVGBackend::new(path, (860, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Cumulative input tokens by turn", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(0u32..turns as u32, 0u64..highest + highest / 20)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("turn")
        .y_desc("input tokens sent so far")
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, run) in runs.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut total = 0;
        let points: Vec<(u32, u64)> = std::iter::once((0, 0))
            .chain(run.turns.iter().map(|t| {
                total += t.input_tokens;
                (t.turn as u32, total)
            }))
            .collect();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(series_name(run, runs))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// Three bars per mode: turns passed, recall turns passed, and turns that needed a tool and
/// used one, in percent.
///
/// # Errors
/// What plotters reports (a file that cannot be written).
pub fn success(runs: &[ModeRun], path: &Path) -> Result<(), String> {
    let groups = runs.len().max(1);
    let root = SVGBackend::new(path, (860, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Success per mode (%)", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(20)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..groups as f64, 0f64..135f64)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&|y| {
            if *y <= 100.0 {
                format!("{y:.0}")
            } else {
                String::new()
            }
        })
        .y_desc("% of turns")
        .draw()
        .map_err(|e| e.to_string())?;
    let measures: [Measure; 3] = [
        ("all turns passed", PALETTE[1], |t| {
            percent(t.passed, t.turns)
        }),
        ("recall turns passed", PALETTE[3], |t| {
            percent(t.recall_passed, t.recall_turns)
        }),
        ("tool turns that used a tool", PALETTE[2], |t| {
            percent(t.tool_turns_used, t.tool_turns)
        }),
    ];
    let totals: Vec<Totals> = runs
        .iter()
        .map(|r| Totals::of(&r.turns, usize::MAX))
        .collect();
    for (m, (label, color, value)) in measures.iter().enumerate() {
        let color = *color;
        let bars = totals.iter().enumerate().map(|(g, t)| {
            let left = g as f64 + 0.1 + 0.27 * m as f64;
            Rectangle::new([(left, 0.0), (left + 0.25, value(t))], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    let names = runs.iter().enumerate().map(|(g, run)| {
        Text::new(
            series_name(run, runs),
            (g as f64 + 0.1, 106.0),
            ("sans-serif", 16).into_font(),
        )
    });
    chart.draw_series(names).map_err(|e| e.to_string())?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// A bar's label, colour and value (a percentage of a mode's totals).
type Measure = (&'static str, RGBColor, fn(&Totals) -> f64);

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::TurnResult;
    use super::*;

    fn run(mode: &str, tokens: u64) -> ModeRun {
        ModeRun {
            model: "1.5b".into(),
            mode: mode.into(),
            turns: (1..=4)
                .map(|turn| TurnResult {
                    turn,
                    passed: turn % 2 == 0,
                    recall: turn == 4,
                    needs_tool: true,
                    tool_calls: 1,
                    input_tokens: tokens * turn as u64,
                    ..TurnResult::default()
                })
                .collect(),
            ..ModeRun::default()
        }
    }

    #[test]
    fn both_charts_are_svg_files_naming_every_mode() {
        let dir = std::env::temp_dir().join(format!("longrun-charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let runs = [run("legacy", 1000), run("separated", 200)];
        let tokens = dir.join("tokens.svg");
        let bars = dir.join("success.svg");
        assert_eq!(cumulative_input_tokens(&runs, &tokens), Ok(()));
        assert_eq!(success(&runs, &bars), Ok(()));
        for path in [&tokens, &bars] {
            let svg = std::fs::read_to_string(path).unwrap_or_default();
            assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
            assert!(svg.contains("legacy") && svg.contains("separated"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
