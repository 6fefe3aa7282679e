//! Where a sampled stack's CPU goes, by layer: the one mapping from kernel and user
//! symbols (as `perf script` names them, folded by inferno with `_[k]` on kernel frames)
//! to the layers of the report's table. docs/report.md explains each layer.

/// A layer of the server's CPU, in the table's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// User space: the model's own code, its runtime and libc.
    User,
    /// Entering and leaving the kernel: the system-call entry and exit paths.
    Syscall,
    /// The TCP/IP stack: sending, receiving, the loopback device, socket buffers.
    Tcp,
    /// The readiness mechanism: select's and poll's descriptor scans, epoll's wait and
    /// ctl, io_uring's submission and completion.
    Readiness,
    /// Scheduling: sleeping, waking, switching context.
    Scheduling,
    /// Copying bytes between user and kernel memory.
    Copies,
    /// Other kernel work (interrupts, faults, file lookups, timers).
    Other,
}

impl Layer {
    pub const ALL: [Layer; 7] = [
        Layer::User,
        Layer::Syscall,
        Layer::Tcp,
        Layer::Readiness,
        Layer::Scheduling,
        Layer::Copies,
        Layer::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layer::User => "user space (model, runtime, libc)",
            Layer::Syscall => "system-call entry/exit",
            Layer::Tcp => "TCP stack (send, receive)",
            Layer::Readiness => "readiness (select/poll scan, epoll, io_uring)",
            Layer::Scheduling => "scheduling, context switches",
            Layer::Copies => "memory copies",
            Layer::Other => "other kernel",
        }
    }
}

/// Kernel symbol prefixes of each layer, tried from the sampled frame outward (the
/// first frame that matches any of them decides). The system-call entry and exit
/// counts only when it is the sampled frame itself: kernel work under a system call
/// that no other layer claims is `Other`.
const KERNEL: [(Layer, &[&str]); 4] = [
    (
        Layer::Copies,
        &[
            "copy_user",
            "rep_movs_alternative",
            "_copy_to_iter",
            "_copy_from_iter",
            "_copy_to_user",
            "_copy_from_user",
            "copyout",
            "copyin",
            "memcpy",
            "__memcpy",
            "memmove",
            "skb_copy_datagram_iter",
            "simple_copy_to_iter",
            "csum_partial_copy",
        ],
    ),
    (
        Layer::Scheduling,
        &[
            "schedule",
            "__schedule",
            "finish_task_switch",
            "__switch_to",
            "switch_mm",
            "pick_next_task",
            "try_to_wake_up",
            "ttwu_",
            "wake_up_q",
            "enqueue_task",
            "dequeue_task",
            "enqueue_entity",
            "dequeue_entity",
            "update_curr",
            "update_load_avg",
            "psi_task",
            "select_task_rq",
            "set_next_entity",
            "put_prev_task",
            "futex_",
            "__futex",
            "do_futex",
            "__x64_sys_futex",
            "__x64_sys_sched_yield",
        ],
    ),
    (
        Layer::Readiness,
        &[
            "do_select",
            "core_sys_select",
            "kern_select",
            "__x64_sys_select",
            "__x64_sys_pselect6",
            "do_sys_poll",
            "do_poll",
            "__x64_sys_poll",
            "__x64_sys_ppoll",
            "poll_freewait",
            "__pollwait",
            "pollwake",
            "poll_select",
            "tcp_poll",
            "sock_poll",
            "ep_",
            "do_epoll_",
            "__x64_sys_epoll_",
            "epoll_",
            "io_uring",
            "__io_uring",
            "__x64_sys_io_uring",
            "io_submit_sqes",
            "io_issue_sqe",
            "io_cqring",
            "io_cqe",
            "__io_submit",
            "__io_commit",
            "io_poll",
            "__io_poll",
            "io_arm_poll",
            "io_req_",
            "__io_req",
            "io_do_iopoll",
            "io_wq_",
            "io_fill_cqe",
            "__io_fill_cqe",
            "io_get_sqe",
            "io_init_req",
        ],
    ),
    (
        Layer::Tcp,
        &[
            "tcp_",
            "__tcp_",
            "inet_",
            "__inet_",
            "ip_",
            "__ip_",
            "ipv4_",
            "sock_sendmsg",
            "sock_recvmsg",
            "__sock_sendmsg",
            "sock_read_iter",
            "sock_write_iter",
            "__sys_sendto",
            "__sys_recvfrom",
            "__x64_sys_sendto",
            "__x64_sys_recvfrom",
            "sk_",
            "__sk_",
            "skb_",
            "__skb_",
            "kfree_skb",
            "__kfree_skb",
            "consume_skb",
            "alloc_skb",
            "__alloc_skb",
            "release_sock",
            "lock_sock",
            "net_rx_action",
            "__netif_",
            "netif_",
            "process_backlog",
            "__napi_",
            "napi_",
            "loopback_xmit",
            "dev_hard_start_xmit",
            "__dev_queue_xmit",
            "validate_xmit",
            "nf_",
            "__nf_",
            "raw_local_deliver",
            "dst_release",
            "sock_def_readable",
            "sock_rfree",
            "sock_wfree",
        ],
    ),
];

/// The system-call entry and exit paths, counted when the sample is taken in them.
const SYSCALL: &[&str] = &[
    "entry_SYSCALL_64",
    "entry_SYSRETQ",
    "do_syscall_64",
    "syscall_exit",
    "exit_to_user_mode",
    "syscall_return",
    "x64_sys_call",
    "syscall_enter",
    "syscall_trace",
    "__x64_sys_",
    "fpregs_restore_userregs",
    "switch_fpu_return",
];

const KERNEL_MARK: &str = "_[k]";

