package dev.weft.io;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * NumPy's {@code .npz} archives: a zip of {@code .npy} files, one per named array, as {@code np.savez} writes them
 * (stored, uncompressed); {@link #load} also reads {@code np.savez_compressed}'s. Written whole or not at all.
 */
public final class Npz {
    private Npz() {
    }

    /**
     * Writes {@code arrays} to {@code file}, each under its name ({@code np.load(file)[name]}), in the map's order.
     *
     * @throws WeftException naming the caller's line: an empty or duplicate-making name, a traced tensor, or a file
     *                       that cannot be written
     */
    public static void save(Path file, Map<String, Tensor> arrays) {
        Args.notNull(file, Npz.class, "save", "file");
        Args.notNull(arrays, Npz.class, "save", "arrays");
        SourceLocation where = SourceLocation.capture();
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(buffer)) {
            for (Map.Entry<String, Tensor> e : arrays.entrySet()) {
                String name = e.getKey();
                if (name == null || name.isEmpty() || name.contains("/") || e.getValue() == null) {
                    throw new WeftException(where, "Npz.save: array name " + (name == null ? "null"
                            : "'" + name + "'") + (e.getValue() == null ? " has a null tensor"
                            : " is not a plain name (non-empty, no '/')"));
                }
                byte[] npy = Npy.bytes(e.getValue(), "Npz.save: array '" + name + "'", where);
                ZipEntry entry = new ZipEntry(name + ".npy");
                CRC32 crc = new CRC32();
                crc.update(npy);
                entry.setMethod(ZipEntry.STORED);
                entry.setSize(npy.length);
                entry.setCompressedSize(npy.length);
                entry.setCrc(crc.getValue());
                zip.putNextEntry(entry);
                zip.write(npy);
                zip.closeEntry();
            }
        } catch (IOException e) {
            throw new WeftException(where, "Npz.save: cannot write " + file + ": " + e.getMessage(), e);
        }
        try {
            Npy.writeAtomically(file, buffer.toByteArray());
        } catch (IOException e) {
            throw new WeftException(where, "Npz.save: cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * The arrays in {@code file}, by name, in the archive's order (entries not ending in {@code .npy} are skipped).
     *
     * @throws WeftException naming the caller's line, the file and the array: not a zip, a truncated or corrupt
     *                       entry, or one that is not a {@code .npy} array Weft has a dtype for
     */
    public static Map<String, Tensor> load(Path file) {
        Args.notNull(file, Npz.class, "load", "file");
        SourceLocation where = SourceLocation.capture();
        Map<String, Tensor> out = new LinkedHashMap<>();
        try (ZipFile zip = new ZipFile(file.toFile())) {
            long limit = Files.size(file);
            for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                ZipEntry entry = en.nextElement();
                if (entry.isDirectory() || !entry.getName().endsWith(".npy")) {
                    continue;
                }
                String name = entry.getName().substring(0, entry.getName().length() - 4);
                byte[] npy = read(zip, entry, limit, file, where);
                out.put(name, Npy.tensor(npy, file + " [" + name + "]", "Npz.load", where));
            }
        } catch (ZipException e) {
            throw new WeftException(where, "Npz.load: " + file + " is not a valid .npz (zip) file: " + e.getMessage(),
                    e);
        } catch (IOException e) {
            throw new WeftException(where, "Npz.load: cannot read " + file + ": " + e.getMessage(), e);
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * An entry's bytes, refusing one that inflates past {@code 1024 ×} the archive's size or 2 GiB (a zip bomb: its
     * declared size cannot be trusted).
     */
    private static byte[] read(ZipFile zip, ZipEntry entry, long archive, Path file, SourceLocation where)
            throws IOException {
        long cap = Math.min(Integer.MAX_VALUE - 16L, Math.max(1L << 20, archive * 1024));
        try (InputStream in = zip.getInputStream(entry)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] chunk = new byte[1 << 16];
            long total = 0;
            for (int r; (r = in.read(chunk)) > 0; ) {
                total += r;
                if (total > cap) {
                    throw new WeftException(where, "Npz.load: " + file + " [" + entry.getName() + "] inflates past "
                            + cap + " bytes; refused");
                }
                out.write(chunk, 0, r);
            }
            return out.toByteArray();
        }
    }
}
