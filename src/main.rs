//! The `echolab` command line: six verbs, each handed to its module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Combine the results of distributed load agents exactly (histograms added, counts summed)
    Merge(echolab::load::MergeArgs),
    /// What the runner starts on a host it reaches over ssh: a process tied to the ssh
    /// session, or the server's probe
    Remote(echolab::experiment::placement::remote::RemoteArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(config) => echolab::server::main(config),
        Command::Load(args) => echolab::load::main(*args),
        Command::Run(args) => echolab::run::main(args),
        Command::Report(args) => echolab::run::report_main(args),
        Command::Compare(args) => echolab::compare::main(args),
        Command::Merge(args) => echolab::load::merge_main(args),
        Command::Remote(args) => echolab::experiment::placement::remote::main(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            echolab::errln!("echolab: {error:#}");
            ExitCode::FAILURE
        }
    }
}
