//! `agents demo`: the bundled demo. No endpoint needed: a scripted model, real file tools on a
//! temporary directory, a three-turn conversation run in both trace modes side by side.

use agents::prelude::*;
use agents::processing::{EstimateTokenCounter, TokenCounter};
use inference::InferenceRequest;

use crate::render::{one_line, print_event};

struct Turn {
    question: &'static str,
    script: Vec<InferenceResponse>,
}

fn turns() -> Vec<Turn> {
    let call = |id: &str, name: &str, args: serde_json::Value| ToolCall::new(id, name, args);
    vec![
        Turn {
            question: "Which files are in the project, and what does the inventory say about bolts?",
            script: vec![
                InferenceResponse::with_tool_calls([call("t1_1", "list_dir", json!({"path": "."}))]),
                InferenceResponse::with_tool_calls([call("t1_2", "read_file", json!({"path": "inventory.csv"}))]),
                InferenceResponse::text(
                    "There are three files: inventory.csv, suppliers.json and notes.md. \
                     The inventory lists 1,200 M6 bolts and 300 M8 bolts.",
                ),
            ],
        },
        Turn {
            question: "Who supplies the M8 bolts, and how fast do they deliver?",
            script: vec![
                InferenceResponse::with_tool_calls([call("t2_1", "read_file", json!({"path": "suppliers.json"}))]),
                InferenceResponse::text("M8 bolts come from Nordic Fasteners, with a lead time of 12 days."),
            ],
        },
        Turn {
            question: "Is anything in the notes about reordering?",
            script: vec![
                InferenceResponse::with_tool_calls([call("t3_1", "search_files", json!({"pattern": "*.md"}))]),
                InferenceResponse::with_tool_calls([call("t3_2", "read_file", json!({"path": "notes.md"}))]),
                InferenceResponse::text("Yes: reorder M8 bolts when stock falls below 250; the next order is due in March."),
            ],
        },
    ]
}

fn write_project(dir: &std::path::Path) -> Result<(), agents::fs::FileError> {
    let mut inventory = String::from("sku,item,size,quantity,location\n");
    for i in 0..60 {
        inventory.push_str(&format!(
            "SKU-{i:04},washer,{}mm,{},aisle {}\n",
            4 + i % 8,
            100 + i * 7,
            i % 12
        ));
    }
    inventory.push_str("SKU-9001,bolt,M6,1200,aisle 3\nSKU-9002,bolt,M8,300,aisle 3\n");
    agents::fs::write_atomic(dir.join("inventory.csv"), inventory.as_bytes())?;
    let suppliers: Vec<serde_json::Value> = (0..25)
        .map(|i| json!({"name": format!("Supplier {i}"), "items": ["washer"], "lead_time_days": 5 + i % 9}))
        .chain([json!({"name": "Nordic Fasteners", "items": ["bolt M8"], "lead_time_days": 12})])
        .collect();
    agents::fs::write_atomic(
        dir.join("suppliers.json"),
        serde_json::to_string_pretty(&suppliers)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    let mut notes = String::from("# Warehouse notes\n\n");
    for i in 0..20 {
        notes.push_str(&format!(
            "- Week {i}: counted aisle {}, no discrepancies.\n",
            i % 12
        ));
    }
    notes.push_str("- Reorder M8 bolts when stock falls below 250. Next order due in March.\n");
    agents::fs::write_atomic(dir.join("notes.md"), notes.as_bytes())
}

/// Tokens of one request as a model would read it: messages plus tool schemas.
fn request_tokens(request: &InferenceRequest) -> usize {
    let counter = EstimateTokenCounter;
    let tools: usize = request
        .tools
        .iter()
        .map(|t| counter.count_text(&format!("{} {} {}", t.name, t.description, t.parameters)))
        .sum();
    counter.count_messages(&request.messages) + tools
}

struct ModeRun {
    per_turn: Vec<usize>,
    final_state: AgentState,
}

async fn run_mode(
    root: &std::path::Path,
    separated: bool,
    print: bool,
) -> Result<ModeRun, Box<dyn std::error::Error>> {
    let turns = turns();
    let model = ScriptedModel::new(turns.iter().flat_map(|t| t.script.clone()));
    let mut builder = AgentBuilder::new()
        .with_model(model.clone())
        .with_system_prompt(
            "You are a warehouse assistant. Use the file tools to answer from the project files.",
        )
        .with_capability(UseFileTools::read_only(root))
        .with_separated_tool_trace(separated);
    if print {
        builder = builder.on_event(print_event);
    }
    let agent = builder.build()?;
    let mut state = AgentState::new();
    let mut per_turn = Vec::new();
    for (number, turn) in turns.iter().enumerate() {
        if print {
            println!("\n[turn {}] user: {}", number + 1, turn.question);
        }
        let before = model.requests().len();
        state = agent
            .execute(state.with_user_message(turn.question))
            .await?;
        let tokens: usize = model.requests()[before..].iter().map(request_tokens).sum();
        per_turn.push(tokens);
        if print {
            let answer = state.final_response().map(|m| m.text()).unwrap_or_default();
            println!(
                "[turn {}] assistant: {}",
                number + 1,
                one_line(&answer, 200)
            );
        }
    }
    Ok(ModeRun {
        per_turn,
        final_state: state,
    })
}

/// Runs the demo and prints the comparison.
pub async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // A new directory readable by the user only, with an unpredictable name, created
    // exclusively (nothing someone else put in the temporary directory is used) and removed
    // at the end.
    let project = tempfile::Builder::new().prefix("agents-demo-").tempdir()?;
    let dir = project.path().to_owned();
    write_project(&dir)?;

    println!("agents demo: a scripted model and real, sandboxed file tools (read_file, list_dir,");
    println!("search_files) over {}.", dir.display());
    println!("The same three-turn conversation runs twice: legacy mode (every tool call and");
    println!("result persists) and separated mode (tool traces live in the execution buffer).");

    let separated = run_mode(&dir, true, true).await?;
    let legacy = run_mode(&dir, false, false).await?;

    println!("\nTokens sent to the model per turn (estimated, messages + tool schemas):");
    println!("  turn | legacy | separated | saved");
    for (i, (l, s)) in legacy.per_turn.iter().zip(&separated.per_turn).enumerate() {
        let saved = 100.0 * (*l as f64 - *s as f64) / (*l).max(1) as f64;
        println!("  {:>4} | {l:>6} | {s:>9} | {saved:>4.0}%", i + 1);
    }
    let (lt, st): (usize, usize) = (
        legacy.per_turn.iter().sum(),
        separated.per_turn.iter().sum(),
    );
    let saved = 100.0 * (lt as f64 - st as f64) / lt.max(1) as f64;
    println!("  total| {lt:>6} | {st:>9} | {saved:>4.0}%");
    println!(
        "\nPersisted conversation: legacy {} messages, separated {} messages (user questions and answers).",
        legacy.final_state.messages().len(),
        separated.final_state.messages().len()
    );
    println!(
        "Full trace kept for debugging in both: {} step executions in the last turn.",
        separated.final_state.step_executions().len()
    );
    Ok(())
}
