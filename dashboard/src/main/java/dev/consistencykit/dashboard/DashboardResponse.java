package dev.consistencykit.dashboard;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** What the dashboard answers: a status, a content type and the body. Immutable. */
public final class DashboardResponse {

    private final int status;
    private final String contentType;
    private final byte[] body;

    /**
     * @param status      the HTTP status
     * @param contentType the body's media type
     * @param body        the body (copied)
     */
    public DashboardResponse(int status, String contentType, byte[] body) {
        this.status = status;
        this.contentType = Objects.requireNonNull(contentType, "contentType");
        this.body = body.clone();
    }

    static DashboardResponse json(int status, String json) {
        return new DashboardResponse(status, "application/json; charset=utf-8", json.getBytes(StandardCharsets.UTF_8));
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** The body's media type. */
    public String contentType() {
        return contentType;
    }

    /** The body's length in bytes. */
    public int length() {
        return body.length;
    }

    /** Writes the body to {@code out}. */
    public void writeTo(OutputStream out) throws IOException {
        out.write(body);
    }

    /** The body as text. */
    public String text() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
