package dev.weft.spi;

/**
 * A communicator named symbolically, as a lowered module names it: {@code world}, {@code world.split(1)#0},
 * {@code world.dup#2}. A rank's communicators have distinct names, derived in program order, so one program names
 * them alike on every run; an executable binds each reference to a live communicator ({@link CommBindings}).
 */
public record CommRef(String name) implements CommId {
    @Override
    public CommRef ref() {
        return this;
    }

    @Override
    public String toString() {
        return name;
    }
}
