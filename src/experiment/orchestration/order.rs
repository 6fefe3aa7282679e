//! The order of the models in each round of a sweep: a seeded shuffle, and order.csv,
//! which records it.

/// The file recording each round's model order (`step,repetition,order`).
pub const ORDER_FILE: &str = "order.csv";

/// The order of `n` models in round `rep` of `step`: a shuffle seeded by the scenario,
/// step and repetition, so a rerun of the scenario runs the same order, and each round
/// another one.
pub fn round_order(scenario: &str, step: &str, rep: u32, n: usize) -> Vec<usize> {
    use rand::seq::SliceRandom as _;
    use rand::SeedableRng as _;
    // FNV-1a: a hash that every build computes the same way (std's is not promised to).
    let mut seed: u64 = 0xcbf2_9ce4_8422_2325;
    for b in scenario
        .bytes()
        .chain([0])
        .chain(step.bytes())
        .chain([0])
        .chain(rep.to_le_bytes())
    {
        seed = (seed ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
    order
}

/// order.csv, written as the rounds start.
pub struct RoundOrder {
    writer: csv::Writer<std::fs::File>,
    path: std::path::PathBuf,
}

impl RoundOrder {
    pub fn create(path: &std::path::Path) -> anyhow::Result<RoundOrder> {
        let writer = csv::Writer::from_path(path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        let mut order = RoundOrder {
            writer,
            path: path.to_path_buf(),
        };
        order.write(["step", "repetition", "order"])?;
        Ok(order)
    }

    /// order.csv of a run that goes on: its rounds are appended after the last.
    pub fn append_to(path: &std::path::Path) -> anyhow::Result<RoundOrder> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("cannot open {} to append to it: {e}", path.display()))?;
        Ok(RoundOrder {
            writer: csv::Writer::from_writer(file),
            path: path.to_path_buf(),
        })
    }

    pub fn append<'a>(
        &mut self,
        step: &str,
        rep: u32,
        models: impl Iterator<Item = &'a str>,
    ) -> anyhow::Result<()> {
        let order: Vec<&str> = models.collect();
        self.write([step, &rep.to_string(), &order.join(" ")])
    }

    /// Writes one record through to the file; an error (a full disk) names the file.
    fn write(&mut self, record: [&str; 3]) -> anyhow::Result<()> {
        self.writer
            .write_record(record)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(self.writer.flush()?))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.path.display()))
    }
}
