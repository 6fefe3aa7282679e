//! The `echolab` command line: its verbs, each handed to its module, and the shell
//! completions and man pages generated from these same definitions.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "echolab",
    version,
    about = "A laboratory for scalable TCP servers: one echo service on every Linux I/O model, \
             a load generator that verifies every byte, experiments and reports",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one echo server (threads, select, poll, epoll, uring or tokio)
    Serve(echolab::server::ServerConfig),
    /// Generate load against any echo server, verify every byte and measure latency
    Load(Box<echolab::load::LoadArgs>),
    /// Run an experiment (servers x load steps) and write its report; default: the quick comparison
    Run(echolab::run::RunArgs),
    /// Write report.html and report.md into a results directory
    Report(echolab::report::ReportArgs),
    /// Compare two results directories (or two models of one): every figure old and new,
    /// a change named only when significant; --fail-if makes it a CI gate (exit 1)
    Compare(echolab::compare::CompareArgs),
    /// What each model would hold on a machine (this one by default), predicted from a
    /// run's measured unit costs: the most connections, the limit that binds first, the
    /// requests/s at a connection count
    ///
    /// Each limit allows memory / bytes a connection, fds x processes, FD_SETSIZE (select),
    /// threads and their stacks, and cores / CPU per request (a + b x connections watched);
    /// the least binds. The model, its assumptions and its checks: docs/plan.md.
    Plan(echolab::plan::PlanArgs),
    /// Combine the results of distributed load agents exactly (histograms added, counts summed)
    Merge(echolab::load::MergeArgs),
    /// What the runner starts on a host it reaches over ssh: a process tied to the ssh
    /// session, or the server's probe
    Remote(echolab::experiment::placement::remote::RemoteArgs),
    /// Print a shell completion script for every verb and flag (e.g. `echolab completions
    /// bash > /etc/bash_completion.d/echolab`)
    Completions {
        /// The shell the script is for
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff; `echolab man | man -l -`), or write one page per verb
    /// into a directory
    Man {
        /// Write echolab.1 and echolab-VERB.1 for every verb into this directory
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// The completion script for `shell`, on stdout (made whole first: the generator
/// panics on a stream it cannot write, a closed pipe).
fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "echolab", &mut script);
    echolab::out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

/// The man page on stdout, or every verb's page into `dir`.
fn man(dir: Option<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let command = Cli::command();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(command, &dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            echolab::out!("{}", String::from_utf8_lossy(&page));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(config) => echolab::server::main(config),
        Command::Load(args) => echolab::load::main(*args),
        Command::Run(args) => echolab::run::main(args),
        Command::Report(args) => echolab::run::report_main(args),
        Command::Compare(args) => echolab::compare::main(args),
        Command::Plan(args) => echolab::plan::main(args),
        Command::Merge(args) => echolab::load::merge_main(args),
        Command::Remote(args) => echolab::experiment::placement::remote::main(args),
        Command::Completions { shell } => completions(shell),
        Command::Man { dir } => man(dir),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            echolab::errln!("echolab: {error:#}");
            ExitCode::FAILURE
        }
    }
}
