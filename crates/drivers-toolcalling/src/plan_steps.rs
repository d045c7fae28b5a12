//! The next step of a numbered plan, for a call that repeats a step already done.
//!
//! Small models write a plan ("1. List the files ... 2. Search each file ..."), the call of its
//! first step runs, and the next reply writes the same plan, and the same first call, again
//! (the 1.5B model on development tasks d3 and d11). Told only that the call was not run
//! again, the model restarts the plan once more. [`next_step`] finds, in the reply's text
//! before the call, the step the call does and the step after it, so the note after the
//! call's result ([`step_done_note`]) and the refusal of a repeat can say which step is next.
//! When the lead-in ends with the call's step and the model wrote the rest of its plan after
//! the call, the note reads the next step from there ([`next_step_after_the_call`]).
//! [`next_step_after_called`] does the same for a plan written again without a call (the
//! plan nudge).

use agents_core::ToolExecutions;

/// The most items of a plan read (a longer numbered list is not a plan of calls).
const MAX_ITEMS: usize = 20;

/// The most characters of the next step quoted.
const MAX_STEP_CHARS: usize = 300;

/// A numbered line of the lead-in: its text after the number, and that text normalized for
/// comparison (lower case, without `*`, backticks and a closing colon or full stop).
struct Item<'a> {
    text: &'a str,
    key: String,
}

/// The step of a numbered plan in `lead_in` (a reply's text before a call to `tool`) that
/// comes after the step the call does, quoted without markdown emphasis; `None` when the
/// lead-in holds no plan of two different steps or does not show which step the call does.
///
/// The call's step is the first item that names `tool`, or else the lead-in's last line when
/// it is an item (the call follows it). The next step is the first different item after it
/// in the order the items first appear, or else the first different item: a model that
/// restarts its plan may list the remaining steps first and the done one last.
pub(crate) fn next_step(lead_in: &str, tool: &str) -> Option<String> {
    let items = items(lead_in);
    let done = done_step(lead_in, &items, tool)?;
    let done_key = &items[done].key;
    let distinct = distinct(&items);
    let done_at = distinct.iter().position(|item| &item.key == done_key)?;
    let next = distinct[done_at + 1..]
        .iter()
        .chain(&distinct[..done_at])
        .next()?;
    // Without markdown emphasis: the 1.5B model followed "Do the next step of your plan
    // now: Search for ..." and restarted its plan after "... now: **Search for ...**".
    Some(quoted(next.text))
}

/// What the model is told after the result of the reply's last call when that call did a
/// step of the numbered plan in `lead_in` (the reply's text before its calls) and the plan
/// has a next step: small models otherwise write the whole plan, and its first call, again.
/// `None` when the last call failed (the model should fix it first) or there is no plan.
///
/// `reply` is the whole reply the call was written in. When the lead-in shows the call's
/// step and no step after it, the next step is read from what the reply wrote after the
/// call, which the step does not keep ([`next_step_after_the_call`]).
pub(crate) fn step_done_note(
    lead_in: &str,
    reply: &str,
    executions: &ToolExecutions,
) -> Option<String> {
    let last = executions.iter().last().filter(|e| !e.has_error())?;
    let next = next_step(lead_in, last.name())
        .or_else(|| next_step_after_the_call(lead_in, reply, last.name()))?;
    // Short and without "if it answers the question, answer now": with that clause the
    // 1.5B model restarted its plan.
    Some(format!(
        "{STEP_DONE_NOTE} its result is above. Do the next step of your plan now: {next}"
    ))
}

/// The first step of a numbered plan that `reply` writes after `lead_in` (its text before
/// the block of a call to `tool`), when the lead-in ends with the call's step or names
/// `tool` in one, and that step is neither the call's nor one the lead-in already lists;
/// quoted as [`next_step`] quotes. The 1.5B model writes its plan around the call: "1.
/// **Read the current `about.txt` file**:", the call, then "2. ..." and "3. ..." after it.
/// The step keeps only the lead-in, so without this the note had no next step to name, and
/// the model wrote its plan, and its first call, again (development task d22, 2026-12-06).
fn next_step_after_the_call(lead_in: &str, reply: &str, tool: &str) -> Option<String> {
    let before = items(lead_in);
    let done = done_step(lead_in, &before, tool)?;
    let after = &reply[reply.find(lead_in)? + lead_in.len()..];
    let next = items(after)
        .into_iter()
        .find(|item| item.key != before[done].key && !before.iter().any(|b| b.key == item.key))?;
    Some(quoted(next.text))
}

/// How the note of [`step_done_note`] begins; it follows the tool's own text after a blank
/// line.
const STEP_DONE_NOTE: &str = "This step of your plan is done:";

