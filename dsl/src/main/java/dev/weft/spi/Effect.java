package dev.weft.spi;

/**
 * The effect of a primitive. Pure primitives may be removed, merged and reordered; ordered ones (communication)
 * run exactly once each, in program order per communicator, whether or not their results are used.
 */
public enum Effect {
    PURE,
    ORDERED
}
