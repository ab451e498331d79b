package io.zcnet.jmh.echo;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * System calls and echoed messages, counted by the zcnet loops themselves ({@code LoopCounters}), as
 * secondary results of the pipelined benchmark. JMH adds event counters up over every iteration and fork,
 * so only their ratio means something per message: {@code bench/ratios.py} prints system calls divided by
 * messages (a ratio computed here would be added up too, ten iterations making it ten times too large).
 * Netty does not count its system calls: its rows show 0 here; use {@code bench/syscalls.sh} for a
 * kernel-side count of any process.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class SyscallCounters {
    /** Messages echoed in this iteration. */
    public long messages;
    /** System calls of the client loop in this iteration. */
    public long clientSyscalls;
    /** System calls of the server loop in this iteration. */
    public long serverSyscalls;

    @Setup(Level.Iteration)
    public void reset() {
        messages = 0;
        clientSyscalls = 0;
        serverSyscalls = 0;
    }
}
