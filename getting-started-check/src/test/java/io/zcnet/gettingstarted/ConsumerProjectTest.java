package io.zcnet.gettingstarted;

import io.zcnet.ring.EventLoops;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a team that adopts zcnet does, end to end: getting-started/ is copied out of the checkout (so it
 * cannot lean on the reactor), built by its own {@code mvn package} against a local repository that holds
 * only what this build installed into it (invoker:install, see the pom) plus plugins and third-party jars
 * from the tester's repository, and its programs run as separate JVMs on the module path, with the
 * command line docs/getting-started.md gives, on both engines.
 */
class ConsumerProjectTest {
    private static final Pattern PORT = Pattern.compile("listening on port (\\d+)");
    private static final Duration BUILD = Duration.ofMinutes(5);
    private static final Duration RUN = Duration.ofSeconds(60);
    private static Path project;

    @BeforeAll
    static void buildTheConsumerProject() throws Exception {
        Path work = Checkout.path("consumer.work");
        deleteRecursively(work);
        project = work.resolve("getting-started");
        copy(Checkout.consumerProject(), project);
        Path settings = work.resolve("settings.xml");
        Files.writeString(settings, seedSettings(Checkout.path("seed.repository")));

        List<String> mvn = List.of(Checkout.path("maven.home").resolve("bin/mvn").toString(), "-B", "-q",
                "-Dstyle.color=never", "-s", settings.toString(),
                "-Dmaven.repo.local=" + Checkout.path("consumer.repository"),
                "-Dzcnet.version=" + Checkout.version(), "package");
        ProcessBuilder build = new ProcessBuilder(mvn);
        // The nested build compiles for release 25: give it the JDK this test runs on.
        build.environment().put("JAVA_HOME", System.getProperty("java.home"));
        try (Program maven = Program.start("mvn-package", project, work.resolve("logs"), build)) {
            maven.awaitSuccess(BUILD);
        }
        assertTrue(Files.isRegularFile(project.resolve("target/modules/qp-" + Checkout.version() + ".jar")),
                "the dependency plugin put zcnet's jars beside the program's");
    }

    @ParameterizedTest
    @ValueSource(strings = {"uring", "nio"})
    void echoServerSendsBackWhatTheClientSent(String engine) throws Exception {
        assumeEngine(engine);
        echo(Checkout.RUN, engine, logs(engine));
    }

    @Test
    void echoRunsOnTheClassPathToo() throws Exception {
        echo(Checkout.RUN_ON_CLASS_PATH, "nio", logs("class-path"));
    }

    private static void echo(String commandLine, String engine, Path logs) throws Exception {
        try (Program server = run(commandLine, "echo-server", engine, logs, "EchoServer", "0")) {
            String port = server.awaitOutput(PORT, RUN);
            try (Program client = run(commandLine, "echo-client", engine, logs, "EchoClient", "127.0.0.1", port,
                    "hello from the getting-started client")) {
                client.awaitSuccess(RUN);
                assertTrue(client.stdout().contains("echoed: hello from the getting-started client"),
                        client.describe());
                assertQuiet(client);
            }
            assertQuiet(server);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"uring", "nio"})
    void writeWithImmediateLandsInTheReceiversRegion(String engine) throws Exception {
        assumeEngine(engine);
        Path logs = logs(engine);
        try (Program receiver = run(Checkout.RUN, "write-receiver", engine, logs, "WriteReceiver", "0")) {
            String port = receiver.awaitOutput(PORT, RUN);
            try (Program sender = run(Checkout.RUN, "write-sender", engine, logs, "WriteSender", "127.0.0.1", port,
                    "bytes placed by the peer", "1234567")) {
                sender.awaitSuccess(RUN);
                assertTrue(sender.stdout().contains("wrote 24 bytes at offset 256 with immediate 1234567"),
                        sender.describe());
                assertQuiet(sender);
            }
            receiver.awaitSuccess(RUN);
            assertTrue(receiver.stdout().contains(
                    "WRITE_WITH_IMM landed at offset 256: 24 bytes \"bytes placed by the peer\", immediate 1234567"),
                    receiver.describe());
            assertQuiet(receiver);
        }
    }

    /**
     * Starts a program with a documented command line, the engine chosen by its system property. The line
     * is as a shell would split it: no quotes but around the class path's wildcard, which java expands.
     */
    private static Program run(String commandLine, String name, String engine, Path logs, String mainClass,
            String... args) throws IOException {
        List<String> command = new ArrayList<>(Arrays.asList((commandLine + mainClass).replace("'", "").split(" ")));
        command.set(0, Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add(1, "-Dzcnet.engine=" + engine);
        command.addAll(List.of(args));
        return Program.start(name, project, logs, new ProcessBuilder(command));
    }

    /** No "restricted method" or other JVM warning: native access was granted the documented way. */
    private static void assertQuiet(Program program) throws IOException {
        String err = program.stderr();
        assertFalse(err.contains("WARNING") || err.contains("restricted"), program.describe());
    }

    private static void assumeEngine(String engine) {
        if (engine.equals("uring")) {
            assumeTrue(EventLoops.uringAvailability().usable(), () -> EventLoops.uringAvailability().reason());
        }
    }

    private static Path logs(String run) {
        return project.getParent().resolve("logs").resolve(run);
    }

    /**
     * Settings for the nested build: the tester's repository as a file:// repository ahead of Central, for
     * releases only, so it builds offline whenever the outer build already fetched the same plugins; zcnet's
     * snapshots come from the throwaway local repository alone. A local repository keeps no checksums for
     * what was installed rather than downloaded, and this one is the tester's own: checksums are not asked.
     */
    private static String seedSettings(Path seed) {
        String repository = """
                    <id>seed</id>
                    <url>%s</url>
                    <releases><enabled>true</enabled><checksumPolicy>ignore</checksumPolicy></releases>
                    <snapshots><enabled>false</enabled></snapshots>
                """.formatted(seed.toUri());
        return """
                <settings>
                  <profiles>
                    <profile>
                      <id>seed</id>
                      <repositories><repository>
                %s      </repository></repositories>
                      <pluginRepositories><pluginRepository>
                %s      </pluginRepository></pluginRepositories>
                    </profile>
                  </profiles>
                  <activeProfiles><activeProfile>seed</activeProfile></activeProfiles>
                </settings>
                """.formatted(repository, repository);
    }

    /** Copies the project's pom and sources, nothing it may have built in place. */
    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path relative = from.relativize(file);
                if (relative.startsWith("target")) {
                    continue;
                }
                Path target = to.resolve(relative.toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
