package io.zcnet.ring;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.fail;

class CurrentCpuTest {
    /** The kernel's own record of where this thread last ran: field 39 of /proc/thread-self/stat. */
    private static int cpuFromProc() throws IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Integer.parseInt(fields[39 - 3]);
    }

    @Test
    void namesTheCpuTheKernelSaysThisThreadRunsOn() throws IOException {
        // The thread may move between the looks, so one agreement of the three suffices; -1 or a wrong
        // number never agrees.
        int last = -2;
        for (int attempt = 0; attempt < 1000; attempt++) {
            int before = CurrentCpu.get();
            int proc = cpuFromProc();
            int after = CurrentCpu.get();
            if (before == proc && proc == after) {
                return;
            }
            last = before;
        }
        fail("sched_getcpu said " + last + ", never the CPU /proc names");
    }
}
