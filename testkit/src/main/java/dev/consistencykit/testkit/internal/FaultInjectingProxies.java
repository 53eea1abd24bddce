package dev.consistencykit.testkit.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Optional;
import java.util.Set;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

/** Dynamic proxies over the driver's {@code MongoDatabase} and {@code MongoCollection} that ask {@link WriteFaults}. */
public final class FaultInjectingProxies {

    private static final Set<String> WRITE_METHODS = Set.of("insertOne", "insertMany", "updateOne", "updateMany",
            "replaceOne", "deleteOne", "deleteMany", "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete",
            "bulkWrite");
    /** The calls of a collection that read from the server (the iterable they return is read at once). */
    private static final Set<String> READ_METHODS = Set.of("find", "aggregate", "countDocuments",
            "estimatedDocumentCount", "distinct", "listIndexes");

    private FaultInjectingProxies() {
    }

    /** A proxy of {@code database} reporting to {@code injector}. */
    public static MongoDatabase database(MongoDatabase database, WriteFaults<?> injector) {
        return (MongoDatabase) Proxy.newProxyInstance(FaultInjectingProxies.class.getClassLoader(),
                new Class<?>[] {MongoDatabase.class}, new Handler<>(database, injector, null));
    }

    /** A proxy of {@code collection} reporting to {@code injector}. */
    @SuppressWarnings("unchecked")
    public static <T> MongoCollection<T> collection(MongoCollection<T> collection, WriteFaults<?> injector) {
        return (MongoCollection<T>) Proxy.newProxyInstance(FaultInjectingProxies.class.getClassLoader(),
                new Class<?>[] {MongoCollection.class}, new Handler<>(collection, injector,
                        collection.getNamespace().getCollectionName()));
    }

    private static final class Handler<F> implements InvocationHandler {

        private final Object target;
        private final WriteFaults<F> injector;
        private final String collectionName;

        Handler(Object target, WriteFaults<F> injector, String collectionName) {
            this.target = target;
            this.injector = injector;
            this.collectionName = collectionName;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> "FaultInjecting[" + target + "]";
                };
            }
            String name = method.getName();
            injector.checkAlive(name);
            if (collectionName != null && WRITE_METHODS.contains(name)) {
                Optional<F> fault = injector.beforeWrite(name, collectionName);
                if (fault.isPresent()) {
                    injector.applyBefore(fault.get());
                    Object result;
                    try {
                        result = call(method, args);
                    } finally {
                        // A crash after the write dies even when the server answered with an error; a transient
                        // error after the write replaces its outcome: either way the reply is lost.
                        injector.applyAfter(fault.get());
                    }
                    return wrapResult(result);
                }
            } else if (collectionName != null && READ_METHODS.contains(name)) {
                injector.beforeRead(name, collectionName);
            }
            return wrapResult(call(method, args));
        }

        private Object call(Method method, Object[] args) throws Throwable {
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }

        /**
         * A collection or database obtained through this proxy, proxied for this injector too: also when it is a proxy
         * of another injector already (a process faulted by two injectors, one wrapped around the other).
         */
        private Object wrapResult(Object result) {
            if (result instanceof MongoCollection<?> c && !ours(result)) {
                return collection(c, injector);
            }
            if (result instanceof MongoDatabase d && !ours(result)) {
                return database(d, injector);
            }
            return result;
        }

        private boolean ours(Object result) {
            return Proxy.isProxyClass(result.getClass())
                    && Proxy.getInvocationHandler(result) instanceof Handler<?> h && h.injector == injector;
        }
    }
}
