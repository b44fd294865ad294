package dev.weft.lowering.ir;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Prints a {@link Module} as MLIR text: {@code func.func} in custom form, every other op in generic form
 * ({@code "stablehlo.add"(%0, %1) : (...) -> ...}) with its source location, so that upstream
 * {@code mlir-opt --allow-unregistered-dialect} parses it without the StableHLO dialect.
 */
public final class MlirPrinter {
    private final StringBuilder out = new StringBuilder();
    private final Map<Value, String> names = new IdentityHashMap<>();
    private int nextResult;
    private int nextArg;

    private MlirPrinter() {
    }

    public static String print(Module m) {
        MlirPrinter p = new MlirPrinter();
        p.out.append("module {\n");
        for (Func f : m.functions()) {
            p.function(f);
        }
        p.out.append("}\n");
        return p.out.toString();
    }

    private void function(Func f) {
        names.clear();
        nextResult = 0;
        nextArg = 0;
        out.append("  func.func ").append(f.name().equals("main") ? "" : "private ").append('@').append(f.name())
                .append('(');
        List<Value> args = f.body().arguments();
        for (int i = 0; i < args.size(); i++) {
            out.append(i == 0 ? "" : ", ").append(argName(args.get(i))).append(": ").append(args.get(i).type().mlir());
        }
        out.append(") -> (").append(f.resultTypes().stream().map(Type::mlir).collect(Collectors.joining(", ")))
                .append(") {\n");
        for (Op op : f.body().ops()) {
            op(op, "    ");
        }
        out.append("  }\n");
    }

    private void op(Op op, String indent) {
        out.append(indent);
        List<Value> results = op.results();
        if (results.size() == 1) {
            out.append(resultName(results.getFirst())).append(" = ");
        } else if (results.size() > 1) {
            String base = "%" + nextResult++;
            for (int i = 0; i < results.size(); i++) {
                names.put(results.get(i), base + "#" + i);
            }
            out.append(base).append(':').append(results.size()).append(" = ");
        }
        out.append('"').append(op.name()).append("\"(")
                .append(op.operands().stream().map(this::use).collect(Collectors.joining(", "))).append(')');
        if (!op.regions().isEmpty()) {
            out.append(" (");
            for (int r = 0; r < op.regions().size(); r++) {
                out.append(r == 0 ? "" : ", ").append("{\n");
                block(op.regions().get(r), indent + "  ");
                out.append(indent).append('}');
            }
            out.append(')');
        }
        if (!op.attributes().isEmpty()) {
            out.append(' ').append(new Attr.Dict(op.attributes()).mlir());
        }
        out.append(" : (").append(op.operands().stream().map(v -> v.type().mlir()).collect(Collectors.joining(", ")))
                .append(") -> ");
        if (results.size() == 1) {
            out.append(results.getFirst().type().mlir());
        } else {
            out.append('(').append(results.stream().map(v -> v.type().mlir()).collect(Collectors.joining(", ")))
                    .append(')');
        }
        if (!op.location().isUnknown()) {
            out.append(" loc(").append(Mlir.quote(op.location().file())).append(':').append(op.location().line())
                    .append(":0)");
        }
        out.append('\n');
    }

    private void block(Block b, String indent) {
        out.append(indent).append("^bb0(");
        List<Value> args = b.arguments();
        for (int i = 0; i < args.size(); i++) {
            out.append(i == 0 ? "" : ", ").append(argName(args.get(i))).append(": ").append(args.get(i).type().mlir());
        }
        out.append("):\n");
        for (Op op : b.ops()) {
            op(op, indent + "  ");
        }
    }

    private String argName(Value v) {
        String n = "%arg" + nextArg++;
        names.put(v, n);
        return n;
    }

    private String resultName(Value v) {
        String n = "%" + nextResult++;
        names.put(v, n);
        return n;
    }

    private String use(Value v) {
        String n = names.get(v);
        if (n == null) {
            throw new IllegalStateException("value used before its definition: " + v);
        }
        return n;
    }
}
