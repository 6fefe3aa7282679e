//! The threads model (being built).
use super::Setup;

pub fn serve(_setup: Setup) -> anyhow::Result<()> {
    anyhow::bail!("the threads model is not built yet")
}
