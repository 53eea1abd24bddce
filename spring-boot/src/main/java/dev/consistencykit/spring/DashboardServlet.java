package dev.consistencykit.spring;

import java.io.IOException;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.Map;

import dev.consistencykit.dashboard.Dashboard;
import dev.consistencykit.dashboard.DashboardRequest;
import dev.consistencykit.dashboard.DashboardResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Serves the {@link Dashboard} under {@code consistency-kit.dashboard.path}: the page at the path with a trailing
 * slash (the path alone redirects there), its API below it. Secured like every other path of the application (Spring
 * Security's rules apply to it); its actions need the token besides.
 */
final class DashboardServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient Dashboard dashboard;

    DashboardServlet(Dashboard dashboard) {
        this.dashboard = dashboard;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        // the raw path below the servlet's own: ids in it stay percent-encoded until the dashboard reads them
        String path = request.getRequestURI().substring(request.getContextPath().length()
                + request.getServletPath().length());
        if (path.isEmpty()) {
            response.sendRedirect(request.getRequestURI() + "/");
            return;
        }
        Map<String, String> query = new HashMap<>();
        request.getParameterMap().forEach((name, values) -> {
            if (values.length > 0) {
                query.put(name, values[0]);
            }
        });
        DashboardResponse answer = dashboard.handle(new DashboardRequest(request.getMethod(), path, query,
                request.getHeader(Dashboard.TOKEN_HEADER)));
        Dashboard.HEADERS.forEach(response::setHeader);
        response.setStatus(answer.status());
        response.setContentType(answer.contentType());
        response.setContentLength(answer.length());
        if (!request.getMethod().equals("HEAD")) {
            try (OutputStream out = response.getOutputStream()) {
                answer.writeTo(out);
            }
        }
    }
}
