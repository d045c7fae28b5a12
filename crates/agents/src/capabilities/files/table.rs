//! What `read_file` writes after the lines of a table (a `.csv` or `.tsv` file): how many rows
//! it has and, for each column whose values are all numbers, their sum, average, smallest and
//! largest, over the whole file (also when the read shows only part of it).
//!
//! Small models copy numbers right and add them wrong. Asked for the total of a four-row
//! column that sums to 770, the 1.5B model read the file and answered 890; asked to write its
//! calculation out, it answered 800 (issue 36, development task d15). Summing is the tool's
//! job, as counting entries is `list_dir`'s: a total the tool computed is a result the
//! answer can quote, and the checks of an answer can find in the results.
//!
//! The reading is deliberately plain: the first line is the header (a header with a number
//! in it means there is none, and nothing is written), fields are split on the delimiter
//! with double-quoted fields (`"a, b"`, `""` for a quote) read as one, and a table whose rows
//! do not all have the header's number of fields, or that has a quoted field across lines,
//! gets no summary. Numbers are decimals (`-12`, `3.50`), summed exactly as scaled integers;
//! a value such as `1,200`, `$5` or `1e3` makes its column not numeric. Linear in the file.

use std::borrow::Cow;

/// Numeric columns described at most (the first ones, left to right).
const MAX_COLUMNS: usize = 6;
/// Decimal places a number may have (more makes its column not numeric).
const MAX_SCALE: u32 = 9;
/// Digits a number may have (more makes its column not numeric; no overflow below it).
const MAX_DIGITS: usize = 24;
/// Header characters shown for a column's name at most.
const MAX_NAME_CHARS: usize = 40;

/// The summary `read_file` writes after the lines of `text`, read from a file named `path`:
/// `None` when `path` is not a `.csv` or `.tsv` file or `text` is no plain table (see the
/// module's documentation).
pub(super) fn table_summary(path: &str, text: &str) -> Option<String> {
    let delimiter = delimiter_of(path)?;
    let mut lines = text
        .lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line));
    let header = fields(lines.next()?, delimiter)?;
    if header.iter().any(|name| decimal(name).is_some()) {
        return None;
    }
    let mut columns: Vec<Column> = header.iter().map(|_| Column::default()).collect();
    let mut rows = 0usize;
    for line in lines.filter(|line| !line.trim().is_empty()) {
        let row = fields(line, delimiter)?;
        if row.len() != header.len() {
            return None;
        }
        rows += 1;
        for (column, value) in columns.iter_mut().zip(&row) {
            column.add(value);
        }
    }
    let described: Vec<String> = header
        .iter()
        .zip(&columns)
        .filter_map(|(name, column)| column.describe(name))
        .take(MAX_COLUMNS)
        .collect();
    let rows = match rows {
        1 => "1 row".to_owned(),
        n => format!("{n} rows"),
    };
    Some(if described.is_empty() {
        format!("({rows} below the header)")
    } else {
        format!("({rows} below the header; {})", described.join("; "))
    })
}

/// The field delimiter of a table file, by its extension (case-insensitively).
fn delimiter_of(path: &str) -> Option<char> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    match extension.as_str() {
        "csv" => Some(','),
        "tsv" => Some('\t'),
        _ => None,
    }
}

/// The fields of one line, double-quoted fields unquoted; `None` for a quote left open (a
/// field across lines, which this plain reading does not follow).
fn fields(line: &str, delimiter: char) -> Option<Vec<Cow<'_, str>>> {
    let mut found = Vec::new();
    let mut rest = line;
    loop {
        if let Some(quoted) = rest.trim_start().strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let after = loop {
                match chars.next()? {
                    (at, '"') if quoted[at + 1..].starts_with('"') => {
                        value.push('"');
                        chars.next();
                    }
                    (at, '"') => break &quoted[at + 1..],
                    (_, c) => value.push(c),
                }
            };
            found.push(Cow::Owned(value));
            match after.trim_start().strip_prefix(delimiter) {
                Some(next) => rest = next,
                None if after.trim().is_empty() => return Some(found),
                None => return None,
            }
        } else {
            match rest.split_once(delimiter) {
                Some((value, next)) => {
                    found.push(Cow::Borrowed(value.trim()));
                    rest = next;
                }
                None => {
                    found.push(Cow::Borrowed(rest.trim()));
                    return Some(found);
                }
            }
        }
    }
}

/// A decimal number as an integer and the power of ten it is scaled by (`-3.50` is
/// `(-350, 2)`); `None` for anything else.
fn decimal(text: &str) -> Option<(i128, u32)> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0
        || whole.len() + fraction.len() > MAX_DIGITS
        || !all_digits(whole)
        || !all_digits(fraction)
        || (digits.contains('.') && fraction.is_empty())
    {
        return None;
    }
    let scale = u32::try_from(fraction.len())
        .ok()
        .filter(|s| *s <= MAX_SCALE)?;
    let mut value: i128 = 0;
    for b in whole.bytes().chain(fraction.bytes()) {
        value = value.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    Some((if negative { -value } else { value }, scale))
}

