//! Measurement: what is read from a server, its processes and its host while a step or a
//! stair runs, and the pure judging of those readings into a results row.
//!
//! - [`probe`]: the server's CPU, memory, threads and fds from /proc.
//! - [`cost`]: what each connection costs in user space and in the kernel, from snapshots.
//! - [`request_cost`]: what a request costs the server in system calls and context switches.
//! - [`netstat`]: the kernel's TCP counters of a step, as `nstat` reads them.
//! - [`spread`]: the spread of a step over its connections and its seconds.
//! - [`profile`]: a profiled repetition's perf recording, folded stacks and flame graphs.
//! - [`judge`]: a step's summaries to a failure reason (pure).
//! - [`row`]: a measured window (a fresh step's or a stair's) to its results row, the one
//!   place a row is built.

pub mod cost;
pub mod judge;
pub mod netstat;
pub mod probe;
pub mod profile;
pub mod request_cost;
pub mod row;
pub mod spread;
