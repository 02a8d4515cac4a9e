
import java.io.*;
import java.lang.reflect.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.security.*;
import java.util.*;
import java.util.concurrent.*;

public final class KaserHarness {
    /** Loads one program; its classes get only the permissions below, whatever calls them. */
    static final class StudentLoader extends URLClassLoader {
        /** A class of this program may have a finalizer, which the JVM's Finalizer thread runs whenever
         *  it likes, maybe during a later program: a class file that names "finalize" at all counts. */
        volatile boolean finalizable;

        StudentLoader(URL[] urls) { super(urls, ClassLoader.getPlatformClassLoader()); }

        @Override protected Class<?> findClass(String name) throws ClassNotFoundException {
            Class<?> k = super.findClass(name);
            if (!finalizable) finalizable = AccessController.doPrivileged((PrivilegedAction<Boolean>) () -> names(name, FINALIZE));
            return k;
        }

        /** Whether the class file of `name` holds `text` (its constant pool holds every member name). */
        boolean names(String name, byte[] text) {
            URL file = findResource(name.replace('.', '/') + ".class");
            if (file == null) return true;
            byte[] bytes;
            try (InputStream in = file.openStream()) { bytes = in.readAllBytes(); }
            catch (IOException e) { return true; }
            outer:
            for (int i = 0; i + text.length <= bytes.length; i++) {
                for (int j = 0; j < text.length; j++) if (bytes[i + j] != text[j]) continue outer;
                return true;
            }
            return false;
        }
        @Override protected PermissionCollection getPermissions(CodeSource source) {
            Permissions granted = new Permissions();
            granted.add(new FilePermission(WORK, "read"));
            granted.add(new FilePermission(WORK + File.separator + "-", "read,write,delete"));
            granted.add(new PropertyPermission("*", "read"));
            return granted;
        }
    }

    static final byte[] FINALIZE = "finalize".getBytes(StandardCharsets.US_ASCII);
    static String WORK = "/work";
    static volatile Integer exitStatus;  // set by the case threads only

    /** Everything but student code holds every permission; student code holds what its loader grants. */
    static final class HarnessPolicy extends Policy {
        @Override public boolean implies(ProtectionDomain domain, Permission p) {
            return !(domain.getClassLoader() instanceof StudentLoader);
        }
        @Override public PermissionCollection getPermissions(ProtectionDomain domain) {
            Permissions all = new Permissions();
            if (!(domain.getClassLoader() instanceof StudentLoader)) all.add(new AllPermission());
            return all;
        }
    }

    /**
     * The standard access-control check (every frame's protection domain, and the context a thread
     * or proxy inherited from the code that made it), so a student's thread, proxy or callback
     * holds no more than the student. Threads outside the case threads' group are off limits.
     */
    static final class Guard extends SecurityManager {
        @Override public void checkPermission(Permission p) {
            try { super.checkPermission(absolute(p)); }
            catch (AccessControlException e) { throw denied(p); }
        }

        @Override public void checkPermission(Permission p, Object context) {
            try { super.checkPermission(absolute(p), context); }
            catch (AccessControlException e) { throw denied(p); }
        }

        /** A file permission for a relative or unnormalized path ("big.bin", "/./proc") made absolute. */
        static Permission absolute(Permission p) {
            if (!(p instanceof FilePermission) || p.getName().equals("<<ALL FILES>>")) return p;
            String name = p.getName(), tail = "";
            if (name.equals("-") || name.equals("*")) { tail = name; name = "."; }
            else if (name.endsWith(File.separator + "-") || name.endsWith(File.separator + "*")) {
                tail = name.substring(name.length() - 1); name = name.substring(0, name.length() - 2);
            }
            String path = Paths.get(name).toAbsolutePath().normalize().toString();
            if (!tail.isEmpty()) path = path.equals("/") ? "/" + tail : path + File.separator + tail;
            return new FilePermission(path, p.getActions());
        }

        static SecurityException denied(Permission p) {
            String actions = p.getActions();
            return new SecurityException("sandbox: " + p.getClass().getSimpleName() + " " + p.getName()
                + (actions == null || actions.isEmpty() ? "" : " " + actions) + " is not allowed");
        }

