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
 * run the body. Parameters may be {@link Tensor}s, communicators, or constants (primitives, boxed primitives,
 * {@code String}, enums); return types may be {@code Tensor}, {@code Tensor[]}, {@code List<Tensor>} or
 * {@code void}. Requires the Weft agent: {@code bin/weft} adds it, tests and IDEs call {@link Weft#install()}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Compile {
}
