package dev.weft.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * No import circles between Weft's packages, across every module (this one is built last, so all their classes are
 * there): the JDK's {@code jdeps} lists which package uses which, and the strongly connected components of that
 * graph are the circles. Maven already forbids arrows from one module up to another.
 */
class PackageCyclesTest {
    private static final List<String> MODULES =
            List.of("dsl", "testing", "tracer", "lowering", "backends", "examples", "bench");
    private static final Pattern EDGE = Pattern.compile("^\\s+(dev\\.weft[\\w.]*)\\s+->\\s+(dev\\.weft[\\w.]*)\\s");

    /**
     * The one circle left: the public API package and the core it is built on (the interpreters take and return
     * {@code Tensor}, whose methods bind primitives). Untangling it means a core value type below {@code Tensor};
     * until then it may shrink, never grow, and no other circle may appear.
     */
    private static final Set<String> API_CORE = Set.of("dev.weft", "dev.weft.ad", "dev.weft.batching",
            "dev.weft.comm", "dev.weft.graph", "dev.weft.prim", "dev.weft.spi");

    @Test
    void theOnlyCircleIsTheKnownApiCore() {
        List<Set<String>> circles = circles(packageGraph());
        assertThat(circles).allSatisfy(c -> assertThat(API_CORE).containsAll(c));
        assertThat(circles).hasSizeLessThanOrEqualTo(1);
    }

    @Test
    void findsACircle() {
        Map<String, Set<String>> g = new TreeMap<>();
        g.put("a", new TreeSet<>(List.of("b")));
        g.put("b", new TreeSet<>(List.of("c")));
        g.put("c", new TreeSet<>(List.of("a", "d")));
        g.put("d", new TreeSet<>());
        assertThat(circles(g)).containsExactly(Set.of("a", "b", "c"));
    }

    private static Map<String, Set<String>> packageGraph() {
        Path root = Path.of("").toAbsolutePath().getParent();
        List<String> dirs = MODULES.stream().map(m -> root.resolve(m).resolve("target/classes"))
                .filter(Files::isDirectory).map(Path::toString).toList();
        assertThat(dirs).hasSize(MODULES.size());
        List<String> args = new ArrayList<>(List.of("-verbose:package", "-filter:none", "--multi-release",
                Integer.toString(Runtime.version().feature()), "-cp", String.join(java.io.File.pathSeparator, dirs)));
        args.addAll(dirs);
        StringWriter out = new StringWriter();
        int rc = ToolProvider.findFirst("jdeps").orElseThrow()
                .run(new PrintWriter(out), new PrintWriter(new StringWriter()), args.toArray(String[]::new));
        assertThat(rc).isZero();
        Map<String, Set<String>> g = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (m.find() && !m.group(1).equals(m.group(2))) {
                g.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
                g.computeIfAbsent(m.group(2), k -> new TreeSet<>());
            }
        }
        assertThat(g).containsKeys("dev.weft", "dev.weft.lowering.ir", "dev.weft.backends.cpu.exec");
        return g;
    }

    /** The strongly connected components of more than one node (Tarjan's algorithm). */
    private static List<Set<String>> circles(Map<String, Set<String>> g) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<Set<String>> out = new ArrayList<>();
        for (String v : g.keySet()) {
            if (!index.containsKey(v)) {
                connect(v, g, index, low, stack, out);
            }
        }
        return out;
    }

    private static void connect(String v, Map<String, Set<String>> g, Map<String, Integer> index,
            Map<String, Integer> low, Deque<String> stack, List<Set<String>> out) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        for (String w : g.get(v)) {
            if (!index.containsKey(w)) {
                connect(w, g, index, low, stack, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                out.add(component);
            }
        }
    }
}
