package io.zcnet.ring.uring;

import io.zcnet.ring.Errno;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OpenFdsTest {

    @Test
    void tracksGrowsAndClosesWhatIsLeft() {
        try (Arena arena = Arena.ofConfined()) {
            Native sys = new Native(arena);
            int kept = sys.eventfd(0, Linux.EFD_CLOEXEC);
            int forgotten = sys.eventfd(0, Linux.EFD_CLOEXEC);
            assertTrue(kept >= 0 && forgotten >= 0);
            OpenFds fds = new OpenFds();
            fds.add(kept);
            fds.add(kept);
            fds.add(forgotten);
            fds.add(5000); // beyond the first words: the set grows
            assertEquals(3, fds.count(), "adding twice counts once");
            fds.remove(5000);
            fds.remove(forgotten);
            fds.remove(70_000); // never added, beyond the set: nothing happens
            assertEquals(1, fds.count());
            fds.closeAll(sys);
            assertEquals(0, fds.count());
            assertEquals(-Errno.EBADF, sys.close(kept), "closeAll closed it");
            assertEquals(0, sys.close(forgotten), "a removed fd is left alone");
        }
    }
}