/// One column's values so far: numeric while every value that is not empty is a number.
#[derive(Debug, Default)]
enum Column {
    /// No value yet (an empty value is no value).
    #[default]
    Empty,
    /// Every value so far is a number: their figures.
    Numeric(Figures),
    /// A value was not a number: the column is not described.
    NotNumeric,
    /// Every value so far is a number, but their figures do not fit an `i128` at the scale
    /// of the value with the most decimals: the column is not described.
    Overflowed,
}

impl Column {
    /// Takes one field of the column's next row.
    fn add(&mut self, value: &str) {
        if value.trim().is_empty() {
            return;
        }
        *self = match std::mem::take(self) {
            done @ (Column::NotNumeric | Column::Overflowed) => done,
            Column::Empty => decimal(value).map_or(Column::NotNumeric, |number| {
                Column::Numeric(Figures::of(number))
            }),
            Column::Numeric(figures) => match decimal(value) {
                Some(number) => figures
                    .with(number)
                    .map_or(Column::Overflowed, Column::Numeric),
                None => Column::NotNumeric,
            },
        };
    }

    /// "column `amount`: sum 770, average 192.5, smallest 95, largest 340", for a numeric
    /// column with a value; `None` otherwise (or when a sum overflows).
    fn describe(&self, name: &str) -> Option<String> {
        let Column::Numeric(figures) = self else {
            return None;
        };
        let Figures {
            scale,
            sum,
            smallest,
            largest,
            count,
            ..
        } = *figures;
        let count = i128::try_from(count).ok().filter(|count| *count > 0)?;
        // the average with two more decimals than the values, rounded half away from zero
        let hundredfold = sum.checked_mul(100)?;
        let average = (hundredfold + hundredfold.signum() * count / 2) / count;
        let name: String = name.chars().take(MAX_NAME_CHARS).collect();
        Some(format!(
            "column `{name}`: sum {}, average {}, smallest {}, largest {}",
            shown(sum, scale),
            shown(average, scale + 2),
            shown(smallest, scale),
            shown(largest, scale),
        ))
    }
}

/// The running figures of a column's numbers, each an integer scaled by `10^scale`, where
/// `scale` is the most decimals a number had so far: a number with more decimals rescales
/// them all. Exact, with no number kept.
///
/// A column's figures overflow when its sum after any of its numbers, at the scale of the
/// number with the most decimals, is beyond an `i128` (even when a later negative number
/// brings the sum back): `highest_sum` and `lowest_sum` keep that check as numbers with more
/// decimals come.
#[derive(Debug, Clone, Copy)]
struct Figures {
    /// The decimals every figure is scaled by: the most a number had.
    scale: u32,
    /// The sum of the numbers.
    sum: i128,
    /// The smallest number.
    smallest: i128,
    /// The largest number.
    largest: i128,
    /// How many numbers there were.
    count: usize,
    /// The highest the sum was after a number.
    highest_sum: i128,
    /// The lowest the sum was after a number.
    lowest_sum: i128,
}

impl Figures {
    /// The figures of one number (an integer and its scale, as [`decimal`] reads it).
    fn of((value, scale): (i128, u32)) -> Self {
        Figures {
            scale,
            sum: value,
            smallest: value,
            largest: value,
            count: 1,
            highest_sum: value,
            lowest_sum: value,
        }
    }

    /// These figures with `number` (an integer and its scale, as [`decimal`] reads it)
    /// added; `None` when they overflow.
    fn with(mut self, (value, scale): (i128, u32)) -> Option<Self> {
        if scale > self.scale {
            let factor = 10i128.checked_pow(scale - self.scale)?;
            for figure in [
                &mut self.sum,
                &mut self.smallest,
                &mut self.largest,
                &mut self.highest_sum,
                &mut self.lowest_sum,
            ] {
                *figure = figure.checked_mul(factor)?;
            }
            self.scale = scale;
        }
        let value = value.checked_mul(10i128.checked_pow(self.scale - scale)?)?;
        self.sum = self.sum.checked_add(value)?;
        self.smallest = self.smallest.min(value);
        self.largest = self.largest.max(value);
        self.count += 1;
        self.highest_sum = self.highest_sum.max(self.sum);
        self.lowest_sum = self.lowest_sum.min(self.sum);
        Some(self)
    }
}

