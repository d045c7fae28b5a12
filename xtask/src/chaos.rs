//! `cargo xtask chaos`: the kill test of `crates/agents-sessions/tests/chaos.rs` at scale.
//! Children running a session are killed with SIGKILL at every I/O operation of an
//! uninterrupted run and then at random (several kills per run, in resumed runs too) until
//! `--kills N` kill points per store (default 10,000; CI runs the same test with 200), and two
//! runners are started together on one session `--races N` times (default 100). SQLite, and
//! Postgres at `AGENTS_TEST_POSTGRES_URL` or on a throwaway cluster it starts and stops.
//! Each store's line of numbers is what `docs/sessions.md` quotes.

use crate::pg;
use crate::run::{cargo, Step};

pub fn run(args: &[String]) -> Result<(), String> {
    let mut kills = 10_000usize;
    let mut races = 100usize;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            rest.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} takes a number"))
        };
        match arg.as_str() {
            "--kills" => kills = number("--kills")?,
            "--races" => races = number("--races")?,
            other => return Err(format!("unknown option `{other}` (--kills N, --races N)")),
        }
    }
    let (url, cluster) = match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let (url, dir) = pg::start_cluster()?;
            (url, Some(dir))
        }
    };
    let mut command = cargo(&[
        "test",
        "-p",
        "agents-sessions",
        "--test",
        "chaos",
        "--",
        "--nocapture",
        "--test-threads=1",
        "chaos_",
    ]);
    command
        .env("CHAOS_KILLS", kills.to_string())
        .env("CHAOS_RACES", races.to_string())
        .env("AGENTS_TEST_POSTGRES_URL", &url);
    let result = Step::new("chaos", command).run();
    if let Some(dir) = cluster {
        pg::stop(&dir)?;
    }
    result
}
