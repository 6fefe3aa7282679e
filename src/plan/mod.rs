//! `echolab plan`: what each model would hold on a machine, predicted from the unit
//! costs a results directory measured ([`costs`]) by a cost model ([`model`]): the most
//! connections, the limit that binds first, the requests per second at a connection
//! count, and whether a workload fits. docs/plan.md states the model and its checks.

pub mod costs;
pub mod machine;
pub mod model;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use serde::Serialize;

use crate::render::document::{Block, Document, Section, StatusWords, Table};
use crate::render::format::fmt_count;
use crate::results::reader::{self, Results};
use crate::scenario::{machine_clock_mhz, quota_for, Profile};
use crate::units::{fmt_bytes, format_size, parse_size};
use costs::{Side, Spread, UnitCosts, MEASURED_BY};
use model::{Ceiling, Fit, Limit, Machine, Workload};

const USAGE: &str = "plan [OPTIONS] RESULTS_DIR";

/// `echolab plan`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct PlanArgs {
    /// A results directory with the unit costs (`echolab run plan --out DIR`)
    #[arg(value_name = "RESULTS_DIR")]
    pub results: PathBuf,

    /// Cores the server may use (default: this machine's; a fraction for a quota)
    #[arg(long, value_name = "N")]
    pub cores: Option<f64>,

    /// Memory the connections may take (default: this machine's MemAvailable less a
    /// staircase's margin, max(2 GiB, 10 % of MemTotal))
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<u64>,

    /// Fds per process (default: this process's hard RLIMIT_NOFILE)
    #[arg(long, value_name = "N")]
    pub fd_limit: Option<u64>,

    /// The machine's pids, the smaller of pid_max and threads-max (default: this
    /// machine's); the threads running here now are taken from it
    #[arg(long, value_name = "N")]
    pub pid_max: Option<u64>,

    /// Server processes sharing the port (select always runs one)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub processes: u64,

    /// The load generators run on this machine too: both ends of every connection and
    /// the generators' memory count (as in every run of echolab on one machine)
    #[arg(long)]
    pub with_load: bool,

    /// A named server machine instead of this one's cores and memory (`weak-2016`: a
    /// 700 MHz share of one core, 256 MiB); --cores and --memory still win
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(Profile::NAMES))]
    pub profile: Option<String>,

    /// The workload's connections; also where the requests per second are predicted
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub connections: u64,

    /// The workload's requests per second over all its connections
    #[arg(long, value_name = "R", default_value_t = 0.0)]
    pub rate: f64,

    /// Requests per second each connection adds (c1m's trickle: 0.0167, one a minute)
    #[arg(long, value_name = "R", default_value_t = 0.0)]
    pub per_connection_rate: f64,

    /// The workload's message size: the CPU per request of the nearest measured size is taken
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64")]
    pub size: u64,

    /// How to print the plan
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal
    Text,
    /// One JSON document
    Json,
    /// Markdown tables
    Markdown,
}

