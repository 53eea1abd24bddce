package dev.consistencykit.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteOneModel;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.domain.properties.HasOwner;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

/**
 * The module graph and the {@code internal} rule, checked on compiled classes (every reference counts, qualified
 * names and reflection-free calls included, not only import lines): a star on {@code core}; patterns never depend on
 * each other, on the testkit, the examples or the CLI; only the CLI depends on the examples, nothing on the CLI; nothing outside a module uses its {@code internal} package; the
 * testkit has no test framework outside its JUnit 5 module; library code never prints to standard output.
 */
class ArchitectureTest {

    private static final List<String> PATTERNS = List.of("syncflag", "jobqueue", "twophase", "logreconciliation",
            "versioning");
    private static final JavaClasses MAIN = ProjectClasses.MAIN;

    static Stream<String> patterns() {
        return PATTERNS.stream();
    }

    private static String pkg(String module) {
        return "dev.consistencykit." + module + "..";
    }

    @Test
    void shouldHaveImportedEveryModule() {
        for (String module : Stream.concat(Stream.of("core", "embedded", "testkit", "micrometer", "spring", "examples",
                "cli"),
                PATTERNS.stream())
                .toList()) {
            org.assertj.core.api.Assertions.assertThat(MAIN.stream().anyMatch(c -> c.getPackageName()
                    .startsWith("dev.consistencykit." + module))).as(module).isTrue();
        }
    }

