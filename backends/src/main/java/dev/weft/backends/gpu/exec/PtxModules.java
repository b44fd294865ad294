package dev.weft.backends.gpu.exec;

import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jcuda.Pointer;
import jcuda.driver.CUjit_option;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.driver.JITOptions;

/**
 * Loads generated PTX into the current context through {@code cuModuleLoadDataEx} (JCuda's
 * {@code cuModuleLoadDataJIT}, which returns the error code instead of throwing and copies the logs back) with the
 * JIT's error and info log buffers, so a module the driver rejects fails with the JIT's own diagnostics and the
 * names of the kernels they point at, rather than a bare {@code CUDA_ERROR_INVALID_PTX}.
 */
public final class PtxModules {
    private static final int LOG_BYTES = 16 * 1024;
    private static final Pattern LINE = Pattern.compile("line (\\d+)");

    private PtxModules() {
    }

    /** Loads {@code ptx}; fails with a {@link WeftException} holding the JIT's log when the driver rejects it. */
    public static CUmodule load(String ptx) {
        byte[] bytes = ptx.getBytes(StandardCharsets.UTF_8);
        JITOptions options = logOptions();
        CUmodule module = new CUmodule();
        int result = JCudaDriver.cuModuleLoadDataJIT(module, Pointer.to(Arrays.copyOf(bytes, bytes.length + 1)),
                options);
        if (result != CUresult.CUDA_SUCCESS) {
            throw new WeftException(SourceLocation.UNKNOWN, failure(CUresult.stringFor(result), ptx,
                    text(options.getBytes(CUjit_option.CU_JIT_ERROR_LOG_BUFFER)),
                    text(options.getBytes(CUjit_option.CU_JIT_INFO_LOG_BUFFER))));
        }
        return module;
    }

    /** Error and info log buffers for the JIT, each with its size (the driver writes at most that many bytes). */
    static JITOptions logOptions() {
        JITOptions options = new JITOptions();
        options.putBytes(CUjit_option.CU_JIT_ERROR_LOG_BUFFER, new byte[LOG_BYTES]);
        options.putInt(CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, LOG_BYTES);
        options.putBytes(CUjit_option.CU_JIT_INFO_LOG_BUFFER, new byte[LOG_BYTES]);
        options.putInt(CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, LOG_BYTES);
        return options;
    }

    /**
     * The message for a module the driver refused with {@code error}: the entries the error log's
     * {@code line N} references fall in, then the error and info logs.
     */
    static String failure(String error, String ptx, String errorLog, String infoLog) {
        StringBuilder b = new StringBuilder("the CUDA driver cannot load the generated PTX (").append(error)
                .append(')');
        List<String> kernels = kernelsAt(ptx, errorLog);
        if (!kernels.isEmpty()) {
            b.append(" in kernel ").append(String.join(", ", kernels));
        }
        b.append(": ").append(errorLog.isBlank() ? "no JIT error log" : errorLog.strip());
        if (!infoLog.isBlank()) {
            b.append("\nJIT info log: ").append(infoLog.strip());
        }
        return b.toString();
    }

    /** The names of the {@code .entry}s holding the lines ({@code line N}, 1-based) that {@code log} cites. */
    static List<String> kernelsAt(String ptx, String log) {
        String[] lines = ptx.split("\n", -1);
        List<String> entryAt = new ArrayList<>(lines.length);
        String current = null;
        for (String line : lines) {
            if (line.startsWith(".visible .entry ")) {
                current = line.substring(".visible .entry ".length()).replaceFirst("\\(.*", "");
            }
            entryAt.add(current);
        }
        Set<String> names = new LinkedHashSet<>();
        Matcher m = LINE.matcher(log);
        while (m.find()) {
            int n = Integer.parseInt(m.group(1));
            if (n >= 1 && n <= lines.length && entryAt.get(n - 1) != null) {
                names.add(entryAt.get(n - 1));
            }
        }
        return List.copyOf(names);
    }

    private static String text(byte[] log) {
        int end = 0;
        while (end < log.length && log[end] != 0) {
            end++;
        }
        return new String(log, 0, end, StandardCharsets.UTF_8);
    }
}
