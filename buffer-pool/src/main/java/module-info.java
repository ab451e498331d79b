/** Off-heap page pool, buffers and memory regions with their keys. Depends on the JDK only. */
module io.zcnet.buffer {
    exports io.zcnet.buffer;
}
