package io.zcnet.jmh.rx;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The command line of an rx program: {@code --name value} pairs, each name one the program declares
 * with its default. An unknown name or a missing value is an error, so a typo in a script fails the run
 * instead of silently measuring the default. Immutable.
 */
final class RunOptions {
    private final Map<String, String> values;

    private RunOptions(Map<String, String> values) {
        this.values = values;
    }

    /** Parses {@code args} against {@code defaults} (option name without its dashes, to default value). */
    static RunOptions parse(String[] args, Map<String, String> defaults) {
        Map<String, String> values = new HashMap<>(defaults);
        for (int i = 0; i < args.length; i += 2) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (!defaults.containsKey(name)) {
                throw new IllegalArgumentException("unknown option '" + args[i] + "'; the options are --"
                        + String.join(", --", new TreeMap<>(defaults).keySet()));
            }
            if (i + 1 == args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            values.put(name, args[i + 1]);
        }
        return new RunOptions(values);
    }

    String text(String name) {
        return values.get(name);
    }

    int integer(String name) {
        try {
            return Integer.parseInt(values.get(name));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " wants a whole number, not '" + values.get(name) + "'");
        }
    }

    /** The whole number {@code name} gives, which must lie in {@code min..max}. */
    int integer(String name, int min, int max) {
        int value = integer(name);
        if (value < min || value > max) {
            throw new IllegalArgumentException("--" + name + " wants " + min + ".." + max + ", not " + value);
        }
        return value;
    }

    /** {@code true} or {@code false}: anything else is an error, where Boolean.parseBoolean would read false. */
    boolean flag(String name) {
        return switch (values.get(name)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("--" + name + " wants true or false, not '" + values.get(name) + "'");
        };
    }
}
