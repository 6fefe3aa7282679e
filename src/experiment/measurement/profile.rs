//! The profiled repetition's recording: one `perf record` of every CPU, kernel stacks
//! included, whose samples are then split by process into the server's tree and the
//! load generators', folded (inferno) into `<side>.folded` and drawn as
//! `<side>-flame.svg` in the repetition's folder. Every CPU, not the processes: perf
//! following a process samples each of its threads on that thread's own CPU time, so a
//! thread per connection that runs less than one period (1 ms) is never sampled (at
//! 1 000 connections perf kept about 100 of the threads model's 900 samples). What
//! could not be recorded is said in `profile-notes.txt` there, with how to enable it:
//! the run goes on without the profile.

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::render::flame::draw;
use crate::results::files::{
    flame_path, folded_path, PROFILED_LOAD, PROFILED_SERVER, PROFILE_NOTES,
};

/// Samples per second: odd, so the sampling does not beat with a periodic tick.
const FREQUENCY_HZ: u32 = 999;
/// A stair's rate: a fifth of a repetition's, since a stair's recording spans its
/// batch's set-up too, which at the top of a staircase takes a minute or more.
const STAIR_FREQUENCY_HZ: u32 = 199;
/// The most a stair's perf.data may hold: perf stops recording there, so neither the
/// disk nor the fold grows with a stair that connects slowly.
const STAIR_MAX_MIB: u64 = 64;

/// How a recording samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// A profiled repetition: 999 Hz, on the default event, for the whole load.
    Repetition,
    /// A staircase's stair: 199 Hz on the CPU clock (each sample weighs its nanoseconds,
    /// so a side's samples read as CPU time), its perf.data bounded by `STAIR_MAX_MIB`.
    Stair,
}

impl Sampling {
    /// `perf record`'s options for this sampling.
    fn args(self) -> Vec<String> {
        match self {
            Sampling::Repetition => vec!["-F".into(), FREQUENCY_HZ.to_string()],
            Sampling::Stair => vec![
                "-e".into(),
                "cpu-clock".into(),
                "-F".into(),
                STAIR_FREQUENCY_HZ.to_string(),
                format!("--max-size={STAIR_MAX_MIB}M"),
            ],
        }
    }

    /// The bound on perf.data, in bytes, when there is one.
    fn max_bytes(self) -> Option<u64> {
        (self == Sampling::Stair).then_some(STAIR_MAX_MIB << 20)
    }
}

/// The perf program: `ECHOLAB_PERF` when set (another build, or a stand-in), else
/// `perf` on PATH. Err: why there is none, and how to get it.
pub fn perf_program() -> Result<PathBuf, String> {
    if let Some(perf) = std::env::var_os("ECHOLAB_PERF") {
        return Ok(PathBuf::from(perf));
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("perf"))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| {
            "no `perf` on PATH: install it (Debian: apt-get install linux-perf) to profile".into()
        })
}

/// Why `kernel.perf_event_paranoid` forbids sampling every CPU with kernel stacks:
/// above 0 only root may (and above 2, on some kernels, not even root).
pub fn paranoid_forbids(paranoid: i32, root: bool) -> Option<String> {
    (paranoid > 0 && !root).then(|| {
        format!(
            "kernel.perf_event_paranoid is {paranoid}: sampling every CPU with kernel \
             stacks needs root, or `sysctl kernel.perf_event_paranoid=0`"
        )
    })
}

/// Why profiling cannot start here: no perf, or the kernel's setting forbids it.
pub fn unavailable() -> Option<String> {
    if let Err(why) = perf_program() {
        return Some(why);
    }
    let paranoid = fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2);
    paranoid_forbids(paranoid, crate::sys::is_root())
}

/// The `perf record` of every CPU.
struct Recorder {
    child: Child,
    data: PathBuf,
    sampling: Sampling,
}

/// A profiled repetition's recording, the processes of each side, and what could not
/// be recorded.
pub struct Recording {
    dir: PathBuf,
    recorder: Option<Recorder>,
    /// The server's pid (its tree is read when the recording ends, while it still runs).
    server: Option<u32>,
    /// The load generators' processes, as seen when they started.
    load: Vec<u32>,
    notes: Vec<String>,
}

impl Recording {
    /// Starts perf on every CPU, writing into `dir`, to be split by process: `server`
    /// (its pid; its threads and children follow), the load generators added later.
    /// `remote`: the server runs on an ssh host, where this machine's perf cannot see it.
    pub fn start(dir: &Path, server: u32, remote: bool, sampling: Sampling) -> Recording {
        let mut recording = Recording {
            dir: dir.to_path_buf(),
            recorder: None,
            server: (!remote).then_some(server),
            load: Vec::new(),
            notes: Vec::new(),
        };
        if let Some(why) = unavailable() {
            recording.notes.push(why);
            return recording;
        }
        if remote {
            recording.notes.push(
                "server: it runs on an ssh host, which this machine's perf cannot see \
                 (profile it there with `perf record -a -g`)"
                    .into(),
            );
        }
        let data = dir.join("profile.perf.data");
        let started = perf_program().and_then(|perf| {
            Command::new(perf)
                .args(["record", "-a", "-g", "--quiet"])
                .args(sampling.args())
                .arg("-o")
                .arg(&data)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start perf: {e}"))
        });
        match started {
            Ok(child) => {
                wait_until_recording(&data);
                recording.recorder = Some(Recorder {
                    child,
                    data,
                    sampling,
                });
            }
            Err(why) => recording.notes.push(why),
        }
        recording
    }

