package dev.consistencykit.dashboard;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.json.JsonParseException;
import org.bson.types.ObjectId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.RecoveryReport;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.FoundJob;
import dev.consistencykit.jobqueue.JobBacklog;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobSearch;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.jobqueue.RunningJob;

/**
 * An operator's page of every pattern instance in one database, and the JSON API it polls: counts of unfinished
 * operations by state, the interrupted ones oldest first, dead jobs with their error, each operation's record and
 * the documents it touches as a reader sees them, checks on request, and a short time series while the page is open.
 * Actions (recover an instance or one operation, replay, discard or delete dead jobs, cancel, reschedule or rerun a
 * live job) only when {@link DashboardSettings} enables them, and then only for a request carrying the token.
 *
 * <p>It answers {@link DashboardRequest}s whoever serves them: {@link DashboardHttpServer} (the CLI's
 * {@code dashboard}) or the Spring Boot starter's servlet. Every query behind it is indexed and bounded: each poll
 * reads at most {@value #UNFINISHED_CAP} unfinished operations per instance and counts recent completions by an index
 * up to {@value #FINISHED_CAP}; the counts of every state ({@code status}) and the checks read every record and run
 * only when asked. docs/dashboard.md documents the API.
 *
 * <pre>{@code
 * Dashboard dashboard = Dashboard.of(database, new DashboardSettings());
 * try (DashboardHttpServer server = DashboardHttpServer.start(dashboard,
 *         new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
 *     log.info("the dashboard: {}", server.uri());   // the page; its API below it, server.uri() + "api/overview"
 * }
 * }</pre>
 */
public final class Dashboard {

    /** The header an action's request carries its token in. */
    public static final String TOKEN_HEADER = "X-Consistency-Kit-Token";
    /** The headers every answer carries: never cached, never framed, nothing loaded from elsewhere. */
    public static final Map<String, String> HEADERS = Map.of(
            "Cache-Control", "no-store",
            "X-Content-Type-Options", "nosniff",
            "X-Frame-Options", "DENY",
            "Referrer-Policy", "no-referrer",
            "Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none';"
                    + " form-action 'none'; base-uri 'none'");
    /** The most unfinished operations one poll reads per instance. */
    public static final int UNFINISHED_CAP = 1_000;
    /** Recurring jobs listed per job queue at most ({@code recurring} of the overview). */
    public static final int RECURRING_CAP = 50;
    /** Kept records listed per instance at most ({@code kept} of the overview). */
    public static final int KEPT_CAP = 20;
    /** The most recent completions one poll counts per instance. */
    public static final int FINISHED_CAP = 100_000;
    /** The deepest a page of operations or dead jobs reaches ({@code offset + limit}). */
    public static final int MAX_DEPTH = 1_000;
    /** The largest page. */
    public static final int MAX_PAGE = 100;
    /** How long the list of instances is kept before the registry is read again. */
    static final Duration INSTANCES_KEPT = Duration.ofSeconds(30);
    /**
     * The counters that count recoveries, of the patterns that keep one: two-phase transactions finished or undone by
     * recovery, jobs requeued after their worker died, sync flags taken over from a quiet owner.
     */
    static final List<String> RECOVERY_COUNTERS = List.of("recoveredForward", "recoveredBack", "requeued",
            "flagsTakenOver");
    /** The window of {@code finishedLastMinute}. */
    static final Duration FINISHED_WINDOW = Duration.ofMinutes(1);
    private static final int MAX_PATH = 4_096;
    /** The state a dead job is listed in. */
    private static final String DEAD = "dead";
    /** What an operator may do to dead jobs. */
    private static final List<String> DEAD_ACTIONS = List.of("replay", "discard", "delete");
    /** What an operator may do to a live job. */
    private static final List<String> LIVE_ACTIONS = List.of("cancel", "reschedule", "rerun");

    private static final Logger LOG = LoggerFactory.getLogger(Dashboard.class);

    private final String database;
    private final Supplier<List<DashboardInstance>> source;
    private final DashboardSettings settings;
    private final DashboardSeries series;
    private final DashboardPage page;
    private final Object instancesLock = new Object();
    private Map<String, DashboardInstance> instances = Map.of();
    private long instancesReadAt;
    private boolean instancesRead;