pub fn main(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let plan = match plan_of_args(&args) {
        Ok(plan) => plan,
        Err(error) => return Ok(crate::console::usage_error(USAGE, &format!("{error:#}"))),
    };
    let text = match args.format {
        Format::Text => plan.text(),
        Format::Json => serde_json::to_string_pretty(&plan)? + "\n",
        Format::Markdown => crate::render::markdown::render(&plan.document()),
    };
    crate::out!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn plan_of_args(args: &PlanArgs) -> anyhow::Result<Plan> {
    for (name, value) in [
        ("--rate", args.rate),
        ("--per-connection-rate", args.per_connection_rate),
    ] {
        if !value.is_finite() || value < 0.0 {
            bail!("{name} must be a number of requests per second, 0 or more (got {value})");
        }
    }
    if args.cores.is_some_and(|c| !c.is_finite() || c <= 0.0) {
        bail!("--cores must be above 0");
    }
    if args.processes == 0 || args.connections == 0 {
        bail!("--processes and --connections must be 1 or more");
    }
    let results = load(&args.results)?;
    for warning in &results.warnings {
        crate::errln!("warning: {warning}");
    }
    let profile = args.profile.as_deref().map(|_| Profile::Weak2016);
    let machine = Machine {
        cores: args.cores.unwrap_or_else(|| match profile {
            Some(p) => quota_for(p.clock_mhz(), machine_clock_mhz(p.cpu())),
            None => machine::cores(),
        }),
        memory_bytes: args.memory.unwrap_or_else(|| match profile {
            Some(p) => p.memory_max().0,
            None => machine::memory_bytes(),
        }),
        fd_limit: args.fd_limit.unwrap_or_else(machine::fd_limit),
        processes: args.processes,
        threads: args
            .pid_max
            .unwrap_or_else(machine::pid_max)
            .saturating_sub(machine::threads_running()),
        max_map_count: machine::max_map_count(),
        with_load: args.with_load,
    };
    let workload = Workload {
        connections: args.connections,
        rate: args.rate,
        per_conn_rate: args.per_connection_rate,
    };
    Plan::new(&results, machine, workload, args.size)
}

/// A results directory's rows, and for a composite (`echolab run plan`: plan-trickle and
/// plan-saturated) every part's rows with them: the costs come from both load shapes. A
/// part that cannot be read is a warning, as a step file is to the report.
fn load(dir: &std::path::Path) -> anyhow::Result<Results> {
    let mut results = reader::load(dir)?;
    for part in results.manifest.parts.clone() {
        match reader::load(&dir.join(&part)) {
            Ok(read) => {
                results.rows.extend(read.rows);
                results.warnings.extend(read.warnings);
            }
            Err(e) => results.warnings.push(format!("part {part}: {e:#}")),
        }
    }
    Ok(results)
}

/// A prediction with its interval: from the median costs, and the least and the most
/// of it from the median, the most and the least costs measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Predicted {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Predicted {
    /// The median's prediction, and the least and most of the three (a limit that binds
    /// on one side may not on another, so the sides need not be in order).
    fn of(median: f64, a: f64, b: f64) -> Predicted {
        Predicted {
            median,
            low: median.min(a).min(b),
            high: median.max(a).max(b),
        }
    }
}

/// One model's plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelPlan {
    pub model: String,
    pub unit_costs: UnitCosts,
    /// Every limit that applies, with the connections it allows (median costs).
    pub ceilings: Vec<Ceiling>,
    /// The most connections: the first limit's.
    pub max_connections: Predicted,
    pub binding: Limit,
    /// Requests per second the cores serve at the workload's connections.
    pub max_rate: Predicted,
    pub workload: Fit,
}

/// What every model of a results directory would hold on a machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub results: PathBuf,
    pub machine: Machine,
    pub workload: Workload,
    /// The workload's message size.
    pub size: u64,
    pub models: Vec<ModelPlan>,
}

impl Plan {
    /// The plan of every model in `results`; an error names what is missing, for which
    /// model, and the scenario that measures it.
    pub fn new(
        results: &Results,
        machine: Machine,
        workload: Workload,
        size: u64,
    ) -> anyhow::Result<Plan> {
        let (unit_costs, missing) = costs::unit_costs(&results.rows, size);
        if !missing.is_empty() || unit_costs.is_empty() {
            let what = if missing.is_empty() {
                "no repetition finished ok".to_string()
            } else {
                missing.join("; ")
            };
            bail!(
                "{} lacks what plan needs: {what}. {MEASURED_BY}",
                results.dir.display()
            );
        }
        let n = workload.connections as f64;
        let models = unit_costs
            .into_iter()
            .map(|unit| {
                let at = |side: Side| {
                    let costs = unit.costs(side);
                    let ceilings = model::ceilings(&costs, &machine, &workload);
                    let first = model::binding(&ceilings);
                    (ceilings, first, model::max_rate(&costs, &machine, n))
                };
                let (ceilings, first, rate) = at(Side::Median);
                // The most costly measured gives the fewest connections, the least the most.
                let (_, few, slow) = at(Side::High);
                let (_, many, fast) = at(Side::Low);
                let count = |c: Option<Ceiling>| c.map_or(f64::INFINITY, |c| c.connections);
                ModelPlan {
                    model: unit.model.clone(),
                    ceilings,
                    max_connections: Predicted::of(count(first), count(few), count(many)),
                    binding: first.map_or(Limit::Cpu, |c| c.limit),
                    max_rate: Predicted::of(rate, slow, fast),
                    workload: model::fit(&unit.costs(Side::Median), &machine, &workload),
                    unit_costs: unit,
                }
            })
            .collect();
        Ok(Plan {
            results: results.dir.clone(),
            machine,
            workload,
            size,
            models,
        })
    }