        @Override public void checkExit(int status) {
            try { super.checkExit(status); }
            catch (SecurityException e) {
                if (ours(Thread.currentThread().getThreadGroup())) exitStatus = status;  // not a stray thread's
                throw e;
            }
        }

        static boolean ours(ThreadGroup g) {
            return g != null && RUNNER.group.parentOf(g);  // parentOf walks the groups without a check
        }

        @Override public void checkAccess(Thread t) {
            super.checkAccess(t);
            if (!ours(t.getThreadGroup())) checkPermission(new RuntimePermission("modifyThread"));
        }

        @Override public void checkAccess(ThreadGroup g) {
            super.checkAccess(g);
            if (!ours(g)) checkPermission(new RuntimePermission("modifyThreadGroup"));
        }
    }

    static final class Capture extends OutputStream {
        final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        int limit;
        @Override public synchronized void write(int b) { if (kept.size() < limit) kept.write(b); }
        @Override public synchronized void write(byte[] b, int off, int len) {
            kept.write(b, off, Math.max(0, Math.min(len, limit - kept.size())));
        }
        synchronized String take() { String s = kept.toString(StandardCharsets.UTF_8); kept.reset(); return s; }
    }

    /** The thread that runs one program's cases, replaced for the next program or when a case has
     *  to be stopped. */
    static final class Runner {
        // CPU time of the case thread; -1 where the JVM cannot measure it (then wall-clock time)
        static final java.lang.management.ThreadMXBean CPU =
            java.lang.management.ManagementFactory.getThreadMXBean();
        static final Runnable STOP = () -> { };
        volatile ThreadGroup group = new ThreadGroup("kaser-cases");
        final SynchronousQueue<Runnable> work = new SynchronousQueue<>();
        long stackBytes;
        Thread thread;
        volatile Thread stopped;  // the case thread the time limit stopped: only its ThreadDeath is ours

        /**
         * A new case thread, in a new group, for the next program: what a program leaves on its
         * thread (thread-locals, which live as long as the thread, its name, an interrupt) or its
         * group dies with them. False when the old thread does not end.
         */
        boolean renew() throws InterruptedException {
            if (thread != null) {
                work.put(STOP);
                thread.join(1000);
                if (thread.isAlive()) return false;
                thread = null;
            }
            try { group.destroy(); } catch (IllegalThreadStateException e) { }  // so groups do not pile up
            group = new ThreadGroup("kaser-cases");
            return true;
        }

        /**
         * Runs body on the case thread; false when it ran out of time (the thread is then stopped).
         * The limit is the case thread's CPU time, so a case that a busy machine keeps off the CPU
         * is not a hang; a case that waits without using the CPU (sleep, a lock) is stopped after
         * 2 x the limit + 2 s of wall-clock time.
         */
        boolean run(Runnable body, long timeoutMs) throws InterruptedException {
            if (thread == null) {
                thread = new Thread(group, () -> {
                    while (true) {
                        try {
                            Thread.interrupted();
                            Runnable next = work.take();
                            if (next == STOP) return;
                            next.run();
                        } catch (InterruptedException e) { }  // student code interrupted us: wait again
                    }
                }, "kaser-case", stackBytes);
                thread.setDaemon(true);
                thread.start();
            }
            CountDownLatch done = new CountDownLatch(1);
            work.put(() -> { try { body.run(); } finally { done.countDown(); } });
            long started = System.nanoTime(), cpuStart = CPU.getThreadCpuTime(thread.getId());
            long limit = timeoutMs * 1_000_000L, backstop = 2 * limit + 2_000_000_000L;
            while (!done.await(Math.max(1, Math.min(10, timeoutMs)), TimeUnit.MILLISECONDS)) {
                long wall = System.nanoTime() - started;  // the thread serves every case
                long cpu = cpuStart < 0 ? wall : CPU.getThreadCpuTime(thread.getId()) - cpuStart;
                if (cpu > limit || wall > backstop) break;
            }
            if (done.getCount() == 0) return true;
            // A stopped thread dies at its next safepoint, within milliseconds, or (a tight loop
            // that never polls) not at all: waiting longer than this only delays the restart.
            stopped = thread;
            try { thread.stop(); } catch (UnsupportedOperationException e) { }
            thread.join(100);
            thread = null;
            return false;
        }

