//! The select model (being built).
use super::Setup;

pub fn serve(_setup: Setup) -> anyhow::Result<()> {
    anyhow::bail!("the select model is not built yet")
}