/// The text a tool returned, without the note [`step_done_note`] appended to it: the next
/// step of a plan is the model's words, not what the tool found.
pub(crate) fn without_step_note(result: &str) -> &str {
    result
        .rfind(STEP_DONE_NOTE)
        .filter(|&at| result[..at].ends_with("\n\n"))
        .map_or(result, |at| &result[..at - 2])
}

/// The step of the numbered plan in `reply` (a reply without calls, written after tools ran)
/// that follows the last step naming one of the tools `called` in this execution, quoted
/// without markdown emphasis: the plan written again after some of its steps ran. `None` when
/// the reply holds no such plan or that step is its last.
pub(crate) fn next_step_after_called(reply: &str, called: &[&str]) -> Option<String> {
    let items = items(reply);
    let distinct = distinct(&items);
    let done = distinct
        .iter()
        .rposition(|item| called.iter().any(|tool| names(item.text, tool)))?;
    distinct.get(done + 1).map(|next| quoted(next.text))
}

/// The index, in `items` (the numbered lines of `lead_in`), of the step a call to `tool`
/// does: the first item that names `tool`, or else the lead-in's last line when it is an
/// item (the call follows it).
fn done_step(lead_in: &str, items: &[Item<'_>], tool: &str) -> Option<usize> {
    items
        .iter()
        .position(|item| names(item.text, tool))
        .or_else(|| ends_with_item(lead_in, items))
}

/// `items` each once (by key), in the order they first appear.
fn distinct<'a>(items: &'a [Item<'a>]) -> Vec<&'a Item<'a>> {
    let mut distinct: Vec<&Item<'_>> = Vec::new();
    for item in items {
        if !distinct.iter().any(|seen| seen.key == item.key) {
            distinct.push(item);
        }
    }
    distinct
}

/// `text` without markdown emphasis, cut to [`MAX_STEP_CHARS`].
fn quoted(text: &str) -> String {
    let text: String = text.chars().filter(|c| *c != '*').collect();
    messages::excerpt(text.trim(), MAX_STEP_CHARS).into_owned()
}

/// The numbered lines of `text` ("1. ...", "2) ...", also after `-`, `#` or `**`), at most
/// [`MAX_ITEMS`].
fn items(text: &str) -> Vec<Item<'_>> {
    text.lines()
        .filter_map(item_text)
        .take(MAX_ITEMS)
        .map(|text| Item {
            text,
            key: key(text),
        })
        .collect()
}

/// The text after the number when `line` is a numbered item.
fn item_text(line: &str) -> Option<&str> {
    let line = line.trim_start().trim_start_matches(['-', '#', '*', ' ']);
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let rest = &line[digits..];
    let rest = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))?;
    let text = rest.strip_prefix(' ')?.trim();
    (!key(text).is_empty()).then_some(text)
}

fn key(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '*' | '`'))
        .collect::<String>()
        .trim()
        .trim_end_matches([':', '.'])
        .trim()
        .to_lowercase()
}

/// Whether `text` names `tool` as a word (not inside a longer name).
fn names(text: &str, tool: &str) -> bool {
    let is_name_char = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(tool).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + tool.len()..].chars().next();
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

