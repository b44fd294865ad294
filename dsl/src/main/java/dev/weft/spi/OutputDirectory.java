package dev.weft.spi;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A directory the user named for Weft's output files (flight recorder dumps, timelines, charts), and writing a file
 * there safely. Each file is first written to a new file of a random name in the directory, created exclusively (so
 * no existing file or symbolic link is ever opened), forced to disk, then renamed onto its name: the rename replaces
 * whatever had that name at once (a symbolic link itself, never its target), so a reader sees the old file or the
 * whole new one. A directory that other users may write to is refused unless it has the sticky bit, as
 * {@code /tmp} has: there they could swap the files Weft writes for their own.
 *
 * @param path     the directory, created with its parents when missing
 * @param chosenBy what named it, for errors: a setting ({@code WEFT_TIMELINE}) or a command's argument
 */
public record OutputDirectory(Path path, String chosenBy) {
    /** Group- and other-write bits, and the sticky bit, of a Unix mode. */
    private static final int OTHERS_WRITE = 0022;
    private static final int STICKY = 01000;
    private static final int NAME_TRIES = 100;

    /** What a file holds, written as UTF-8 text. */
    @FunctionalInterface
    public interface Content {
        void writeTo(Writer out) throws IOException;
    }

    /**
     * Writes {@code content} to the file {@code name} of this directory, replacing what had that name.
     *
     * @return the file
     * @throws IOException naming the file or the directory and why, when the directory cannot be made or is
     *                     refused, or the file cannot be written
     */
    public Path write(String name, Content content) throws IOException {
        return write(name, c -> {
            Writer out = new BufferedWriter(Channels.newWriter(c, StandardCharsets.UTF_8));
            content.writeTo(out);
            out.flush();
        }, true);
    }

    /**
     * Writes {@code bytes} to the file {@code name} of this directory as {@link #write(String, Content)} does, but
     * without forcing them to disk: for files whose reader detects a truncated or torn one (the compile cache's
     * entries carry a checksum), where a crash costs only the file.
     *
     * @return the file
     * @throws IOException as {@link #write(String, Content)}
     */
    public Path writeBytes(String name, byte[] bytes) throws IOException {
        return write(name, c -> {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                c.write(b);
            }
        }, false);
    }

    /** What fills a new file's channel. */
    private interface Filler {
        void fill(FileChannel c) throws IOException;
    }

    private Path write(String name, Filler filler, boolean force) throws IOException {
        prepare();
        Path file = path.resolve(name);
        Path temporary = null;
        try {
            FileChannel channel = null;
            for (int i = 0; channel == null; i++) {
                temporary = path.resolve("." + name + "." + Long.toHexString(ThreadLocalRandom.current().nextLong())
                        + ".tmp");
                try {
                    channel = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS);
                } catch (FileAlreadyExistsException taken) {
                    if (i == NAME_TRIES) {
                        throw taken;
                    }
                }
            }
            try (FileChannel c = channel) {
                filler.fill(c);
                if (force) {
                    c.force(true);
                }
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            temporary = null;
            return file;
        } catch (IOException e) {
            throw new IOException("cannot write " + file + ": " + reason(e), e);
        } finally {
            if (temporary != null) {
                Files.deleteIfExists(temporary);
            }
        }
    }

    /**
     * Makes the directory if missing, and refuses one that others may write to without the sticky bit.
     *
     * @throws IOException naming the directory and why
     */
    public void prepare() throws IOException {
        try {
            Files.createDirectories(path);
        } catch (FileAlreadyExistsException e) {
            throw new IOException(path + " (chosen by " + chosenBy + ") is not a directory", e);
        } catch (IOException e) {
            throw new IOException("cannot create the directory " + path + " (chosen by " + chosenBy + "): "
                    + reason(e), e);
        }
        int mode;
        try {
            mode = (Integer) Files.getAttribute(path, "unix:mode");
        } catch (UnsupportedOperationException | IllegalArgumentException noUnixModes) {
            return;
        }
        if ((mode & OTHERS_WRITE) != 0 && (mode & STICKY) == 0) {
            throw new IOException(String.format("refusing to write to %s (chosen by %s): other users may write to it"
                    + " (mode %03o) and it has no sticky bit, so they could replace Weft's files; choose a directory"
                    + " only you can write to", path, chosenBy, mode & 0777));
        }
    }

    /** Why {@code e} happened, in words: the system's reason when it gave one. */
    private static String reason(IOException e) {
        if (e instanceof FileSystemException f) {
            String kind = switch (f.getClass().getSimpleName()) {
                case "AccessDeniedException" -> "permission denied";
                case "NoSuchFileException" -> "no such file or directory";
                case "NotDirectoryException" -> "not a directory";
                case "FileAlreadyExistsException" -> "a file is in the way";
                default -> f.getClass().getSimpleName();
            };
            return f.getReason() != null ? f.getReason() : kind;
        }
        return e.getMessage();
    }
}
