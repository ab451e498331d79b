#!/usr/bin/env python3
"""Splits the loop threads' CPU samples of one QueuePairLatency run into the steps of a round trip.

Input: `perf script -F comm,ip,sym,dso` of a `perf record -F HZ` of the run (perf's cpu-clock event, so a
sample is 1/HZ s of a thread on a CPU), the round trips of the recorded interval and HZ. Only the loop
threads (comm `zcnet-qp*`) count; the JIT compilers and the GC are the JVM's, not the round trip's.

A sample goes to the first step whose pattern matches its symbol (JIT frames are `/tmp/perf-PID.map` names,
a compiled method with what the JIT inlined into it). Output: nanoseconds of loop-thread CPU per round trip
for each step, both ends together, and their sum. The round trip minus that sum is time no loop thread was
on a CPU for it: the kernel's wake-up of a sleeping thread, or a busy loop's thread preempted.

usage: latency_steps.py HZ ROUND_TRIPS ROUND_TRIP_MEAN_US < perf-script-output
"""
import re
import sys

# (step, pattern): first match wins, so the narrow ones come first.
STEPS = [
    ("acknowledgement", r"AcknowledgePolicy|FlowControl\.|ControlFrame"),
    ("post (the application's work request into the rings)",
     r"QueuePairLatency\.(startRoundTrip|serverTurn)|WorkIntake|WorkRequest\.|SendLedger|QueuePair\.post|SpscRing"),
    ("completion (to the application's poll)",
     r"Completer|CompletionRing|QueuePair\.poll|WorkCompletion|QueuePairLatency|HdrHistogram|Recorder"),
    ("framing and staging (requester, sender)",
     r"Requester|Responder|Segmenter|FrameSender|SenderSpace|SubflowSet|Subflow\.|GatherList|Icrc|PackedSends"
     r"|FrameHeader|StagedWriter"),
    ("receive and placement (frames to posted buffers)",
     r"FrameReceiver|MessageAssembler|FrameJudge|FrameValidator|DeferredFrames|ReceiveBuffers|MessageSlots"
     r"|QpEngine\.(onFramesReceived|harvest)|BufferRing|ReceiveRings|MessageCompletion|Opcode\."),
    ("kernel: sendmsg (TCP transmit, loopback)",
     r"tcp_sendmsg|tcp_write_xmit|tcp_transmit|__tcp_push|tcp_push|ip_queue_xmit|ip_finish_output|ip_output"
     r"|ip_local_out|__dev_queue_xmit|dev_hard_start_xmit|loopback_xmit|sock_sendmsg|____sys_sendmsg|io_sendmsg"
     r"|io_send|skb_page_frag_refill|sk_stream_alloc|tcp_skb_entail|tcp_stream_alloc|bbr_|tcp_rate|tcp_event"
     r"|__alloc_skb|kmalloc_reserve|tcp_wfree|sock_wfree|skb_clone|__copy_skb|_copy_from_iter|copy_from_user"
     r"|__check_object_size|__virt_addr_valid|check_heap_object|tcp_check_space|tcp_current_mss|tcp_send_mss"
     r"|enqueue_to_backlog|tcp_tso_segs|tcp_established_options|tcp_schedule_loss_probe|ip_send_check"
     r"|netdev_core_pick_tx|kmem_cache_alloc"),
    ("kernel: receive (softirq, TCP receive, recv into the ring's buffer)",
     r"net_rx_action|process_backlog|__netif_receive|netif_rx|ip_rcv|ip_local_deliver|ip_protocol_deliver"
     r"|tcp_v4_rcv|tcp_v4_do_rcv|tcp_rcv|tcp_data_queue|tcp_ack|tcp_clean_rtx|tcp_recvmsg|tcp_cleanup_rbuf"
     r"|tcp_rcv_space|sock_def_readable|sock_rfree|_copy_to_iter|skb_copy_datagram|__skb_datagram_iter"
     r"|simple_copy_to_iter|sock_recvmsg|inet_recvmsg|io_netmsg|io_msg_copy_hdr|skb_release|kfree_skb|__kfree_skb|napi_consume_skb|skb_defer|skb_attempt_defer"
     r"|skb_free_head|kfree$|kmem_cache_free|io_recv|io_buffer_select|io_net_retry|__inet_lookup|inet_ehashfn"
     r"|handle_softirqs|__local_bh_enable|do_softirq|tcp_event_data_recv|tcp_queue_rcv|tcp_try_coalesce"
     r"|sk_filter|security_sock_rcv|tcp_add_backlog|release_sock|lock_sock|__release_sock|tcp_release_cb"
     r"|tcp_mstamp|tcp_update_skb|tcp_grow_window|tcp_send_delayed_ack|__tcp_ack_snd_check|tcp_urg"
     r"|sk_reset_timer|mod_timer|__mod_timer|ep_poll_callback|sock_poll|tcp_poll|ep_item_poll|io_poll"),
    ("wake-up, sleep and idle polling",
     r"finish_task_switch|__schedule|^schedule|schedule_hrtimeout|try_to_wake_up|ttwu|wake_up|io_cqring_wait"
     r"|io_wake|sched_yield|do_sched_yield|yield0|Thread\.yield|pick_next|enqueue_task|dequeue_task"
     r"|update_curr|update_load|psi_|raw_spin|queued_spin|pv_queued|native_queued|__raw_callee|EPoll|epoll"
     r"|ep_poll|do_epoll|select|Selector|hrtimer|LockSupport|Unsafe\.park|Unsafe\.unpark|futex|Parker"
     r"|read_tsc|ktime_get|__rseq|rseq_|irqentry|sysvec|asm_sysvec|idle|IdleStrategy|LoopIdle"),
    ("loop and io_uring plumbing (enter, SQEs, CQEs, tasks)",
     r"io_uring|io_submit|__io_|io_issue|io_req|io_queue|io_cqe|io_fill|io_run|io_get|io_put|io_file|io_import"
     r"|io_assign|io_alloc|io_prep|io_sendmsg_prep|io_free|io_kbuf|io_ring|fget|fput|do_syscall|entry_SYSCALL"
     r"|syscall_exit|syscall_return|exit_to_user|__x64_sys|^syscall$|nep_invoker|DowncallLinker|capture_state"
     r"|__errno_location|UringEventLoop|NioEventLoop|EventLoop|Ring\.|Uring|LoopSignal|LoopCounters|HandlerTable"
     r"|OpRunner|OpPool|NioSocket|SocketChannel|IOUtil|SocketDispatcher|NativeThread|jctools|QpEngine"
     r"|LoopJob|CompletionQueue|TimerHeap|SocketTable|__get_user|__put_user|_copy_to_user|_copy_from_user"),
    ("clocks and timers (liveness, heartbeats, stamps)",
     r"QpClock|Liveness|HeartbeatClock|clock_gettime|vdso|javaTimeNanos|System\.nanoTime"),
]
COMPILED = [(step, re.compile(p)) for step, p in STEPS]
OTHER = "other (JVM stubs, memory copies, the rest)"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    hz, round_trips, mean_us = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    if hz <= 0 or round_trips <= 0 or mean_us <= 0:
        sys.exit("latency_steps.py: HZ, ROUND_TRIPS and ROUND_TRIP_MEAN_US must be positive")
    counts = {step: 0 for step, _ in STEPS}
    counts[OTHER] = 0
    pattern = re.compile(r"^\s*(\S+)\s+[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$")
    for line in sys.stdin:
        m = pattern.match(line)
        if not m or not m.group(1).startswith("zcnet-qp"):
            continue
        symbol = m.group(2)
        counts[next((step for step, p in COMPILED if p.search(symbol)), OTHER)] += 1
    ns_per_sample = 1e9 / hz
    total = 0.0
    print(f"{'step':<72} {'ns per round trip':>18}")
    for step, n in counts.items():
        ns = n * ns_per_sample / round_trips
        total += ns
        print(f"{step:<72} {ns:>18.0f}")
    print(f"{'loop-thread CPU in all, both ends':<72} {total:>18.0f}")
    print(f"{'round trip, mean':<72} {mean_us * 1000:>18.0f}")
    print(f"{'no loop thread on a CPU (wake-up latency, preemption)':<72} {max(0.0, mean_us * 1000 - total):>18.0f}")


if __name__ == "__main__":
    main()
