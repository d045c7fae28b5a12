//! `cargo xtask browser`: installs the browser the console's end-to-end tests drive: Debian's
//! `chromium` and `chromium-driver`, pinned to one Chromium major version, with apt-get (when
//! missing or at another version). Prints `AGENTS_CHROMIUM=...` and `AGENTS_CHROMEDRIVER=...`
//! for the tests.

use std::process::Command;

use crate::run::Step;

/// The Chromium major version the tests were written against. The pin is the major version,
/// not a Debian build: bookworm-security keeps only its newest build of a version line
/// (156.0.8078.108 was withdrawn for .114 within days, and a pin on it failed on every fresh
/// machine), so the newest Debian build of this line is installed. When Debian moves to
/// another major version, the install says so: test the console against it and update here
/// (and note the new version in the changelog).
const CHROMIUM_MAJOR: &str = "156";

pub fn install() -> Result<(), String> {
    let installed = Command::new("dpkg-query")
        .args(["-W", "-f=${Version} ", "chromium", "chromium-driver"])
        .output()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            let versions: Vec<&str> = text.split_whitespace().collect();
            o.status.success()
                && versions.len() == 2
                && versions[0] == versions[1]
                && of_major(versions[0])
        })
        .unwrap_or(false);
    if !installed {
        let mut update = Command::new("apt-get");
        update.arg("update");
        Step::new("apt-get update", update).run()?;
        let version = newest_build()?;
        let mut install = Command::new("apt-get");
        install
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "--no-install-recommends"])
            .arg(format!("chromium={version}"))
            .arg(format!("chromium-driver={version}"));
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

/// True for a Debian version of a build of [`CHROMIUM_MAJOR`] (`156.0.8078.114-1~deb12u1`).
fn of_major(version: &str) -> bool {
    version.split('.').next() == Some(CHROMIUM_MAJOR)
}

/// The newest build of [`CHROMIUM_MAJOR`] that apt offers for both packages.
fn newest_build() -> Result<String, String> {
    let offered = |package: &str| -> Result<Vec<String>, String> {
        let output = Command::new("apt-cache")
            .args(["madison", package])
            .output()
            .map_err(|e| format!("apt-cache madison {package}: {e}"))?;
        Ok(madison_versions(&String::from_utf8_lossy(&output.stdout)))
    };
    let drivers = offered("chromium-driver")?;
    let browsers = offered("chromium")?;
    browsers
        .iter()
        .find(|version| of_major(version) && drivers.contains(version))
        .cloned()
        .ok_or_else(|| {
            format!(
                "Debian offers no build of Chromium {CHROMIUM_MAJOR} for both chromium and \
                 chromium-driver (offered: {}); run the console's browser tests against what it \
                 offers and update CHROMIUM_MAJOR in xtask/src/browser.rs",
                browsers.join(", ")
            )
        })
}

/// The versions in `apt-cache madison` output (`chromium | 156.0.8078.114-1~deb12u1 | http://...`),
/// newest first as apt lists them.
fn madison_versions(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split('|').nth(1))
        .map(|version| version.trim().to_owned())
        .filter(|version| !version.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_build_of_the_pinned_major_version_is_chosen() {
        let text = "  chromium | 156.0.8078.114-1~deb12u1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n  \
                    chromium | 150.0.7871.100-1~deb12u1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n";
        let versions = madison_versions(text);
        assert_eq!(
            versions,
            ["156.0.8078.114-1~deb12u1", "150.0.7871.100-1~deb12u1"]
        );
        assert!(of_major(&versions[0]));
        assert!(!of_major(&versions[1]));
        assert!(!of_major("1560.0.1-1"));
    }
}
