package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks that every integer immediate in a PTX text fits the width its instruction reads it at. {@code ptxas}
 * accepts {@code mul.wide.u32 %rd1, %r1, 4294967296} and silently keeps the low 32 bits, so an index computed
 * from a large size must be checked here.
 */
final class Immediates {
    private static final Pattern INSTRUCTION = Pattern.compile("^\\s+(?:@!?%p\\d+\\s+)?([a-z][\\w.]*)\\s+(.*);$");
    private static final Pattern TYPE = Pattern.compile("\\.([subf])(8|16|32|64)\\b");
    private static final Pattern INTEGER = Pattern.compile("(?<![\\w%.])(-?\\d+)(?![\\w.])");

    private Immediates() {
    }

    /** Fails naming the line when an integer immediate of an instruction is outside its operands' width. */
    static void assertFit(String ptx) {
        for (String line : ptx.split("\n")) {
            Matcher ins = INSTRUCTION.matcher(line);
            if (!ins.matches() || ins.group(1).startsWith("cvt") || ins.group(1).startsWith("ld.")
                    || ins.group(1).startsWith("st.")) {
                continue;
            }
            Matcher type = TYPE.matcher(ins.group(1));
            int bits = 64;
            boolean found = false;
            while (type.find()) {
                bits = Integer.parseInt(type.group(2));
                found = true;
                if (ins.group(1).contains(".wide.")) {
                    break;
                }
            }
            if (!found) {
                continue;
            }
            String operands = ins.group(2).replaceAll("\\[[^]]*]", "");
            Matcher imm = INTEGER.matcher(operands);
            while (imm.find()) {
                long v = Long.parseLong(imm.group(1));
                boolean fits = bits == 64 || (v >= -(1L << (bits - 1)) && v < (1L << bits));
                assertThat(fits).as("immediate %d does not fit %d bits in: %s", v, bits, line.strip()).isTrue();
            }
        }
    }
}
