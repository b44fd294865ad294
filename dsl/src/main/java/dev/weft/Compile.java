package dev.weft;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method whose calls are compiled.
 *
 * <p>The first call for a signature (argument shapes and dtypes, non-tensor arguments taken as compile-time
 * constants, the receiver's identity for instance methods) runs the body once with traced tensors, lowers the
 * recorded graph and caches the executable; later calls with the same signature run the executable and do not
 * run the body. Parameters may be {@link Tensor}s, trees of tensors, communicators, traced scalars or constants.
 * A {@code double} or {@code float} (boxed or not) is a traced scalar: one program serves every value (below);
 * {@link Static} makes it a constant. Other primitives, {@code String} and enums are constants. Return types may be
 * {@code Tensor}, a tree of tensors or {@code void}.
 *
 * <p>Traced scalars: Java cannot trace a {@code double}, so the body runs with the value itself and every constant
 * of the recorded program that equals it (converted to an f32 or f64 constant's dtype) becomes a read of the scalar.
 * A call with a value not seen before traces the body again (no compile) and reuses the program only if the new
 * trace is that same program with the new value in the same places; otherwise (the value steered host code, or
 * reached the program through host arithmetic such as {@code lr * 2}) it compiles a program of its own, and the
 * recompile warning names the line where the programs differ. So the result is always the body's for that
 * value; a value used only through Weft's operations ({@code x.mul(lr)}) costs one trace per new value.
 *
 * <p>Requires the Weft agent: {@code bin/weft} adds it, tests and IDEs call {@link Weft#install()}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Compile {
}