    /// The sections: what each model would hold, then the unit costs behind it.
    pub fn sections(&self) -> Vec<Section> {
        let w = &self.workload;
        let m = &self.machine;
        let machine = format!(
            "{} core(s), {} for the connections, {} fds per process, {} server process(es), \
             {} threads free, {}",
            trim(m.cores),
            fmt_bytes(m.memory_bytes as f64),
            fmt_count(m.fd_limit as f64),
            m.processes,
            fmt_count(m.threads as f64),
            if m.with_load {
                "the load on the same machine (both ends count)"
            } else {
                "the load elsewhere (the server's end counts)"
            }
        );
        let mut workload = format!("{} connections", fmt_count(w.connections as f64));
        if w.rate > 0.0 {
            workload += &format!(", {} requests/s", fmt_count(w.rate));
        }
        if w.per_conn_rate > 0.0 {
            workload += &format!(", {} requests/s a connection", trim(w.per_conn_rate));
        }
        workload += &format!(" of {}", format_size(self.size));
        let holds = Table {
            headers: [
                "model",
                "max connections",
                "range",
                "binding limit",
                &format!("requests/s at {}", fmt_count(w.connections as f64)),
                "range",
                "workload",
            ]
            .map(String::from)
            .to_vec(),
            numeric: vec![false, true, true, false, true, true, false],
            flagged: self.models.iter().map(|p| !p.workload.fits).collect(),
            rows: self
                .models
                .iter()
                .map(|p| hold_row(p, w.connections))
                .collect(),
        };
        let limits = Table {
            headers: std::iter::once("model".to_string())
                .chain(Limit::ALL.iter().map(|l| l.name().to_string()))
                .collect(),
            numeric: std::iter::once(false)
                .chain(Limit::ALL.iter().map(|_| true))
                .collect(),
            flagged: vec![false; self.models.len()],
            rows: self.models.iter().map(limits_row).collect(),
        };
        let units = Table {
            headers: [
                "model",
                "server / conn",
                "kernel / conn (both ends)",
                "load / conn",
                "CPU µs / request alone",
                "saturated",
                "fds / conn",
                "threads / conn",
                "set-up / s",
                "measured at",
            ]
            .map(String::from)
            .to_vec(),
            numeric: vec![
                false, true, true, true, false, false, true, true, true, false,
            ],
            flagged: vec![false; self.models.len()],
            rows: self
                .models
                .iter()
                .map(|p| unit_row(&p.unit_costs))
                .collect(),
        };
        vec![
            Section {
                heading: "What this machine would hold".into(),
                level: 2,
                id: "plan".into(),
                blocks: vec![
                    Block::Paragraph(format!(
                        "Predicted from the unit costs this run measured (docs/plan.md): \
                         the most connections each model holds and the limit that binds \
                         first, the requests per second its cores serve, and whether the \
                         workload fits. Machine: {machine}. Workload: {workload}. Ranges: \
                         from the most and the least costly repetitions."
                    )),
                    Block::Table(holds),
                    Block::Paragraph("The connections each limit allows:".into()),
                    Block::Table(limits),
                ],
            },
            Section {
                heading: "The unit costs".into(),
                level: 3,
                id: "plan-costs".into(),
                blocks: vec![
                    Block::Paragraph(
                        "Medians over the repetitions; memory at the most connections \
                         held; CPU per request a line in the connections (a + b·n), alone \
                         (at a trickle: a workload's connections) and saturated (the most \
                         requests per second)."
                            .into(),
                    ),
                    Block::Table(units),
                ],
            },
        ]
    }

    pub fn document(&self) -> Document {
        Document {
            title: format!("echolab plan: {}", self.results.display()),
            status: StatusWords {
                ok: "Predicted from measured unit costs.",
                alert: "Predicted from measured unit costs.",
            },
            alerts: Vec::new(),
            notes: Vec::new(),
            caveat: None,
            partial: None,
            sections: self.sections(),
        }
    }

