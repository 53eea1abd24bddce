package dev.consistencykit.sample;

import java.net.URI;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.twophase.TransactionCanceledException;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/**
 * The service's HTTP API: accounts and transfers between them, orders and their shipping. Every error is the kit's
 * typed exception mapped to a status; a client that retries a request with the same id changes nothing twice.
 */
@RestController
public class SampleController {

    /** A transfer request: its id is the client's idempotency key. */
    public record TransferRequest(String id, String from, String to, long amount) {
    }

    /** An order request. */
    public record OrderRequest(String id, String item, int quantity) {
    }

    private final TwoPhaseCommit payments;
    private final MongoCollection<Account> accounts;
    private final Orders orders;

    /** The controller over the instances the starter made. */
    public SampleController(TwoPhaseCommit payments, MongoCollection<Account> accounts, Orders orders) {
        this.payments = payments;
        this.accounts = accounts;
        this.orders = orders;
    }

    /** Opens an account with a balance. */
    @PostMapping("/accounts")
    public ResponseEntity<Account> open(@RequestBody Account account) {
        accounts.insertOne(account);
        return ResponseEntity.created(URI.create("/accounts/" + account.id())).body(account);
    }

    /** An account's settled balance: what no transfer in flight is part of. */
    @GetMapping("/accounts/{id}")
    public ResponseEntity<Account> account(@PathVariable("id") String id) {
        Account account = accounts.find(Filters.eq("_id", id)).first();
        return account == null ? ResponseEntity.notFound().build() : ResponseEntity.ok(account);
    }

    /** Moves money, all or nothing: 200 with the transfer's state; 409 when it was canceled (no funds, no account). */
    @PostMapping("/transfers")
    public Map<String, String> transfer(@RequestBody TransferRequest request) {
        OperationResult result = payments.transfer(Transfer.of(OperationId.of(request.id()), request.from(),
                request.to(), request.amount()));
        return Map.of("id", request.id(), "state", result.state(), "outcome", result.outcome().name());
    }

    /** Places an order with its shipping job, in one write: 201 with the job's id, 409 if the id is taken. */
    @PostMapping("/orders")
    public ResponseEntity<Map<String, String>> order(@RequestBody OrderRequest request) {
        return orders.place(Order.placed(request.id(), request.item(), request.quantity()))
                .map(job -> ResponseEntity.created(URI.create("/orders/" + request.id()))
                        .body(Map.of("order", request.id(), "job", String.valueOf(job.value()))))
                .orElseGet(() -> ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("order", request.id(),
                        "error", "an order with this id exists")));
    }

    /** An order as stored now: {@code placed}, then {@code shipped} once its job ran. */
    @GetMapping("/orders/{id}")
    public ResponseEntity<Order> order(@PathVariable("id") String id) {
        return orders.find(id).map(ResponseEntity::ok).orElseGet(() -> ResponseEntity.notFound().build());
    }

    @ExceptionHandler(TransactionCanceledException.class)
    ResponseEntity<Map<String, String>> canceled(TransactionCanceledException e) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", e.getMessage()));
    }

    @ExceptionHandler({InvalidInputException.class, IdempotencyConflictException.class})
    ResponseEntity<Map<String, String>> invalid(ConsistencyException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
    }

    @ExceptionHandler(ConsistencyException.class)
    ResponseEntity<Map<String, String>> unavailable(ConsistencyException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", e.getMessage()));
    }
}
