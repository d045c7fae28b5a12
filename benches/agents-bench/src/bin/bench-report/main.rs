//! `bench-report`: the measurements that are not criterion benches (context cost, scale,
//! parallel tools), then `docs/benchmarks.md` and its SVG plots from those numbers and from
//! criterion's estimates. Run through `cargo xtask bench`.
//!
//! ```text
//! bench-report [--quick] --criterion DIR [--rig-criterion DIR] --docs DIR
//! bench-report --cost-only --docs DIR     # only the context cost in dollars: DIR/cost.md
//! bench-report --allocations-only         # only the heap allocations per step, printed
//! bench-report --features [--quick]        # time and allocations per feature variant, JSON lines
//! ```
// A report generator: it prints its progress.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod allocations;
mod context_cost;
mod criterion_data;
mod features;
mod http_overhead;
mod parallel_tools;
mod render;
mod scale;
mod svg;

use std::path::PathBuf;

/// Counts allocations for the allocations-per-step measurement.
#[global_allocator]
static ALLOCATOR: allocations::Counting = allocations::Counting;

/// Command line options.
struct Options {
    quick: bool,
    cost_only: bool,
    criterion: PathBuf,
    rig_criterion: Option<PathBuf>,
    docs: PathBuf,
}

fn parse_options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut quick = false;
    let mut cost_only = false;
    let mut criterion = None;
    let mut rig_criterion = None;
    let mut docs = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--cost-only" => cost_only = true,
            "--criterion" => criterion = args.next().map(PathBuf::from),
            "--rig-criterion" => rig_criterion = args.next().map(PathBuf::from),
            "--docs" => docs = args.next().map(PathBuf::from),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let criterion = match criterion {
        Some(dir) => dir,
        None if cost_only => PathBuf::new(),
        None => return Err("--criterion DIR is required".into()),
    };
    Ok(Options {
        quick,
        cost_only,
        criterion,
        rig_criterion,
        docs: docs.ok_or("--docs DIR is required")?,
    })
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("bench-report: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--allocations-only") {
        // The allocations per step alone, for a quick before/after of one change.
        println!("{:?}", allocations::measure()?);
        return Ok(());
    }
    if args.get(1).map(String::as_str) == Some("--features") {
        // What each feature costs (`cargo xtask bench --features` adds instructions).
        let quick = args.get(2).map(String::as_str) == Some("--quick");
        let (rounds, batch) = if quick { (3, 200) } else { (15, 2_000) };
        print!(
            "{}",
            features::json_lines(&features::measure(rounds, batch)?)
        );
        return Ok(());
    }
    if let Some(n) = args
        .get(2)
        .filter(|_| args.get(1).map(String::as_str) == Some("--held-states"))
    {
        return scale::held_states_child(n.parse().map_err(|_| "--held-states N")?);
    }
    let options = parse_options()?;
    if options.cost_only {
        let context = context_cost::measure()?;
        return write_cost(&options, &context);
    }
    // Scale first, while the process is small, so its memory numbers are its own.
    let executions = if options.quick { 1_000 } else { 10_000 };
    println!("scale: {executions} concurrent executions ...");
    let scale = scale::measure(executions)?;
    println!("{scale:?}");
    println!("parallel tools ...");
    let parallel = parallel_tools::measure()?;
    println!("{parallel:?}");
    println!("allocations per step ...");
    let allocations = allocations::measure()?;
    println!("{allocations:?}");
    println!("HTTP step, run and transfer alternated ...");
    let http = http_overhead::measure(options.quick)?;
    println!("{http:?}");
    println!("context cost ...");
    let context = context_cost::measure()?;
    println!(
        "context: legacy {} / separated {} / summarized {} tokens",
        context.legacy.total(),
        context.separated.total(),
        context.summarized.total()
    );
    write_cost(&options, &context)?;
    let criterion = criterion_data::load(&options.criterion, options.rig_criterion.as_deref());
    std::fs::create_dir_all(options.docs.join("benchmarks")).map_err(|e| e.to_string())?;
    let report = render::Report {
        quick: options.quick,
        scale,
        parallel,
        context,
        criterion,
        allocations,
        http,
    };
    for (name, svg) in report.plots() {
        let path = options.docs.join("benchmarks").join(name);
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let path = options.docs.join("benchmarks.md");
    std::fs::write(&path, report.markdown()).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The models `docs/cost.md` prices the conversation for: one OpenAI, one Anthropic.
const PRICED_MODELS: [&str; 2] = ["gpt-5.4", "claude-sonnet-5-5"];

/// Writes `cost.md` (the context cost in dollars) into the docs directory.
fn write_cost(options: &Options, context: &context_cost::ContextCost) -> Result<(), String> {
    let catalog = inference::ModelCatalog::builtin();
    let markdown = context_cost::cost_markdown(context, &catalog, &PRICED_MODELS)?;
    let path = options.docs.join("cost.md");
    std::fs::write(&path, markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}