    /**
     * A dashboard of the instances {@code source} gives (called again every {@link #INSTANCES_KEPT}; an instance keeps
     * its object while its key stays, so its counters go on).
     *
     * @param database the database's name, for the page's title
     * @throws IllegalArgumentException if actions are enabled without a token
     */
    public Dashboard(String database, Supplier<List<DashboardInstance>> source, DashboardSettings settings) {
        this.database = Objects.requireNonNull(database, "database");
        this.source = Objects.requireNonNull(source, "source");
        this.settings = settings.copy();
        if (this.settings.actionsEnabled() && this.settings.token() == null) {
            throw new IllegalArgumentException("the dashboard's actions need a token: set one, or leave actions off");
        }
        this.series = new DashboardSeries();
        this.page = new DashboardPage();
    }

    /** A dashboard of every instance registered in {@code database} ({@link DashboardInstance#registered}). */
    public static Dashboard of(MongoDatabase database, DashboardSettings settings) {
        return new Dashboard(database.getName(), () -> DashboardInstance.registered(database), settings);
    }

    /** The settings, as copied. */
    public DashboardSettings settings() {
        return settings.copy();
    }

    /**
     * Answers one request: a file of the page, or the API. Never throws for anything a client sends or a server
     * fails: a bad request is a 400, an unknown instance or operation a 404, a refused action a 401 or 403, a server
     * that failed a 503, each with a JSON {@code error}.
     */
    public DashboardResponse handle(DashboardRequest request) {
        try {
            if (request.path().length() > MAX_PATH) {
                return error(414, "the path is too long");
            }
            if (!request.path().startsWith("/api/")) {
                return request.method().equals("GET") || request.method().equals("HEAD") ? page.serve(request.path())
                        : error(405, "the page's files are read with GET");
            }
            List<String> parts = segments(request.path().substring("/api/".length()));
            return route(request, parts);
        } catch (InvalidInputException | IllegalArgumentException | JsonParseException e) {
            return error(400, e.getMessage());
        } catch (ConsistencyException e) {
            return error(503, e.getMessage());
        } catch (MongoException e) {
            // the library's calls answer typed exceptions; this is a read outside them (the registry's)
            LOG.warn("dashboard: the server failed a read: {}", e.getClass().getSimpleName());
            return error(503, "the server failed: " + e.getClass().getSimpleName() + " (code " + e.getCode() + ")");
        }
    }

    /**
     * Where an instance's API path leads: its method, its segments ({@code {id}}, {@code {verb}}: an action on dead
     * jobs, and {@code {live}}: an action on a live job, are values).
     */
    private record Route(String method, List<String> segments, Handler handler) {

        /** The path's values by placeholder when {@code rest} matches, else empty. */
        Optional<Map<String, String>> match(List<String> rest) {
            if (rest.size() != segments.size()) {
                return Optional.empty();
            }
            Map<String, String> values = new HashMap<>();
            for (int i = 0; i < rest.size(); i++) {
                String segment = segments.get(i);
                if ((segment.equals("{verb}") && !DEAD_ACTIONS.contains(rest.get(i)))
                        || (segment.equals("{live}") && !LIVE_ACTIONS.contains(rest.get(i)))) {
                    return Optional.empty();
                }
                if (segment.startsWith("{")) {
                    values.put(segment, rest.get(i));
                } else if (!segment.equals(rest.get(i))) {
                    return Optional.empty();
                }
            }
            return Optional.of(values);
        }

        /** Whether the route changes something: it needs the page's token and, if configured, the operator's. */
        boolean action() {
            return method.equals("POST");
        }
    }

    @FunctionalInterface
    private interface Handler {
        DashboardResponse handle(DashboardRequest request, DashboardInstance instance, Map<String, String> values);
    }

