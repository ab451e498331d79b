package io.zcnet.collective;

/**
 * Whether the ranks of a communicator compete for CPU cores, which decides how a small allreduce runs. With a
 * core per rank, the fewest steps win: recursive doubling among all ranks. With more ranks than cores on a
 * machine, every message costs CPU that another rank was waiting for (the kernel's TCP path, a context
 * switch), so fewer messages win over fewer steps: ranks fold in pairs first, half of them run recursive
 * doubling, and the result goes back to the other half. For four ranks that is six messages in three steps
 * instead of eight in two.
 *
 * <p>Every rank's choice is in its rendezvous card, so all ranks decide alike even when their configurations
 * differ: SHARED on any rank folds, else DEDICATED on any rank does not, else the cards decide
 * ({@link #DETECT}).
 */
public enum CoreSharing {
    /**
     * From the rendezvous cards: the cores are shared when the ranks running on one kernel (the same Linux
     * boot id, whatever their network namespaces or containers) outnumber the processors the JVM reports
     * there.
     */
    DETECT,
    /** Shared: small allreduces fold ranks in pairs first. */
    SHARED,
    /** A core per rank: small allreduces take the fewest steps. */
    DEDICATED;

    /** Whether the ranks whose cards these are share cores, by the rule of the class comment. */
    static boolean shared(RankCard[] cards) {
        boolean dedicated = false;
        for (RankCard c : cards) {
            if (c.sharing() == SHARED) {
                return true;
            }
            dedicated |= c.sharing() == DEDICATED;
        }
        if (dedicated) {
            return false;
        }
        for (RankCard c : cards) {
            int ranks = 0;
            int processors = 0;
            for (RankCard d : cards) {
                if (d.kernel().equals(c.kernel())) {
                    ranks++;
                    processors = Math.max(processors, d.processors());
                }
            }
            if (ranks > processors) {
                return true;
            }
        }
        return false;
    }
}
