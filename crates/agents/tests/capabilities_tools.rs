#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The file and bash tools as the model sees them: schemas, and calls through the executor.

use agents::capabilities::{BashTool, FileTools, Sandbox};
use agents_core::tools::{DefaultToolExecutor, ToolContext, ToolExecutor, ToolFailureKind};
use messages::ToolCall;
use serde_json::json;

#[test]
fn tool_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    insta::assert_json_snapshot!("capability_tool_schemas", tools.schemas());
}

/// The built-in tools declare what they do to the world: the file readers are read-only,
/// writing a whole file is idempotent, editing, appending and bash have side effects.
#[test]
fn the_built_in_tools_declare_their_effects() {
    use agents_core::ToolEffects;
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    let effects: Vec<(String, ToolEffects)> = tools
        .names()
        .into_iter()
        .map(|name| (name.to_owned(), tools.effects(name)))
        .collect();
    let of = |name: &str| effects.iter().find(|(n, _)| n == name).map(|(_, e)| *e);
    assert_eq!(of("read_file"), Some(ToolEffects::ReadOnly));
    assert_eq!(of("list_dir"), Some(ToolEffects::ReadOnly));
    assert_eq!(of("search_files"), Some(ToolEffects::ReadOnly));
    assert_eq!(of("write_file"), Some(ToolEffects::Idempotent));
    assert_eq!(of("edit_file"), Some(ToolEffects::SideEffecting));
    assert_eq!(of("append_file"), Some(ToolEffects::SideEffecting));
    assert_eq!(of("bash"), Some(ToolEffects::SideEffecting));
    assert_eq!(tools.effects("no_such_tool"), ToolEffects::SideEffecting);
}

#[tokio::test]
async fn a_model_session_through_the_executor() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    let calls = [
        ToolCall::new(
            "1",
            "write_file",
            json!({"path": "notes/todo.md", "content": "- buy milk\n- call mom\n"}),
        ),
        ToolCall::new(
            "2",
            "edit_file",
            json!({"path": "notes/todo.md", "old_string": "milk", "new_string": "bread"}),
        ),
        ToolCall::new("3", "read_file", json!({"path": "notes/todo.md"})),
        ToolCall::new("4", "bash", json!({"command": "wc -l notes/todo.md"})),
        ToolCall::new("5", "search_files", json!({"pattern": "*.md"})),
        ToolCall::new("6", "list_dir", json!({"path": "notes"})),
        ToolCall::new("7", "read_file", json!({"path": "../../etc/passwd"})),
        ToolCall::new("8", "read_file", json!({"file": "notes/todo.md"})),
    ];
    let executions = DefaultToolExecutor::new()
        .execute(&calls, &tools, &ToolContext::new("agent"), false)
        .await;
    let transcript: Vec<String> = executions
        .iter()
        .map(|e| format!("{} -> {}", e.name(), e.result_text()))
        .collect();
    insta::assert_json_snapshot!("file_and_bash_session", transcript);
    let kinds: Vec<_> = executions.iter().map(|e| e.failure_kind()).collect();
    assert_eq!(kinds[6], Some(ToolFailureKind::InvalidArguments));
    assert_eq!(kinds[7], Some(ToolFailureKind::InvalidArguments));
    assert_eq!(executions.errors().count(), 2);
}

