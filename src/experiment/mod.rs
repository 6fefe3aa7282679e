//! The experiment runner (being built).
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct RunArgs {}

pub fn main(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("echolab run is not built yet")
}