    @Test
    void shouldKeepCoreFreeOfEveryOtherModule() {
        noClasses().that().resideInAPackage(pkg("core"))
                .should().dependOnClassesThat().resideInAnyPackage(Stream.concat(Stream.of("testkit", "micrometer",
                        "examples", "cli"), PATTERNS.stream()).map(ArchitectureTest::pkg).toArray(String[]::new))
                .check(MAIN);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("patterns")
    void shouldLetAPatternDependOnCoreOnly(String pattern) {
        String[] others = Stream.concat(Stream.of("testkit", "micrometer", "examples", "cli"),
                PATTERNS.stream().filter(p -> !p.equals(pattern))).map(ArchitectureTest::pkg).toArray(String[]::new);
        noClasses().that().resideInAPackage(pkg(pattern))
                .should().dependOnClassesThat().resideInAnyPackage(others)
                .orShould().dependOnClassesThat().resideInAPackage("de.bwaldvogel..")
                .check(MAIN);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("patterns")
    void shouldKeepAPatternsInternalsToItself(String pattern) {
        noClasses().that().resideOutsideOfPackage(pkg(pattern))
                .should().dependOnClassesThat().resideInAPackage("dev.consistencykit." + pattern + ".internal..")
                .check(MAIN);
    }

    /**
     * An engine is parts that hold each other, created by one constructor and calling each other by name: nothing in
     * an {@code internal} package is abstract or extends another class of the project, and every class there is
     * final (records, enums and interfaces are final or have no state to inherit).
     */
    @Test
    void shouldComposeInternalPartsInsteadOfStackingThem() {
        noClasses().that().resideInAPackage("dev.consistencykit..internal..").and().areNotInterfaces()
                .should().haveModifier(JavaModifier.ABSTRACT)
                .because("an engine's parts compose; a chain of abstract layers hides which part does what")
                .check(MAIN);
        classes().that().resideInAPackage("dev.consistencykit..internal..")
                .should(new ArchCondition<JavaClass>("extend no class of the project") {
                    @Override
                    public void check(JavaClass item, ConditionEvents events) {
                        item.getRawSuperclass().filter(s -> s.getPackageName().startsWith("dev.consistencykit"))
                                .ifPresent(s -> events.add(SimpleConditionEvent.violated(item, item.getName()
                                        + " extends " + s.getName())));
                    }
                })
                .check(MAIN);
        classes().that().resideInAPackage("dev.consistencykit..internal..").and().areNotInterfaces()
                .and().areNotAnonymousClasses()
                .should().haveModifier(JavaModifier.FINAL)
                .because("a part is final: what varies is a part it holds, not a subclass")
                .check(MAIN);
    }

    /**
     * A feature of the job queue is a part reached through the hooks ({@code JobHook}): the parts that move jobs tell
     * {@code JobHooks}, and only {@code JobParts}, which lists the hooks once, names the keys' lines or the notices.
     * Adding a feature is then its part and a line there, not an edit in every part that moves a job.
     */
    @Test
    void shouldReachTheJobQueuesFeaturesThroughItsHooksAlone() {
        String internal = "dev.consistencykit.jobqueue.internal.";
        noClasses().that().resideInAPackage("dev.consistencykit.jobqueue..")
                .and().doNotHaveFullyQualifiedName(internal + "JobParts")
                .and().doNotHaveFullyQualifiedName(internal + "JobLines")
                .and().doNotHaveFullyQualifiedName(internal + "JobNotices")
                .should().dependOnClassesThat().haveFullyQualifiedName(internal + "JobLines")
                .because("a part that moves jobs tells the hooks; the lines act on what they are told")
                .check(MAIN);
    }

    @Test
    void shouldKeepTheInternalsOfCoreAndTestkitToThemselves() {
        noClasses().that().resideOutsideOfPackage(pkg("testkit"))
                .should().dependOnClassesThat().resideInAPackage("dev.consistencykit.testkit.internal..")
                .check(MAIN);
        noClasses().that().resideOutsideOfPackage(pkg("embedded"))
                .should().dependOnClassesThat().resideInAPackage("dev.consistencykit.embedded.internal..")
                .check(MAIN);
    }

    @Test
    void shouldKeepSpringInItsOwnModule() {
        noClasses().that().resideOutsideOfPackage(pkg("spring"))
                .should().dependOnClassesThat().resideInAPackage("org.springframework..")
                .because("an application without Spring runs every pattern without it")
                .check(MAIN);
    }

    @Test
    void shouldKeepTheEmbeddedServerFreeOfEveryOtherModule() {
        classes().that().resideInAPackage(pkg("embedded"))
                .should().onlyDependOnClassesThat().resideInAnyPackage(pkg("embedded"), "java..", "de.bwaldvogel..",
                        "io.netty..", "org.slf4j..")
                .because("core's own tests run on it, and core's tests cannot depend on a module that needs core")
                .check(MAIN);
    }

    @Test
    void shouldKeepTestFrameworksOutOfTheTestkitsRuntime() {
        noClasses().that().resideInAPackage(pkg("testkit")).and().resideOutsideOfPackage(pkg("testkit.junit5"))
                .should().dependOnClassesThat().resideInAnyPackage("org.junit..", "org.assertj..", "org.opentest4j..")
                .check(MAIN);
        noClasses().that().resideInAnyPackage(pkg("examples"), pkg("cli"))
                .should().dependOnClassesThat().resideInAnyPackage("org.junit..", "org.assertj..", "org.opentest4j..",
                        pkg("testkit.junit5"))
                .check(MAIN);
    }

    @Test
    void shouldNeverPrintFromLibraryCode() {
        String[] library = Stream.concat(Stream.of("core", "micrometer"), PATTERNS.stream())
                .map(ArchitectureTest::pkg).toArray(String[]::new);
        noClasses().that().resideInAnyPackage(library)
                .should().accessField(System.class, "out").orShould().accessField(System.class, "err")
                .orShould().callMethod(Throwable.class, "printStackTrace")
                .check(MAIN);
    }

    /**
     * The real engine can turn a delete of one document into a no-op when an update of it commits meanwhile
     * (docs/servers.md, "Deletes of one document"); every delete of one known document goes through
     * {@code ConditionalUpdates.delete}, which a concurrent update cannot defeat.
     */
    @Test
    void shouldDeleteOneDocumentOnlyByTheDeleteAConcurrentUpdateCannotDefeat() {
        noClasses().that().resideOutsideOfPackages(pkg("testkit"), pkg("embedded"))
                .should().callMethodWhere(JavaCall.Predicates.target(HasOwner.Predicates.With.<JavaClass>owner(
                        HasName.Predicates.name(MongoCollection.class.getName())))
                        .and(JavaCall.Predicates.target(HasName.Predicates.nameMatching("deleteOne|findOneAndDelete"))))
                .orShould().callConstructorWhere(JavaCall.Predicates.target(HasOwner.Predicates.With.<JavaClass>owner(
                        HasName.Predicates.name(DeleteOneModel.class.getName()))))
                .because("the real engine's deleteOne and findOneAndDelete delete nothing when an update of the"
                        + " document they found commits before their delete")
                .check(MAIN);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("patterns")
    void shouldBuildEveryConfigurationThroughItsBuilderOnly(String pattern) {
        classes().that().resideInAPackage("dev.consistencykit." + pattern).and().haveSimpleNameEndingWith("Config")
                .should(new ArchCondition<JavaClass>(
                        "not be a record and have no public constructor") {
                    @Override
                    public void check(JavaClass item, ConditionEvents events) {
                        boolean publicConstructor = item.getConstructors().stream().anyMatch(c -> c.getModifiers()
                                .contains(JavaModifier.PUBLIC));
                        boolean record = item.reflect().isRecord();
                        if (publicConstructor || record) {
                            events.add(SimpleConditionEvent.violated(item,
                                    item.getName() + (record ? " is a record" : " has a public constructor")));
                        }
                    }
                })
                .because("a public constructor or record of settings breaks every caller when a setting is added")
                .check(MAIN);
    }

    @Test
    void shouldLetNothingButTheCliDependOnTheExamples() {
        noClasses().that().resideOutsideOfPackages(pkg("examples"), pkg("cli"))
                .should().dependOnClassesThat().resideInAPackage(pkg("examples"))
                .check(MAIN);
        noClasses().that().resideOutsideOfPackage(pkg("cli"))
                .should().dependOnClassesThat().resideInAPackage(pkg("cli"))
                .check(MAIN);
    }
}
