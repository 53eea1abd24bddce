package dev.consistencykit.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;

/**
 * Debian's Chromium, headless, driven over the DevTools protocol on a WebSocket (the JDK's own client; the protocol's
 * JSON read with the BSON library's parser): navigate, evaluate JavaScript in the page, wait for a condition, take a
 * screenshot, and collect every exception the page's scripts threw. For tests of the pages this project serves.
 */
final class HeadlessChromium implements AutoCloseable {

    static final Path BINARY = Path.of("/usr/bin/chromium");
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
    /** How long a wait may take before the test fails: a bound on a failure, not a speed the test relies on. */
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final Process process;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<BsonDocument>> pending = new ConcurrentHashMap<>();
    private final List<String> exceptions = new CopyOnWriteArrayList<>();

    private HeadlessChromium(Process process, WebSocket.Builder builder, URI page) throws Exception {
        this.process = process;
        this.socket = builder.buildAsync(page, new Listener()).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        call("Runtime.enable", new Document());
        call("Page.enable", new Document());
    }

    /** Whether Chromium is installed where Debian puts it. */
    static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /** Starts a headless Chromium with a fresh profile in {@code profile}, one page of {@code width}×{@code height}. */
    static HeadlessChromium start(Path profile, int width, int height) throws Exception {
        Process process = new ProcessBuilder(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=" + profile,
                "--window-size=" + width + "," + height, "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        // its stderr, read on a thread of its own: the DevTools address, then whatever it logs (drained)
        CompletableFuture<String> listening = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader err = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = err.readLine(); line != null; line = err.readLine()) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        listening.complete(m.group(1));
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            listening.complete(null);
        }, "chromium-stderr");
        reader.setDaemon(true);
        reader.start();
        String browser;
        try {
            browser = listening.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            browser = null;
        }
        if (browser == null) {
            process.destroyForcibly();
            throw new IllegalStateException("chromium did not open its DevTools port");
        }
        URI browserUri = URI.create(browser);
        HttpClient http = HttpClient.newHttpClient();
        String list = http.send(HttpRequest.newBuilder(URI.create("http://" + browserUri.getAuthority()
                + "/json/list")).timeout(PATIENCE).build(), HttpResponse.BodyHandlers.ofString()).body();
        String page = null;
        for (BsonValue target : BsonArray.parse(list)) {
            if (target.asDocument().getString("type").getValue().equals("page")) {
                page = target.asDocument().getString("webSocketDebuggerUrl").getValue();
                break;
            }
        }
        if (page == null) {
            process.destroyForcibly();
            throw new IllegalStateException("chromium opened no page: " + list);
        }
        return new HeadlessChromium(process, http.newWebSocketBuilder(), URI.create(page));
    }

    /** Sends one DevTools command and waits for its result. */
    BsonDocument call(String method, Document params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<BsonDocument> answer = new CompletableFuture<>();
        pending.put(id, answer);
        socket.sendText(new Document("id", id).append("method", method).append("params", params).toJson(), true)
                .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        BsonDocument reply = answer.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        if (reply.containsKey("error")) {
            throw new IllegalStateException(method + " failed: " + reply.get("error").toString());
        }
        return reply.getDocument("result");
    }

    /** Opens {@code url} in the page. */
    void navigate(String url) throws Exception {
        call("Page.navigate", new Document("url", url));
    }

    /** The value of {@code expression} in the page (awaited when a promise), as JSON-compatible BSON. */
    BsonValue evaluate(String expression) throws Exception {
        BsonDocument result = call("Runtime.evaluate", new Document("expression", expression)
                .append("returnByValue", true).append("awaitPromise", true));
        if (result.containsKey("exceptionDetails")) {
            throw new IllegalStateException("the page threw on " + expression + ": "
                    + result.get("exceptionDetails").toString());
        }
        BsonDocument value = result.getDocument("result");
        return value.containsKey("value") ? value.get("value") : org.bson.BsonNull.VALUE;
    }

    /** {@code expression}'s value as text. */
    String text(String expression) throws Exception {
        BsonValue v = evaluate(expression);
        return v.isString() ? v.asString().getValue() : v.isNull() ? null : v.toString();
    }

    /**
     * Waits until {@code condition} (a JavaScript expression) is true in the page: a promise in the page checks it on
     * every animation frame and resolves then; this call waits for its answer, and fails with {@code what} if none
     * comes within {@link #PATIENCE} (a bound on a failure, not a speed the test relies on).
     */
    void waitFor(String condition, String what) throws Exception {
        try {
            evaluate("new Promise(resolve => { const check = () => { if (" + condition
                    + ") { resolve(true); } else { requestAnimationFrame(check); } }; check(); })");
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the page never showed " + what + " (" + condition + ")", e);
        }
    }

    /** A PNG of the page as it is shown. */
    byte[] screenshot() throws Exception {
        BsonDocument shot = call("Page.captureScreenshot", new Document("format", "png")
                .append("captureBeyondViewport", true));
        return Base64.getDecoder().decode(shot.getString("data").getValue());
    }

    /** Every exception a script of the page threw and did not catch, since the start. */
    List<String> exceptions() {
        return new ArrayList<>(exceptions);
    }

    @Override
    public void close() {
        socket.abort();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder message = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            message.append(data);
            if (last) {
                BsonDocument received = BsonDocument.parse(message.toString());
                message.setLength(0);
                if (received.containsKey("id")) {
                    CompletableFuture<BsonDocument> answer = pending.remove(received.getNumber("id").intValue());
                    if (answer != null) {
                        answer.complete(received);
                    }
                } else if (received.getString("method", new org.bson.BsonString("")).getValue()
                        .equals("Runtime.exceptionThrown")) {
                    exceptions.add(received.getDocument("params").toJson());
                }
            }
            webSocket.request(1);
            return null;
        }
    }
}
