//! `cargo xtask chaos`: the kill test of `crates/agents-sessions/tests/chaos.rs` at scale.
//! Children running a session are killed with SIGKILL at every I/O operation of an
//! uninterrupted run and then at random (several kills per run, in resumed runs too) until
//! `--kills N` kill points per store (default 10,000; CI runs the same test with 200), `--jobs N`
//! runs at once (default twice the cores), and two runners are started together on one session
//! `--races N` times (default 100). SQLite, and
//! Postgres at `AGENTS_TEST_POSTGRES_URL` or on a throwaway cluster it starts and stops.
//! Each store's line of numbers is what `docs/sessions.md` quotes. The test runs as a release
//! build: the children are processes started by the thousand, and a debug build's start-up and
//! database code made a Postgres kill point cost about 0.8 s instead of about 0.06 s.

use crate::pg;
use crate::run::{cargo, Step};

pub fn run(args: &[String]) -> Result<(), String> {
    let mut kills = 10_000usize;
    let mut races = 100usize;
    // The children mostly wait (for process start, the database): more runs at once than cores.
    let mut jobs = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
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
            "--jobs" => jobs = number("--jobs")?.max(1),
            other => {
                return Err(format!(
                    "unknown option `{other}` (--kills N, --races N, --jobs N)"
                ))
            }
        }
    }
    let (url, cluster) = match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let (url, dir) = pg::start_cluster()?;
            (url, Some(dir))
        }
    };
    // SQLite first, then Postgres: each store's numbers as soon as they are known.
    let mut result = Ok(());
    for store in ["chaos_sqlite", "chaos_postgres"] {
        let mut command = cargo(&[
            "test",
            "--release",
            "-p",
            "agents-sessions",
            "--test",
            "chaos",
            "--",
            "--nocapture",
            "--test-threads=1",
            store,
        ]);
        command
            .env("CHAOS_KILLS", kills.to_string())
            .env("CHAOS_RACES", races.to_string())
            .env("CHAOS_JOBS", jobs.to_string())
            .env("AGENTS_TEST_POSTGRES_URL", &url);
        result = result.and(Step::new("chaos", command).run());
    }
    if let Some(dir) = cluster {
        pg::stop(&dir)?;
    }
    result
}
