package io.zcnet.gettingstarted;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import javax.xml.parsers.DocumentBuilderFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The BOM pins every library module and nothing else, at the reactor's version, and getting-started
 * imports that version. A library module is one with main sources that it installs: the programs (examples,
 * jmh) set {@code maven.install.skip}. Not the module descriptor: spark has none, since Spark's jars name no
 * module and their file names make no valid automatic one. A new library fails here until its line is in
 * bom/pom.xml.
 */
class BomTest {

    @Test
    void bomListsExactlyTheLibraryModules() throws Exception {
        TreeSet<String> libraries = new TreeSet<>();
        for (String module : childTexts(pom(Checkout.root()), "modules", "module")) {
            Path directory = Checkout.root().resolve(module);
            if (Files.isDirectory(directory.resolve("src/main/java")) && !skipsInstall(pom(directory))) {
                libraries.add(module);
            }
        }
        TreeSet<String> pinned = new TreeSet<>();
        Element bom = pom(Checkout.root().resolve("bom"));
        Element managed = child(child(bom, "dependencyManagement"), "dependencies");
        for (Element dependency : children(managed, "dependency")) {
            pinned.add(text(dependency, "artifactId"));
        }
        assertEquals(libraries, pinned, "bom/pom.xml against the reactor's modules with a module-info.java");
        assertEquals(Checkout.version(), text(bom, "version"), "the BOM's version moves with the parent's");
    }

    @Test
    void gettingStartedImportsThisVersion() throws Exception {
        Element project = pom(Checkout.consumerProject());
        assertEquals(Checkout.version(), text(child(project, "properties"), "zcnet.version"),
                "getting-started/pom.xml's zcnet.version");
    }

    private static boolean skipsInstall(Element pom) {
        List<Element> properties = children(pom, "properties");
        return !properties.isEmpty() && !children(properties.getFirst(), "maven.install.skip").isEmpty()
                && text(properties.getFirst(), "maven.install.skip").equals("true");
    }

    private static Element pom(Path directory) throws Exception {
        Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(directory.resolve("pom.xml").toFile());
        return document.getDocumentElement();
    }

    private static List<String> childTexts(Element parent, String list, String item) {
        List<String> texts = new ArrayList<>();
        for (Element e : children(child(parent, list), item)) {
            texts.add(e.getTextContent().trim());
        }
        return texts;
    }

    private static String text(Element parent, String name) {
        return child(parent, name).getTextContent().trim();
    }

    private static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        if (found.size() != 1) {
            throw new AssertionError("expected one <" + name + "> in <" + parent.getTagName() + ">, found " + found.size());
        }
        return found.getFirst();
    }

    /** Direct children only: a pom's nested elements reuse names (version, artifactId). */
    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i).getNodeType() == Node.ELEMENT_NODE && nodes.item(i).getNodeName().equals(name)) {
                found.add((Element) nodes.item(i));
            }
        }
        return found;
    }
}
