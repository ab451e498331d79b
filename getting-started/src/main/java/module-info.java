/**
 * The getting-started programs. Run them on the module path with native access granted to zcnet's
 * ring-core, the one module that calls the kernel:
 * {@code java --enable-native-access=io.zcnet.ring -p target/modules -m com.example.gettingstarted/...}.
 */
module com.example.gettingstarted {
    requires io.zcnet.ring;
    requires io.zcnet.qp;
}