/// `value` scaled down by `10^scale`, written with its decimals, trailing zeros after the
/// point dropped (`19250, 2` is `192.5`; `77000, 2` is `770`).
fn shown(value: i128, scale: u32) -> String {
    let digits = value.unsigned_abs().to_string();
    let scale = scale as usize;
    let (whole, fraction) = if digits.len() > scale {
        digits.split_at(digits.len() - scale)
    } else {
        ("0", digits.as_str())
    };
    let fraction = format!("{fraction:0>scale$}");
    let fraction = fraction.trim_end_matches('0');
    let sign = if value < 0 { "-" } else { "" };
    if fraction.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_csv_gets_its_row_count_and_each_numeric_columns_sum() {
        // development task d15: the column sums to 770
        let sales = "region,amount\nnorth,120\nsouth,340\neast,215\nwest,95\n";
        assert_eq!(
            table_summary("sales.csv", sales).as_deref(),
            Some(
                "(4 rows below the header; column `amount`: sum 770, average 192.5, smallest \
                 95, largest 340)"
            )
        );
    }

    #[test]
    fn decimals_are_summed_exactly_and_quoted_fields_are_one_value() {
        let prices = "item,\"price, eur\",qty\r\n\"bolt, small\",0.10,3\r\nnut,0.2,-1\r\n\r\n\
                      \"say \"\"hi\"\"\",1.05,4\r\n";
        assert_eq!(
            table_summary("PRICES.CSV", prices).as_deref(),
            Some(
                "(3 rows below the header; column `price, eur`: sum 1.35, average 0.45, \
                 smallest 0.1, largest 1.05; column `qty`: sum 6, average 2, smallest -1, \
                 largest 4)"
            )
        );
        assert_eq!(
            table_summary("t.tsv", "name\tscore\nann\t7\nbob\t8\n").as_deref(),
            Some("(2 rows below the header; column `score`: sum 15, average 7.5, smallest 7, largest 8)")
        );
    }

    #[test]
    fn a_column_with_a_value_that_is_no_plain_number_is_not_summed() {
        for value in ["1,200", "$5", "1e3", "n/a", "1.", ".", "-", "12.5.1"] {
            let table = format!("name,amount\na,3\nb,\"{value}\"\n");
            assert_eq!(
                table_summary("t.csv", &table).as_deref(),
                Some("(2 rows below the header)"),
                "{value}"
            );
        }
        // an empty value is left out of the column's figures
        assert_eq!(
            table_summary("t.csv", "name,amount\na,3\nb,\nc,5\n").as_deref(),
            Some("(3 rows below the header; column `amount`: sum 8, average 4, smallest 3, largest 5)")
        );
    }

    #[test]
    fn what_is_no_plain_table_gets_no_summary() {
        for (path, text) in [
            ("notes.txt", "a,b\n1,2\n"),
            ("noext", "a,b\n1,2\n"),
            // no header: its first line holds a number
            ("t.csv", "1,2\n3,4\n"),
            // rows of another width than the header
            ("t.csv", "a,b\n1,2\n3\n"),
            ("t.csv", "a,b\n1,2,3\n"),
            // a quoted field across lines, and text after a closing quote
            ("t.csv", "a,b\n\"x\ny\",2\n"),
            ("t.csv", "a,b\n\"x\"y,2\n"),
            ("t.csv", ""),
        ] {
            assert_eq!(table_summary(path, text), None, "{path}: {text:?}");
        }
        assert_eq!(
            table_summary("t.csv", "a,b\n").as_deref(),
            Some("(0 rows below the header)")
        );
    }

    #[test]
    fn huge_values_and_many_columns_stay_bounded() {
        let big = "9".repeat(MAX_DIGITS);
        let table = format!("a,b\n{big},1\n{big},2\n");
        // the sum of two 24-digit numbers still fits; more digits make the column not numeric
        assert!(table_summary("t.csv", &table)
            .is_some_and(|summary| summary.contains("column `b`: sum 3")));
        let longer = "9".repeat(MAX_DIGITS + 1);
        let summary = table_summary("t.csv", &format!("a,b\n{longer},1\n")).unwrap_or_default();
        assert!(!summary.contains("column `a`"), "{summary}");
        let header: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
        let row: Vec<String> = (0..20).map(|i| i.to_string()).collect();
        let wide = format!("{}\n{}\n", header.join(","), row.join(","));
        let summary = table_summary("t.csv", &wide).unwrap_or_default();
        assert_eq!(
            summary.matches("column `").count(),
            MAX_COLUMNS,
            "{summary}"
        );
    }

    /// The description of a column of `numbers` as the column made it when it kept every
    /// number: each scaled to the most decimals one had, then summed one by one (an overflow
    /// on the way gives `None`). The running figures must agree with it.
    fn described_keeping_every_number(numbers: &[(i128, u32)]) -> Option<String> {
        let scale = numbers.iter().map(|(_, scale)| *scale).max()?;
        let scaled =
            |(value, own): &(i128, u32)| value.checked_mul(10i128.checked_pow(scale - own)?);
        let mut sum: i128 = 0;
        let mut smallest = i128::MAX;
        let mut largest = i128::MIN;
        for number in numbers {
            let value = scaled(number)?;
            sum = sum.checked_add(value)?;
            smallest = smallest.min(value);
            largest = largest.max(value);
        }
        let count = i128::try_from(numbers.len()).ok()?;
        let hundredfold = sum.checked_mul(100)?;
        let average = (hundredfold + hundredfold.signum() * count / 2) / count;
        Some(format!(
            "column `n`: sum {}, average {}, smallest {}, largest {}",
            shown(sum, scale),
            shown(average, scale + 2),
            shown(smallest, scale),
            shown(largest, scale),
        ))
    }

    /// The description of a column of `numbers` from its running figures.
    fn described_running(numbers: &[(i128, u32)]) -> Option<String> {
        let (first, rest) = numbers.split_first()?;
        rest.iter()
            .try_fold(Figures::of(*first), |figures, number| figures.with(*number))
            .map_or(Column::Overflowed, Column::Numeric)
            .describe("n")
    }

    #[test]
    fn a_sum_beyond_an_i128_on_the_way_leaves_the_column_undescribed() {
        // at two decimals the sum after the second number is 2 * 10^38, beyond an i128,
        // though the last sum is 0.01: the column is not described, as when every number
        // was kept and summed at the end
        let huge = 10i128.pow(36);
        let numbers = [(huge, 0), (huge, 0), (-huge, 0), (-huge, 0), (1, 2)];
        assert_eq!(described_keeping_every_number(&numbers), None);
        assert_eq!(described_running(&numbers), None);
        // without the number with decimals the sums fit
        assert_eq!(
            described_running(&numbers[..4]).as_deref(),
            Some(
                "column `n`: sum 0, average 0, smallest -1000000000000000000000000000000000000, \
                 largest 1000000000000000000000000000000000000"
            )
        );
    }

    proptest! {
        #[test]
        fn the_sum_is_the_sum_of_the_integers(values in proptest::collection::vec(-1_000_000i64..1_000_000, 1..50)) {
            let mut table = String::from("name,n\n");
            for (i, value) in values.iter().enumerate() {
                table.push_str(&format!("r{i},{value}\n"));
            }
            let summary = table_summary("t.csv", &table).unwrap_or_default();
            let sum: i64 = values.iter().sum();
            let smallest = values.iter().min().copied().unwrap_or_default();
            let largest = values.iter().max().copied().unwrap_or_default();
            let expected_sum = format!("sum {sum},");
            let expected_smallest = format!("smallest {smallest},");
            let expected_largest = format!("largest {largest})");
            prop_assert!(summary.contains(&expected_sum), "{}", summary);
            prop_assert!(summary.contains(&expected_smallest), "{}", summary);
            prop_assert!(summary.ends_with(&expected_largest), "{}", summary);
        }

        #[test]
        fn running_figures_describe_a_column_as_keeping_every_number_did(
            numbers in proptest::collection::vec(
                (
                    prop_oneof![
                        -1_000i128..1_000,
                        -10i128.pow(30)..10i128.pow(30),
                        -10i128.pow(37)..10i128.pow(37),
                    ],
                    0..=MAX_SCALE,
                ),
                1..20,
            )
        ) {
            prop_assert_eq!(described_running(&numbers), described_keeping_every_number(&numbers));
        }

        #[test]
        fn decimals_of_any_scale_are_described_as_keeping_every_number_did(
            values in proptest::collection::vec("-?[0-9]{1,15}(\\.[0-9]{1,9})?", 1..30)
        ) {
            let mut table = String::from("name,n\n");
            for (i, value) in values.iter().enumerate() {
                table.push_str(&format!("r{i},{value}\n"));
            }
            let numbers: Vec<(i128, u32)> = values.iter().filter_map(|value| decimal(value)).collect();
            prop_assert_eq!(numbers.len(), values.len());
            let rows = match values.len() {
                1 => "1 row".to_owned(),
                n => format!("{n} rows"),
            };
            let expected = match described_keeping_every_number(&numbers) {
                Some(column) => format!("({rows} below the header; {column})"),
                None => format!("({rows} below the header)"),
            };
            prop_assert_eq!(table_summary("t.csv", &table), Some(expected));
        }

        #[test]
        fn any_text_is_read_without_a_panic(text in "[a-z0-9,\".\\-\n\r\t ]{0,200}") {
            let _ = table_summary("t.csv", &text);
            let _ = table_summary("t.tsv", &text);
        }
    }
}
