package dev.consistencykit.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaModifier;

/**
 * What is public is what someone outside needs. Core's user package ({@code dev.consistencykit.core}) holds only what
 * an application names: an error it catches, a type a pattern's public API hands it or takes from it, or one that a
 * module other than the patterns uses; what only the patterns share lives in {@code core.spi}. A public class of an
 * {@code internal} package or of {@code core.spi} has a user outside its package.
 */
class PublicSurfaceTest {

    private static final Set<String> PATTERNS = Set.of("syncflag", "jobqueue", "twophase", "logreconciliation",
            "versioning");
    private static final String CORE = "dev.consistencykit.core";
    private static final JavaClasses MAIN = ProjectClasses.MAIN;

    private static String module(JavaClass c) {
        String rest = c.getPackageName().substring("dev.consistencykit.".length());
        int dot = rest.indexOf('.');
        return dot < 0 ? rest : rest.substring(0, dot);
    }

    private static boolean isPattern(JavaClass c) {
        return PATTERNS.contains(module(c));
    }

    private static boolean isPatternApi(JavaClass c) {
        return isPattern(c) && !c.getPackageName().contains(".internal") && c.getModifiers()
                .contains(JavaModifier.PUBLIC);
    }

    private static JavaClass top(JavaClass c) {
        JavaClass t = c;
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    /** Whether {@code type} appears in the public signature of a pattern's public type: supertype, parameter, result. */
    private static boolean inPatternApi(JavaClass type) {
        for (JavaClass api : MAIN) {
            if (!isPatternApi(api)) {
                continue;
            }
            if (api.getAllRawSuperclasses().contains(type) || api.getAllRawInterfaces().contains(type)) {
                return true;
            }
            for (JavaCodeUnit unit : api.getCodeUnits()) {
                if (!unit.getModifiers().contains(JavaModifier.PUBLIC)) {
                    continue;
                }
                if (unit.getRawReturnType().equals(type) || unit.getRawParameterTypes().contains(type)
                        || unit.getReturnType().getAllInvolvedRawTypes().contains(type)
                        || unit.getParameterTypes().stream().anyMatch(p -> p.getAllInvolvedRawTypes().contains(type))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Stream<JavaClass> usersOf(JavaClass type) {
        return type.getDirectDependenciesToSelf().stream().map(Dependency::getOriginClass).map(PublicSurfaceTest::top)
                .filter(c -> !c.equals(type));
    }

    private static boolean usedOutside(JavaClass type) {
        return usersOf(type).anyMatch(u -> !u.getPackageName().equals(type.getPackageName()));
    }

    /** Whether a public member of a type its package shares with the outside hands {@code type} out or takes it. */
    private static boolean inSignatureUsedOutside(JavaClass type) {
        for (JavaClass owner : MAIN) {
            if (owner.equals(type) || !owner.getPackageName().equals(type.getPackageName())
                    || !owner.getModifiers().contains(JavaModifier.PUBLIC) || !usedOutside(owner)) {
                continue;
            }
            for (JavaCodeUnit unit : owner.getCodeUnits()) {
                if (unit.getModifiers().contains(JavaModifier.PUBLIC) && (unit.getRawReturnType().equals(type)
                        || unit.getRawParameterTypes().contains(type))) {
                    return true;
                }
            }
        }
        return false;
    }

    @Test
    void shouldKeepInCoresUserPackageOnlyWhatAnApplicationNames() {
        List<String> toolkit = new ArrayList<>();
        for (JavaClass type : MAIN) {
            if (!type.getPackageName().equals(CORE) || !type.getModifiers().contains(JavaModifier.PUBLIC)
                    || type.getEnclosingClass().isPresent() || type.getSimpleName().equals("package-info")) {
                continue;
            }
            boolean error = type.isAssignableTo(CORE + ".ConsistencyException");
            boolean usedElsewhere = usersOf(type).anyMatch(u -> !u.getPackageName().startsWith(CORE)
                    && !isPattern(u));
            if (!error && !usedElsewhere && !inPatternApi(type)) {
                toolkit.add(type.getSimpleName());
            }
        }
        assertThat(toolkit).as("types of %s used only inside the patterns: they belong in %s.spi", CORE, CORE)
                .isEmpty();
    }

    @Test
    void shouldMakeNothingPublicThatOnlyItsOwnPackageUses() {
        List<String> needless = new ArrayList<>();
        for (JavaClass type : MAIN) {
            boolean shared = type.getPackageName().contains(".internal") || type.getPackageName().equals(CORE + ".spi");
            if (!shared || !type.getModifiers().contains(JavaModifier.PUBLIC) || type.getEnclosingClass().isPresent()
                    || type.getSimpleName().equals("package-info")) {
                continue;
            }
            if (!usedOutside(type) && !inSignatureUsedOutside(type)) {
                needless.add(type.getName());
            }
        }
        assertThat(needless).as("public types no class outside their package uses").isEmpty();
    }

    /**
     * Two doors, two audiences (db-scheduler's {@code SchedulerClient} and {@code Scheduler}): what an operator calls
     * on a job queue is {@code JobQueueOperator}, and none of it is on {@code JobQueue}, what an application calls.
     */
    @Test
    void shouldKeepWhatAnOperatorCallsOffTheApplicationsDoor() {
        JavaClass application = MAIN.get("dev.consistencykit.jobqueue.JobQueue");
        JavaClass operator = MAIN.get("dev.consistencykit.jobqueue.JobQueueOperator");
        Set<String> operators = publicMethodNames(operator);
        assertThat(operators).contains("replayDead", "cancel", "pauseSchedule", "backlog", "jobs");
        List<String> onBoth = new ArrayList<>(publicMethodNames(application));
        onBoth.retainAll(operators);
        assertThat(onBoth).as("an operator's calls on the application's door").isEmpty();
    }

    private static Set<String> publicMethodNames(JavaClass type) {
        Set<String> names = new TreeSet<>();
        type.getMethods().stream().filter(m -> m.getModifiers().contains(JavaModifier.PUBLIC))
                .forEach(m -> names.add(m.getName()));
        return names;
    }
}
