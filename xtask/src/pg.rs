//! `cargo xtask pg`: a throwaway Postgres 15 cluster on 127.0.0.1 for the session tests.
//!
//! - `cargo xtask pg` starts one, prints `AGENTS_TEST_POSTGRES_URL=...`, and stops it (and
//!   removes its directory) when Enter is pressed or stdin closes.
//! - `cargo xtask pg start` starts one and leaves it running; it prints the URL and
//!   `AGENTS_TEST_POSTGRES_DIR=...` (for `.ci/run`, which stops it at exit).
//! - `cargo xtask pg stop DIR` stops the cluster in `DIR` (by the pid in its
//!   `postmaster.pid`, through `pg_ctl`) and removes `DIR`.
//!
//! The binaries come from `/usr/lib/postgresql/15/bin` (Debian's `postgresql-15`). They refuse
//! to run as root, so as root they run as the `postgres` user (`runuser -u postgres --`) on a
//! directory that user owns.

use std::io::BufRead;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = "/usr/lib/postgresql/15/bin";

pub fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        None => {
            let cluster = start()?;
            println!("Postgres is running; press Enter (or close stdin) to stop it.");
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            stop(&cluster)
        }
        Some("start") => start().map(|_| ()),
        Some("stop") => {
            let dir = args.get(1).ok_or(
                "usage: cargo xtask pg stop DIR (the AGENTS_TEST_POSTGRES_DIR printed by start)",
            )?;
            stop(Path::new(dir))
        }
        Some(other) => Err(format!(
            "unknown pg command `{other}`: use start, stop DIR, or nothing"
        )),
    }
}

/// Starts a cluster and prints its URL and directory.
fn start() -> Result<PathBuf, String> {
    start_cluster().map(|(_, dir)| dir)
}

/// Starts a cluster, prints its URL and directory and returns them (stop it with [`stop`]).
pub fn start_cluster() -> Result<(String, PathBuf), String> {
    if !Path::new(BIN).join("initdb").exists() {
        return Err(format!(
            "{BIN}/initdb not found: install Postgres 15 (apt-get install -y \
             --no-install-recommends postgresql-15)"
        ));
    }
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("agents-pg-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let as_root = is_root();
    if as_root {
        run_checked(
            Command::new("chown").arg("postgres:postgres").arg(&dir),
            "chown",
        )?;
    }
    let data = dir.join("data");
    let data_arg = data.display().to_string();
    run_checked(
        &mut postgres_command(
            as_root,
            "initdb",
            &[
                "-D",
                &data_arg,
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        ),
        "initdb",
    )?;
    let port = free_port()?;
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
        dir.display()
    );
    let log = dir.join("postgres.log").display().to_string();
    run_checked(
        &mut postgres_command(
            as_root,
            "pg_ctl",
            &["-D", &data_arg, "-o", &options, "-l", &log, "-w", "start"],
        ),
        "pg_ctl start",
    )?;
    let pid = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|text| text.lines().next().map(str::to_owned))
        .unwrap_or_default();
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    println!("AGENTS_TEST_POSTGRES_URL={url}");
    println!("AGENTS_TEST_POSTGRES_DIR={}", dir.display());
    eprintln!("postgres pid {pid}, log {log}");
    Ok((url, dir))
}

/// Stops the cluster in `dir` and removes `dir`.
pub fn stop(dir: &Path) -> Result<(), String> {
    let data = dir.join("data");
    if data.join("postmaster.pid").exists() {
        let data_arg = data.display().to_string();
        run_checked(
            &mut postgres_command(
                is_root(),
                "pg_ctl",
                &["-D", &data_arg, "-m", "fast", "-w", "stop"],
            ),
            "pg_ctl stop",
        )?;
    }
    std::fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))
}

fn postgres_command(as_root: bool, program: &str, args: &[&str]) -> Command {
    let binary = format!("{BIN}/{program}");
    if as_root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--", &binary]).args(args);
        command
    } else {
        let mut command = Command::new(binary);
        command.args(args);
        command
    }
}

fn run_checked(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A port nothing listens on right now (the listener is dropped before Postgres binds it).
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}
