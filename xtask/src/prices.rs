//! `cargo xtask prices [--date YYYY-MM-DD]`: regenerates the built-in model catalog
//! (`crates/inference/data/models.json`) from the pinned `genai-prices` package (PyPI, MIT):
//! every OpenAI and Anthropic model it prices per token, previous generations included, at the
//! price in force on the date (default: today, UTC). The package is installed into the venv
//! `~/.cache/agents-rs/genai-prices` (`AGENTS_PRICES_CACHE` moves it); `prices.py` reads its
//! data. Nothing is invented: models without per-token prices are left out and named.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run::Step;

/// The genai-prices release the catalog is generated from.
pub const GENAI_PRICES_VERSION: &str = "0.2.3";

const SCRIPT: &str = include_str!("prices.py");

pub fn run(args: &[String]) -> Result<(), String> {
    let date = match args {
        [] => today()?,
        [flag, date] if flag == "--date" => date.clone(),
        _ => return Err("usage: cargo xtask prices [--date YYYY-MM-DD]".into()),
    };
    let python = ensure_package(&cache_dir()?)?;
    let output = Command::new(&python)
        .args(["-c", SCRIPT, &date])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !output.status.success() {
        return Err(format!(
            "prices.py failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = String::from_utf8(output.stdout).map_err(|e| format!("prices.py: {e}"))?;
    let catalog: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("prices.py wrote no JSON: {e}"))?;
    let count = catalog["models"].as_array().map_or(0, Vec::len);
    if count == 0 {
        return Err("prices.py found no model; is the package's data layout different?".into());
    }
    let target = workspace_root().join("crates/inference/data/models.json");
    std::fs::write(&target, text).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    eprintln!(
        "{} models from genai-prices {GENAI_PRICES_VERSION} (prices as of {date}) written to {}",
        count,
        target.display()
    );
    Ok(())
}

fn cache_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("AGENTS_PRICES_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".cache/agents-rs/genai-prices"))
}

/// The venv's python, with the pinned genai-prices installed.
fn ensure_package(cache: &Path) -> Result<PathBuf, String> {
    let python = cache.join("venv/bin/python");
    if !python.exists() {
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(cache.join("venv"));
        Step::new("python venv", create).run()?;
    }
    let installed = Command::new(&python)
        .args([
            "-c",
            &format!(
                "import importlib.metadata as m, sys; \
                 sys.exit(m.version('genai-prices') != '{GENAI_PRICES_VERSION}')"
            ),
        ])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !installed {
        let mut pip = Command::new(&python);
        pip.args(["-m", "pip", "install", "-q"])
            .arg(format!("genai-prices=={GENAI_PRICES_VERSION}"));
        Step::new("pip install genai-prices", pip).run()?;
    }
    Ok(python)
}

/// Today's date in UTC, from `date` (the xtask has no date crate).
fn today() -> Result<String, String> {
    let output = Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .map_err(|e| format!("cannot run date: {e}"))?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}
