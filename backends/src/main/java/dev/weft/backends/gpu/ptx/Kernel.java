package dev.weft.backends.gpu.ptx;

/**
 * One generated {@code .entry}: its name, its PTX text, and how to launch it. Every parameter is a {@code .u64}
 * device pointer ({@code p0, p1, ...}); shapes are compiled in, so the parameter order is the only contract, stated
 * by the generator that made it.
 */
public record Kernel(String name, String ptx, int params, Launch launch) {
}
