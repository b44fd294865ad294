package org.example;

/** A user-defined argument type, accepted through {@link TagArgument}; equal names share one executable. */
record Tag(String name) {
}
