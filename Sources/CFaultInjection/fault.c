// libptkfault.so: a preload library that fails or crashes one chosen system call of a running
// program, for the fault tests (Tests/EndToEndTests/FaultInjectionTests.swift, docs/SECURITY.md).
// It is built beside the programs and never linked into them, installed or packaged: a test
// runs ptkd with LD_PRELOAD pointing at it.
//
// Calls are counted only on the threads whose name (pthread_setname_np; ptkd names each thread
// by its role) starts with one of PTK_FAULT_THREADS's comma-separated prefixes, or on every
// thread with "*". Without PTK_FAULT_THREADS the library only passes calls through.
//
// PTK_FAULT=KIND:ACTION:WHEN
//   KIND    open write flush link rename unlink mkdir chmod chown truncate allocate utimes read
//           wait (poll, flock, accept4: EINTR only), or any: every wrapped call (with KILL, the
//           "other" ones below included)
//   ACTION  an errno name (EIO ENOSPC EDQUOT EROFS EMFILE ENFILE EINTR EAGAIN ECONNRESET), the
//           call failing with it and not made; or KILL: SIGKILL to the process before the call
//   WHEN    N: the Nth call of KIND counted (all counted threads together), once;
//           odd or even: every odd or even call of each KIND on each counted thread, counted per
//           thread and kind, so each retry of a failed call succeeds.
// SIGUSR2 ends the counting and the fault, if not made yet: the test sends it once the part
//   under test is over, so that its next steps run as usual; "disarmed" is then recorded.
// PTK_FAULT_RECORD=FILE appends a line per counted call: the number among all counted calls,
//   the number among its kind's, the kind, the function, and its call site as the return
//   addresses (module+offset) of up to 8 callers; a fault made is written as a line "fault ...".
//
// Wrapped: the libc functions for those kinds (open, openat, and openat2 through syscall();
// write, pwrite, writev, send, sendto, sendmsg; fsync, fdatasync, syncfs; link, linkat;
// rename, renameat, renameat2; unlink, unlinkat, rmdir; mkdir, mkdirat; chmod, fchmod,
// fchmodat; chown, fchown, lchown, fchownat; truncate, ftruncate; fallocate, posix_fallocate;
// utimensat, futimens; read, pread, readv, recv, recvfrom, recvmsg; poll, flock, accept4) and,
// as "other" calls that only KILL stops at, close, fstat, fstatat, stat, lstat, lseek and
// posix_fadvise. Calls the C library makes inside itself are not seen (strace sees them).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind { K_OPEN, K_WRITE, K_FLUSH, K_LINK, K_RENAME, K_UNLINK, K_MKDIR, K_CHMOD, K_CHOWN, K_TRUNCATE,
            K_ALLOCATE, K_UTIMES, K_READ, K_WAIT, K_OTHER, K_COUNT, K_ANY = K_COUNT };
static const char *kind_names[] = { "open", "write", "flush", "link", "rename", "unlink", "mkdir", "chmod",
                                    "chown", "truncate", "allocate", "utimes", "read", "wait", "other", "any" };

static struct {
    int configured;          // PTK_FAULT_THREADS was given
    char prefixes[8][16];
    int prefix_count;
    int all_threads;
    int kind;                // K_ANY for any
    int action;              // an errno, or -1 for KILL
    long when;               // N, or 0 for odd/even
    int parity;              // 1 odd, 2 even (when == 0)
    int record_fd;
} config = { .record_fd = -1, .kind = -1 };

static atomic_long counted_all;
static atomic_long counted_kind[K_COUNT];
static atomic_int fired;
static volatile sig_atomic_t disarmed;

/// SIGUSR2: no more counting or fault; "disarmed" in the record says it took effect.
static void disarm(int signal) {
    (void)signal;
    disarmed = 1;
    static const char line[] = "disarmed\n";
    if (config.record_fd >= 0) syscall(SYS_write, config.record_fd, line, sizeof line - 1);
}

static __thread int in_hook;        // the library's own calls are not counted
static __thread int thread_state;   // 0 unknown, 1 counted, 2 not counted
static __thread long thread_kind_count[K_COUNT];

