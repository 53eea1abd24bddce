package dev.consistencykit.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

/**
 * Inside a module, parts that say what they need. A pattern's collections have one owner, its {@code …Store}, which
 * holds no clock, listener or counters, so that a part taking the store takes only the store; nothing in an
 * {@code internal} package is a bag every part receives ({@code …Fields}, {@code …Context}) or a layer that forwards
 * ({@code …Engine}). And no class of a module depends on itself through others: a class and its nested classes count
 * as one.
 */
class PartsTest {

    private static final JavaClasses MAIN = ProjectClasses.MAIN;
    private static final String PATTERN_INTERNALS = "dev.consistencykit.(syncflag|jobqueue|twophase|"
            + "logreconciliation|versioning).internal";

    @Test
    void shouldLetOnlyTheStoreOwnAPatternsCollections() {
        noClasses().that().resideInAPackage("dev.consistencykit..internal..")
                .and().haveSimpleNameNotEndingWith("Store")
                .should(holdAFieldOf(MongoCollection.class, MongoDatabase.class))
                .because("a pattern's collections have one owner, its store, which offers the writes by name")
                .check(MAIN);
    }

    @Test
    void shouldKeepClocksListenersAndCountersOutOfTheStore() {
        noClasses().that().resideInAPackage("dev.consistencykit..internal..").and().haveSimpleNameEndingWith("Store")
                .should(holdAFieldOf(java.time.Clock.class, dev.consistencykit.core.ServerClock.class,
                        LongAdder.class, AtomicLong.class))
                .orShould(holdAFieldNamedLike("Listener"))
                .orShould(holdAFieldNamedLike("Counters"))
                .because("a part that writes through the store takes the clock, listener and counters it uses itself")
                .check(MAIN);
    }

    @Test
    void shouldHaveNoBagAndNoForwardingLayerInAnInternalPackage() {
        noClasses().that().resideInAPackage("dev.consistencykit..internal..").and().areTopLevelClasses()
                .should().haveSimpleNameEndingWith("Fields")
                .orShould().haveSimpleNameEndingWith("Context")
                .orShould().haveSimpleNameEndingWith("Engine")
                .check(MAIN);
        // and a part's constructor takes no object that holds collections but the store
        noClasses().that().resideInAPackage("dev.consistencykit..internal..")
                .should(new ArchCondition<>("take in a constructor only a store among the holders of collections") {
                    @Override
                    public void check(JavaClass item, ConditionEvents events) {
                        item.getConstructors().forEach(c -> c.getRawParameterTypes().forEach(p -> {
                            boolean holds = p.getAllFields().stream().anyMatch(f -> f.getRawType()
                                    .isAssignableTo(MongoCollection.class));
                            if (holds && !p.getSimpleName().endsWith("Store") && p.getPackageName()
                                    .matches(PATTERN_INTERNALS)) {
                                events.add(SimpleConditionEvent.satisfied(item, c.getFullName() + " takes "
                                        + p.getName()));
                            }
                        }));
                    }
                })
                .check(MAIN);
    }

    @Test
    void shouldHaveNoCycleInsideAnyModule() {
        Map<String, Set<String>> graph = new HashMap<>();
        for (JavaClass c : MAIN) {
            String from = top(c);
            graph.computeIfAbsent(from, k -> new HashSet<>());
            if (c.isAnnotation()) {
                // an annotation declares (a test slice names its bootstrapper, which reads the annotation back); it
                // calls nothing
                continue;
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String to = top(d.getTargetClass());
                if (!to.equals(from) && to.startsWith("dev.consistencykit.") && module(to).equals(module(from))) {
                    graph.get(from).add(to);
                }
            }
        }
        Map<String, Set<String>> cycles = new TreeMap<>();
        for (Set<String> component : stronglyConnected(graph)) {
            if (component.size() > 1) {
                cycles.computeIfAbsent(module(component.iterator().next()), k -> new TreeSet<>()).addAll(component);
            }
        }
        assertThat(cycles).as("classes that depend on themselves through others").isEmpty();
    }

    private static String top(JavaClass c) {
        String name = c.getName();
        int dollar = name.indexOf('$');
        return dollar < 0 ? name : name.substring(0, dollar);
    }

    private static String module(String className) {
        String rest = className.substring("dev.consistencykit.".length());
        return rest.substring(0, rest.indexOf('.'));
    }

    /** Tarjan's strongly connected components, iterative. */
    private static List<Set<String>> stronglyConnected(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new HashSet<>();
        List<Set<String>> out = new ArrayList<>();
        int[] counter = {0};
        for (String start : new TreeSet<>(graph.keySet())) {
            if (index.containsKey(start)) {
                continue;
            }
            Deque<Object[]> work = new ArrayDeque<>();
            work.push(new Object[] {start, new ArrayList<>(graph.getOrDefault(start, Set.of())).iterator()});
            index.put(start, counter[0]);
            low.put(start, counter[0]++);
            stack.push(start);
            onStack.add(start);
            while (!work.isEmpty()) {
                Object[] frame = work.peek();
                String v = (String) frame[0];
                @SuppressWarnings("unchecked")
                java.util.Iterator<String> next = (java.util.Iterator<String>) frame[1];
                if (next.hasNext()) {
                    String w = next.next();
                    if (!index.containsKey(w)) {
                        index.put(w, counter[0]);
                        low.put(w, counter[0]++);
                        stack.push(w);
                        onStack.add(w);
                        work.push(new Object[] {w, new ArrayList<>(graph.getOrDefault(w, Set.of())).iterator()});
                    } else if (onStack.contains(w)) {
                        low.put(v, Math.min(low.get(v), index.get(w)));
                    }
                    continue;
                }
                work.pop();
                if (!work.isEmpty()) {
                    String parent = (String) work.peek()[0];
                    low.put(parent, Math.min(low.get(parent), low.get(v)));
                }
                if (low.get(v).equals(index.get(v))) {
                    Set<String> component = new TreeSet<>();
                    String w;
                    do {
                        w = stack.pop();
                        onStack.remove(w);
                        component.add(w);
                    } while (!w.equals(v));
                    out.add(component);
                }
            }
        }
        return out;
    }

    private static ArchCondition<JavaClass> holdAFieldOf(Class<?>... types) {
        return new ArchCondition<>("hold a field of " + List.of(types)) {
            @Override
            public void check(JavaClass item, ConditionEvents events) {
                for (JavaField f : item.getFields()) {
                    for (Class<?> t : types) {
                        if (f.getRawType().isAssignableTo(t)) {
                            events.add(SimpleConditionEvent.satisfied(item, f.getFullName() + " is a " + t
                                    .getSimpleName()));
                        }
                    }
                }
            }
        };
    }

    private static ArchCondition<JavaClass> holdAFieldNamedLike(String suffix) {
        return new ArchCondition<>("hold a field of a type named …" + suffix) {
            @Override
            public void check(JavaClass item, ConditionEvents events) {
                for (JavaField f : item.getFields()) {
                    if (f.getRawType().getSimpleName().endsWith(suffix)) {
                        events.add(SimpleConditionEvent.satisfied(item, f.getFullName() + " is a " + f.getRawType()
                                .getSimpleName()));
                    }
                }
            }
        };
    }
}
