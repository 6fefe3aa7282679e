//! The poll model (being built).
use super::Setup;

pub fn serve(_setup: Setup) -> anyhow::Result<()> {
    anyhow::bail!("the poll model is not built yet")
}