    /** The API of one instance, under {@code /api/instances/<pattern>/<name>/}. */
    private final List<Route> routes = List.of(
            new Route("GET", List.of("status"), (r, i, v) -> ok(status(i))),
            new Route("GET", List.of("operations"), (r, i, v) -> ok(operations(i, r.query()))),
            new Route("GET", List.of("operations", "{id}"), (r, i, v) -> describeOperation(i, v.get("{id}"))),
            new Route("GET", List.of(DEAD), (r, i, v) -> withQueue(i, q -> ok(dead(q, r.query())))),
            new Route("GET", List.of("workers"), (r, i, v) -> withQueue(i, q -> ok(workers(q)))),
            new Route("GET", List.of("jobs"), (r, i, v) -> withQueue(i, q -> ok(searchJobs(q, r.query())))),
            new Route("GET", List.of("checks"), (r, i, v) -> ok(checks(i))),
            new Route("POST", List.of("recover"), (r, i, v) -> recoverInstance(i)),
            new Route("POST", List.of("operations", "{id}", "recover"), (r, i, v) -> recoverOperation(i,
                    v.get("{id}"))),
            new Route("POST", List.of(DEAD, "{verb}"), (r, i, v) -> withQueue(i, q -> deadAction(q, i,
                    v.get("{verb}"), deadSelection(r.query(), true), false))),
            new Route("POST", List.of(DEAD, "{id}", "{verb}"), (r, i, v) -> withQueue(i, q -> deadAction(q, i,
                    v.get("{verb}"), deadJob(v.get("{id}")), true))),
            new Route("POST", List.of("jobs", "{id}", "{live}"), (r, i, v) -> withQueue(i, q -> liveAction(q, i,
                    v.get("{live}"), v.get("{id}"), r.query()))));

    private DashboardResponse route(DashboardRequest request, List<String> parts) {
        String method = request.method();
        if (parts.equals(List.of("overview"))) {
            return method.equals("GET") ? ok(overview()) : error(405, "overview is read with GET");
        }
        if (parts.size() < 4 || !parts.get(0).equals("instances")) {
            return error(404, "no such API path");
        }
        DashboardInstance instance = instances().get(parts.get(1) + "/" + parts.get(2));
        if (instance == null) {
            return error(404, "no instance " + Values.show(parts.get(1) + "/" + parts.get(2)) + " in database "
                    + database);
        }
        List<String> rest = parts.subList(3, parts.size());
        for (Route route : routes) {
            Optional<Map<String, String>> values = route.method().equals(method) ? route.match(rest)
                    : Optional.empty();
            if (values.isEmpty()) {
                continue;
            }
            if (route.action()) {
                Optional<DashboardResponse> refused = refusal(request);
                if (refused.isPresent()) {
                    return refused.get();
                }
            }
            return route.handler().handle(request, instance, values.get());
        }
        return error(method.equals("GET") || method.equals("POST") ? 404 : 405, "no such API path or method");
    }

    private DashboardResponse describeOperation(DashboardInstance instance, String id) {
        for (Object candidate : printedIds(id)) {
            Optional<OperationView> view = instance.strategy().describe(candidate);
            if (view.isPresent()) {
                return ok(describe(view.get()));
            }
        }
        return error(404, "no operation " + Values.show(id) + " in " + instance.key());
    }

    /**
     * The ids {@code rawId} names: the JSON of one as the API lists it ({@code idParam}), or an id as printed anywhere
     * else, which may name several ({@link OperationId#printedAs}: 24 hex digits are an ObjectId and that string).
     */
    private static List<Object> printedIds(String rawId) {
        if (looksLikeJson(rawId)) {
            return List.of(idOf(rawId));
        }
        List<Object> ids = new ArrayList<>();
        OperationId.printedAs(rawId).forEach(id -> ids.add(id.value()));
        if (!ids.contains(rawId)) {
            ids.add(rawId);
        }
        return ids;
    }

    /**
     * An action on a live job ({@code cancel} a waiting or scheduled one, {@code reschedule} it to {@code at}, an
     * ISO-8601 instant, or {@code rerun} a finished one as a new job), by its id as listed or printed anywhere.
     */
    private static DashboardResponse liveAction(JobQueue queue, DashboardInstance instance, String verb, String rawId,
                                                Map<String, String> query) {
        Instant at = null;
        if (verb.equals("reschedule")) {
            at = instantParam(query, "at");
            if (at == null) {
                throw new IllegalArgumentException("reschedule needs at, an ISO-8601 instant (2030-01-01T09:00:00Z)");
            }
        }
        Document body = new Document("action", verb).append("id", rawId);
        for (Object candidate : printedIds(rawId)) {
            OperationId id = operationId(candidate);
            boolean done;
            switch (verb) {
                case "cancel" -> done = queue.operator().cancel(id);
                case "reschedule" -> done = queue.operator().reschedule(id, at);
                default -> {
                    Optional<OperationId> again = queue.operator().rerun(id);
                    again.ifPresent(a -> body.append("job", a.value()));
                    done = again.isPresent();
                }
            }
            if (done) {
                LOG.info("dashboard: {} of job {} of {} asked from the page", verb, id, instance.key());
                return ok(body.append("done", true));
            }
        }
        return error(404, "no job " + Values.show(rawId) + " in " + instance.key() + " to " + verb
                + (verb.equals("rerun") ? " (a job that is done or dead)" : " (a waiting or scheduled job)"));
    }

