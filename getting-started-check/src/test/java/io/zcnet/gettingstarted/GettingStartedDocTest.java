package io.zcnet.gettingstarted;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/getting-started.md shows the getting-started project whole: every source file and the pom, each
 * in the code block after a {@code <!-- path -->} line, equal to the file; and it runs the programs with
 * the command line {@link ConsumerProjectTest} runs them with. Edit a program, then paste it into the doc.
 * Code from elsewhere in the checkout (the Spark example, whose tests run in the spark module) is shown as an
 * excerpt, after a {@code <!-- excerpt: path -->} line, and must appear in that file as it is.
 */
class GettingStartedDocTest {
    private static final Pattern SHOWN = Pattern.compile("<!-- (getting-started/\\S+) -->\\n```\\w*\\n(.*?)```",
            Pattern.DOTALL);
    private static final Pattern EXCERPT = Pattern.compile("<!-- excerpt: (\\S+) -->\\n```\\w*\\n(.*?)```",
            Pattern.DOTALL);

    @Test
    void everyFileOfTheProjectIsShownAsItIs() throws IOException {
        Map<String, String> shown = new TreeMap<>();
        Matcher m = SHOWN.matcher(doc());
        while (m.find()) {
            shown.put(m.group(1), m.group(2));
        }
        assertEquals(projectFiles(), new TreeSet<>(shown.keySet()), "files shown in docs/getting-started.md");
        for (Map.Entry<String, String> e : shown.entrySet()) {
            assertEquals(Files.readString(Checkout.root().resolve(e.getKey())), e.getValue(),
                    "docs/getting-started.md shows " + e.getKey() + " other than it is");
        }
    }

    @Test
    void everyExcerptIsInItsFile() throws IOException {
        Matcher m = EXCERPT.matcher(doc());
        int excerpts = 0;
        while (m.find()) {
            excerpts++;
            assertTrue(Files.readString(Checkout.root().resolve(m.group(1))).contains(m.group(2)),
                    "docs/getting-started.md shows an excerpt of " + m.group(1) + " that is not in it:\n" + m.group(2));
        }
        assertTrue(excerpts > 0, "docs/getting-started.md shows the Spark example as an excerpt");
    }

    @Test
    void theCommandLinesAreTheTestedOnes() throws IOException {
        String doc = doc();
        for (String program : new String[] {"EchoServer", "EchoClient", "WriteReceiver", "WriteSender"}) {
            assertTrue(doc.contains(Checkout.RUN + program + " "), "docs/getting-started.md runs " + program
                    + " with: " + Checkout.RUN + program);
        }
        assertTrue(doc.contains(Checkout.RUN_ON_CLASS_PATH + "EchoServer "), Checkout.RUN_ON_CLASS_PATH);
    }

    private static String doc() throws IOException {
        return Files.readString(Checkout.root().resolve("docs/getting-started.md"));
    }

    /** The pom and every file under src, by their paths from the checkout's root. */
    private static TreeSet<String> projectFiles() throws IOException {
        TreeSet<String> files = new TreeSet<>();
        files.add("getting-started/pom.xml");
        try (Stream<Path> walk = Files.walk(Checkout.consumerProject().resolve("src"))) {
            walk.filter(Files::isRegularFile)
                    .forEach(p -> files.add(Checkout.root().relativize(p).toString()));
        }
        return files;
    }
}