/// Issue 36, development task d14: the 1.5B model called `append_to_file` three times to add a
/// line to a list. `append_file` adds whole lines at a file's end without reading it; an agent
/// that requires approval for `write_file` requires it for `append_file` too.
#[tokio::test]
async fn append_file_adds_lines_and_waits_where_write_file_would() {
    use agents::prelude::*;
    use inference::InferenceResponse;

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.txt"), "alpha\nbeta").unwrap();
    let append = ToolCall::new(
        "1",
        "append_file",
        json!({"path": "list.txt", "content": "gamma"}),
    );
    let agent = |approval: bool| {
        let builder = AgentBuilder::new()
            .with_model(ScriptedModel::new(vec![
                InferenceResponse::with_tool_calls(vec![append.clone()]),
                InferenceResponse::text("Added gamma."),
            ]))
            .with_capability(UseFileTools::new(dir.path()));
        let builder = if approval {
            builder.with_approval_required(["write_file"])
        } else {
            builder
        };
        builder.build().unwrap()
    };
    let request = || AgentState::new().with_user_message("Add gamma to list.txt.");

    let waiting = agent(true).execute(request()).await.unwrap();
    assert_eq!(waiting.status(), AgentStatus::Suspended);
    assert_eq!(waiting.pending_approvals()[0].call_id(), "1");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("list.txt")).unwrap(),
        "alpha\nbeta"
    );

    let done = agent(false).execute(request()).await.unwrap();
    let results: Vec<String> = done
        .steps()
        .flat_map(|step| step.tool_executions().iter())
        .map(|e| e.result_text().to_owned())
        .collect();
    assert_eq!(
        results,
        ["appended 1 line (7 bytes) to the end of `list.txt`"]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("list.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
}

/// Runs `replies` as the model of an agent with the file tools in `dir`, asked `request`, and
/// returns each call's `id name: result`.
async fn run_with_files(
    dir: &std::path::Path,
    replies: Vec<inference::InferenceResponse>,
    request: &str,
) -> Vec<String> {
    use agents::prelude::*;
    let agent = AgentBuilder::new()
        .with_model(ScriptedModel::new(replies))
        .with_capability(UseFileTools::new(dir))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message(request))
        .await
        .unwrap();
    done.steps()
        .flat_map(|step| step.tool_executions().iter())
        .map(|e| format!("{} {}: {}", e.id(), e.name(), e.result_text()))
        .collect()
}

/// Runs, through [`run_with_files`] in `dir` asked `request`, a model that reads `read_path`
/// (call `1`), then writes `content` to `list.txt` (call `2`), then answers `answer`; returns
/// each call's `id name: result`.
async fn read_then_write(
    dir: &std::path::Path,
    read_path: &str,
    content: &str,
    answer: &str,
    request: &str,
) -> Vec<String> {
    use inference::InferenceResponse;
    run_with_files(
        dir,
        vec![
            InferenceResponse::with_tool_calls(vec![ToolCall::new(
                "1",
                "read_file",
                json!({"path": read_path}),
            )]),
            InferenceResponse::with_tool_calls(vec![ToolCall::new(
                "2",
                "write_file",
                json!({"path": "list.txt", "content": content}),
            )]),
            InferenceResponse::text(answer),
        ],
        request,
    )
    .await
}