    private static DashboardResponse withQueue(DashboardInstance instance,
                                               java.util.function.Function<JobQueue, DashboardResponse> action) {
        return instance.queue().map(action).orElseGet(() -> error(404, instance.key() + " is not a job queue"));
    }

    private DashboardResponse recoverInstance(DashboardInstance instance) {
        RecoveryReport report = instance.recover().apply(settings.staleAfter());
        series.repaired(report.repaired());
        LOG.info("dashboard: recovery of {} asked from the page: {}", instance.key(), report);
        return ok(report(report));
    }

    private DashboardResponse recoverOperation(DashboardInstance instance, String rawId) {
        Object id = idOf(rawId);
        RecoveryReport report = instance.strategy().recoverOne(id, settings.staleAfter());
        series.repaired(report.repaired());
        LOG.info("dashboard: recovery of operation {} of {} asked from the page: {}", Values.show(id),
                instance.key(), report);
        return ok(report(report));
    }

    /**
     * The dead job an action names: the JSON of its id as the API lists it ({@code idParam}), or its id as printed
     * anywhere else (bare hex selects a job enqueued without an id of its own: {@link DeadJobs#printed}).
     */
    private static DeadJobs deadJob(String rawId) {
        return looksLikeJson(rawId) ? DeadJobs.ids(List.of(operationId(idOf(rawId))))
                : DeadJobs.printed(List.of(rawId));
    }

    private static DashboardResponse deadAction(JobQueue queue, DashboardInstance instance, String verb,
                                                DeadJobs which, boolean single) {
        long n = switch (verb) {
            case "replay" -> queue.operator().replayDead(which);
            case "discard" -> queue.operator().discardDead(which);
            default -> queue.operator().deleteDead(which);
        };
        LOG.info("dashboard: {} of {} of {} asked from the page: {} job(s)", verb, which, instance.key(), n);
        Document body = new Document("action", verb).append("selection", which.toString()).append("jobs", n);
        if (verb.equals("replay") && single) {
            body.append("replayed", n == 1);   // the single replay's answer, as before
        }
        if (single && n == 0) {
            return error(404, "no dead job with id " + which.ids().get(which.ids().size() - 1) + " to " + verb);
        }
        return ok(body);
    }

    /**
     * The dead jobs a request selects: {@code type}, {@code error} (text the last error contains), or, for an action,
     * {@code all=true} for every one (an action with no selection is refused: one click never touches every job by
     * accident).
     */
    private static DeadJobs deadSelection(Map<String, String> query, boolean action) {
        DeadJobs which = DeadJobs.all();
        String type = blankToNull(query.get("type"));
        String error = blankToNull(query.get("error"));
        if (type != null) {
            which = which.ofType(type);
        }
        if (error != null) {
            which = which.errorContaining(error);
        }
        if (action && type == null && error == null && !"true".equals(query.get("all"))) {
            throw new IllegalArgumentException("select the dead jobs: type, error, or all=true for every one");
        }
        return which;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** Why an action is refused, if it is: actions off (403), no or the wrong token (401). */
    private Optional<DashboardResponse> refusal(DashboardRequest request) {
        if (!settings.actionsEnabled()) {
            return Optional.of(error(403, "this dashboard is read-only: actions are off"));
        }
        byte[] expected = settings.token().getBytes(StandardCharsets.UTF_8);
        byte[] given = request.token() == null ? new byte[0] : request.token().getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(expected, given)) {
            return Optional.of(error(401, "an action needs the dashboard's token (header " + TOKEN_HEADER + ")"));
        }
        return Optional.empty();
    }

    // ---------------------------------------------------------------- instances

    /** The instances by key, read again from the source every {@link #INSTANCES_KEPT}. */
    Map<String, DashboardInstance> instances() {
        synchronized (instancesLock) {
            long now = System.nanoTime();
            if (!instancesRead || now - instancesReadAt >= INSTANCES_KEPT.toNanos()) {
                Map<String, DashboardInstance> next = new LinkedHashMap<>();
                for (DashboardInstance found : source.get()) {
                    next.put(found.key(), instances.getOrDefault(found.key(), found));
                }
                instances = next;
                instancesReadAt = now;
                instancesRead = true;
            }
            return instances;
        }
    }

