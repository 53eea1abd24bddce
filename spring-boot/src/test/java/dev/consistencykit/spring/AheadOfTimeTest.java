package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.annotation.AnnotationConfigUtils;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.InputStreamSource;
import org.springframework.javapoet.ClassName;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;

/**
 * Spring's ahead-of-time processing of a context with the starter's instances: it turns every instance's bean
 * definition into code (an instance supplier it cannot: it refuses the whole context), and the hints it collects
 * declare what the starter reflects on. The sample application runs that way end to end in the sample's
 * {@code AheadOfTimeSampleTest}.
 */
class AheadOfTimeTest {

    @Test
    void shouldTurnEveryInstancesBeanDefinitionIntoCode() {
        GenericApplicationContext context = new GenericApplicationContext();
        TestPropertyValues.of("consistency-kit.two-phase.payments.lease=45s",
                "consistency-kit.job-queue.shipping.workers=0", "consistency-kit.ledger.books.stale-after=10s",
                "consistency-kit.sync-flag.users.master-collection=users",
                "consistency-kit.versioning.catalogue.keep-last=3").applyTo(context);
        AnnotationConfigUtils.registerAnnotationConfigProcessors(context);
        context.registerBeanDefinition("consistencyKit", new RootBeanDefinition(ConsistencyKitAutoConfiguration.class));
        InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
        DefaultGenerationContext generation = new DefaultGenerationContext(
                new ClassNameGenerator(ClassName.get(AheadOfTimeTest.class)), files);

        new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
        generation.writeGeneratedContent();

        String sources = files.getGeneratedFiles(GeneratedFiles.Kind.SOURCE).values().stream()
                .map(AheadOfTimeTest::text).collect(Collectors.joining("\n"));
        for (String key : new String[] {"payments", "shipping", "books", "users", "catalogue"}) {
            assertThat(sources).as("the bean definition of %s", key).contains("\"" + key + "\"");
        }
        assertThat(sources).contains("\"two-phase\"", "\"job-queue\"", "instance");

        RuntimeHints hints = generation.getRuntimeHints();
        assertThat(RuntimeHintsPredicates.reflection().onType(TwoPhaseCommit.Builder.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(JobQueue.Builder.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(TwoPhaseConfig.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(ConsistencyKitInstances.class)).accepts(hints);
    }

    private static String text(InputStreamSource source) {
        try (InputStream in = source.getInputStream(); ByteArrayOutputStream out = new ByteArrayOutputStream()) {
            in.transferTo(out);
            return out.toString(java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

}
