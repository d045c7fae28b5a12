//! `cargo xtask browser`: installs the browser the console's end-to-end tests drive: Debian's
//! `chromium` and `chromium-driver`, pinned, with apt-get (when missing or at another
//! version). Prints `AGENTS_CHROMIUM=...` and `AGENTS_CHROMEDRIVER=...` for the tests.

use std::process::Command;

use crate::run::Step;

/// The Debian bookworm(-security) build the tests were written against. When Debian replaces
/// it, apt-get refuses the pin: update it here (and note the new version in the changelog).
const CHROMIUM_VERSION: &str = "156.0.8078.108-1~deb12u1";

pub fn install() -> Result<(), String> {
    let installed = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", "chromium", "chromium-driver"])
        .output()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            o.status.success() && text == format!("{CHROMIUM_VERSION}{CHROMIUM_VERSION}")
        })
        .unwrap_or(false);
    if !installed {
        let mut update = Command::new("apt-get");
        update.arg("update");
        Step::new("apt-get update", update).run()?;
        let mut install = Command::new("apt-get");
        install
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "--no-install-recommends"])
            .arg(format!("chromium={CHROMIUM_VERSION}"))
            .arg(format!("chromium-driver={CHROMIUM_VERSION}"));
        Step::new("apt-get install chromium chromium-driver", install).run()?;
    }
    for (name, path) in [
        ("AGENTS_CHROMIUM", "/usr/bin/chromium"),
        ("AGENTS_CHROMEDRIVER", "/usr/bin/chromedriver"),
    ] {
        if !std::path::Path::new(path).is_file() {
            return Err(format!("{path} is missing after the install"));
        }
        println!("{name}={path}");
    }
    Ok(())
}
