//! The epoll model (being built).
use super::Setup;

pub fn serve(_setup: Setup) -> anyhow::Result<()> {
    anyhow::bail!("the epoll model is not built yet")
}