    /// The terminal's text: each section's paragraphs and aligned tables.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for section in self.sections() {
            out += &format!("{}\n", section.heading);
            for block in section.blocks {
                match block {
                    Block::Paragraph(p) => out += &format!("\n{p}\n"),
                    Block::Table(t) => out += &format!("\n{}", t.aligned()),
                    _ => {}
                }
            }
            out.push('\n');
        }
        out
    }
}

/// A number for people, to three significant figures at most.
fn trim(v: f64) -> String {
    crate::units::trim_float((v * 1e4).round() / 1e4)
}

fn count_or_unbounded(v: f64) -> String {
    if v.is_finite() {
        fmt_count(v)
    } else {
        "unbounded".into()
    }
}

fn range(p: &Predicted) -> String {
    format!(
        "{}-{}",
        count_or_unbounded(p.low),
        count_or_unbounded(p.high)
    )
}

fn hold_row(p: &ModelPlan, connections: u64) -> Vec<String> {
    let held = connections as f64 <= p.max_connections.median;
    let fit = &p.workload;
    let verdict = if fit.fits {
        format!(
            "fits, {:.0} % to spare ({})",
            fit.headroom_pct,
            fit.limit.name()
        )
    } else {
        format!(
            "does not fit: {:.0} % over ({})",
            -fit.headroom_pct,
            fit.limit.name()
        )
    };
    vec![
        p.model.clone(),
        count_or_unbounded(p.max_connections.median),
        range(&p.max_connections),
        p.binding.name().into(),
    ]
    .into_iter()
    .chain(if held {
        [count_or_unbounded(p.max_rate.median), range(&p.max_rate)]
    } else {
        // Beyond its ceiling the model serves no rate at that count.
        ["—".into(), "—".into()]
    })
    .chain([verdict])
    .collect()
}

fn limits_row(p: &ModelPlan) -> Vec<String> {
    std::iter::once(p.model.clone())
        .chain(Limit::ALL.iter().map(|l| {
            p.ceilings
                .iter()
                .find(|c| c.limit == *l)
                .map_or("—".into(), |c| fmt_count(c.connections))
        }))
        .collect()
}

fn unit_row(u: &UnitCosts) -> Vec<String> {
    let bytes = |s: &Spread| fmt_bytes(s.median);
    let line = |l: &costs::Line| format!("{:.1} + {:.4}·n", l.a, l.b);
    vec![
        u.model.clone(),
        bytes(&u.user_bytes),
        bytes(&u.kernel_bytes),
        u.load_bytes.as_ref().map_or("—".into(), bytes),
        line(&u.cpu_us[0]),
        u.saturated_us
            .as_ref()
            .map_or("— (not measured)".into(), |s| line(&s[0])),
        format!("{:.2}", u.fds.b),
        format!("{:.2}", u.threads.b),
        u.setup_per_s
            .as_ref()
            .map_or("—".into(), |s| fmt_count(s.median)),
        format!(
            "memory at {}, CPU at {} ({})",
            fmt_count(u.memory_connections as f64),
            u.cpu_connections
                .iter()
                .map(|c| fmt_count(*c as f64))
                .collect::<Vec<_>>()
                .join(", "),
            format_size(u.size)
        ),
    ]
}

/// The report's section, when the results hold what a plan needs: the machine the run
/// was on (its manifest), the load on it too, the run's largest step as the workload (a
/// step below saturation when it has one: plan's saturated steps ask all a model serves).
pub fn report_sections(results: &Results) -> Vec<Section> {
    let Some(step) = results
        .rows
        .iter()
        .max_by_key(|r| (r.connections, !costs::saturated(r)))
    else {
        return Vec::new();
    };
    let Some(machine) = machine::of_manifest(&results.manifest) else {
        return Vec::new();
    };
    let workload = Workload {
        connections: step.connections,
        rate: step.rate.unwrap_or(0.0),
        per_conn_rate: 0.0,
    };
    Plan::new(results, machine, workload, step.size)
        .map(|p| p.sections())
        .unwrap_or_default()
}
