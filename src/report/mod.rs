//! The report (being built).
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {}

pub fn main(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("echolab report is not built yet")
}
