package dev.weft.tracer.agent;

import dev.weft.Compile;
import dev.weft.spi.RankClasses;
import dev.weft.spi.SharedStatics;
import java.lang.classfile.Annotation;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.MethodModel;
import java.lang.classfile.MethodTransform;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.classfile.instruction.LineNumber;
import java.lang.classfile.attribute.RuntimeVisibleAnnotationsAttribute;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.lang.instrument.ClassFileTransformer;
import java.lang.reflect.AccessFlag;
import java.nio.charset.StandardCharsets;
import java.security.ProtectionDomain;

/**
 * Inserts the compile gate at the start of every {@code @Compile} method (not abstract, not native) of a class, with
 * the JDK's class-file API: {@code Object r = CompileGate.enter(Owner.class, "name" + descriptor, this or null,
 * new Object[] {arguments, boxed}); if (r != null) return r (cast or unboxed to the return type; nothing for void)}.
 * The owner and signature are constants, so a cached call does no reflection; no class shape changes, so already
 * loaded classes can be retransformed.
 *
 * <p>A class file whose bytes do not contain the annotation's descriptor {@code Ldev/weft/Compile;} (nearly every
 * class) is rejected by a byte search before anything is parsed: that check is all the agent costs per class.
 *
 * <p>In the user's classes that fake ranks share ({@link RankClasses#isSharedUserClass}), it also inserts
 * a call of {@link SharedStatics#written} with the value about to be written and the field's current one before each
 * static field write outside the static initialiser, at the write's line, so a field given another value by a
 * second fake rank fails there.
 */