    // ---------------------------------------------------------------- reads

    /** Records kept from prune by a writer that has not released them, past the stale threshold (bounded, indexed). */
    private List<Document> kept(DashboardInstance instance) {
        List<Document> out = new ArrayList<>();
        for (dev.consistencykit.core.KeptRecord k : instance.strategy().kept(settings.staleAfter(), KEPT_CAP)) {
            out.add(new Document("id", k.id()).append("writer", k.writer())
                    .append("ageSeconds", seconds(k.age())).append("compacted", k.compacted()));
        }
        return out;
    }

    private Document overview() {
        List<Document> listed = new ArrayList<>();
        long finished = 0;
        long unfinished = 0;
        long interrupted = 0;
        long recovered = 0;
        for (DashboardInstance instance : instances().values()) {
            Map<String, Long> counters = instance.strategy().counters();
            recovered += RECOVERY_COUNTERS.stream().mapToLong(c -> counters.getOrDefault(c, 0L)).sum();
            Document d = new Document("key", instance.key()).append("pattern", instance.pattern())
                    .append("name", instance.name()).append("jobQueue", instance.queue().isPresent())
                    .append("checks", instance.check().isPresent());
            try {
                List<InterruptedOperation> ops = new ArrayList<>(instance.strategy().interrupted(Duration.ZERO,
                        UNFINISHED_CAP));
                // a dead job is finished, badly: counted once, as dead, never as unfinished or interrupted too
                long dead = ops.stream().filter(op -> op.state().equals(DEAD)).count();
                ops.removeIf(op -> op.state().equals(DEAD));
                Map<String, Long> byState = new LinkedHashMap<>();
                long stale = 0;
                for (InterruptedOperation op : ops) {
                    byState.merge(op.state(), 1L, Long::sum);
                    stale += op.age().compareTo(settings.staleAfter()) >= 0 ? 1 : 0;
                }
                d.append("dead", dead);
                if (instance.queue().isPresent()) {
                    List<Document> backlog = new ArrayList<>();
                    for (JobBacklog b : instance.queue().get().operator().backlog()) {
                        backlog.add(new Document("type", b.type()).append("waiting", b.waiting())
                                .append("scheduled", b.scheduled()).append("awaiting", b.awaiting())
                                .append("running", b.running()).append("dead", b.dead()).append("oldestWaitingSeconds",
                                        b.oldestWaiting().map(Dashboard::seconds).orElse(null)));
                    }
                    d.append("backlog", backlog);
                    List<Document> recurring = new ArrayList<>();
                    for (RecurringJob r : instance.queue().get().operator().recurringJobs(0, RECURRING_CAP)) {
                        recurring.add(recurringView(r));
                    }
                    d.append("recurring", recurring);
                }
                OptionalLong recent = instance.strategy().finishedWithin(FINISHED_WINDOW, FINISHED_CAP);
                d.append("unfinished", (long) ops.size()).append("unfinishedCapped", ops.size() >= UNFINISHED_CAP)
                        .append("byState", new Document(new LinkedHashMap<>(byState)))
                        .append("interrupted", stale)
                        .append("oldestAgeSeconds", ops.isEmpty() ? null : seconds(ops.get(0).age()))
                        .append("finishedLastMinute", recent.isPresent() ? recent.getAsLong() : null)
                        .append("setupProblems", instance.strategy().setupProblems())
                        .append("kept", kept(instance));
                unfinished += ops.size();
                interrupted += stale;
                finished += recent.orElse(0);
            } catch (ConsistencyException e) {
                d.append("error", e.getMessage());
            }
            listed.add(d);
        }
        series.sample(finished, unfinished, interrupted, recovered);
        return new Document("database", database).append("actions", settings.actionsEnabled())
                .append("staleAfterSeconds", seconds(settings.staleAfter()))
                .append("refreshSeconds", seconds(settings.refreshEvery()))
                .append("limits", new Document("unfinishedCap", UNFINISHED_CAP).append("keptCap", KEPT_CAP)
                        .append("recurringCap", RECURRING_CAP)
                        .append("finishedCap", FINISHED_CAP).append("maxDepth", MAX_DEPTH).append("maxPage", MAX_PAGE))
                .append("instances", listed).append("series", series.samples());
    }

