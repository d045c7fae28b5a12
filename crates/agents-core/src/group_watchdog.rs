//! Children die with the agent: a watchdog in a child's process group that kills the whole
//! group when the agent process is gone, however it went (SIGKILL included).
//!
//! Linux's `prctl(PR_SET_PDEATHSIG)` would have to run in the child between `fork` and `exec`
//! (`pre_exec`, which is `unsafe`, forbidden in this workspace), and it reaches only the direct
//! child, not what that child started. The watchdog does both without `unsafe`: a `sh` that
//! joins the group and blocks reading a pipe whose only writer is this process. When this
//! process dies the kernel closes the pipe, the read ends, and the watchdog sends SIGKILL to
//! its own process group: the command, everything it started in the group, and itself.

use std::process::Stdio;

/// A watchdog standing in a process group; dropping it (or the death of this process) kills
/// the group.
#[derive(Debug)]
pub struct GroupWatchdog {
    /// The write end of the pipe the watchdog reads; never written, only closed.
    _pipe: tokio::process::ChildStdin,
    /// The watchdog (reaped by tokio once it exits, after the pipe closes).
    _child: tokio::process::Child,
}

/// The watchdog's script: wait for the end of stdin, then kill the process group.
const SCRIPT: &str = "read _ignored; kill -9 0";

impl GroupWatchdog {
    /// Starts a watchdog in the process group `pgid` (the pid of a child spawned with
    /// `process_group(0)`).
    ///
    /// # Errors
    /// The spawn error: `sh` is missing, or the group no longer exists (the child and
    /// everything it started have exited, so nothing is left to watch).
    pub fn join(pgid: u32) -> std::io::Result<Self> {
        let pgid = i32::try_from(pgid)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "bad pid"))?;
        let mut command = tokio::process::Command::new("sh");
        command
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env_clear()
            .kill_on_drop(false);
        #[cfg(unix)]
        command.process_group(pgid);
        #[cfg(not(unix))]
        let _ = pgid;
        let mut child = command.spawn()?;
        let pipe = child.stdin.take().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the watchdog has no stdin")
        })?;
        Ok(Self {
            _pipe: pipe,
            _child: child,
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn alive(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    }

    #[tokio::test]
    async fn dropping_the_watchdog_kills_the_group_and_a_live_one_does_not() {
        let mut command = tokio::process::Command::new("sh");
        command
            .args(["-c", "sleep 300 & echo $!; wait"])
            .stdout(Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().unwrap();
        let pid = child.id().unwrap();
        let watchdog = GroupWatchdog::join(pid).unwrap();
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(stdout), &mut line)
            .await
            .unwrap();
        let sleeper: u32 = line.trim().parse().unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(
            alive(sleeper),
            "the watchdog leaves a live agent's group alone"
        );
        drop(watchdog);
        let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(!status.success());
        for _ in 0..100 {
            if !alive(sleeper) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("the background sleep outlived the group");
    }
}
