package dev.weft.backends.cache;

import dev.weft.Tensor;
import dev.weft.lowering.Lowering;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Which Weft compiled a cache entry: its version and, since a snapshot's version stays the same across rebuilds,
 * the identity of the code that lowers and optimizes modules (the {@code dsl}, {@code lowering} and
 * {@code backends} classes): for each, its jar's size and modification time, or for a class folder (a build tree,
 * tests) the name, size and modification time of every file in it. Any rebuild changes it, so an entry written by
 * other code is never read. Computed once per JVM.
 */
final class BuildIdentity {
    private BuildIdentity() {
    }

    private static final class Holder {
        static final String ID = compute();
    }

    /** Like {@code 0.1.0-SNAPSHOT+3f2a9c0d11e4b7a2}. */
    static String get() {
        return Holder.ID;
    }

    private static String compute() {
        String version = BuildIdentity.class.getPackage().getImplementationVersion();
        MessageDigest digest = sha256();
        for (Class<?> c : List.of(Tensor.class, Lowering.class, BuildIdentity.class)) {
            digest.update(codeOf(c).getBytes(StandardCharsets.UTF_8));
        }
        return (version == null ? "dev" : version) + "+"
                + HexFormat.of().formatHex(digest.digest()).substring(0, 16);
    }

    /** The size and time of the jar or class folder {@code c} was loaded from, or its location if unreadable. */
    private static String codeOf(Class<?> c) {
        CodeSource source = c.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return c.getName() + " has no code source";
        }
        try {
            Path p = Path.of(source.getLocation().toURI());
            if (!Files.isDirectory(p)) {
                return p.getFileName() + " " + Files.size(p) + " " + Files.getLastModifiedTime(p).toMillis() + "\n";
            }
            StringBuilder b = new StringBuilder();
            try (Stream<Path> files = Files.walk(p)) {
                for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                    b.append(p.relativize(f)).append(' ').append(Files.size(f)).append(' ')
                            .append(Files.getLastModifiedTime(f).toMillis()).append('\n');
                }
            }
            return b.toString();
        } catch (IOException | URISyntaxException | RuntimeException e) {
            return source.getLocation() + " unreadable";
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