    /**
     * A recurring job as the overview shows it (and {@code inspect}): {@code name}, {@code schedule}, {@code type},
     * {@code nextRun}, {@code lastRun} (ISO-8601 or null) and {@code lastJob}.
     */
    public static Document recurringView(RecurringJob r) {
        return new Document("name", r.name()).append("schedule", r.schedule().toString()).append("type", r.type())
                .append("nextRun", r.nextRun().map(Object::toString).orElse(null))
                .append("lastRun", r.lastRun().map(Object::toString).orElse(null))
                .append("lastJob", r.lastJob().map(j -> String.valueOf(j.value())).orElse(null));
    }

    private Document status(DashboardInstance instance) {
        StrategyStatus s = instance.strategy().status();
        return new Document("key", instance.key()).append("countsByState", new Document(new LinkedHashMap<>(
                new java.util.TreeMap<>(s.countsByState())))).append("inFlight", s.inFlight())
                .append("oldestInFlightSeconds", s.oldestInFlightAge().map(Dashboard::seconds).orElse(null));
    }

    /** A page's {@code offset} and {@code limit}, checked: at most {@link #MAX_PAGE}, at most {@link #MAX_DEPTH} deep. */
    private record Page(int offset, int limit) {

        static Page of(Map<String, String> query) {
            int offset = intParam(query, "offset", 0, 0, MAX_DEPTH - 1);
            int limit = intParam(query, "limit", 20, 1, MAX_PAGE);
            if (offset + limit > MAX_DEPTH) {
                throw new IllegalArgumentException("a page reaches at most " + MAX_DEPTH + " deep (offset + limit);"
                        + " the CLI's inspect --limit lists more");
            }
            return new Page(offset, limit);
        }
    }

    private Document operations(DashboardInstance instance, Map<String, String> query) {
        Page p = Page.of(query);
        int offset = p.offset();
        int limit = p.limit();
        boolean onlyInterrupted = Boolean.parseBoolean(query.getOrDefault("interrupted", "false"));
        Duration threshold = onlyInterrupted ? settings.staleAfter() : Duration.ZERO;
        List<InterruptedOperation> read = instance.strategy().interrupted(threshold, Math.min(offset + limit + 1,
                MAX_DEPTH));
        List<Document> page = new ArrayList<>();
        for (InterruptedOperation op : read.subList(Math.min(offset, read.size()), Math.min(offset + limit,
                read.size()))) {
            page.add(new Document("id", op.id()).append("idParam", DashboardJson.value(op.id()))
                    .append("state", op.state()).append("ageSeconds", seconds(op.age())).append("detail", op.detail())
                    .append("interrupted", op.age().compareTo(settings.staleAfter()) >= 0));
        }
        return new Document("key", instance.key()).append("offset", offset).append("limit", limit)
                .append("more", read.size() > offset + limit && offset + limit < MAX_DEPTH)
                .append("operations", page);
    }

    private Document dead(JobQueue queue, Map<String, String> query) {
        Page p = Page.of(query);
        int offset = p.offset();
        int limit = p.limit();
        List<InterruptedOperation> read = queue.operator().dead(deadSelection(query, false), offset, limit + 1);
        List<Document> page = new ArrayList<>();
        for (InterruptedOperation op : read.subList(0, Math.min(limit, read.size()))) {
            page.add(new Document("id", op.id()).append("idParam", DashboardJson.value(op.id()))
                    .append("ageSeconds", seconds(op.age())).append("detail", op.detail()));
        }
        return new Document("offset", offset).append("limit", limit)
                .append("more", read.size() > limit && offset + limit < MAX_DEPTH).append("dead", page);
    }

    /** The most jobs one search of the page lists. */
    static final int SEARCH_LIMIT = 100;

