#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The file tools against a model trying to reach outside the workspace: symlinks (dangling,
//! relative, absolute), `..`, a directory swapped for a symlink while the tools run, and files
//! that are not regular files (FIFOs, sockets).
#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use agents::capabilities::{FileTools, Sandbox};
use agents_core::tools::{ToolContext, ToolError, Tools};
use serde_json::{json, Value};

/// A workspace `root` and, beside it, a directory `outside` the tools must never touch.
struct Workspace {
    _parent: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    tools: Tools,
}

fn workspace() -> Workspace {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    let outside = parent.path().join("outside");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
    let tools = FileTools::new(Sandbox::new(&root).unwrap()).all();
    Workspace {
        root: root.canonicalize().unwrap(),
        outside: outside.canonicalize().unwrap(),
        _parent: parent,
        tools,
    }
}

impl Workspace {
    async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolError> {
        let tool = self.tools.get(tool).unwrap();
        // a tool that blocks (on a FIFO, say) fails the test instead of hanging it
        tokio::time::timeout(
            Duration::from_secs(20),
            tool.call(arguments, &ToolContext::default()),
        )
        .await
        .expect("the tool call did not finish within 20 s")
        .map(|output| output.content().to_owned())
    }

    fn symlink(&self, target: impl AsRef<Path>, name: &str) {
        std::os::unix::fs::symlink(target, self.root.join(name)).unwrap();
    }

    /// The names in `outside` besides the planted `secret.txt`.
    fn written_outside(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "secret.txt")
            .collect();
        names.sort();
        names
    }
}

fn escapes(path: &str) -> ToolError {
    ToolError::invalid_arguments(format!("path `{path}` escapes the workspace root"))
}