final class CompileTransformer implements ClassFileTransformer {
    /** Built, not a literal: this class's own constant pool must not name the annotation's descriptor. */
    private static final String COMPILE = Compile.class.descriptorString();
    private static final byte[] COMPILE_BYTES = COMPILE.getBytes(StandardCharsets.US_ASCII);
    private static final ClassDesc GATE = ClassDesc.of("dev.weft.tracer.CompileGate");
    private static final ClassDesc SHARED_STATICS = ClassDesc.of("dev.weft.spi.SharedStatics");
    private static final MethodTypeDesc WRITTEN = MethodTypeDesc.of(ConstantDescs.CD_void, ConstantDescs.CD_Object,
            ConstantDescs.CD_Object, ConstantDescs.CD_String);
    private static final MethodTypeDesc ENTER = MethodTypeDesc.of(ConstantDescs.CD_Object, ConstantDescs.CD_Class,
            ConstantDescs.CD_String, ConstantDescs.CD_Object, ConstantDescs.CD_Object.arrayType());

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain domain,
                            byte[] bytes) {
        boolean watch = className != null
                && RankClasses.isSharedUserClass(loader, domain, className.replace('/', '.'));
        if (!watch && !mayDeclareCompile(bytes)) {
            return null;
        }
        try {
            return instrument(loader, bytes, watch);
        } catch (RuntimeException | LinkageError e) {
            System.err.println("weft: cannot " + (watch ? "watch the static fields or compile the @Compile methods"
                    : "compile the @Compile methods") + " of " + className + " (they run eagerly): " + e);
            return null;
        }
    }

    /** Whether the class file's constant pool may name the {@code @Compile} annotation (no false negatives). */
    static boolean mayDeclareCompile(byte[] bytes) {
        byte first = COMPILE_BYTES[0];
        outer:
        for (int i = 0, last = bytes.length - COMPILE_BYTES.length; i <= last; i++) {
            if (bytes[i] != first) {
                continue;
            }
            for (int j = 1; j < COMPILE_BYTES.length; j++) {
                if (bytes[i + j] != COMPILE_BYTES[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * The class with the gate in its {@code @Compile} methods and, when {@code watch}, {@link SharedStatics}'s
     * check before each static field write outside its static initialiser; {@code null} when nothing changes.
     */
    private static byte[] instrument(ClassLoader loader, byte[] bytes, boolean watch) {
        // Stack maps need the supertypes of the types they merge: read from the defining loader's class files
        // (which reach the JDK's through its parents) rather than by loading classes in the middle of a load.
        ClassHierarchyResolver resolver = ClassHierarchyResolver.ofResourceParsing(loader != null ? loader
                : ClassLoader.getSystemClassLoader()).orElse(ClassHierarchyResolver.defaultResolver()).cached();
        ClassFile cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver));
        ClassModel model = cf.parse(bytes);
        boolean any = false;
        for (MethodModel m : model.methods()) {
            any |= isGated(m) || (watch && writesStatics(m));
        }
        if (!any) {
            return null;
        }
        ClassDesc owner = model.thisClass().asSymbol();
        return cf.transformClass(model, (builder, element) -> {
            if (element instanceof MethodModel m && (isGated(m) || (watch && writesStatics(m)))) {
                CodeTransform code = isGated(m) ? new GateAtStart(owner, m) : CodeTransform.ACCEPT_ALL;
                if (watch && writesStatics(m)) {
                    code = code.andThen(WATCH_STATIC_WRITES);
                }
                builder.transformMethod(m, MethodTransform.transformingCode(code));
            } else {
                builder.with(element);
            }
        });
    }

    /** Whether {@code m} writes a static field outside the class's static initialiser. */
    private static boolean writesStatics(MethodModel m) {
        return !m.methodName().equalsString(ConstantDescs.CLASS_INIT_NAME) && m.code().stream()
                .flatMap(c -> c.elementStream())
                .anyMatch(e -> e instanceof FieldInstruction f && f.opcode() == Opcode.PUTSTATIC);
    }

    /**
     * Before each {@code putstatic}: {@code SharedStatics.written(value, Owner.field, "pkg.Owner.field")}, the value
     * about to be written and the field's current one boxed.
     */
    private static final CodeTransform WATCH_STATIC_WRITES = (code, element) -> {
        if (element instanceof FieldInstruction f && f.opcode() == Opcode.PUTSTATIC) {
            ClassDesc type = f.typeSymbol();
            TypeKind kind = TypeKind.from(type);
            if (kind.slotSize() == 2) {
                code.dup2();
            } else {
                code.dup();
            }
            box(code, type);
            code.getstatic(f.owner().asSymbol(), f.name().stringValue(), type);
            box(code, type);
            code.ldc(f.owner().asInternalName().replace('/', '.') + "." + f.name().stringValue())
                    .invokestatic(SHARED_STATICS, "written", WRITTEN);
        }
        code.with(element);
    };

    /**
     * The method's code with the gate in front, at the line of the method's first statement: a frame in the gate
     * (a compiled call's, under {@code CompileGate.enter}) then has a line, which {@code SourceLocation} reads from
     * the frame instead of parsing the class file at every capture (~30 µs each).
     */
    private record GateAtStart(ClassDesc owner, MethodModel method) implements CodeTransform {
        @Override
        public void atStart(CodeBuilder code) {
            method.code().flatMap(c -> c.elementStream().filter(e -> e instanceof LineNumber).findFirst())
                    .ifPresent(first -> code.lineNumber(((LineNumber) first).line()));
            gate(code, owner, method);
        }

        @Override
        public void accept(CodeBuilder code, CodeElement element) {
            code.with(element);
        }
    }

    private static boolean isGated(MethodModel m) {
        if (m.flags().has(AccessFlag.ABSTRACT) || m.flags().has(AccessFlag.NATIVE)) {
            return false;
        }
        for (var element : m) {
            if (element instanceof RuntimeVisibleAnnotationsAttribute annotations) {
                for (Annotation a : annotations.annotations()) {
                    if (a.className().equalsString(COMPILE)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Emits the gate: the call, then the early return of a non-null result. */
    private static void gate(CodeBuilder code, ClassDesc owner, MethodModel method) {
        MethodTypeDesc type = method.methodTypeSymbol();
        boolean isStatic = method.flags().has(AccessFlag.STATIC);
        code.ldc(owner)
                .ldc(method.methodName().stringValue() + method.methodType().stringValue());
        if (isStatic) {
            code.aconst_null();
        } else {
            code.aload(0);
        }
        code.loadConstant(type.parameterCount()).anewarray(ConstantDescs.CD_Object);
        int slot = isStatic ? 0 : 1;
        for (int i = 0; i < type.parameterCount(); i++) {
            TypeKind kind = TypeKind.from(type.parameterType(i));
            code.dup().loadConstant(i).loadLocal(kind, slot);
            box(code, type.parameterType(i));
            code.aastore();
            slot += kind.slotSize();
        }
        code.invokestatic(GATE, "enter", ENTER).dup();
        code.ifThen(Opcode.IFNONNULL, then -> returnResult(then, type.returnType()));
        code.pop();
    }

    private static void box(CodeBuilder code, ClassDesc type) {
        if (!type.isPrimitive()) {
            return;
        }
        ClassDesc wrapper = wrapper(type);
        code.invokestatic(wrapper, "valueOf", MethodTypeDesc.of(wrapper, type));
    }

    /** Returns the non-null result on the stack as {@code type}: cast, or unboxed for a primitive type. */
    private static void returnResult(CodeBuilder code, ClassDesc type) {
        TypeKind kind = TypeKind.from(type);
        if (kind == TypeKind.VOID) {
            code.pop().return_();
            return;
        }
        if (type.isPrimitive()) {
            ClassDesc wrapper = wrapper(type);
            code.checkcast(wrapper).invokevirtual(wrapper, type.displayName() + "Value", MethodTypeDesc.of(type));
        } else {
            code.checkcast(type);
        }
        code.return_(kind);
    }

    private static ClassDesc wrapper(ClassDesc primitive) {
        return switch (primitive.descriptorString()) {
            case "Z" -> ConstantDescs.CD_Boolean;
            case "B" -> ConstantDescs.CD_Byte;
            case "C" -> ConstantDescs.CD_Character;
            case "S" -> ConstantDescs.CD_Short;
            case "I" -> ConstantDescs.CD_Integer;
            case "J" -> ConstantDescs.CD_Long;
            case "F" -> ConstantDescs.CD_Float;
            case "D" -> ConstantDescs.CD_Double;
            default -> throw new IllegalArgumentException(primitive.descriptorString());
        };
    }
}
