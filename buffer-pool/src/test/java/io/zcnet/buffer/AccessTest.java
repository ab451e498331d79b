package io.zcnet.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AccessTest {

    @Test
    void validCombinationsFollowIbvRegMr() {
        assertTrue(Access.isValid(0));
        assertTrue(Access.isValid(Access.LOCAL_WRITE));
        assertTrue(Access.isValid(Access.REMOTE_READ));
        assertTrue(Access.isValid(Access.LOCAL_WRITE | Access.REMOTE_WRITE));
        assertTrue(Access.isValid(Access.ALL));
        assertFalse(Access.isValid(Access.REMOTE_WRITE), "remote write needs local write");
        assertFalse(Access.isValid(Access.REMOTE_WRITE | Access.REMOTE_READ));
        assertFalse(Access.isValid(8));
        assertFalse(Access.isValid(-1));
    }

    @Test
    void describeNamesEveryFlag() {
        assertEquals("NONE", Access.describe(0));
        assertEquals("LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ", Access.describe(Access.ALL));
        assertEquals("REMOTE_READ", Access.describe(Access.REMOTE_READ));
        assertEquals("LOCAL_WRITE|0x10", Access.describe(0x11));
    }

    @Test
    void grantsNeedsEveryRequiredBit() {
        assertTrue(Access.grants(Access.ALL, Access.REMOTE_READ | Access.REMOTE_WRITE));
        assertFalse(Access.grants(Access.REMOTE_READ, Access.REMOTE_READ | Access.REMOTE_WRITE));
        assertTrue(Access.grants(0, 0));
    }

    @Test
    void statusNames() {
        assertEquals("OK", AccessStatus.name(AccessStatus.OK));
        assertEquals("INVALID_KEY", AccessStatus.name(AccessStatus.INVALID_KEY));
        assertEquals("OUT_OF_BOUNDS", AccessStatus.name(AccessStatus.OUT_OF_BOUNDS));
        assertEquals("NOT_PERMITTED", AccessStatus.name(AccessStatus.NOT_PERMITTED));
        assertEquals("DEREGISTERED", AccessStatus.name(AccessStatus.DEREGISTERED));
        assertEquals("UNKNOWN(99)", AccessStatus.name(99));
        assertEquals("UNKNOWN(-1)", AccessStatus.name(-1));
    }
}