#[tokio::test]
async fn writing_through_a_dangling_absolute_symlink_fails() {
    let ws = workspace();
    ws.symlink(ws.outside.join("planted.txt"), "notes.txt");
    let error = ws
        .call(
            "write_file",
            json!({"path": "notes.txt", "content": "pwned"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error, escapes("notes.txt"));
    assert_eq!(ws.written_outside(), Vec::<String>::new());
}

#[tokio::test]
async fn writing_through_a_dangling_relative_symlink_fails() {
    let ws = workspace();
    ws.symlink("../outside/planted.txt", "notes.txt");
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    // `..` inside the target, starting below the root
    std::os::unix::fs::symlink("../../outside/deeper.txt", ws.root.join("sub/link.txt")).unwrap();
    for path in ["notes.txt", "sub/link.txt"] {
        let error = ws
            .call("write_file", json!({"path": path, "content": "pwned"}))
            .await
            .unwrap_err();
        assert_eq!(error, escapes(path));
    }
    assert_eq!(ws.written_outside(), Vec::<String>::new());
}

#[tokio::test]
async fn writing_below_a_dangling_directory_symlink_fails() {
    let ws = workspace();
    ws.symlink(ws.outside.join("new-dir"), "build");
    let error = ws
        .call(
            "write_file",
            json!({"path": "build/out/a.txt", "content": "pwned"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error, escapes("build/out/a.txt"));
    assert_eq!(ws.written_outside(), Vec::<String>::new());
}

#[tokio::test]
async fn a_dangling_symlink_inside_the_root_is_written_through() {
    let ws = workspace();
    std::fs::create_dir(ws.root.join("docs")).unwrap();
    ws.symlink("docs/real.md", "alias.md");
    ws.call(
        "write_file",
        json!({"path": "alias.md", "content": "hello"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.root.join("docs/real.md")).unwrap(),
        "hello"
    );
}

#[tokio::test]
async fn every_tool_refuses_symlinks_out_of_the_root() {
    let ws = workspace();
    ws.symlink(ws.outside.join("secret.txt"), "absolute.txt");
    ws.symlink("../outside/secret.txt", "relative.txt");
    ws.symlink(&ws.outside, "absolute-dir");
    ws.symlink("../outside", "relative-dir");
    ws.symlink("..", "up");
    for path in [
        "absolute.txt",
        "relative.txt",
        "absolute-dir/secret.txt",
        "relative-dir/secret.txt",
        "up/outside/secret.txt",
    ] {
        assert_eq!(
            ws.call("read_file", json!({"path": path}))
                .await
                .unwrap_err(),
            escapes(path)
        );
        let edit = json!({"path": path, "old_string": "TOP", "new_string": "NOT"});
        assert_eq!(ws.call("edit_file", edit).await.unwrap_err(), escapes(path));
        let write = json!({"path": path, "content": "overwritten"});
        assert_eq!(
            ws.call("write_file", write).await.unwrap_err(),
            escapes(path)
        );
        let lines = json!({"pattern": "TOP", "path": path});
        assert_eq!(
            ws.call("search_files", lines).await.unwrap_err(),
            escapes(path)
        );
        // neither end of a move leads out through a directory: nothing is taken in, nothing
        // is put out (a symlink named as the end itself is moved or refused as existing)
        if !path.contains('/') {
            continue;
        }
        std::fs::write(ws.root.join("mine.txt"), "mine\n").unwrap();
        let take_in = json!({"from": path, "to": "taken.txt"});
        assert_eq!(
            ws.call("move_file", take_in).await.unwrap_err(),
            escapes(path)
        );
        let put_out = json!({"from": "mine.txt", "to": path});
        assert_eq!(
            ws.call("move_file", put_out).await.unwrap_err(),
            escapes(path)
        );
        assert!(ws.root.join("mine.txt").exists() && !ws.root.join("taken.txt").exists());
    }
    for path in ["absolute-dir", "relative-dir", "up", "up/outside"] {
        assert_eq!(
            ws.call("list_dir", json!({"path": path}))
                .await
                .unwrap_err(),
            escapes(path)
        );
        let search = json!({"pattern": "*", "path": path});
        assert_eq!(
            ws.call("search_files", search).await.unwrap_err(),
            escapes(path)
        );
    }
    // a symlink moved is the link itself: what it points to stays, and stays out of reach
    assert_eq!(
        ws.call(
            "move_file",
            json!({"from": "absolute.txt", "to": "moved.txt"})
        )
        .await
        .unwrap(),
        "moved the symlink `absolute.txt` to `moved.txt`"
    );
    assert_eq!(
        ws.call("read_file", json!({"path": "moved.txt"}))
            .await
            .unwrap_err(),
        escapes("moved.txt")
    );
    assert_eq!(
        std::fs::read_to_string(ws.outside.join("secret.txt")).unwrap(),
        "TOP SECRET\n"
    );
    assert_eq!(ws.written_outside(), Vec::<String>::new());
}

#[tokio::test]
async fn dot_dot_cannot_leave_the_root() {
    let ws = workspace();
    std::fs::create_dir(ws.root.join("a")).unwrap();
    for path in ["../outside/secret.txt", "a/../../outside/secret.txt", ".."] {
        assert_eq!(
            ws.call("read_file", json!({"path": path}))
                .await
                .unwrap_err(),
            escapes(path)
        );
    }
    let absolute = ws.outside.join("secret.txt");
    let absolute = absolute.to_str().unwrap();
    assert_eq!(
        ws.call("read_file", json!({"path": absolute}))
            .await
            .unwrap_err(),
        escapes(absolute)
    );
    // `..` that stays inside is fine
    std::fs::write(ws.root.join("top.txt"), "top\n").unwrap();
    assert_eq!(
        ws.call("read_file", json!({"path": "a/../top.txt"}))
            .await
            .unwrap(),
        "     1\ttop"
    );
}

#[tokio::test]
async fn absolute_and_relative_symlinks_that_stay_inside_are_followed() {
    let ws = workspace();
    std::fs::create_dir_all(ws.root.join("real/deep")).unwrap();
    std::fs::write(ws.root.join("real/deep/file.txt"), "inside\n").unwrap();
    ws.symlink(ws.root.join("real"), "absolute");
    std::os::unix::fs::symlink("..", ws.root.join("real/deep/back")).unwrap();
    for path in ["absolute/deep/file.txt", "real/deep/back/deep/file.txt"] {
        assert_eq!(
            ws.call("read_file", json!({"path": path})).await.unwrap(),
            "     1\tinside"
        );
    }
    assert_eq!(
        ws.call("list_dir", json!({"path": "absolute/deep"}))
            .await
            .unwrap(),
        "[link] back\n[file] file.txt (7 bytes)\nIn all: 1 file (1 .txt file) and 1 link."
    );
}

/// Swaps the entries `a` and `b` of `dir` atomically, over and over, until `stop` is set.
#[cfg(target_os = "linux")]
fn keep_swapping(
    dir: &Path,
    a: &str,
    b: &str,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let (a, b) = (dir.join(a), dir.join(b));
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
            swaps += 1;
        }
        swaps
    })
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_symlink_while_writing_never_leads_outside() {
    let ws = workspace();
    std::fs::create_dir(ws.root.join("work")).unwrap();
    ws.symlink(&ws.outside, "decoy");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = keep_swapping(&ws.root, "work", "decoy", stop.clone());
    let mut written = 0;
    for i in 0..2000 {
        let path = format!("work/sub{}/file{i}.txt", i % 3);
        if i % 2 == 0 {
            let arguments = json!({"path": path, "content": "x"});
            if ws.call("write_file", arguments).await.is_ok() {
                written += 1;
            }
        } else {
            // a file made at the root, moved into the swapped directory
            let staged = format!("staged{i}.txt");
            std::fs::write(ws.root.join(&staged), "x").unwrap();
            let arguments = json!({"from": staged, "to": path});
            if ws.call("move_file", arguments).await.is_ok() {
                written += 1;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0 && written > 0, "{swaps} swaps, {written} writes");
    assert_eq!(ws.written_outside(), Vec::<String>::new());
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_symlink_while_reading_never_shows_outside_files() {
    let ws = workspace();
    std::fs::create_dir(ws.root.join("work")).unwrap();
    std::fs::write(ws.root.join("work/secret.txt"), "inside\n").unwrap();
    ws.symlink(&ws.outside, "decoy");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = keep_swapping(&ws.root, "work", "decoy", stop.clone());
    let mut leaked = 0;
    let mut read = 0;
    for i in 0..2000 {
        let (tool, arguments) = match i % 5 {
            0 => ("read_file", json!({"path": "work/secret.txt"})),
            1 => ("list_dir", json!({"path": "work"})),
            2 => ("search_files", json!({"pattern": "secret", "path": "work"})),
            // the lines of the files below `work`, and of one file in it
            3 => ("search_files", json!({"pattern": "top", "path": "work"})),
            _ => (
                "search_files",
                json!({"pattern": "secret", "path": "work/secret.txt"}),
            ),
        };
        match ws.call(tool, arguments).await {
            Ok(output) if output.contains("TOP SECRET") => leaked += 1,
            Ok(_) => read += 1,
            Err(_) => {}
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0 && read > 0, "{swaps} swaps, {read} reads");
    assert_eq!(leaked, 0, "read the file outside the root {leaked} times");
}

#[tokio::test]
async fn fifos_and_sockets_are_refused_instead_of_blocking() {
    let ws = workspace();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        ws.root.join("pipe"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(ws.root.join("sock")).unwrap();
    let fifo = || {
        ToolError::failed(
            "`pipe` is not a regular file (it is a FIFO (named pipe)); the file tools only work \
             on regular files",
        )
    };
    assert_eq!(
        ws.call("read_file", json!({"path": "pipe"}))
            .await
            .unwrap_err(),
        fifo()
    );
    assert_eq!(
        ws.call(
            "edit_file",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"})
        )
        .await
        .unwrap_err(),
        fifo()
    );
    // nobody reads the FIFO: opening it to write fails at once, with the same kind of message
    let error = ws
        .call("write_file", json!({"path": "pipe", "content": "x"}))
        .await
        .unwrap_err();
    assert!(
        error.message().starts_with("`pipe` is not a regular file"),
        "{error:?}"
    );
    for (tool, arguments) in [
        ("read_file", json!({"path": "sock"})),
        ("write_file", json!({"path": "sock", "content": "x"})),
    ] {
        let error = ws.call(tool, arguments).await.unwrap_err();
        assert!(
            error.message().starts_with("`sock` is not a regular file"),
            "{tool}: {error:?}"
        );
    }
}