/// The layer of one folded stack (`comm;outer;...;sampled`, kernel frames marked
/// `_[k]`): user space when sampled outside the kernel, else the first layer that a
/// kernel frame, from the sampled one outward, belongs to.
pub fn layer_of(stack: &str) -> Layer {
    let mut frames = stack.rsplit(';').map_while(|f| f.strip_suffix(KERNEL_MARK));
    let Some(sampled) = frames.next() else {
        return Layer::User;
    };
    if SYSCALL.iter().any(|p| sampled.starts_with(p)) {
        return Layer::Syscall;
    }
    std::iter::once(sampled)
        .chain(frames)
        .find_map(|frame| {
            KERNEL
                .iter()
                .find(|(_, prefixes)| prefixes.iter().any(|p| frame.starts_with(p)))
                .map(|(layer, _)| *layer)
        })
        .unwrap_or(Layer::Other)
}

/// The share of the samples in each layer of folded stacks (`stack count` lines), in
/// [`Layer::ALL`]'s order, and the samples' total weight. None when there are none.
pub fn shares(folded: &str) -> Option<([f64; 7], f64)> {
    let mut weight = [0.0; 7];
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.trim().parse::<f64>() else {
            continue;
        };
        let at = Layer::ALL.iter().position(|&l| l == layer_of(stack));
        weight[at.expect("every layer is in ALL")] += count;
    }
    let total: f64 = weight.iter().sum();
    (total > 0.0).then(|| (weight.map(|w| w / total), total))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Stacks as `perf record -g` and inferno's perf folder give them on kernel 6.18 (quick
    // at 1 000 connections, `echolab run --profile`); trimmed of their user frames.
    const SELECT_SCAN: &str = "select-worker-0;[unknown];__select;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_select_[k];core_sys_select_[k];do_select_[k];tcp_poll_[k]";
    const SELECT_FD_SETS: &str = "select-worker-0;__select;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_select_[k];core_sys_select_[k];_copy_from_user_[k]";
    const EPOLL_WAIT_SLEEP: &str = "epoll-worker-0;[unknown];[unknown];epoll_wait;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_epoll_wait_[k];do_epoll_wait_[k];schedule_hrtimeout_range_clock_[k];schedule_[k];__schedule_[k];finish_task_switch.isra.0_[k]";
    const EPOLL_SEND_EVENTS: &str = "epoll-worker-0;[unknown];[unknown];epoll_wait;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_epoll_wait_[k];do_epoll_wait_[k];ep_send_events_[k];ep_item_poll.isra.0_[k]";
    const SEND: &str = "epoll-worker-0;__send;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_sendto_[k];__sys_sendto_[k];tcp_sendmsg_[k];tcp_sendmsg_locked_[k];tcp_push_[k];__tcp_push_pending_frames_[k];tcp_write_xmit_[k];__tcp_transmit_skb_[k];ip_queue_xmit_[k];__ip_queue_xmit_[k];ip_finish_output2_[k];__dev_queue_xmit_[k]";
    const RECV_COPY: &str = "epoll-worker-0;__recv;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_recvfrom_[k];__sys_recvfrom_[k];inet_recvmsg_[k];tcp_recvmsg_[k];tcp_recvmsg_locked_[k];skb_copy_datagram_iter_[k];__skb_datagram_iter_[k];_copy_to_iter_[k]";
    const WAKE_PEER: &str = "epoll-worker-0;__send;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_sendto_[k];__sys_sendto_[k];tcp_sendmsg_[k];tcp_v4_rcv_[k];tcp_data_ready_[k];sock_def_readable_[k];__wake_up_sync_key_[k];__wake_up_common_[k];ep_poll_callback_[k];try_to_wake_up_[k]";
    const EXIT: &str = "threads-conn;__recv;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];syscall_exit_to_user_mode_[k]";
    const URING_SUBMIT: &str = "uring-worker-0;io_uring_enter;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_io_uring_enter_[k];io_submit_sqes_[k];io_issue_sqe_[k]";
    const USER: &str = "epoll-worker-0;echolab::server::epoll::run;<std::time::Instant>::now";
    const FD_LOOKUP: &str = "threads-conn;read;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];ksys_read_[k];__fget_light_[k]";

    #[test]
    fn each_layer_is_named_from_real_stacks() {
        assert_eq!(layer_of(SELECT_SCAN), Layer::Readiness);
        assert_eq!(layer_of(SELECT_FD_SETS), Layer::Copies);
        assert_eq!(layer_of(EPOLL_WAIT_SLEEP), Layer::Scheduling);
        assert_eq!(layer_of(EPOLL_SEND_EVENTS), Layer::Readiness);
        assert_eq!(layer_of(SEND), Layer::Tcp);
        assert_eq!(layer_of(RECV_COPY), Layer::Copies);
        assert_eq!(layer_of(WAKE_PEER), Layer::Scheduling);
        assert_eq!(layer_of(EXIT), Layer::Syscall);
        assert_eq!(layer_of(URING_SUBMIT), Layer::Readiness);
        assert_eq!(layer_of(USER), Layer::User);
        assert_eq!(layer_of(FD_LOOKUP), Layer::Other);
    }

    #[test]
    fn shares_weigh_each_stack_by_its_count() {
        let folded = format!("{USER} 3000\n{SELECT_SCAN} 1000\n{EXIT} 0\nnot a line\n");
        let (shares, total) = shares(&folded).expect("samples");
        assert_eq!(total, 4000.0);
        assert_eq!(shares[0], 0.75);
        assert_eq!(shares[3], 0.25);
        assert_eq!(shares.iter().sum::<f64>(), 1.0);
        assert_eq!(super::shares(""), None);
    }
}
