//! [`Cost`]: what tokens cost at a model's prices.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

use crate::{ModelInfo, Usage};

/// The price of some [`Usage`], in US dollars, by kind of token.
///
/// Dollars are `f64`: exact to far below a micro-dollar for any realistic run (a billion
/// tokens at $100 per million is $100,000, with about 11 significant digits to spare).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Cost {
    /// Uncached input tokens.
    pub input_usd: f64,
    /// Output tokens, reasoning tokens included (providers bill them as output).
    pub output_usd: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read_usd: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write_usd: f64,
}

impl Cost {
    /// The sum of every part.
    pub fn total_usd(&self) -> f64 {
        self.input_usd + self.output_usd + self.cache_read_usd + self.cache_write_usd
    }
}

impl Usage {
    /// What this usage costs at `model`'s prices. Input, cache reads and cache writes are
    /// priced separately (the usage counts each input token once, in one of them); reasoning
    /// tokens are priced as output.
    ///
    /// ```
    /// use inference::{ModelInfo, Usage};
    ///
    /// let model = ModelInfo::new("m", "p", 3.0, 15.0).with_cache_prices(0.30, 3.75);
    /// let usage = Usage { input_tokens: 1_000, output_tokens: 500, cache_read_tokens: 10_000,
    ///                     cache_write_tokens: 2_000, reasoning_tokens: 0 };
    /// let cost = usage.cost(&model);
    /// assert!((cost.total_usd() - (0.003 + 0.0075 + 0.003 + 0.0075)).abs() < 1e-12);
    /// ```
    pub fn cost(&self, model: &ModelInfo) -> Cost {
        let price = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        Cost {
            input_usd: price(self.input_tokens, model.input_per_million),
            output_usd: price(
                self.output_tokens.saturating_add(self.reasoning_tokens),
                model.output_per_million,
            ),
            cache_read_usd: price(self.cache_read_tokens, model.cache_read_per_million),
            cache_write_usd: price(self.cache_write_tokens, model.cache_write_per_million),
        }
    }
}

impl Add for Cost {
    type Output = Cost;

    fn add(self, rhs: Cost) -> Cost {
        Cost {
            input_usd: self.input_usd + rhs.input_usd,
            output_usd: self.output_usd + rhs.output_usd,
            cache_read_usd: self.cache_read_usd + rhs.cache_read_usd,
            cache_write_usd: self.cache_write_usd + rhs.cache_write_usd,
        }
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, rhs: Cost) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for Cost {
    fn sum<I: Iterator<Item = Cost>>(iter: I) -> Cost {
        iter.fold(Cost::default(), Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MAX: u64 = 10_000_000_000;

    fn usage() -> impl Strategy<Value = Usage> {
        (0..MAX, 0..MAX, 0..MAX, 0..MAX, 0..MAX).prop_map(|(i, o, r, w, t)| Usage {
            input_tokens: i,
            output_tokens: o,
            cache_read_tokens: r,
            cache_write_tokens: w,
            reasoning_tokens: t,
        })
    }

    fn model() -> impl Strategy<Value = ModelInfo> {
        (0.0..200.0f64, 0.0..200.0f64, 0.0..200.0f64, 0.0..200.0f64)
            .prop_map(|(i, o, r, w)| ModelInfo::new("m", "p", i, o).with_cache_prices(r, w))
    }

    proptest! {
        #[test]
        fn zero_usage_costs_nothing(model in model()) {
            prop_assert_eq!(Usage::default().cost(&model).total_usd(), 0.0);
        }

        #[test]
        fn cost_grows_with_every_kind_of_token(usage in usage(), model in model(), more in 1..MAX, field in 0..5usize) {
            let mut bigger = usage;
            let slot = match field {
                0 => &mut bigger.input_tokens,
                1 => &mut bigger.output_tokens,
                2 => &mut bigger.cache_read_tokens,
                3 => &mut bigger.cache_write_tokens,
                _ => &mut bigger.reasoning_tokens,
            };
            *slot += more;
            prop_assert!(bigger.cost(&model).total_usd() >= usage.cost(&model).total_usd());
        }

        #[test]
        fn cost_is_additive(a in usage(), b in usage(), model in model()) {
            let apart = a.cost(&model) + b.cost(&model);
            let together = (a + b).cost(&model);
            let tolerance = 1e-9 * together.total_usd().max(1.0);
            prop_assert!((apart.total_usd() - together.total_usd()).abs() <= tolerance);
        }
    }

    #[test]
    fn each_kind_of_token_has_its_own_price() {
        let model = ModelInfo::new("m", "p", 2.0, 10.0).with_cache_prices(0.1, 2.5);
        let cost = Usage {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 4_000_000,
            reasoning_tokens: 500_000,
        }
        .cost(&model);
        assert_eq!(
            cost,
            Cost {
                input_usd: 2.0,
                output_usd: 10.0,
                cache_read_usd: 0.2,
                cache_write_usd: 10.0,
            }
        );
        assert_eq!(cost.total_usd(), 22.2);
        assert_eq!([cost, cost].into_iter().sum::<Cost>().total_usd(), 44.4);
    }
}
