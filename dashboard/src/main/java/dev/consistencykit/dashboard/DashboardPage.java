package dev.consistencykit.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The page's static files, read from the jar once: {@code index.html}, {@code dashboard.js}, {@code dashboard.css}.
 * No build step and nothing loaded from elsewhere: the charts are SVG the script draws.
 */
final class DashboardPage {

    private static final Map<String, String> FILES = Map.of(
            "/", "index.html",
            "/index.html", "index.html",
            "/dashboard.js", "dashboard.js",
            "/dashboard.css", "dashboard.css");
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8");

    private final Map<String, byte[]> contents;

    DashboardPage() {
        this.contents = Map.of("index.html", read("index.html"), "dashboard.js", read("dashboard.js"),
                "dashboard.css", read("dashboard.css"));
    }

    private static byte[] read(String file) {
        try (InputStream in = DashboardPage.class.getResourceAsStream("page/" + file)) {
            if (in == null) {
                throw new IllegalStateException("the dashboard's " + file + " is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    DashboardResponse serve(String path) {
        String file = FILES.get(path);
        if (file == null) {
            return DashboardResponse.json(404, DashboardJson.of(new org.bson.Document("error", "no such file")));
        }
        return new DashboardResponse(200, TYPES.get(file.substring(file.lastIndexOf('.') + 1)), contents.get(file));
    }
}
