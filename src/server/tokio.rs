//! The tokio model (being built).
use super::Setup;

pub fn serve(_setup: Setup) -> anyhow::Result<()> {
    anyhow::bail!("the tokio model is not built yet")
}
