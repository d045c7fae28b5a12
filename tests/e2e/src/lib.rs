//! Support for the end-to-end tests: where the servers are, skipping clearly when they are not
//! up, and the report of measured numbers.
//!
//! ```
//! // Without `cargo xtask e2e`, no server is configured and tests skip.
//! if agents_e2e::server("E2E_DOES_NOT_EXIST").is_none() {
//!     // skipped
//! }
//! ```

use std::io::Write as _;

/// The base URL in `variable`, or `None` (with a message on stderr) when it is not set, so a
/// test can return early: `let Some(url) = server("E2E_LLMOCK_URL") else { return };`.
pub fn server(variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln_skip(variable);
            None
        }
    }
}

#[allow(clippy::print_stderr)]
fn eprintln_skip(variable: &str) {
    eprintln!("SKIPPED: {variable} is not set; run `cargo xtask e2e` to start the servers and run this test for real");
}

/// Appends a line to the e2e report (`E2E_REPORT`) and prints it.
#[allow(clippy::print_stdout)]
pub fn report(line: &str) {
    println!("{line}");
    let Ok(path) = std::env::var("E2E_REPORT") else {
        return;
    };
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "- {line}");
    }
}
