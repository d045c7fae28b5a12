//! The names closest to a misspelled one, for "did you mean" hints to the model.

/// Names longer than this are compared by their first this-many characters, so a model that
/// writes a huge "name" costs linear time, not quadratic.
const MAX_COMPARED_CHARS: usize = 64;

/// Up to `max` of `candidates` closest to `name`, closest first: by edit distance (Levenshtein,
/// case-insensitive), with names that contain `name` or are contained in it counted as close.
/// Candidates farther than about half their length are left out, so an unrelated name gets no
/// suggestion.
///
/// ```
/// use agents_core::closest_names;
///
/// let tools = ["read_file", "write_file", "list_files", "bash"];
/// assert_eq!(closest_names("readfile", tools, 2), vec!["read_file", "write_file"]);
/// assert_eq!(closest_names("list_file", tools, 1), vec!["list_files"]);
/// assert!(closest_names("launch_rocket", tools, 3).is_empty());
/// ```
pub fn closest_names<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let wanted: Vec<char> = name
        .chars()
        .take(MAX_COMPARED_CHARS)
        .flat_map(char::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let other: Vec<char> = candidate
                .chars()
                .take(MAX_COMPARED_CHARS)
                .flat_map(char::to_lowercase)
                .collect();
            let distance = edit_distance(&wanted, &other);
            let contains = !wanted.is_empty()
                && !other.is_empty()
                && (contains(&other, &wanted) || contains(&wanted, &other));
            let limit = other.len().max(wanted.len()).div_ceil(2);
            (contains || distance <= limit).then_some((distance, candidate))
        })
        .collect();
    scored.sort_by_key(|(distance, _)| *distance);
    scored.into_iter().take(max).map(|(_, name)| name).collect()
}

/// Up to `max` of `candidates` that `name` is likely a misspelling of, closest first: at
/// most two edits away (Levenshtein, case-insensitive). Unlike [`closest_names`], a name that
/// only shares a part with a candidate (`rename_file` and `read_file`) is not one: a model
/// told "did you mean `read_file`" for a rename reads the file instead.
///
/// ```
/// use agents_core::misspelled_names;
///
/// let tools = ["read_file", "write_file", "edit_file", "bash"];
/// assert_eq!(misspelled_names("readfile", tools, 3), vec!["read_file"]);
/// assert!(misspelled_names("rename_file", tools, 3).is_empty());
/// ```
pub fn misspelled_names<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let lower = |text: &str| -> Vec<char> {
        text.chars()
            .take(MAX_COMPARED_CHARS)
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = lower(name);
    let mut scored: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let distance = edit_distance(&wanted, &lower(candidate));
            (distance <= 2).then_some((distance, candidate))
        })
        .collect();
    scored.sort_by_key(|(distance, _)| *distance);
    scored.into_iter().take(max).map(|(_, name)| name).collect()
}

fn contains(haystack: &[char], needle: &[char]) -> bool {
    needle.len() <= haystack.len() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Levenshtein distance with one row of memory.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_first_and_bounded() {
        let names = ["read_file", "write_file", "edit_file", "list_files"];
        assert_eq!(closest_names("write_fil", names, 1), vec!["write_file"]);
        assert_eq!(closest_names("READ_FILE", names, 1), vec!["read_file"]);
        assert_eq!(closest_names("file", names, 4).len(), 4);
        assert!(closest_names("sum_numbers", names, 3).is_empty());
        assert!(closest_names("x", names, 0).is_empty());
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("same"), &chars("same")), 0);
    }

    #[test]
    fn misspellings_are_two_edits_at_most() {
        let names = ["read_file", "write_file", "edit_file", "list_dir"];
        assert_eq!(misspelled_names("READ_FILE", names, 3), vec!["read_file"]);
        assert_eq!(misspelled_names("edit_files", names, 3), vec!["edit_file"]);
        assert!(misspelled_names("rename_file", names, 3).is_empty());
        assert!(misspelled_names("file", names, 3).is_empty());
        assert!(misspelled_names("read_file", names, 0).is_empty());
    }

    #[test]
    fn huge_names_are_cut_before_comparing() {
        let long = "a".repeat(100_000);
        assert!(closest_names(&long, ["bash"], 3).is_empty());
        assert!(misspelled_names(&long, ["bash"], 3).is_empty());
    }
}
