package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The first host of Slurm's compressed host lists, and the lists refused, each with the variable named. */
class SlurmHostListTest {

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
        "node[01-04,07],gpu1; node01",
        "gpu1,node[01-04]; gpu1",
        "node7; node7",
        "node[7]; node7",
        "node[09-12]; node09",
        "rack[2-3]-node[010-012,5]; rack2-node010",
        "a[3,1-2]b; a3b",
        "n-1.cluster.local,n-2.cluster.local; n-1.cluster.local"})
    void theFirstHostKeepsTheZeroPaddingOfItsRange(String list, String first) {
        assertEquals(first, SlurmHostList.first("SLURM_STEP_NODELIST", list));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "node[01-04", "node]1", "node[]", "node[4-1]", "node[a-b]", "node[1-]", "node[1,,2]",
        ",node1", "node1,", "node1,,node2", "node[1-[2]]", "node 1"})
    void aMalformedListIsRefusedNamingTheVariable(String list) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SlurmHostList.first("SLURM_STEP_NODELIST", list));
        assertTrue(e.getMessage().startsWith("SLURM_STEP_NODELIST='" + list + "' is not a Slurm host list: "),
                e.getMessage());
    }
}