    /// The local load generators (and the processes they have started so far), whose
    /// samples make the load's graph.
    pub fn add_load(&mut self, load: &[u32]) {
        for &pid in load {
            self.load.extend(super::probe::process_tree(pid));
        }
    }

    /// Stops perf, splits its samples into the sides, folds them and draws their flame
    /// graphs; writes the notes of what is missing. Returns the notes.
    pub fn finish(mut self) -> Vec<String> {
        let server: Vec<u32> = self
            .server
            .map(super::probe::process_tree)
            .unwrap_or_default();
        if let Some(recorder) = self.recorder.take() {
            let bound = recorder.sampling.max_bytes();
            match stop(recorder) {
                Ok(data) => {
                    if let Some(full) = bound.and_then(|b| reached(&data, b)) {
                        self.notes.push(full);
                    }
                    for (side, pids) in [(PROFILED_SERVER, &server), (PROFILED_LOAD, &self.load)] {
                        if pids.is_empty() {
                            continue;
                        }
                        if let Err(why) = fold_and_draw(&data, side, pids, &self.dir) {
                            self.notes.push(why);
                        }
                    }
                    let _ = fs::remove_file(&data);
                }
                Err(why) => self.notes.push(why),
            }
        }
        if !self.notes.is_empty() {
            let text = self.notes.join("\n") + "\n";
            if let Err(e) = fs::write(self.dir.join(PROFILE_NOTES), text) {
                crate::errln!("warning: cannot write {PROFILE_NOTES}: {e}");
            }
        }
        self.notes
    }
}

/// Waits (at most 3 s) until perf has made its file, and a little more: a perf stopped
/// before its events are open writes nothing, and on a busy machine it starts slowly.
fn wait_until_recording(data: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while !data.is_file() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
}

/// Why a recording is partial: its perf.data reached `bound` bytes (within the last
/// MiB: perf stops before the next write would pass it), so it covers only the start.
fn reached(data: &Path, bound: u64) -> Option<String> {
    let size = fs::metadata(data).map_or(0, |m| m.len());
    (size + (1 << 20) >= bound).then(|| {
        format!(
            "perf.data reached its bound of {} MiB and perf stopped: the graphs cover \
             only the recording's start",
            bound >> 20
        )
    })
}

/// Stops perf record (SIGINT: it writes its file and exits). Returns its data file.
fn stop(recorder: Recorder) -> Result<PathBuf, String> {
    // SAFETY: kill on the pid of a child this process started and has not reaped.
    unsafe { libc::kill(recorder.child.id() as i32, libc::SIGINT) };
    let output = recorder
        .child
        .wait_with_output()
        .map_err(|e| format!("perf record: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    // perf exits by SIGINT's own status or 0 when it was stopped; anything else failed.
    let stopped = output.status.success() || output.status.code().is_none();
    if !stopped || !recorder.data.is_file() {
        return Err(format!(
            "perf record failed ({}): {}; check `perf record -a -g` works here \
             (the kernel may lack the cycles or cpu-clock event)",
            output.status,
            last.unwrap_or("no message")
        ));
    }
    Ok(recorder.data)
}

/// One side's samples (those of `pids`) folded into `<side>.folded` and drawn.
fn fold_and_draw(data: &Path, side: &str, pids: &[u32], dir: &Path) -> Result<(), String> {
    let folded = folded_path(dir, side);
    fold(data, pids, &folded).map_err(|e| format!("{side}: cannot fold samples: {e}"))?;
    if fs::metadata(&folded).map_or(0, |m| m.len()) == 0 {
        return Err(format!(
            "{side}: perf recorded no samples of it (the event may be missing on this \
             kernel: `perf list sw` shows cpu-clock)"
        ));
    }
    draw(
        &folded,
        &flame_path(dir, side),
        &format!("{side}: where the CPU went"),
    )
    .map_err(|e| format!("{side}: cannot draw its flame graph: {e}"))
}

/// `perf script` of the samples of `pids` (processes, each with all its threads) in
/// `data`, folded into `out` (inferno's perf folder, kernel frames marked `_[k]`).
fn fold(data: &Path, pids: &[u32], out: &Path) -> Result<(), String> {
    use inferno::collapse::Collapse as _;
    let perf = perf_program()?;
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let mut script = Command::new(perf)
        .arg("script")
        .arg("-i")
        .arg(data)
        .arg("--pid")
        .arg(pids.join(","))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start perf script: {e}"))?;
    let stdout = script.stdout.take().expect("piped stdout");
    let mut options = inferno::collapse::perf::Options::default();
    options.annotate_kernel = true;
    let file = fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let folded = inferno::collapse::perf::Folder::from(options)
        .collapse(BufReader::new(stdout), std::io::BufWriter::new(file))
        .map_err(|e| e.to_string());
    let status = script.wait().map_err(|e| e.to_string())?;
    folded?;
    if !status.success() {
        return Err(format!("perf script: {status}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paranoid_kernel_forbids_only_a_user_that_is_not_root() {
        let why = paranoid_forbids(2, false).expect("forbidden");
        assert!(why.contains("perf_event_paranoid is 2"), "{why}");
        assert!(why.contains("sysctl kernel.perf_event_paranoid=0"), "{why}");
        assert!(paranoid_forbids(1, false).is_some());
        assert_eq!(paranoid_forbids(2, true), None);
        assert_eq!(paranoid_forbids(0, false), None);
        assert_eq!(paranoid_forbids(-1, false), None);
    }
}
