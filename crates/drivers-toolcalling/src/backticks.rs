//! Names in backticks, joined for the sentences a model is told (files, tools, numbers,
//! words): one way to write such a list, for this driver's nudges and error messages and
//! for the ReAct driver's.

use std::fmt::{Display, Write};

/// `items` in backticks, joined by `separator`: `["a", "b"]` with `", "` gives
/// "`a`, `b`"; no items give an empty string.
///
/// ```
/// use drivers_toolcalling::in_backticks;
///
/// assert_eq!(in_backticks(["read_file", "list_dir"], ", "), "`read_file`, `list_dir`");
/// assert_eq!(in_backticks([42], " or "), "`42`");
/// ```
pub fn in_backticks<T: Display>(items: impl IntoIterator<Item = T>, separator: &str) -> String {
    let mut joined = String::new();
    for (at, item) in items.into_iter().enumerate() {
        if at > 0 {
            joined.push_str(separator);
        }
        // Writing to a `String` cannot fail.
        let _ = write!(joined, "`{item}`");
    }
    joined
}

/// `items` in backticks, joined for a sentence: "`a`", "`a` and `b`", "`a`, `b` and `c`";
/// no items give an empty string.
///
/// ```
/// use drivers_toolcalling::in_backticks_and;
///
/// assert_eq!(in_backticks_and(&["a.txt", "b.txt", "c.txt"]), "`a.txt`, `b.txt` and `c.txt`");
/// assert_eq!(in_backticks_and(&["a.txt"]), "`a.txt`");
/// ```
pub fn in_backticks_and<T: Display>(items: &[T]) -> String {
    match items {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [first @ .., last] => format!("{} and `{last}`", in_backticks(first, ", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_of_every_length_read_as_a_sentence() {
        let none: [&str; 0] = [];
        assert_eq!(in_backticks(none, ", "), "");
        assert_eq!(in_backticks_and(&none), "");
        assert_eq!(in_backticks(["a", "b", "c"], ", "), "`a`, `b`, `c`");
        assert_eq!(in_backticks(["a", "b"], " or "), "`a` or `b`");
        assert_eq!(in_backticks_and(&["a", "b"]), "`a` and `b`");
        assert_eq!(in_backticks_and(&["a", "b", "c"]), "`a`, `b` and `c`");
    }
}
