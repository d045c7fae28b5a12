//! Token usage.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// Tokens used by one or more inference calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Prompt tokens (not counting cache reads).
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Reasoning ("thinking") tokens.
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Usage with only input and output tokens.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// Sum of every field, saturating at `u64::MAX` (counts from a provider are not trusted
    /// not to overflow).
    pub fn total(&self) -> u64 {
        [
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.reasoning_tokens,
        ]
        .into_iter()
        .fold(self.input_tokens, u64::saturating_add)
    }

    /// Every prompt token: uncached input, cache reads and cache writes (saturating). What
    /// a request took of the model's context window, and `gen_ai.usage.input_tokens`.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// True when every field is zero.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
}

/// Field by field, saturating at `u64::MAX`.
impl Add for Usage {
    type Output = Usage;

    fn add(self, rhs: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(rhs.input_tokens),
            output_tokens: self.output_tokens.saturating_add(rhs.output_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_add(rhs.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(rhs.cache_write_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_add(rhs.reasoning_tokens),
        }
    }
}

/// Field by field, saturating at `u64::MAX`.
impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usage() -> impl Strategy<Value = Usage> {
        // Mostly huge counts, so that sums overflow often.
        let count = prop_oneof![any::<u64>(), (u64::MAX - 1000)..=u64::MAX, 0..1000u64];
        (
            count.clone(),
            count.clone(),
            count.clone(),
            count.clone(),
            count,
        )
            .prop_map(|(input, output, read, write, reasoning)| Usage {
                input_tokens: input,
                output_tokens: output,
                cache_read_tokens: read,
                cache_write_tokens: write,
                reasoning_tokens: reasoning,
            })
    }

    /// The exact sum, or `u64::MAX` when it does not fit.
    fn saturated(values: &[u64]) -> u64 {
        let exact: u128 = values.iter().map(|&v| u128::from(v)).sum();
        u64::try_from(exact).unwrap_or(u64::MAX)
    }

    proptest! {
        #[test]
        fn total_saturates_instead_of_overflowing(u in usage()) {
            prop_assert_eq!(
                u.total(),
                saturated(&[
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_tokens,
                    u.cache_write_tokens,
                    u.reasoning_tokens,
                ])
            );
            prop_assert_eq!(u.is_empty(), u == Usage::default());
        }

        #[test]
        fn addition_saturates_field_by_field(a in usage(), b in usage()) {
            let sum = a + b;
            prop_assert_eq!(sum.input_tokens, saturated(&[a.input_tokens, b.input_tokens]));
            prop_assert_eq!(sum.output_tokens, saturated(&[a.output_tokens, b.output_tokens]));
            prop_assert_eq!(
                sum.cache_read_tokens,
                saturated(&[a.cache_read_tokens, b.cache_read_tokens])
            );
            prop_assert_eq!(
                sum.cache_write_tokens,
                saturated(&[a.cache_write_tokens, b.cache_write_tokens])
            );
            prop_assert_eq!(
                sum.reasoning_tokens,
                saturated(&[a.reasoning_tokens, b.reasoning_tokens])
            );
            let mut assigned = a;
            assigned += b;
            prop_assert_eq!(assigned, sum);
            prop_assert_eq!([a, b].into_iter().sum::<Usage>(), sum);
            prop_assert!(sum.total() >= a.total().max(b.total()));
        }
    }

    #[test]
    fn total_and_addition() {
        let a = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 2,
            cache_write_tokens: 1,
            reasoning_tokens: 3,
        };
        assert_eq!(a.total(), 21);
        let sum = a + Usage::new(1, 1);
        assert_eq!(sum.input_tokens, 11);
        assert_eq!([a, a].into_iter().sum::<Usage>().total(), 42);
        assert!(Usage::default().is_empty());
    }
}
