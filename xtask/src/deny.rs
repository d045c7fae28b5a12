//! `cargo deny`, run honestly on machines that cannot reach the advisory database.
//!
//! Licenses, bans and sources need no network and always run. Advisories need the RustSec
//! database: we try to fetch it; if that fails we say loudly that advisories were NOT checked
//! instead of reporting a pass. When the database is available, a known advisory fails the job.

use crate::has_command;
use crate::run::{cargo, Step};

pub fn check() -> Result<(), String> {
    ensure_installed()?;
    Step::new(
        "cargo deny (licenses, bans, sources)",
        cargo(&["deny", "check", "licenses", "bans", "sources"]),
    )
    .run()?;
    let fetched = cargo(&["deny", "fetch", "db"])
        .output()
        .map_err(|e| format!("could not run cargo deny fetch: {e}"))?;
    if !fetched.status.success() {
        let why = String::from_utf8_lossy(&fetched.stderr);
        let why = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("unknown error");
        eprintln!(
            "!!! cargo deny advisories: NOT CHECKED: the advisory database could not be fetched ({})",
            why.trim()
        );
        eprintln!("!!! licenses, bans and sources were checked; security advisories were not.");
        return Ok(());
    }
    Step::new(
        "cargo deny (advisories)",
        cargo(&["deny", "check", "--disable-fetch", "advisories"]),
    )
    .run()
}

fn ensure_installed() -> Result<(), String> {
    if has_command("cargo-deny", "--version") {
        return Ok(());
    }
    Step::new(
        "install cargo-deny",
        cargo(&["install", "cargo-deny", "--locked"]),
    )
    .run()
}