        boolean alone() { return group.activeCount() <= (thread == null ? 0 : 1); }
    }

    static final Runner RUNNER = new Runner();
    static final Capture CAPTURE = new Capture();
    static Writer results;
    static boolean restart;  // the JVM is no longer clean: a case left threads behind or started strangers
    static final Set<Thread> KNOWN = new HashSet<>();  // the JVM's own threads, before any program ran
    static ThreadGroup ROOT;
    static final String TIMEOUT = "\"status\":\"timeout\"";

    static void emit(String line) throws IOException { results.write(line + "\n"); results.flush(); }

    static List<Thread> threads() {
        Thread[] all = new Thread[ROOT.activeCount() + 16];
        int n = ROOT.enumerate(all, true);
        return Arrays.asList(all).subList(0, n);
    }

    /** Whether a thread outside the case threads' group was started since the harness began: student
     *  code handed to a JVM thread pool (the common ForkJoinPool) runs there, out of sight of alone(). */
    static boolean strangers() {
        for (Thread t : threads()) if (!KNOWN.contains(t) && !Guard.ours(t.getThreadGroup())) return true;
        return false;
    }

    public static void main(String[] argv) throws Exception {
        long timeoutMs = 2000;
        int firstCase = 0;
        boolean stopAfterTimeout = false, wipeWork = false;
        List<String[]> programs = new ArrayList<>();  // {index, class, entry}
        List<List<String>> tests = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(argv[0]), StandardCharsets.UTF_8)) {
            String[] kv = line.split(" ", 2);
            switch (kv[0]) {
                case "timeout_ms": timeoutMs = Long.parseLong(kv[1]); break;
                case "output_chars": CAPTURE.limit = Integer.parseInt(kv[1]); break;
                case "stack_bytes": RUNNER.stackBytes = Long.parseLong(kv[1]); break;
                case "first_case": firstCase = Integer.parseInt(kv[1]); break;
                case "stop_after_timeout": stopAfterTimeout = kv[1].equals("1"); break;
                case "wipe_work": wipeWork = kv[1].equals("1"); break;
                case "program": programs.add(kv[1].split(" ")); tests.add(new ArrayList<>()); break;
                case "test": tests.get(tests.size() - 1).add(kv[1]); break;
                default: break;
            }
        }
        Path classDir = Paths.get(argv[1]);  // program i's classes, and nothing else, in classDir/i
        results = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8));
        PrintStream studentOut = new PrintStream(CAPTURE, true, StandardCharsets.UTF_8);
        System.setOut(studentOut);
        System.setErr(studentOut);
        System.setIn(new ByteArrayInputStream(new byte[0]));
        boolean guarded = true;
        WORK = Paths.get(argv[2]).toAbsolutePath().normalize().toString();
        try { Policy.setPolicy(new HarnessPolicy()); System.setSecurityManager(new Guard()); }
        catch (UnsupportedOperationException | SecurityException e) { guarded = false; }
        CAPTURE.take();
        ROOT = Thread.currentThread().getThreadGroup();
        while (ROOT.getParent() != null) ROOT = ROOT.getParent();
        KNOWN.addAll(threads());
        emit("{\"ready\":true,\"guarded\":" + guarded + "}");
        StudentLoader loader = null;
        for (int i = 0; i < programs.size(); i++) {
            // A fresh JVM in a fresh jail runs the rest where what a previous program left could reach
            // this one: finalizers, a case thread that does not end (files it left that cannot be
            // removed: below, before its last record).
            if ((loader != null && loader.finalizable) || !RUNNER.renew()) {
                emit("{\"restart\":true}");
                Runtime.getRuntime().halt(0);
            }
            String index = programs.get(i)[0], entry = programs.get(i)[2];
            Class<?> k = null;
            String problem = null;
            loader = new StudentLoader(new URL[]{classDir.resolve(index).toUri().toURL()});
            try { k = Class.forName(programs.get(i)[1], false, loader); }
            catch (Throwable t) { problem = t.toString(); }
            for (int c = i == 0 ? firstCase : 0; c < tests.get(i).size(); c++) {
                String record;
                try {
                    record = problem != null ? exception("NoClassDefFoundError", problem)
                        : runCase(k, entry, tests.get(i).get(c), timeoutMs);
                } catch (RuntimeException e) {
                    record = exception("IllegalArgumentException", "bad test case: " + e);
                } catch (Error e) {  // e.g. no thread can be started any more: a fresh JVM retries
                    emit("{\"restart\":true}");
                    Runtime.getRuntime().halt(0);
                    return;
                }
                boolean stop = stopAfterTimeout && record.startsWith(TIMEOUT);  // the supervisor skips the rest
                String line = "{\"p\":" + index + ",\"c\":" + c + "," + record + ",\"output\":" + quote(CAPTURE.take()) + "}";
                // The program's working folder is emptied before its last record goes out, so the
                // time that takes is charged to this program, not to the next one's first case.
                boolean last = restart || stop || c + 1 >= tests.get(i).size();
                if (last && wipeWork && !wipe(Paths.get(WORK))) restart = true;
                emit(line);
                if (restart) { emit("{\"restart\":true}"); Runtime.getRuntime().halt(0); }
                if (stop) break;
            }
        }
        emit("{\"end\":true}");
        Runtime.getRuntime().halt(0);
    }

    /** Empty `work` whatever modes a program left there (each folder is made accessible before it
     *  is listed), without recursion; false when anything is left. */
    static boolean wipe(Path work) {
        File top = work.toFile();
        ArrayDeque<File> todo = new ArrayDeque<>();
        ArrayList<File> folders = new ArrayList<>();  // parents before their children
        todo.push(top);
        while (!todo.isEmpty()) {
            File folder = todo.pop();
            if (folder != top) { folder.setReadable(true, true); folder.setWritable(true, true); folder.setExecutable(true, true); }
            File[] entries = folder.listFiles();
            if (entries == null) continue;
            folders.add(folder);
            for (File entry : entries) {
                if (Files.isDirectory(entry.toPath(), LinkOption.NOFOLLOW_LINKS)) todo.push(entry);
                else entry.delete();
            }
        }
        for (int i = folders.size() - 1; i > 0; i--) folders.get(i).delete();
        String[] left = top.list();
        return left != null && left.length == 0;
    }

    static String exception(String type, String detail) {
        return "\"status\":\"exception\",\"exception\":" + quote(cut(type, 201)) + ",\"detail\":" + quote(cut(detail, 300));
    }

    /** At most `limit` characters of `s`: every text of a record has a fixed size (a student's class
     *  name can be 65,535 characters long). */
    static String cut(String s, int limit) { return s.length() > limit ? s.substring(0, limit) : s; }

    /** Methods called `name` taking `arity` parameters, in the class or a class nested in it. */
    static List<Method> findEntries(Class<?> k, String name, int arity) {
        List<Class<?>> owners = new ArrayList<>();
        owners.add(k);
        owners.addAll(Arrays.asList(k.getDeclaredClasses()));
        List<Method> found = new ArrayList<>();
        for (Class<?> owner : owners)
            for (Method m : owner.getDeclaredMethods())
                if (m.getName().equals(name) && m.getParameterCount() == arity) found.add(m);
        return found;
    }

    static Object instance(Class<?> k) throws Exception {
        if (k.getEnclosingClass() != null && !Modifier.isStatic(k.getModifiers())) {
            Constructor<?> inner = k.getDeclaredConstructor(k.getEnclosingClass());
            inner.setAccessible(true);
            return inner.newInstance(instance(k.getEnclosingClass()));
        }
        Constructor<?> plain = k.getDeclaredConstructor();
        plain.setAccessible(true);
        return plain.newInstance();
    }

    static String runCase(Class<?> k, String entry, String testJson, long timeoutMs) throws Exception {
        List<?> args = (List<?>) new Json(testJson).value();
        List<Method> candidates = findEntries(k, entry, args.size());
        if (candidates.isEmpty())
            return exception("NoSuchMethodError", "no method " + entry + " taking " + args.size() + " arguments");
        Method m = null;
        Object[] converted = new Object[args.size()];
        RuntimeException misfit = null;
        for (Method candidate : candidates) {  // overloads: the first whose parameters fit the input
            Type[] types = candidate.getGenericParameterTypes();
            try {
                for (int i = 0; i < converted.length; i++) converted[i] = convert(args.get(i), types[i]);
                m = candidate;
                break;
            } catch (RuntimeException e) {
                misfit = e;
            }
        }
        if (m == null)
            return exception("IllegalArgumentException", "test input does not fit " + entry + ": " + misfit);
        final Method method = m;
        method.setAccessible(true);
        Object[] outcome = new Object[2];
        exitStatus = null;
        boolean finished = RUNNER.run(() -> {
            try {
                Object target = Modifier.isStatic(method.getModifiers()) ? null : instance(method.getDeclaringClass());
                outcome[1] = method.invoke(target, converted);
                outcome[0] = "returned";
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof ThreadDeath && RUNNER.stopped == Thread.currentThread())
                    throw (ThreadDeath) e.getCause();
                outcome[0] = "raised"; outcome[1] = e.getCause();
            } catch (ThreadDeath e) {
                // the time limit stopped this thread: let it end, so the JVM can go on; one the
                // student threw is the student's exception, and the thread serves the next case
                if (RUNNER.stopped == Thread.currentThread()) throw e;
                outcome[0] = "raised"; outcome[1] = e;
            } catch (Throwable e) {
                outcome[0] = "raised"; outcome[1] = e;
            }
        }, timeoutMs);
        restart = !RUNNER.alone() || strangers();  // threads the student started are still running
        if (!finished) return TIMEOUT + ",\"detail\":\"time limit exceeded\"";
        if (exitStatus != null)
            return "\"status\":\"exit\",\"detail\":" + quote("System.exit(" + exitStatus + ")");
        if ("returned".equals(outcome[0])) {
            Object value = outcome[1];
            if (m.getReturnType() == void.class) value = null;
            StringBuilder json = new StringBuilder();
            try { toJson(value, json); } catch (Throwable e) {
                return "\"status\":\"returned\",\"actual\":null,\"detail\":" + quote("returned value could not be serialized: " + e);
            }
            if (json.length() > 100L * CAPTURE.limit)
                return "\"status\":\"returned\",\"actual\":null,\"detail\":\"returned value too large\"";
            return "\"status\":\"returned\",\"actual\":" + quote(json.toString());
        }
        Throwable e = (Throwable) outcome[1];
        String status = e instanceof StackOverflowError || e instanceof OutOfMemoryError ? "memory" : "exception";
        String message = String.valueOf(e.getMessage());
        if (message.length() > 300) message = message.substring(0, 300);
        return "\"status\":\"" + status + "\",\"exception\":" + quote(cut(e.getClass().getSimpleName(), 201)) + ",\"detail\":" + quote(message);
    }

    static Object convert(Object v, Type type) {
        Class<?> raw = type instanceof Class ? (Class<?>) type
            : type instanceof ParameterizedType ? (Class<?>) ((ParameterizedType) type).getRawType() : Object.class;
        if (v == null) return null;
        if (raw == int.class || raw == Integer.class) return Math.toIntExact(((Number) v).longValue());
        if (raw == long.class || raw == Long.class) return ((Number) v).longValue();
        if (raw == double.class || raw == Double.class) return ((Number) v).doubleValue();
        if (raw == float.class || raw == Float.class) return ((Number) v).floatValue();
        if (raw == short.class || raw == Short.class) return ((Number) v).shortValue();
        if (raw == byte.class || raw == Byte.class) return ((Number) v).byteValue();
        if (raw == boolean.class || raw == Boolean.class) return (Boolean) v;
        if (raw == char.class || raw == Character.class) {
            if (v instanceof Number) return (char) ((Number) v).intValue();
            String s = (String) v;
            if (s.length() != 1) throw new IllegalArgumentException("not a single character: " + s);
            return s.charAt(0);
        }
        if (raw == String.class) return (String) v;
        if (raw.isArray()) {
            List<?> items = (List<?>) v;
            Object array = Array.newInstance(raw.getComponentType(), items.size());
            for (int i = 0; i < items.size(); i++) Array.set(array, i, convert(items.get(i), raw.getComponentType()));
            return array;
        }
        Type[] params = type instanceof ParameterizedType ? ((ParameterizedType) type).getActualTypeArguments() : new Type[0];
        if (Map.class.isAssignableFrom(raw)) {
            Map<Object, Object> map = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                Object key = e.getKey();
                if (params.length == 2 && params[0] != String.class) key = convert(new Json((String) key).value(), params[0]);
                map.put(key, params.length == 2 ? convert(e.getValue(), params[1]) : e.getValue());
            }
            return map;
        }
        if (Collection.class.isAssignableFrom(raw) || raw == Iterable.class) {
            Collection<Object> out = Set.class.isAssignableFrom(raw) ? new LinkedHashSet<>() : new ArrayList<>();
            for (Object item : (List<?>) v) out.add(params.length == 1 ? convert(item, params[0]) : item);
            return out;
        }
        return v;
    }

    static void toJson(Object v, StringBuilder sb) {
        if (v == null) sb.append("null");
        else if (v instanceof String || v instanceof Character) sb.append(quote(v.toString()));
        else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            sb.append(Double.isNaN(d) ? "NaN" : Double.isInfinite(d) ? (d > 0 ? "Infinity" : "-Infinity") : v.toString());
        } else if (v instanceof Number || v instanceof Boolean) sb.append(v);
        else if (v.getClass().isArray() || v instanceof Iterable) {
            List<Object> items = new ArrayList<>();
            if (v instanceof Iterable) for (Object o : (Iterable<?>) v) items.add(o);
            else for (int i = 0; i < Array.getLength(v); i++) items.add(Array.get(v, i));
            sb.append('[');
            for (int i = 0; i < items.size(); i++) { if (i > 0) sb.append(", "); toJson(items.get(i), sb); }
            sb.append(']');
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) sb.append(", ");
                first = false;
                sb.append(quote(String.valueOf(e.getKey()))).append(": ");
                toJson(e.getValue(), sb);
            }
            sb.append('}');
        } else if (v.getClass().getClassLoader() instanceof StudentLoader) {
            sb.append(quote(v.getClass().getSimpleName() + " object"));  // its toString() is student code
        } else sb.append(quote(String.valueOf(v)));
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
            else if (ch < 0x20 || ch == 0x2028 || ch == 0x2029) sb.append(String.format("\\u%04x", (int) ch));
            else sb.append(ch);
        }
        return sb.append('"').toString();
    }

    /** Just enough JSON for test arguments: null, booleans, numbers, strings, arrays, objects. */
    static final class Json {
        final String s;
        int i;
        Json(String s) { this.s = s; }

        Object value() {
            skip();
            char ch = s.charAt(i);
            if (ch == '[') {
                i++;
                List<Object> items = new ArrayList<>();
                skip();
                if (s.charAt(i) == ']') { i++; return items; }
                while (true) {
                    items.add(value());
                    skip();
                    if (s.charAt(i++) == ']') return items;
                }
            }
            if (ch == '{') {
                i++;
                Map<String, Object> map = new LinkedHashMap<>();
                skip();
                if (s.charAt(i) == '}') { i++; return map; }
                while (true) {
                    skip();
                    String key = (String) value();
                    skip(); i++;
                    map.put(key, value());
                    skip();
                    if (s.charAt(i++) == '}') return map;
                }
            }
            if (ch == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return true; }
            if (s.startsWith("false", i)) { i += 5; return false; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String number = s.substring(start, i);
            if (number.contains(".") || number.contains("e") || number.contains("E")) return Double.parseDouble(number);
            return Long.parseLong(number);
        }

        String string() {
            StringBuilder sb = new StringBuilder();
            i++;
            while (s.charAt(i) != '"') {
                char ch = s.charAt(i++);
                if (ch != '\\') { sb.append(ch); continue; }
                char esc = s.charAt(i++);
                switch (esc) {
                    case 'n': sb.append('\n'); break;
                    case 't': sb.append('\t'); break;
                    case 'r': sb.append('\r'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'u': sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: sb.append(esc);
                }
            }
            i++;
            return sb.toString();
        }

        void skip() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
    }
}