static const struct { const char *name; int value; } errnos[] = {
    { "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT }, { "EROFS", EROFS }, { "EMFILE", EMFILE },
    { "ENFILE", ENFILE }, { "EINTR", EINTR }, { "EAGAIN", EAGAIN }, { "ECONNRESET", ECONNRESET },
};

#define REAL(name) static __typeof__(name) *real_##name; if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

static long raw_write(int fd, const void *buf, size_t n) { return syscall(SYS_write, fd, buf, n); }

__attribute__((constructor)) static void setup(void) {
    in_hook = 1;
    const char *threads = getenv("PTK_FAULT_THREADS");
    if (threads && *threads) {
        config.configured = 1;
        char copy[256];
        snprintf(copy, sizeof copy, "%s", threads);
        for (char *save = NULL, *p = strtok_r(copy, ",", &save); p && config.prefix_count < 8; p = strtok_r(NULL, ",", &save)) {
            if (strcmp(p, "*") == 0) config.all_threads = 1;
            else snprintf(config.prefixes[config.prefix_count++], 16, "%s", p);
        }
    }
    const char *fault = getenv("PTK_FAULT");
    if (fault && *fault) {
        char kind[32] = "", action[32] = "", when[32] = "";
        if (sscanf(fault, "%31[^:]:%31[^:]:%31s", kind, action, when) == 3) {
            for (int k = 0; k <= K_ANY; k++) if (strcmp(kind, kind_names[k]) == 0) config.kind = k;
            config.action = 0;
            if (strcmp(action, "KILL") == 0) config.action = -1;
            for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++) if (strcmp(action, errnos[i].name) == 0) config.action = errnos[i].value;
            if (strcmp(when, "odd") == 0) config.parity = 1;
            else if (strcmp(when, "even") == 0) config.parity = 2;
            else config.when = atol(when);
        }
        if (config.kind < 0 || config.action == 0 || (config.when <= 0 && config.parity == 0)) {
            static const char message[] = "libptkfault: PTK_FAULT is not KIND:ACTION:WHEN; no fault will be made\n";
            raw_write(2, message, sizeof message - 1);
            config.kind = -1;
        }
    }
    const char *record = getenv("PTK_FAULT_RECORD");
    if (record && *record) config.record_fd = (int)syscall(SYS_openat, AT_FDCWD, record, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (config.configured) {
        struct sigaction action = { .sa_handler = disarm, .sa_flags = SA_RESTART };
        sigemptyset(&action.sa_mask);
        sigaction(SIGUSR2, &action, NULL);
        // A program started by a test may inherit the test's blocked signals; threads made
        // later inherit this one's mask.
        sigset_t usr2;
        sigemptyset(&usr2);
        sigaddset(&usr2, SIGUSR2);
        pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    }
    // backtrace() loads libgcc_s on its first use: done here, not inside a wrapped call.
    void *frames[2];
    backtrace(frames, 2);
    in_hook = 0;
}

static int thread_counted(void) {
    // A thread names itself before its first wrapped call (ptkd's ThreadGroup.start), so the
    // answer is kept. A new thread carries its creator's name until then.
    if (thread_state == 0) {
        char name[16] = "";
        prctl(PR_GET_NAME, name, 0, 0, 0);
        int counted = config.all_threads;
        for (int i = 0; i < config.prefix_count && !counted; i++)
            counted = strncmp(name, config.prefixes[i], strlen(config.prefixes[i])) == 0;
        thread_state = counted ? 1 : 2;
    }
    return thread_state == 1;
}

static void record_call(long all, long of_kind, int kind, const char *function, const char *what) {
    char line[1024];
    int n = snprintf(line, sizeof line, "%s%ld %ld %s %s", what, all, of_kind, kind_names[kind], function);
    void *frames[10];
    int depth = backtrace(frames, 10);
    // frames[0] is record_call, frames[1] the wrapper: the call site is the rest.
    for (int i = 2; i < depth && n < (int)sizeof line - 64; i++) {
        Dl_info info;
        if (dladdr(frames[i], &info) && info.dli_fname) {
            const char *base = strrchr(info.dli_fname, '/');
            n += snprintf(line + n, sizeof line - n, " %s+0x%lx", base ? base + 1 : info.dli_fname,
                          (unsigned long)((char *)frames[i] - (char *)info.dli_fbase));
        } else {
            n += snprintf(line + n, sizeof line - n, " ?+%p", frames[i]);
        }
    }
    line[n++] = '\n';
    raw_write(config.record_fd, line, (size_t)n);
}

/// Called before each wrapped call: 0 to make it, else -1 with errno set (the call is not made).
static int before(int kind, const char *function) {
    if (in_hook || !config.configured || disarmed) return 0;
    in_hook = 1;
    int saved = errno, result = 0;
    if (thread_counted()) {
        long all = atomic_fetch_add(&counted_all, 1) + 1;
        long of_kind = atomic_fetch_add(&counted_kind[kind], 1) + 1;
        long mine = ++thread_kind_count[kind];
        if (config.record_fd >= 0) record_call(all, of_kind, kind, function, "");
        int matches = config.kind == K_ANY ? 1 : config.kind == kind;
        // A wait (poll, flock, accept4) fails only with EINTR, as a signal makes it; the other
        // calls (close, stat, ...) are never failed: only KILL stops at them.
        if (kind == K_WAIT && config.action != -1 && config.action != EINTR) matches = 0;
        if (kind == K_OTHER && config.action != -1) matches = 0;
        if (config.kind >= 0 && matches) {
            int hit = 0;
            if (config.parity) {
                hit = (mine % 2 == 1) == (config.parity == 1) && (config.action != -1);
            } else {
                long n = config.kind == K_ANY ? all : of_kind;
                int expected = 0;
                hit = n == config.when && atomic_compare_exchange_strong(&fired, &expected, 1);
            }
            if (hit) {
                if (config.record_fd >= 0) record_call(all, of_kind, kind, function, "fault ");
                if (config.action == -1) syscall(SYS_kill, getpid(), SIGKILL);
                saved = config.action;
                result = -1;
            }
        }
    }
    errno = saved;
    in_hook = 0;
    return result;
}

#define GUARD(kind, fail) if (before(kind, __func__) != 0) return fail

// Opens. The mode argument is there only with O_CREAT or O_TMPFILE.
#define MODE_ARGUMENT(after) \
    mode_t mode = 0; \
    if (flags & (O_CREAT | O_TMPFILE)) { va_list a; va_start(a, after); mode = va_arg(a, mode_t); va_end(a); }
int open(const char *path, int flags, ...) { REAL(open); MODE_ARGUMENT(flags); GUARD(K_OPEN, -1); return real_open(path, flags, mode); }
int open64(const char *path, int flags, ...) { REAL(open64); MODE_ARGUMENT(flags); GUARD(K_OPEN, -1); return real_open64(path, flags, mode); }
int openat(int dir, const char *path, int flags, ...) { REAL(openat); MODE_ARGUMENT(flags); GUARD(K_OPEN, -1); return real_openat(dir, path, flags, mode); }
int openat64(int dir, const char *path, int flags, ...) {
    REAL(openat64); MODE_ARGUMENT(flags); GUARD(K_OPEN, -1); return real_openat64(dir, path, flags, mode);
}
// syscall(2): openat2 (which glibc does not wrap) is an open; other numbers pass through.
long syscall(long number, ...) {
    REAL(syscall);
    va_list a;
    va_start(a, number);
    long x1 = va_arg(a, long), x2 = va_arg(a, long), x3 = va_arg(a, long), x4 = va_arg(a, long),
         x5 = va_arg(a, long), x6 = va_arg(a, long);
    va_end(a);
    if (number == SYS_openat2) GUARD(K_OPEN, -1);
    return real_syscall(number, x1, x2, x3, x4, x5, x6);
}

// Writes, to files and sockets.
ssize_t write(int fd, const void *b, size_t n) { REAL(write); GUARD(K_WRITE, -1); return real_write(fd, b, n); }
ssize_t pwrite(int fd, const void *b, size_t n, off_t o) { REAL(pwrite); GUARD(K_WRITE, -1); return real_pwrite(fd, b, n, o); }
ssize_t pwrite64(int fd, const void *b, size_t n, off64_t o) { REAL(pwrite64); GUARD(K_WRITE, -1); return real_pwrite64(fd, b, n, o); }
ssize_t writev(int fd, const struct iovec *v, int c) { REAL(writev); GUARD(K_WRITE, -1); return real_writev(fd, v, c); }
ssize_t pwritev(int fd, const struct iovec *v, int c, off_t o) { REAL(pwritev); GUARD(K_WRITE, -1); return real_pwritev(fd, v, c, o); }
ssize_t send(int fd, const void *b, size_t n, int f) { REAL(send); GUARD(K_WRITE, -1); return real_send(fd, b, n, f); }
ssize_t sendto(int fd, const void *b, size_t n, int f, const struct sockaddr *to, socklen_t l) {
    REAL(sendto); GUARD(K_WRITE, -1); return real_sendto(fd, b, n, f, to, l);
}
ssize_t sendmsg(int fd, const struct msghdr *m, int f) { REAL(sendmsg); GUARD(K_WRITE, -1); return real_sendmsg(fd, m, f); }

// Flushes.
int fsync(int fd) { REAL(fsync); GUARD(K_FLUSH, -1); return real_fsync(fd); }
int fdatasync(int fd) { REAL(fdatasync); GUARD(K_FLUSH, -1); return real_fdatasync(fd); }
int syncfs(int fd) { REAL(syncfs); GUARD(K_FLUSH, -1); return real_syncfs(fd); }

// Names: links, renames, removals, directories.
int link(const char *a, const char *b) { REAL(link); GUARD(K_LINK, -1); return real_link(a, b); }
int linkat(int d1, const char *a, int d2, const char *b, int f) { REAL(linkat); GUARD(K_LINK, -1); return real_linkat(d1, a, d2, b, f); }
int rename(const char *a, const char *b) { REAL(rename); GUARD(K_RENAME, -1); return real_rename(a, b); }
int renameat(int d1, const char *a, int d2, const char *b) { REAL(renameat); GUARD(K_RENAME, -1); return real_renameat(d1, a, d2, b); }
int renameat2(int d1, const char *a, int d2, const char *b, unsigned f) {
    REAL(renameat2); GUARD(K_RENAME, -1); return real_renameat2(d1, a, d2, b, f);
}
int unlink(const char *p) { REAL(unlink); GUARD(K_UNLINK, -1); return real_unlink(p); }
int unlinkat(int d, const char *p, int f) { REAL(unlinkat); GUARD(K_UNLINK, -1); return real_unlinkat(d, p, f); }
int rmdir(const char *p) { REAL(rmdir); GUARD(K_UNLINK, -1); return real_rmdir(p); }
int mkdir(const char *p, mode_t m) { REAL(mkdir); GUARD(K_MKDIR, -1); return real_mkdir(p, m); }
int mkdirat(int d, const char *p, mode_t m) { REAL(mkdirat); GUARD(K_MKDIR, -1); return real_mkdirat(d, p, m); }

// Owners, modes, sizes, times.
int chmod(const char *p, mode_t m) { REAL(chmod); GUARD(K_CHMOD, -1); return real_chmod(p, m); }
int fchmod(int fd, mode_t m) { REAL(fchmod); GUARD(K_CHMOD, -1); return real_fchmod(fd, m); }
int fchmodat(int d, const char *p, mode_t m, int f) { REAL(fchmodat); GUARD(K_CHMOD, -1); return real_fchmodat(d, p, m, f); }
int chown(const char *p, uid_t u, gid_t g) { REAL(chown); GUARD(K_CHOWN, -1); return real_chown(p, u, g); }
int fchown(int fd, uid_t u, gid_t g) { REAL(fchown); GUARD(K_CHOWN, -1); return real_fchown(fd, u, g); }
int lchown(const char *p, uid_t u, gid_t g) { REAL(lchown); GUARD(K_CHOWN, -1); return real_lchown(p, u, g); }
int fchownat(int d, const char *p, uid_t u, gid_t g, int f) { REAL(fchownat); GUARD(K_CHOWN, -1); return real_fchownat(d, p, u, g, f); }
int truncate(const char *p, off_t l) { REAL(truncate); GUARD(K_TRUNCATE, -1); return real_truncate(p, l); }
int ftruncate(int fd, off_t l) { REAL(ftruncate); GUARD(K_TRUNCATE, -1); return real_ftruncate(fd, l); }
int ftruncate64(int fd, off64_t l) { REAL(ftruncate64); GUARD(K_TRUNCATE, -1); return real_ftruncate64(fd, l); }
int fallocate(int fd, int m, off_t o, off_t l) { REAL(fallocate); GUARD(K_ALLOCATE, -1); return real_fallocate(fd, m, o, l); }
int posix_fallocate(int fd, off_t o, off_t l) {
    REAL(posix_fallocate);
    if (before(K_ALLOCATE, __func__) != 0) return errno;  // returns the error, as posix_fallocate does
    return real_posix_fallocate(fd, o, l);
}
int utimensat(int d, const char *p, const struct timespec t[2], int f) { REAL(utimensat); GUARD(K_UTIMES, -1); return real_utimensat(d, p, t, f); }
int futimens(int fd, const struct timespec t[2]) { REAL(futimens); GUARD(K_UTIMES, -1); return real_futimens(fd, t); }

// Reads, from files and sockets.
ssize_t read(int fd, void *b, size_t n) { REAL(read); GUARD(K_READ, -1); return real_read(fd, b, n); }
ssize_t pread(int fd, void *b, size_t n, off_t o) { REAL(pread); GUARD(K_READ, -1); return real_pread(fd, b, n, o); }
ssize_t pread64(int fd, void *b, size_t n, off64_t o) { REAL(pread64); GUARD(K_READ, -1); return real_pread64(fd, b, n, o); }
ssize_t readv(int fd, const struct iovec *v, int c) { REAL(readv); GUARD(K_READ, -1); return real_readv(fd, v, c); }
ssize_t recv(int fd, void *b, size_t n, int f) { REAL(recv); GUARD(K_READ, -1); return real_recv(fd, b, n, f); }
ssize_t recvfrom(int fd, void *b, size_t n, int f, struct sockaddr *from, socklen_t *l) {
    REAL(recvfrom); GUARD(K_READ, -1); return real_recvfrom(fd, b, n, f, from, l);
}
ssize_t recvmsg(int fd, struct msghdr *m, int f) { REAL(recvmsg); GUARD(K_READ, -1); return real_recvmsg(fd, m, f); }

// Other calls: never failed here (their errors are not I/O errors), but KILL may stop at them.
// Counted only when a KILL may stop at them or calls are recorded, so that a KILL's N is the
// number a recording gave.
#define OTHER(fail) if ((config.action == -1 || config.record_fd >= 0) && before(K_OTHER, __func__) != 0) return fail
int close(int fd) { REAL(close); OTHER(-1); return real_close(fd); }
int flock(int fd, int op) { REAL(flock); GUARD(K_WAIT, -1); return real_flock(fd, op); }
int fstat(int fd, struct stat *s) { REAL(fstat); OTHER(-1); return real_fstat(fd, s); }
int fstatat(int d, const char *p, struct stat *s, int f) { REAL(fstatat); OTHER(-1); return real_fstatat(d, p, s, f); }
int stat(const char *p, struct stat *s) { REAL(stat); OTHER(-1); return real_stat(p, s); }
int lstat(const char *p, struct stat *s) { REAL(lstat); OTHER(-1); return real_lstat(p, s); }
off_t lseek(int fd, off_t o, int w) { REAL(lseek); OTHER(-1); return real_lseek(fd, o, w); }
int posix_fadvise(int fd, off_t o, off_t l, int a) { REAL(posix_fadvise); OTHER(EIO); return real_posix_fadvise(fd, o, l, a); }
int poll(struct pollfd *f, nfds_t n, int t) { REAL(poll); GUARD(K_WAIT, -1); return real_poll(f, n, t); }
int accept4(int fd, struct sockaddr *a, socklen_t *l, int f) { REAL(accept4); GUARD(K_WAIT, -1); return real_accept4(fd, a, l, f); }
