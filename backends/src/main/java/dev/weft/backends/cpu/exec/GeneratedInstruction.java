package dev.weft.backends.cpu.exec;

import static java.lang.constant.ConstantDescs.BSM_CLASS_DATA_AT;
import static java.lang.constant.ConstantDescs.CD_Object;
import static java.lang.constant.ConstantDescs.CD_void;
import static java.lang.constant.ConstantDescs.DEFAULT_NAME;
import static java.lang.constant.ConstantDescs.INIT_NAME;
import static java.lang.constant.ConstantDescs.MTD_void;

import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeBuilder;
import java.lang.constant.ClassDesc;
import java.lang.constant.DynamicConstantDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.function.Consumer;

/**
 * A hidden class implementing {@link Instruction} whose {@code execute(CpuFrame)} a generator writes, reading its
 * constants from class data ({@link #classData}): how the loop generators turn a loop into one method.
 */
final class GeneratedInstruction {
    /** The descriptor of {@link Instruction#execute}. */
    static final MethodTypeDesc EXECUTE = MethodTypeDesc.of(CD_void, desc(CpuFrame.class));

    private GeneratedInstruction() {
    }

    /** A private static method of a generated class, which its {@code execute} calls on {@link #self}. */
    record Helper(String name, MethodTypeDesc type, Consumer<CodeBuilder> code) {
    }

    /**
     * An instance of a new hidden class named {@code name} (in this package) whose {@code execute} is written by
     * {@code execute}, with {@code data} as its class data; {@code what} names it in a failure.
     */
    static Instruction define(String name, List<Object> data, Consumer<CodeBuilder> execute, String what) {
        return define(name, data, execute, List.of(), what);
    }

    /** {@link #define(String, List, Consumer, String)} with {@code helpers} as further methods. */
    static Instruction define(String name, List<Object> data, Consumer<CodeBuilder> execute, List<Helper> helpers,
                              String what) {
        byte[] bytes = ClassFile.of().build(self(name), cb -> {
            cb.withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC)
                    .withInterfaceSymbols(desc(Instruction.class))
                    .withMethodBody(INIT_NAME, MTD_void, ClassFile.ACC_PUBLIC, code -> code
                            .aload(0).invokespecial(CD_Object, INIT_NAME, MTD_void).return_())
                    .withMethodBody("execute", EXECUTE, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL, execute);
            for (Helper h : helpers) {
                cb.withMethodBody(h.name(), h.type(), ClassFile.ACC_PRIVATE | ClassFile.ACC_STATIC, h.code());
            }
        });
        try {
            MethodHandles.Lookup hidden = MethodHandles.lookup().defineHiddenClassWithClassData(bytes, data, true);
            return (Instruction) hidden.findConstructor(hidden.lookupClass(), MethodType.methodType(void.class))
                    .invoke();
        } catch (Throwable e) {
            throw new IllegalStateException("cannot define the class of " + what, e);
        }
    }

    /** The generated class named {@code name}, as its own code refers to it. */
    static ClassDesc self(String name) {
        return ClassDesc.of(Instruction.class.getPackageName(), name);
    }

    /** The constant at {@code index} of the class data, of {@code type}. */
    static DynamicConstantDesc<?> classData(int index, ClassDesc type) {
        return DynamicConstantDesc.ofNamed(BSM_CLASS_DATA_AT, DEFAULT_NAME, type, index);
    }

    static ClassDesc desc(Class<?> c) {
        return c.describeConstable().orElseThrow();
    }
}
