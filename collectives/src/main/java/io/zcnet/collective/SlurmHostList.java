package io.zcnet.collective;

/**
 * Slurm's compressed host lists ({@code SLURM_STEP_NODELIST}, {@code SLURM_JOB_NODELIST}), as
 * {@code scontrol show hostnames} expands them: names separated by commas, each with any number of
 * bracketed groups of numbers and ranges, {@code node[01-04,07],gpu1} for node01, node02, node03, node04,
 * node07 and gpu1. A range keeps the zero padding of its first number. Only the first host is ever needed
 * (where rank 0 of a step runs), but the whole list is checked, so a garbled variable is an error rather
 * than a wrong host.
 */
final class SlurmHostList {
    private SlurmHostList() {
    }

    /**
     * {@return the first host of {@code list}}
     *
     * @param variable the variable the list came from, for the error
     * @param list     a compressed host list
     * @throws IllegalArgumentException if {@code list} is empty or not of that syntax (unbalanced or nested
     *                                  brackets, an empty name or group, a range that is not two numbers
     *                                  low to high), naming {@code variable}
     */
    static String first(String variable, String list) {
        StringBuilder first = new StringBuilder();
        boolean inFirst = true;
        boolean nameEmpty = true;
        int i = 0;
        while (i < list.length()) {
            char c = list.charAt(i);
            if (c == ',') {
                if (nameEmpty) {
                    throw malformed(variable, list, "an empty host name at offset " + i);
                }
                inFirst = false;
                nameEmpty = true;
                i++;
            } else if (c == '[') {
                int close = list.indexOf(']', i);
                if (close < 0) {
                    throw malformed(variable, list, "'[' at offset " + i + " is never closed");
                }
                String lowest = group(variable, list, list.substring(i + 1, close));
                if (inFirst) {
                    first.append(lowest);
                }
                nameEmpty = false;
                i = close + 1;
            } else if (c == ']' || Character.isWhitespace(c)) {
                throw malformed(variable, list, "'" + c + "' at offset " + i);
            } else {
                if (inFirst) {
                    first.append(c);
                }
                nameEmpty = false;
                i++;
            }
        }
        if (nameEmpty) {
            throw malformed(variable, list, list.isEmpty() ? "it is empty" : "it ends with an empty host name");
        }
        return first.toString();
    }

    /** Checks one bracketed group ({@code 01-04,07}) and returns its first number as written. */
    private static String group(String variable, String list, String group) {
        if (group.isEmpty() || group.indexOf('[') >= 0) {
            throw malformed(variable, list, "a bracket holds '" + group + "', not numbers and ranges");
        }
        String lowest = null;
        for (String item : group.split(",", -1)) {
            int dash = item.indexOf('-');
            String low = dash < 0 ? item : item.substring(0, dash);
            String high = dash < 0 ? item : item.substring(dash + 1);
            if (!isNumber(low) || !isNumber(high) || Long.parseLong(low) > Long.parseLong(high)) {
                throw malformed(variable, list, "'" + item + "' is neither a number nor a range low-high");
            }
            if (lowest == null) {
                lowest = low;
            }
        }
        return lowest;
    }

    private static boolean isNumber(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    private static IllegalArgumentException malformed(String variable, String list, String why) {
        return new IllegalArgumentException(variable + "='" + list + "' is not a Slurm host list: " + why);
    }
}