/// Issue 36, development task d14: asked to add a line to `list.txt`, the 1.5B model wrote
/// the new line over the file without reading it. In an execution, `write_file` replaces a
/// file with content only once the execution has read (or written) it; new and empty files
/// are written at once.
#[tokio::test]
async fn write_file_replaces_only_a_file_the_execution_has_read() {
    use inference::InferenceResponse;

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    let write = |id: &str, path: &str, content: &str| {
        ToolCall::new(id, "write_file", json!({"path": path, "content": content}))
    };
    let calls = |calls: Vec<ToolCall>| InferenceResponse::with_tool_calls(calls);
    let read = ToolCall::new("4", "read_file", json!({"path": "./list.txt"}));
    let results = run_with_files(
        dir.path(),
        vec![
            calls(vec![
                write("1", "list.txt", "gamma\n"),
                write("2", "new.txt", "fresh\n"),
                write("3", "empty.txt", "filled\n"),
            ]),
            calls(vec![read]),
            calls(vec![write("5", "list.txt", "alpha\nbeta\ngamma\n")]),
            InferenceResponse::text("Added gamma."),
        ],
        "Add the line gamma to list.txt.",
    )
    .await;
    assert_eq!(
        results[0],
        "1 write_file: Error: `list.txt` was not changed: writing would replace its 11 bytes, \
         which you had not read in this task. Here they are, as read_file shows them (line \
         number, tab, line):\n     1\talpha\n     2\tbeta\nCall write_file again with the \
         complete new content of `list.txt` (the lines to keep, without their numbers, and \
         what to add), add lines at its end with append_file, or change only part of it with \
         edit_file."
    );
    assert_eq!(
        results[1..3],
        [
            "2 write_file: wrote 6 bytes (1 line) to `new.txt`",
            "3 write_file: wrote 7 bytes (1 line) to `empty.txt`"
        ]
    );
    assert_eq!(
        results[4],
        "5 write_file: wrote 17 bytes (3 lines) to `list.txt`"
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("list.txt"), "alpha\nbeta\ngamma\n");
    assert_eq!(
        (read("new.txt"), read("empty.txt")),
        ("fresh\n".into(), "filled\n".into())
    );

    // Issue 32: the markup of the chat format alone (`<tool_response>`, what the 1.5B model
    // once wrote over notes.md) is never written in an execution, even to a file it read.
    let results = read_then_write(
        dir.path(),
        "list.txt",
        "<tool_response>\n",
        "Done.",
        "Change list.txt.",
    )
    .await;
    assert_eq!(
        results[1],
        "2 write_file: Error: `list.txt` was not changed: the content you gave is only \
         `<tool_response>`, the markup of the chat format, not the file's content. Call \
         write_file again with the complete text the file should hold."
    );
    assert_eq!(read("list.txt"), "alpha\nbeta\ngamma\n");

    // A read of the file in a folder that is not there reads the file of that name above
    // it, and says so: that file counts as read (issue 36, d10: the model put `data/`
    // before files at the top).
    let results = read_then_write(
        dir.path(),
        "data/list.txt",
        "alpha\nbeta\ngamma\ndelta\n",
        "Added delta.",
        "Add the line delta to list.txt.",
    )
    .await;
    assert!(
        results[0].starts_with(
            "1 read_file: (no directory is named `data`; read `list.txt` of the workspace's \
             top folder instead)\n     1\talpha"
        ),
        "{results:#?}"
    );
    assert_eq!(
        results[1],
        "2 write_file: wrote 23 bytes (4 lines) to `list.txt`"
    );
    std::fs::write(dir.path().join("list.txt"), "alpha\nbeta\ngamma\n").unwrap();

    // So does an edit refused with the file's lines shown (its text was not there): a probe
    // of issue 36's kinds sent `2.` to delete a file's second line.
    let edit = ToolCall::new(
        "1",
        "edit_file",
        json!({"path": "list.txt", "old_string": "2.", "new_string": ""}),
    );
    let results = run_with_files(
        dir.path(),
        vec![
            calls(vec![edit]),
            calls(vec![write("2", "list.txt", "alpha\ngamma\n")]),
            InferenceResponse::text("Deleted the second line."),
        ],
        "Delete the second line of list.txt.",
    )
    .await;
    assert!(
        results[0].contains("Here they are, as read_file shows them"),
        "{results:#?}"
    );
    assert_eq!(
        results[1],
        "2 write_file: wrote 12 bytes (2 lines) to `list.txt`"
    );
    std::fs::write(dir.path().join("list.txt"), "alpha\nbeta\ngamma\n").unwrap();

    // The content a refusal showed counts as read: the next write replaces the file. A file
    // too large to show (over 2 KiB) is shown by read_file only.
    std::fs::write(dir.path().join("list.txt"), "alpha\nbeta\n").unwrap();
    let big: String = (0..300).map(|i| format!("row {i}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    let results = run_with_files(
        dir.path(),
        vec![
            calls(vec![write("1", "list.txt", "gamma\n")]),
            calls(vec![write("2", "list.txt", "alpha\nbeta\ngamma\n")]),
            calls(vec![write("3", "big.txt", "row 300\n")]),
            calls(vec![write("4", "big.txt", "row 300\n")]),
            InferenceResponse::text("Added gamma."),
        ],
        "Add the line gamma to list.txt.",
    )
    .await;
    assert!(results[0].contains("     2\tbeta\n"), "{results:#?}");
    assert_eq!(
        results[1],
        "2 write_file: wrote 17 bytes (3 lines) to `list.txt`"
    );
    for (at, id) in [(2, 3), (3, 4)] {
        assert_eq!(
            results[at],
            format!(
                "{id} write_file: Error: `big.txt` was not changed: it holds {} bytes that you \
                 have not read in this task, and writing would replace them. Call read_file on \
                 `big.txt` now; then write its complete new content (what to keep and what to \
                 add). Or add lines at its end with append_file, or change only part of it \
                 with edit_file.",
                big.len()
            )
        );
    }
    assert_eq!(read("list.txt"), "alpha\nbeta\ngamma\n");
    assert_eq!(read("big.txt"), big);

    // A file the execution wrote is its own to write again, unread.
    let results = run_with_files(
        dir.path(),
        vec![
            calls(vec![write("1", "mine.txt", "one\n")]),
            calls(vec![write("2", "mine.txt", "two\n")]),
            InferenceResponse::text("Done."),
        ],
        "Write mine.txt twice.",
    )
    .await;
    assert!(results[1].starts_with("2 write_file: wrote"), "{results:?}");
    assert_eq!(read("mine.txt"), "two\n");

    // Outside an execution (a direct call, a tool server's client) the caller sees what it
    // replaces.
    let tools = FileTools::new(Sandbox::new(dir.path()).unwrap()).all();
    let output = tools
        .get("write_file")
        .unwrap()
        .call(
            json!({"path": "list.txt", "content": "three\n"}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(output.content(), "wrote 6 bytes (1 line) to `list.txt`");
}

/// A model that calls a built-in tool by the name another toolset gives it (`create_folder`,
/// `rename_file`, `grep`) runs nothing and is told which tool does that job. Issue 36: asked
/// for a folder holding a file, the 1.5B model called `create_folder`, learned only that it
/// did not exist, and answered with the error.
#[tokio::test]
async fn names_from_other_toolsets_point_to_the_built_in_tool_doing_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    for (called, doing_its_job) in [
        ("create_folder", &["write_file", "bash"][..]),
        ("mkdir", &["write_file", "bash"]),
        ("createFile", &["write_file"]),
        ("rename_file", &["move_file"]),
        ("cat", &["read_file"]),
        ("grep", &["search_files"]),
        ("list_files", &["list_dir"]),
        ("str_replace", &["edit_file"]),
        ("delete_file", &["bash"]),
        ("run_shell_command", &["bash"]),
        ("append_to_file", &["append_file"]),
        ("launch_rocket", &[]),
        ("write_file", &[]),
    ] {
        assert_eq!(tools.known_as(called), doing_its_job, "{called}");
    }
    // No other name is a tool's own name, and each other name leads to its own tool alone,
    // except the folder makers, which `write_file` and `bash` both do.
    let names = tools.names();
    for tool in tools.iter() {
        for other in tool.other_names() {
            assert!(!names.contains(other), "{other} is a tool's own name");
            let expected: Vec<&str> =
                if ["create_folder", "create_directory", "mkdir"].contains(other) {
                    vec!["write_file", "bash"]
                } else {
                    vec![tool.name()]
                };
            assert_eq!(tools.known_as(other), expected, "`{other}`");
        }
    }

    let call = ToolCall::new("1", "create_folder", json!({"path": "reports"}));
    let executions = DefaultToolExecutor::new()
        .execute(&[call], &tools, &ToolContext::new("agent"), false)
        .await;
    let execution = executions.iter().next().unwrap();
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::UnknownTool));
    assert!(
        execution.result_text().starts_with(
            "Error: unknown tool `create_folder`; for what `create_folder` does, use \
             `write_file` or `bash`; available tools: "
        ),
        "{}",
        execution.result_text()
    );
    assert!(!dir.path().join("reports").exists(), "nothing ran");
}