    /**
     * The jobs of a queue a search selects, whatever their state, newest enqueued first ({@link
     * JobQueueOperator#jobs}): {@code id} (as printed anywhere), {@code type}, {@code state} (one or more,
     * comma-separated), {@code from} and {@code to} (ISO-8601 instants: enqueued at or after, before), {@code limit}
     * (at most {@link #SEARCH_LIMIT}).
     */
    private static Document searchJobs(JobQueue queue, Map<String, String> query) {
        String id = blankToNull(query.get("id"));
        JobSearch which = id == null ? JobSearch.all() : JobSearch.printed(List.of(id));
        String type = blankToNull(query.get("type"));
        if (type != null) {
            which = which.ofType(type);
        }
        String states = blankToNull(query.get("state"));
        if (states != null) {
            List<JobState> named = new ArrayList<>();
            for (String name : states.split(",", -1)) {
                named.add(JobState.fromStored(name.strip()));
            }
            which = which.inStates(named.toArray(new JobState[0]));
        }
        Instant from = instantParam(query, "from");
        if (from != null) {
            which = which.enqueuedFrom(from);
        }
        Instant to = instantParam(query, "to");
        if (to != null) {
            which = which.enqueuedBefore(to);
        }
        int limit = intParam(query, "limit", 50, 1, SEARCH_LIMIT);
        List<Document> found = new ArrayList<>();
        for (FoundJob job : queue.operator().jobs(which, limit)) {
            found.add(new Document("id", job.id()).append("idParam", DashboardJson.value(job.id()))
                    .append("type", job.type()).append("state", job.state().stored())
                    .append("enqueuedAt", job.enqueuedAt().map(Instant::toString).orElse(null))
                    .append("runAt", job.runAt().map(Instant::toString).orElse(null))
                    .append("attempts", job.attempts()).append("lastError", job.lastError().orElse(null)));
        }
        return new Document("search", which.toString()).append("limit", limit).append("jobs", found);
    }

    private static Instant instantParam(Map<String, String> query, String name) {
        String raw = blankToNull(query.get(name));
        if (raw == null) {
            return null;
        }
        try {
            return Instant.parse(raw.strip());
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(name + " is no ISO-8601 instant: " + Values.show(raw), e);
        }
    }

    /**
     * The workers of a job queue as the jobs they hold show them (at most {@link #UNFINISHED_CAP} running jobs, through
     * the index of running jobs): each owner with its jobs, the longest it has held one, and the least lease it has
     * left (a worker renews its leases while it runs: a lease run out is a worker gone, which recovery requeues).
     */
    private static Document workers(JobQueue queue) {
        List<RunningJob> running = queue.operator().running(UNFINISHED_CAP + 1);
        Map<String, List<RunningJob>> byOwner = new LinkedHashMap<>();
        for (RunningJob job : running.subList(0, Math.min(UNFINISHED_CAP, running.size()))) {
            byOwner.computeIfAbsent(job.owner(), o -> new ArrayList<>()).add(job);
        }
        List<Document> workers = new ArrayList<>();
        byOwner.forEach((owner, jobs) -> {
            List<Document> held = new ArrayList<>();
            for (RunningJob job : jobs) {
                held.add(new Document("id", job.id()).append("idParam", DashboardJson.value(job.id()))
                        .append("type", job.type()).append("runningSeconds", seconds(job.running()))
                        .append("leaseLeftSeconds", job.leaseLeft().toMillis() / 1000.0));
            }
            workers.add(new Document("owner", owner).append("jobs", held)
                    .append("longestRunningSeconds", seconds(jobs.get(0).running()))
                    .append("leaseLeftSeconds", jobs.stream().mapToLong(j -> j.leaseLeft().toMillis()).min()
                            .orElse(0) / 1000.0));
        });
        return new Document("workers", workers).append("runningJobs", Math.min(UNFINISHED_CAP, running.size()))
                .append("capped", running.size() > UNFINISHED_CAP);
    }

    private static Document describe(OperationView view) {
        List<Document> touched = new ArrayList<>();
        for (OperationView.Touched t : view.documents()) {
            touched.add(new Document("collection", t.collection()).append("id", t.id())
                    .append("asReaderSees", t.asReaderSees()).append("note", t.note()));
        }
        return new Document("id", view.id()).append("state", view.state()).append("record", view.record())
                .append("documents", touched);
    }

    /** The instance's check, which reads every record: run only when asked. */
    private static Document checks(DashboardInstance instance) {
        long start = System.nanoTime();
        Document out = new Document("key", instance.key());
        out.putAll(instance.check().map(Supplier::get).orElseGet(() -> new Document("check",
                "none: this pattern keeps no derived data to check").append("problems", 0L)
                .append("details", List.of())));
        return out.append("seconds", seconds(Duration.ofNanos(System.nanoTime() - start)));
    }

