/** A user's class in the default package with a JDK 25 instance main (run by {@code UserClassTest}). */
class DefaultPackageMain {
    void main() {
        dev.weft.backends.cli.DefaultPackageMainCalls.called();
    }
}