/// The tool-calling driver reads `read_file`'s note for a name several files have (its
/// wording is written in this crate and read in `drivers-toolcalling`): an answer for one of
/// the files it showed is found: for a folder that is there, one that is not, and a name
/// without its extension.
#[tokio::test]
async fn the_driver_reads_the_note_of_a_read_of_several_files() {
    let dir = tempfile::tempdir().unwrap();
    for folder in ["api", "web"] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
        std::fs::write(dir.path().join(folder).join("README.md"), folder).unwrap();
    }
    for stage in ["dev", "prod"] {
        std::fs::write(dir.path().join(format!("api/config.{stage}.yaml")), stage).unwrap();
    }
    let tools = FileTools::new(Sandbox::new(dir.path()).unwrap()).all();
    let several = [
        ("README.md", ["api/README.md", "web/README.md"]),
        ("made/up/README.md", ["api/README.md", "web/README.md"]),
        (
            "api/config",
            ["api/config.dev.yaml", "api/config.prod.yaml"],
        ),
    ];
    for (path, files) in several {
        let call = ToolCall::new("1", "read_file", json!({ "path": path }));
        let executions = DefaultToolExecutor::new()
            .execute(&[call], &tools, &ToolContext::new("agent"), false)
            .await;
        let read = executions.iter().next().unwrap().result_text();
        let found = drivers_toolcalling::one_of_several_files("It says 1.", [read.as_str()]);
        assert_eq!(
            found.map(|found| found.files),
            Some(files.map(String::from).to_vec()),
            "{read}"
        );
    }
}
