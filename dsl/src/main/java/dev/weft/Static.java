package dev.weft;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a {@code double} or {@code float} parameter of a {@link Compile} method a compile-time constant: each value
 * gets a program of its own (JAX's {@code static_argnums}). Without it such a parameter is a traced scalar, one
 * program for every value. Other parameters are constants or tensors by their type, so it changes nothing there.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface Static {
}
