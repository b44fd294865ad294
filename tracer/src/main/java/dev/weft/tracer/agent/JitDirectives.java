package dev.weft.tracer.agent;

import dev.weft.WeftException;
import dev.weft.spi.Setting;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Adds Weft's HotSpot compiler directives ({@code jit-directives.json} beside this class) to the JVM when the agent
 * is installed. They leave the JDK's class-file API to C1: it writes Weft's generated classes and the JDK's own
 * method-handle and downcall classes, so it is hot while a program is traced, lowered and compiled, and C2 then
 * compiled it during the program's first thousands of steps, on the cores the ranks spin on. They make a compiled
 * loop body's step inline its fusions' scalar loops, and keep generated fused loops from being inlined into any
 * other caller. The file says why and what each measured.
 *
 * <p>The JDK has no API for this; the directives go through the diagnostic command {@code Compiler.directives_add}
 * (what {@code jcmd} sends), called in-process, whose reply (not printed) is returned here, where
 * {@code -XX:CompilerDirectivesFile} would print a line on standard output. The agent opens the two internal
 * packages involved ({@code sun.management}, {@code com.sun.management.internal}) to its module: the class path's
 * unnamed module when the agent is on the class path, so the program's classes can reflect on them too. Where that
 * fails (a JVM other than HotSpot, a JDK that changed them), Weft runs
 * without the directives and {@code WEFT_DEBUG=1} says why; {@code -Dweft.jit.directives=false} skips them.
 */
final class JitDirectives {
    private static final String RESOURCE = "jit-directives.json";
    private static final String COMMAND_PACKAGE = "com.sun.management.internal";
    private static final String VM_PACKAGE = "sun.management";

    private JitDirectives() {
    }

    /** Adds the directives on a daemon thread of its own; the future holds the command's reply or failure. */
    static CompletableFuture<String> addInBackground(Instrumentation inst) {
        CompletableFuture<String> done = new CompletableFuture<>();
        String choice;
        try {
            choice = Setting.JIT_DIRECTIVES.choice();
        } catch (WeftException e) {
            // An agent that throws ends the JVM: the program runs, slower to start, and is told why.
            System.err.println("weft: " + e.getMessage() + "; running without the agent's compiler directives");
            done.completeExceptionally(e);
            return done;
        }
        if (choice.equals("false")) {
            done.complete("skipped: -Dweft.jit.directives=false");
            return done;
        }
        Thread.ofPlatform().daemon().name("weft-jit-directives").start(() -> {
            try {
                done.complete(add(inst));
            } catch (ReflectiveOperationException | IOException | RuntimeException | LinkageError e) {
                if (Setting.DEBUG.on()) {
                    System.err.println("weft: running without the agent's compiler directives: " + e);
                }
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    private static String add(Instrumentation inst) throws ReflectiveOperationException, IOException {
        Module self = JitDirectives.class.getModule();
        open(inst, "jdk.management", COMMAND_PACKAGE, self);
        open(inst, "java.management", VM_PACKAGE, self);
        // its initialisation loads the library that implements diagnostic commands
        Class.forName(COMMAND_PACKAGE + ".PlatformMBeanProviderImpl");
        Method vmManagement = Class.forName(VM_PACKAGE + ".ManagementFactoryHelper")
                .getDeclaredMethod("getVMManagement");
        vmManagement.setAccessible(true);
        Class<?> commands = Class.forName(COMMAND_PACKAGE + ".DiagnosticCommandImpl");
        Constructor<?> make = commands.getDeclaredConstructor(Class.forName(VM_PACKAGE + ".VMManagement"));
        make.setAccessible(true);
        Method execute = commands.getDeclaredMethod("executeDiagnosticCommand", String.class);
        execute.setAccessible(true);
        Path file = Files.createTempFile("weft-jit-directives", ".json");
        try (InputStream in = JitDirectives.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException(RESOURCE + " is missing from the agent's jar");
            }
            Files.write(file, in.readAllBytes());
            String reply = (String) execute.invoke(make.newInstance(vmManagement.invoke(null)),
                    "Compiler.directives_add " + file);
            if (!reply.contains("added")) {
                throw new IllegalStateException("Compiler.directives_add said: " + reply.strip());
            }
            return reply.strip();
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static void open(Instrumentation inst, String module, String pkg, Module to) {
        Optional<Module> m = ModuleLayer.boot().findModule(module);
        if (m.isEmpty()) {
            throw new IllegalStateException("the JVM has no module " + module);
        }
        inst.redefineModule(m.get(), Set.of(), Map.of(), Map.of(pkg, Set.of(to)), Set.of(), Map.of());
    }
}
