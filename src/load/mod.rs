//! The load generator (being built).
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct LoadArgs {}

#[derive(clap::Args, Debug)]
pub struct MergeArgs {}

pub fn main(_args: LoadArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("echolab load is not built yet")
}

pub fn merge_main(_args: MergeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("echolab merge is not built yet")
}
