package dev.consistencykit.syncflag;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.function.BiConsumer;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.Workload;

/**
 * The sync flag described once for every runner of the testkit: the blog's users with their posts and comments
 * seeded, one operation as a process makes it on an instance of its own (by default a rename of a user its random
 * picks, one in five an e-mail change, which has no copies), the sweeper as a fresh process runs it, and the blog's
 * invariants (every copy equal to its master, no flag left) read back. A test varies the operation, and may name the
 * values one master may end with.
 */
final class RenameWorkload implements Workload {

    private final int users;
    private final int commentsPerUser;
    private final BiConsumer<MongoDatabase, Random> operation;
    private final String master;
    private final Set<String> names;

    private RenameWorkload(int users, int commentsPerUser, BiConsumer<MongoDatabase, Random> operation, String master,
                           Set<String> names) {
        this.users = users;
        this.commentsPerUser = commentsPerUser;
        this.operation = Objects.requireNonNull(operation, "operation");
        this.master = master;
        this.names = names;
    }

    /** Random renames and e-mail changes of {@code users} users, each with {@code commentsPerUser} comments. */
    static RenameWorkload renames(int users, int commentsPerUser) {
        return new RenameWorkload(users, commentsPerUser, (db, random) -> {
            String user = "u" + random.nextInt(users);
            String op = "op-" + Long.toHexString(random.nextLong());
            SyncFlag sync = Blog.sync(db).build();
            if (random.nextInt(5) == 0) {
                sync.apply(new MasterUpdate(OperationId.of(op), user, Updates.set("email", op + "@x")));
            } else {
                sync.apply(new MasterUpdate(OperationId.of(op), user, Updates.set("name", "Name " + op)));
            }
        }, null, null);
    }

    /** The same blog with {@code value} as its one operation (it builds its instances on the database it is given). */
    RenameWorkload operation(BiConsumer<MongoDatabase, Random> value) {
        return new RenameWorkload(users, commentsPerUser, value, master, names);
    }

    /** The same blog, where user {@code id} must end named one of {@code allowed}. */
    RenameWorkload endingNamed(String id, Set<String> allowed) {
        return new RenameWorkload(users, commentsPerUser, operation, id, Set.copyOf(allowed));
    }

    @Override
    public void seed(MongoDatabase database) {
        Blog.seed(database, users, commentsPerUser);
    }

    @Override
    public void operate(MongoDatabase database, Random random) {
        operation.accept(database, random);
    }

    @Override
    public void recover(MongoDatabase database) {
        Blog.sync(database).build().recover(Duration.ZERO);
    }

    @Override
    public List<String> invariants(MongoDatabase database) {
        List<String> problems = new ArrayList<>(Blog.invariants(database));
        if (master != null && !names.contains(Blog.nameOf(database, master))) {
            problems.add("master " + master + " is named " + Blog.nameOf(database, master));
        }
        return problems;
    }

    @Override
    public String toString() {
        return "renames of " + users + " users";
    }
}
