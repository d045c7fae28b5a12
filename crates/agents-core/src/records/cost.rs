//! [`RunCost`]: what a step, an execution or a conversation cost, and what could not be priced.

use std::fmt;
use std::ops::{Add, AddAssign};

use inference::{InferenceResponse, ModelCatalog, Usage};
use serde::{Deserialize, Serialize};

/// The cost of some inferences in US dollars, keeping apart the tokens that have no price.
///
/// Each inference is priced at the catalog entry of the model it reported
/// ([`InferenceResponse::model`]). An inference whose model the catalog does not know (or
/// that reported no model) adds its tokens to [`unpriced_usage`](Self::unpriced_usage)
/// instead of a guessed price, and the total is then unknown: [`usd`](Self::usd) is `None`
/// and the text form says `unknown price`.
///
/// ```
/// use agents_core::RunCost;
/// use inference::{InferenceResponse, ModelCatalog, ModelInfo, Usage};
///
/// let catalog = ModelCatalog::new().with_model(ModelInfo::new("m", "p", 2.0, 10.0));
/// let usage = Usage { input_tokens: 1_000_000, output_tokens: 100_000, ..Usage::default() };
/// let priced = RunCost::of_response(
///     &InferenceResponse::text("hi").with_model("m").with_usage(usage), &catalog);
/// assert_eq!(priced.usd(), Some(3.0));
///
/// let unknown = RunCost::of_response(
///     &InferenceResponse::text("hi").with_model("other").with_usage(usage), &catalog);
/// assert_eq!(unknown.usd(), None);
/// assert_eq!((priced + unknown).to_string(), "unknown price ($3.000000 priced, 1100000 tokens without a price)");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunCost {
    /// Dollars for the tokens whose model has a price.
    #[serde(skip_serializing_if = "is_zero")]
    priced_usd: f64,
    /// Tokens of inferences whose model has no price.
    #[serde(skip_serializing_if = "Usage::is_empty")]
    unpriced: Usage,
}

fn is_zero(usd: &f64) -> bool {
    *usd == 0.0
}

impl RunCost {
    /// Nothing spent.
    pub fn zero() -> Self {
        Self::default()
    }

    /// A known price in dollars.
    pub fn priced(usd: f64) -> Self {
        Self {
            priced_usd: usd,
            unpriced: Usage::default(),
        }
    }

    /// Tokens with no price.
    pub fn unpriced(usage: Usage) -> Self {
        Self {
            priced_usd: 0.0,
            unpriced: usage,
        }
    }

    /// `usage` spent by `model` (the model an inference reported), priced with `catalog`.
    pub fn of_usage(usage: Usage, model: Option<&str>, catalog: &ModelCatalog) -> Self {
        if usage.is_empty() {
            return Self::zero();
        }
        match model.and_then(|model| catalog.lookup(model)) {
            Some(info) => Self::priced(usage.cost(&info).total_usd()),
            None => Self::unpriced(usage),
        }
    }

    /// What `response` cost: its usage at the price of the model it reported.
    pub fn of_response(response: &InferenceResponse, catalog: &ModelCatalog) -> Self {
        Self::of_usage(response.usage(), response.model(), catalog)
    }

    /// The total in dollars, or `None` when some tokens have no price.
    pub fn usd(&self) -> Option<f64> {
        self.unpriced.is_empty().then_some(self.priced_usd)
    }

    /// The dollars of the priced tokens only (a lower bound of the total).
    pub fn priced_usd(&self) -> f64 {
        self.priced_usd
    }

    /// The tokens that have no price.
    pub fn unpriced_usage(&self) -> Usage {
        self.unpriced
    }

    /// True when every token has a price.
    pub fn is_known(&self) -> bool {
        self.unpriced.is_empty()
    }

    /// True when nothing was spent.
    pub fn is_zero(&self) -> bool {
        self.priced_usd == 0.0 && self.unpriced.is_empty()
    }
}

impl Add for RunCost {
    type Output = RunCost;

    fn add(self, other: RunCost) -> RunCost {
        RunCost {
            priced_usd: self.priced_usd + other.priced_usd,
            unpriced: self.unpriced + other.unpriced,
        }
    }
}

impl AddAssign for RunCost {
    fn add_assign(&mut self, other: RunCost) {
        *self = *self + other;
    }
}

impl std::iter::Sum for RunCost {
    fn sum<I: Iterator<Item = RunCost>>(iter: I) -> RunCost {
        iter.fold(RunCost::zero(), Add::add)
    }
}

/// `$0.0123`, or `unknown price (...)` saying what part is priced and how many tokens are not.
impl fmt::Display for RunCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_known() {
            return write!(f, "${:.6}", self.priced_usd);
        }
        let tokens = self.unpriced.total();
        if self.priced_usd == 0.0 {
            write!(f, "unknown price ({tokens} tokens without a price)")
        } else {
            write!(
                f,
                "unknown price (${:.6} priced, {tokens} tokens without a price)",
                self.priced_usd
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inference::ModelInfo;
    use proptest::prelude::*;

    fn catalog() -> ModelCatalog {
        ModelCatalog::new().with_model(ModelInfo::new("m", "p", 2.0, 10.0))
    }

    #[test]
    fn an_unknown_model_is_never_priced() {
        let usage = Usage {
            input_tokens: 10,
            ..Usage::default()
        };
        let cost = RunCost::of_usage(usage, Some("nobody-knows"), &catalog());
        assert_eq!(cost.usd(), None);
        assert_eq!(cost.unpriced_usage(), usage);
        assert_eq!(
            cost.to_string(),
            "unknown price (10 tokens without a price)"
        );
        let cost = RunCost::of_usage(usage, None, &catalog());
        assert_eq!(cost.usd(), None);
    }

    #[test]
    fn no_tokens_cost_nothing_even_without_a_model() {
        let cost = RunCost::of_usage(Usage::default(), None, &catalog());
        assert!(cost.is_zero() && cost.is_known());
        assert_eq!(cost.to_string(), "$0.000000");
    }

    proptest! {
        #[test]
        fn a_sum_is_unknown_exactly_when_a_part_is(
            parts in proptest::collection::vec((0u64..1_000_000, 0u64..100_000, any::<bool>()), 0..20)
        ) {
            let catalog = catalog();
            let costs: Vec<RunCost> = parts
                .iter()
                .map(|(input, output, known)| {
                    let usage = Usage { input_tokens: *input, output_tokens: *output, ..Usage::default() };
                    RunCost::of_usage(usage, Some(if *known { "m" } else { "x" }), &catalog)
                })
                .collect();
            let total: RunCost = costs.iter().copied().sum();
            let any_unknown = parts.iter().any(|(i, o, known)| !known && i + o > 0);
            prop_assert_eq!(total.usd().is_none(), any_unknown);
            let priced: f64 = costs.iter().map(RunCost::priced_usd).sum();
            prop_assert!((total.priced_usd() - priced).abs() < 1e-9);
        }
    }
}
