//! Tokens and cost per turn as inline SVG, drawn here (about a hundred lines, no charting
//! dependency, no script): per turn, a bar each for input, cached input and output tokens,
//! and a bar for the cost on its own scale. Every text goes through `maud`, so it is escaped;
//! colours are presentation attributes, which the Content-Security-Policy allows.

use agents_core::AgentState;
use maud::{html, Markup};

use crate::console::format::{count, usd};

/// What the chart shows of one turn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TurnPoint {
    pub(crate) turn: usize,
    pub(crate) input: u64,
    pub(crate) cached: u64,
    pub(crate) output: u64,
    pub(crate) cost: Option<f64>,
}

impl TurnPoint {
    /// Turn `turn`, from the state its execution's last version holds.
    pub(crate) fn of(turn: usize, state: &AgentState) -> Self {
        let usage = state.execution_usage();
        Self {
            turn,
            input: usage.input_tokens,
            cached: usage.cache_read_tokens,
            output: usage.output_tokens,
            cost: state.execution_cost().usd(),
        }
    }
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 70.0;
const BOTTOM: f64 = 30.0;
const TOP: f64 = 20.0;
const SERIES: [(&str, &str); 3] = [
    ("input", "#4c78a8"),
    ("cached input", "#72b7b2"),
    ("output", "#f58518"),
];
const COST_COLOUR: &str = "#54a24b";

/// The two charts (tokens, cost) for `points`.
pub(crate) fn turns_chart(points: &[TurnPoint]) -> Markup {
    let tokens: Vec<[u64; 3]> = points
        .iter()
        .map(|p| [p.input, p.cached, p.output])
        .collect();
    let max_tokens = tokens.iter().flatten().copied().max().unwrap_or(0).max(1);
    let costs: Vec<f64> = points.iter().map(|p| p.cost.unwrap_or(0.0)).collect();
    let max_cost = costs.iter().copied().fold(0.0_f64, f64::max);
    let slot = (WIDTH - LEFT) / points.len().max(1) as f64;
    let plot = HEIGHT - BOTTOM - TOP;
    let bar = (slot * 0.8 / 3.0).max(1.0);
    html! {
        figure.chart #tokens-chart {
            svg xmlns="http://www.w3.org/2000/svg" width=(WIDTH) height=(HEIGHT)
                viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label="tokens per turn" {
                title { "tokens per turn" }
                (axis(&count(max_tokens), plot))
                @for (i, values) in tokens.iter().enumerate() {
                    @for (series, value) in values.iter().enumerate() {
                        @let h = plot * (*value as f64) / (max_tokens as f64);
                        rect x=(LEFT + slot * i as f64 + slot * 0.1 + bar * series as f64)
                            y=(TOP + plot - h) width=(bar) height=(h) fill=(SERIES[series].1) {
                            title { "turn " (points[i].turn) ": " (count(*value)) " " (SERIES[series].0) " tokens" }
                        }
                    }
                    (turn_label(points[i].turn, LEFT + slot * (i as f64 + 0.5)))
                }
            }
            figcaption {
                @for (name, colour) in SERIES {
                    span.legend { svg width="10" height="10" { rect width="10" height="10" fill=(colour) {} } " " (name) }
                }
            }
        }
        figure.chart #cost-chart {
            svg xmlns="http://www.w3.org/2000/svg" width=(WIDTH) height=(HEIGHT)
                viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label="cost per turn" {
                title { "cost per turn (US dollars)" }
                (axis(&usd(Some(max_cost)), plot))
                @for (i, cost) in costs.iter().enumerate() {
                    @let h = if max_cost > 0.0 { plot * cost / max_cost } else { 0.0 };
                    rect x=(LEFT + slot * i as f64 + slot * 0.2) y=(TOP + plot - h)
                        width=((slot * 0.6).max(1.0)) height=(h) fill=(COST_COLOUR) {
                        title { "turn " (points[i].turn) ": " (usd(points[i].cost)) }
                    }
                    (turn_label(points[i].turn, LEFT + slot * (i as f64 + 0.5)))
                }
            }
            figcaption { "cost per turn; a turn whose model has no price counts as 0 and says unknown" }
        }
    }
}

/// The axes with the top value written at the top left.
fn axis(top: &str, plot: f64) -> Markup {
    html! {
        line x1=(LEFT) y1=(TOP) x2=(LEFT) y2=(TOP + plot) stroke="#888" {}
        line x1=(LEFT) y1=(TOP + plot) x2=(WIDTH) y2=(TOP + plot) stroke="#888" {}
        text x=(LEFT - 6.0) y=(TOP + 4.0) text-anchor="end" font-size="11" { (top) }
        text x=(LEFT - 6.0) y=(TOP + plot) text-anchor="end" font-size="11" { "0" }
    }
}

fn turn_label(turn: usize, x: f64) -> Markup {
    html! {
        text x=(x) y=(HEIGHT - BOTTOM + 16.0) text-anchor="middle" font-size="11" { (turn) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_value_and_titles_say_the_numbers() {
        let points = [
            TurnPoint {
                turn: 1,
                input: 1000,
                cached: 500,
                output: 100,
                cost: Some(0.5),
            },
            TurnPoint {
                turn: 2,
                input: 2000,
                cached: 0,
                output: 50,
                cost: None,
            },
        ];
        let svg = turns_chart(&points).into_string();
        assert!(svg.contains("turn 1: 1,000 input tokens"), "{svg}");
        assert!(svg.contains("turn 2: unknown"), "{svg}");
        // the tallest bar fills the plot: 2000 input tokens of turn 2
        assert!(
            svg.contains(&format!("height=\"{}\"", HEIGHT - BOTTOM - TOP)),
            "{svg}"
        );
        assert_eq!(svg.matches("<rect").count(), 6 + 3 + 2);
    }
}
