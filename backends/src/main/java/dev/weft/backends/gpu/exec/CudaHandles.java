package dev.weft.backends.gpu.exec;

import java.lang.reflect.Field;
import jcuda.NativePointerObject;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/**
 * Converts between JCuda's handle objects and the raw handles and device addresses that the FFM bindings (NCCL,
 * cuBLAS) pass as {@code long}s. JCuda keeps the native value in a private field and has no public way to read or
 * set it, so this does both through reflection. Raw values are only valid for objects without a byte offset
 * (handles, and pointers returned by {@code cuMemAlloc}).
 */
public final class CudaHandles {
    private static final Field NATIVE_POINTER;

    static {
        try {
            NATIVE_POINTER = NativePointerObject.class.getDeclaredField("nativePointer");
            NATIVE_POINTER.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CudaHandles() {
    }

    /** The native handle or device address inside {@code o}. */
    public static long raw(NativePointerObject o) {
        try {
            return NATIVE_POINTER.getLong(o);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The stream whose {@code CUstream} handle is {@code raw}. */
    public static CUstream stream(long raw) {
        return wrap(new CUstream(), raw);
    }

    /** The event whose {@code CUevent} handle is {@code raw}. */
    public static CUevent event(long raw) {
        return wrap(new CUevent(), raw);
    }

    /** Device address {@code address} as a JCuda pointer. */
    public static CUdeviceptr pointer(long address) {
        return wrap(new CUdeviceptr(), address);
    }

    private static <T extends NativePointerObject> T wrap(T empty, long raw) {
        try {
            NATIVE_POINTER.setLong(empty, raw);
            return empty;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
