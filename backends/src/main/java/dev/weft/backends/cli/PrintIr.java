package dev.weft.backends.cli;

import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.lowering.Target;
import dev.weft.lowering.Targets;
import dev.weft.lowering.ir.Module;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bin/weft ir [--target cpu|gpu] [-cp PATH] CLASS#METHOD SPEC...}: prints the lowered module of a method
 * of CLASS (an example's bare name, or the user's class on the class path, see {@link UserClass}). Each SPEC
 * is a tensor ({@code f32[64,64]}), an integer, a decimal number, {@code true}/{@code false}, or {@code world}
 * for {@code Comm.world()}. The target's {@link Target#listing} follows the module: for {@code --target gpu} the PTX
 * of every kernel (generating it needs no GPU).
 */
public final class PrintIr {
    private PrintIr() {
    }

    public static void main(String[] args) {
        String target = CpuTarget.NAME;
        int i = 0;
        if (args.length > 1 && args[0].equals("--target")) {
            target = args[1];
            i = 2;
        }
        if (args.length <= i || !args[i].contains("#")) {
            usage();
        }
        try {
            Targets.named(target);
        } catch (WeftException e) {
            System.err.println("weft ir: " + e.getMessage());
            usage();
        }
        String[] ref = args[i].split("#", 2);
        try {
            Class<?> cls = UserClass.load(ref[0]);
            List<Object> specs = new ArrayList<>();
            for (int k = i + 1; k < args.length; k++) {
                specs.add(parse(args[k]));
            }
            Module lowered = (Module) Weft.lower(target, cls, ref[1], specs.toArray());
            System.out.print(Targets.named(lowered.target()).listing(lowered));
        } catch (IllegalArgumentException e) {
            System.err.println("weft ir: " + e.getMessage());
            System.exit(2);
        } catch (WeftException e) {
            System.err.println("weft ir: " + e.getMessage());
            System.exit(1);
        }
    }

    private static void usage() {
        System.err.println("usage: weft ir [--target cpu|gpu] [-cp PATH] CLASS#METHOD SPEC...");
        System.exit(2);
    }

    private static Object parse(String spec) {
        if (spec.contains("[")) {
            return TensorSpec.parse(spec);
        }
        if (!spec.matches("true|false|world|-?\\d+|-?\\d*\\.?\\d+([eE][-+]?\\d+)?")) {
            throw new IllegalArgumentException("cannot read the argument '" + spec + "': give a tensor like f32[64,64],"
                    + " an integer, a number, true, false or world");
        }
        if (spec.equals("true") || spec.equals("false")) {
            return Boolean.parseBoolean(spec);
        }
        if (spec.equals("world")) {
            return dev.weft.comm.Comm.world();
        }
        return spec.matches("-?\\d+") ? (Object) Integer.parseInt(spec) : (Object) Double.parseDouble(spec);
    }
}
