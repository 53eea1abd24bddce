package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoDatabase;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.samplers.Sampler;

import dev.consistencykit.jobqueue.JobHandler;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.testkit.MongoTarget;

/**
 * A job's run continues the trace of the request that enqueued it, with Micrometer Tracing on OpenTelemetry (W3C
 * {@code traceparent}): the enqueue is a producer span carrying its context into the job, the run a consumer span
 * whose parent is that producer span, on a worker thread, directly or through the outbox.
 */
class JobTraceTest {

    private String database;
    private final List<SpanData> spans = new java.util.concurrent.CopyOnWriteArrayList<>();
    private ObservationRegistry observations;

    @BeforeEach
    void tracing() {
        database = MongoTarget.freshDatabaseName("trace");
        SpanProcessor collect = new SpanProcessor() {
            @Override
            public void onStart(Context parent, ReadWriteSpan span) {
                // kept when it ends
            }

            @Override
            public boolean isStartRequired() {
                return false;
            }

            @Override
            public void onEnd(ReadableSpan span) {
                spans.add(span.toSpanData());
            }

            @Override
            public boolean isEndRequired() {
                return true;
            }
        };
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().setSampler(Sampler.alwaysOn())
                        .addSpanProcessor(collect).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        io.opentelemetry.api.trace.Tracer otel = sdk.getTracer("test");
        OtelTracer tracer = new OtelTracer(otel, new OtelCurrentTraceContext(), event -> { });
        OtelPropagator propagator = new OtelPropagator(sdk.getPropagators(), otel);
        observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    private SpanData span(String name) {
        List<SpanData> found = spans.stream().filter(s -> s.getName().equals(name)).toList();
        assertThat(found).as("spans named " + name + " among " + spans.stream().map(SpanData::getName)
                .toList()).hasSize(1);
        return found.get(0);
    }

    @Test
    void shouldRunAJobUnderTheTraceOfTheRequestThatEnqueuedIt() {
        CountDownLatch ran = new CountDownLatch(2);
        TestContexts.runner(database).withBean(ObservationRegistry.class, () -> observations)
                .withBean("mark", JobHandler.class, () -> ctx -> ran.countDown())
                .withPropertyValues("consistency-kit.maintenance.enabled=false",
                        "consistency-kit.job-queue.jobs.workers=1",
                        "consistency-kit.job-queue.jobs.outbox-collections=orders")
                .run(context -> {
                    JobQueue jobs = context.getBean("jobs", JobQueue.class);
                    MongoDatabase db = context.getBean(ConsistencyKitDatabase.class).database();
                    Observation.createNotStarted("http.request", observations).observe(
                            () -> jobs.enqueue(JobRequest.of("mark", new Document("via", "enqueue"))));
                    Observation.createNotStarted("http.order", observations).observe(
                            () -> jobs.insertWith(db.getCollection("orders"), new Document("_id", "o1"),
                                    JobRequest.of("mark", new Document("via", "outbox"))));
                    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
                });

        SpanData enqueue = span("job-queue enqueue");
        SpanData insert = span("job-queue insert with jobs");
        List<SpanData> runs = spans.stream().filter(s -> s.getName().equals("job-queue run job")).toList();
        assertThat(runs).hasSize(2);
        Map<String, SpanData> byTrace = new java.util.HashMap<>();
        runs.forEach(r -> byTrace.put(r.getTraceId(), r));
        for (SpanData sender : List.of(enqueue, insert)) {
            SpanData run = byTrace.get(sender.getTraceId());
            assertThat(run).as("the run of the job " + sender.getName() + " sent, in its trace").isNotNull();
            assertThat(run.getParentSpanId()).as("a child of the call that sent it").isEqualTo(sender.getSpanId());
            assertThat(run.getKind()).isEqualTo(io.opentelemetry.api.trace.SpanKind.CONSUMER);
            assertThat(sender.getKind()).isEqualTo(io.opentelemetry.api.trace.SpanKind.PRODUCER);
        }
        assertThat(span("http.request").getTraceId()).isEqualTo(enqueue.getTraceId());
        assertThat(span("http.order").getTraceId()).isEqualTo(insert.getTraceId());
    }
}
