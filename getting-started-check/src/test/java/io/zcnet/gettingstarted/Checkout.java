package io.zcnet.gettingstarted;

import java.nio.file.Path;

/** Where this build's pieces are, as the module's pom hands them to the tests. */
final class Checkout {
    /** The java command line that runs a getting-started program, as docs/getting-started.md shows it. */
    static final String RUN = "java --enable-native-access=io.zcnet.ring -p target/modules"
            + " -m com.example.gettingstarted/com.example.gettingstarted.";
    /** The same on the class path, where every jar is in the unnamed module. */
    static final String RUN_ON_CLASS_PATH = "java --enable-native-access=ALL-UNNAMED -cp 'target/modules/*'"
            + " com.example.gettingstarted.";

    private Checkout() {
    }

    static Path root() {
        return path("zcnet.root");
    }

    static Path consumerProject() {
        return root().resolve("getting-started");
    }

    static String version() {
        return property("zcnet.version");
    }

    static Path path(String property) {
        return Path.of(property(property)).toAbsolutePath().normalize();
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + name + " is not set: run through Maven"
                    + " (mvn -pl getting-started-check -am verify), which sets it from the pom");
        }
        return value;
    }
}