    private static Document report(RecoveryReport r) {
        return new Document("instance", r.instanceName()).append("examined", r.examined())
                .append("rolledForward", r.rolledForward()).append("rolledBack", r.rolledBack())
                .append("skipped", r.skipped()).append("setAside", r.setAside())
                .append("milliseconds", TimeUnit.NANOSECONDS.toMillis(r.elapsed().toNanos()));
    }

    // ---------------------------------------------------------------- input

    /** Splits a path into its percent-decoded segments. */
    private static List<String> segments(String path) {
        List<String> out = new ArrayList<>();
        for (String raw : Arrays.asList(path.split("/", -1))) {
            // '+' is a plus in a path, not a space
            out.add(URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8));
        }
        if (!out.isEmpty() && out.get(out.size() - 1).isEmpty()) {
            out.remove(out.size() - 1);
        }
        return out;
    }

    /**
     * An operation id as the page sends it: the JSON of the value ({@code "t1"}, {@code 42},
     * {@code {"$oid": "…"}}), a scalar. A document or an array is refused: no value from a request reaches the server
     * as an operator, and the patterns' ids are scalars.
     */
    static Object idOf(String json) {
        if (!looksLikeJson(json)) {
            return json;   // typed by an operator: a string id, without JSON's quotes
        }
        BsonDocument parsed = BsonDocument.parse("{\"v\": " + json + "}");
        if (parsed.size() != 1 || !parsed.containsKey("v")) {
            throw new IllegalArgumentException("an operation id is one JSON value, was " + Values.show(json));
        }
        BsonValue v = parsed.get("v");
        Object id = switch (v.getBsonType()) {
            case STRING -> v.asString().getValue();
            case INT32 -> v.asInt32().getValue();
            case INT64 -> v.asInt64().getValue();
            case DOUBLE -> v.asDouble().getValue();
            case OBJECT_ID -> v.asObjectId().getValue();
            case BOOLEAN -> v.asBoolean().getValue();
            case DOCUMENT, ARRAY, NULL, UNDEFINED, REGULAR_EXPRESSION, JAVASCRIPT, JAVASCRIPT_WITH_SCOPE, MIN_KEY,
                 MAX_KEY -> throw new IllegalArgumentException("an operation id is a string, a number, an ObjectId"
                    + " or another scalar, was " + Values.show(json));
            default -> v;
        };
        // the parser stops after the first value: text after it ("t1"}, "x": {…) would be ignored, so the id must be
        // exactly the JSON the API gives for it (idParam), whitespace aside
        if (!DashboardJson.value(id).replaceAll("\\s", "").equals(json.replaceAll("\\s", ""))) {
            throw new IllegalArgumentException("an operation id is given as the API lists it (its idParam), was "
                    + Values.show(json));
        }
        return id;
    }

    /**
     * Whether {@code text} is meant as JSON (a quoted string, a number, {@code true}/{@code false}, a document or an
     * array): anything else is a bare string id as an operator types it.
     */
    private static boolean looksLikeJson(String text) {
        String t = text.strip();
        return t.startsWith("\"") || t.startsWith("{") || t.startsWith("[") || t.equals("true") || t.equals("false")
                || t.equals("null") || t.matches("-?\\d+(\\.\\d+)?([eE][-+]?\\d+)?");
    }

    private static OperationId operationId(Object id) {
        if (id instanceof String s) {
            return OperationId.of(s);
        }
        if (id instanceof Long || id instanceof Integer) {
            return OperationId.of(((Number) id).longValue());
        }
        if (id instanceof ObjectId o) {
            return OperationId.of(o);
        }
        throw new IllegalArgumentException("a job's id is a string, an integer or an ObjectId, was " + Values.show(id));
    }

    private static int intParam(Map<String, String> query, String name, int fallback, int min, int max) {
        String raw = query.get(name);
        if (raw == null) {
            return fallback;
        }
        int value;
        try {
            value = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, was " + Values.show(raw), e);
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
        }
        return value;
    }

    // ---------------------------------------------------------------- output

    private static double seconds(Duration d) {
        return d.toMillis() / 1000.0;
    }

    private static DashboardResponse ok(Document body) {
        return DashboardResponse.json(200, DashboardJson.of(body));
    }

    private static DashboardResponse error(int status, String message) {
        return DashboardResponse.json(status, DashboardJson.of(new Document("error", message)));
    }
}