/// The index of the last item when the lead-in's last non-empty line is that item.
fn ends_with_item(lead_in: &str, items: &[Item<'_>]) -> Option<usize> {
    let last_line = lead_in.lines().rev().find(|line| !line.trim().is_empty())?;
    let text = item_text(last_line)?;
    let last = items.len().checked_sub(1)?;
    (items[last].text == text).then_some(last)
}

#[cfg(test)]
mod tests {
    use super::{next_step, next_step_after_called, next_step_after_the_call};

    #[test]
    fn the_step_written_after_the_call_is_next_when_the_lead_in_shows_only_the_calls() {
        // Development task d22 (2026-12-06): the lead-in ends with the call's step; the rest
        // of the plan follows the call's block.
        let lead_in = "To change the version from 1.4.0 to 1.5.0 in both `VERSION` and \
                       `about.txt`, you can use the following steps:\n\n1. **Read the current \
                       `about.txt` file**:";
        let reply = format!(
            "{lead_in}\n```json\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \
             \"about.txt\"}}}}\n```\n\n2. **Replace `1.4.0` with `1.5.0`** in the content.\n3. \
             **Write the new content** with `write_file`.\n"
        );
        assert_eq!(
            next_step(lead_in, "read_file"),
            None,
            "the lead-in alone has no next"
        );
        assert_eq!(
            next_step_after_the_call(lead_in, &reply, "read_file").as_deref(),
            Some("Replace `1.4.0` with `1.5.0` in the content.")
        );
        // The call's own step written again after it is not the next one.
        let again = format!(
            "{lead_in}\n```json\n{{}}\n```\n1. **Read the current `about.txt` file**:\n2. Done."
        );
        assert_eq!(
            next_step_after_the_call(lead_in, &again, "read_file").as_deref(),
            Some("Done.")
        );
        // Nothing after the call, a lead-in that does not end with the call's step, or a
        // reply that does not hold the lead-in: nothing.
        assert_eq!(
            next_step_after_the_call(lead_in, lead_in, "read_file"),
            None
        );
        assert_eq!(
            next_step_after_the_call("Here is the call:", &reply, "read_file"),
            None
        );
        assert_eq!(
            next_step_after_the_call(lead_in, "2. Replace it.", "read_file"),
            None
        );
    }

    #[test]
    fn the_step_after_the_one_naming_the_tool_is_next() {
        // The 1.5B model on d3: the plan names the tools, then the call follows a sentence.
        let lead_in = "To answer this question, I'll need to look for files in the notes \
directory that contain the word \"zeppelin\". Here's the step-by-step process:

1. **List the files in the notes directory**: I'll use the `list_dir` function to get a list.
2. **Search for the word \"zeppelin\" in each file**: I'll use the `search_files` function.

Here's the JSON call to achieve this:";
        assert_eq!(
            next_step(lead_in, "list_dir").as_deref(),
            Some(
                "Search for the word \"zeppelin\" in each file: I'll use the `search_files` \
                 function."
            )
        );
    }

    #[test]
    fn a_restarted_plan_ending_with_the_done_step_points_at_the_first_other_step() {
        // The 1.5B model on d11: the call follows the item it does; the reply restarted its
        // plan (remaining steps first, then the done one again).
        let first = "To answer this question, I'll need to:
1. List all files in the workspace.
2. Search for files containing the word \"error\" in the file names.
3. Count the lines of each file that contain the word \"error\".

Here's the step-by-step process:

1. **List all files in the workspace**:";
        let restarted = "To continue, I'll need to:
1. Search for files containing the word \"error\" in the file names.
2. Count the lines of each file that contain the word \"error\".

Here's the step-by-step process:

1. **List all files in the workspace**:";
        let search = "Search for files containing the word \"error\" in the file names.";
        assert_eq!(next_step(first, "list_dir").as_deref(), Some(search));
        assert_eq!(next_step(restarted, "list_dir").as_deref(), Some(search));
    }

    #[test]
    fn a_plan_written_again_after_its_first_call_ran_points_at_the_step_after_it() {
        // The 1.5B model on d3, asked once more after its plan: the plan again, no call.
        let reply = "To answer this question, I'll need to look for files in the notes \
directory that contain the word \"zeppelin\". Here's the step-by-step process:

1. **List the files in the notes directory**: I'll use the `list_dir` function.
2. **Search for the word \"zeppelin\" in each file**: I'll use the `search_files` function.

Here's the JSON call to achieve this:";
        let next = "Search for the word \"zeppelin\" in each file: I'll use the `search_files` \
                    function.";
        assert_eq!(
            next_step_after_called(reply, &["list_dir"]).as_deref(),
            Some(next)
        );
        // The step after the last one that ran; none when that is the plan's last.
        assert_eq!(
            next_step_after_called(reply, &["search_files", "list_dir"]),
            None
        );
        assert_eq!(next_step_after_called(reply, &["read_file"]), None);
        assert_eq!(
            next_step_after_called("I will search.", &["list_dir"]),
            None
        );
    }

    #[test]
    fn no_plan_or_no_known_step_gives_nothing() {
        for lead_in in [
            "",
            "I will list the files first.",
            // One step only.
            "1. List the files with `list_dir`.",
            // A plan whose items name no tool, and the call does not follow an item.
            "1. List the files.\n2. Read each one.\n\nHere is the call:",
            // Numbers that are not items.
            "There are 2.5 files.\n10.000 lines were read.",
            // A tool named inside a longer name.
            "1. Use `list_dir_tree`.\n2. Read the file.\n\nThe call:",
        ] {
            assert_eq!(next_step(lead_in, "list_dir"), None, "{lead_in:?}");
        }
    }

    #[test]
    fn a_long_or_hostile_lead_in_stays_bounded() {
        let many: String = (1..=200).map(|n| format!("{n}. step {n}\n")).collect();
        let next = next_step(&many, "nothing");
        // Only the first 20 items are read; the last line is item 200, beyond them.
        assert_eq!(next, None);
        let long = format!("1. `list_dir`\n2. {}", "é".repeat(10_000));
        let next = next_step(&long, "list_dir").unwrap_or_default();
        assert_eq!(next.chars().count(), 301);
    }
}
