#ifndef PTK_CLINUX_SHIM_H
#define PTK_CLINUX_SHIM_H
// Linux calls that glibc declares only under _GNU_SOURCE, which Swift's Glibc module is built
// without. No system header is included here (that would move its types out of Glibc's
// module); the types are spelled out: socklen_t is unsigned int on Linux.

/// accept4(2): `addr` points to a struct sockaddr_storage.
extern int accept4(int fd, void *addr, unsigned int *addrlen, int flags);

/// renameat2(2) with RENAME_NOREPLACE (1): rename that fails with EEXIST rather than replace.
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// pipe2(2): a pipe made with `flags` (O_CLOEXEC) at once, no other thread's child between.
extern int pipe2(int fds[2], int flags);

/// gettid(2): the calling thread's id, for setpriority on one thread.
extern int gettid(void);

/// sched_getaffinity(2): `mask` is a cpu_set_t of `cpusetsize` bytes (pid_t is int).
extern int sched_getaffinity(int pid, unsigned long cpusetsize, void *mask);

/// openat2(2), which glibc 2.36 does not wrap: opens `path` relative to `dirfd` with `flags`
/// (O_*) and `resolve` (RESOLVE_*: 0x04 no symlinks, 0x08 beneath). -1 and errno on failure.
struct ptk_open_how { unsigned long long flags, mode, resolve; };
extern long syscall(long number, ...);
static inline int ptk_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve) {
    struct ptk_open_how how = { flags, 0, resolve };
    return (int)syscall(437 /* SYS_openat2 on x86-64 and arm64 */, dirfd, path, &how, sizeof how);
}

/// pthread_tryjoin_np(3): joins `thread` if it has ended, else returns EBUSY at once
/// (pthread_t is unsigned long).
extern int pthread_tryjoin_np(unsigned long thread, void **retval);

/// pthread_clockjoin_np(3): joins `thread`, waiting until `abstime` (a struct timespec) on
/// `clock` at the latest; ETIMEDOUT after it.
extern int pthread_clockjoin_np(unsigned long thread, void **retval, int clock, const void *abstime);

/// pthread_setname_np(3): names `thread` (at most 15 bytes) as ps, top and gdb show it.
extern int pthread_setname_np(unsigned long thread, const char *name);

/// syncfs(2): flushes the file system holding `fd` to disk.
extern int syncfs(int fd);

/// setresuid(2), setresgid(2), getresuid(2): the real, effective and saved ids at once (uid_t
/// and gid_t are unsigned int), so that root taking on a user keeps no way back.
extern int setresuid(unsigned int ruid, unsigned int euid, unsigned int suid);
extern int setresgid(unsigned int rgid, unsigned int egid, unsigned int sgid);
extern int getresuid(unsigned int *ruid, unsigned int *euid, unsigned int *suid);

/// fgetxattr(2): the value of the extended attribute `name` of the open file `fd` into `value`
/// (with `size` 0, only its length); -1 and errno when it has none (ENODATA) or on failure.
/// ssize_t and size_t are long and unsigned long on Linux.
extern long fgetxattr(int fd, const char *name, void *value, unsigned long size);

/// fanotify_init(2) and fanotify_mark(2) (`mask` is a uint64_t, unsigned long on Linux's 64-bit
/// ABIs): the tests hold another process's open of a chosen file (FAN_OPEN_PERM) while they
/// change the tree, to make a race happen at one exact step.
extern int fanotify_init(unsigned int flags, unsigned int event_f_flags);
extern int fanotify_mark(int fanotify_fd, unsigned int flags, unsigned long mask, int dirfd, const char *pathname);

/// copy_file_range(2): copies `len` bytes from `fd_in` at `*off_in` to `fd_out` at `*off_out`
/// inside the kernel (a reflink or server-side copy where the file system has one), moving
/// both offsets on; the number copied (0 at the end of `fd_in`), or -1 and errno. loff_t is
/// long on Linux's 64-bit ABIs.
extern long copy_file_range(int fd_in, long *off_in, int fd_out, long *off_out, unsigned long len, unsigned int flags);

/// statx(2), for what fstat cannot say. `buf` is a struct statx (256 bytes).
extern int statx(int dirfd, const char *path, int flags, unsigned int mask, void *buf);

/// Whether the open `fd` is the root of a mount (STATX_ATTR_MOUNT_ROOT, 0x2000, from statx
/// with AT_EMPTY_PATH on `fd` itself): 1 when it is, 0 when not, 2 when the kernel does not
/// say (before Linux 5.8), -1 and errno when statx fails (ENOSYS before Linux 4.11).
static inline int ptk_is_mount_root(int fd) {
    unsigned long long buf[32] = { 0 };  /* struct statx: 256 bytes, 8-byte aligned */
    if (statx(fd, "", 0x1000 /* AT_EMPTY_PATH */, 0, buf) != 0) return -1;
    unsigned long long attributes = buf[1];  /* stx_attributes, at byte 8 */
    unsigned long long known = buf[7];       /* stx_attributes_mask, at byte 56 */
    if (!(known & 0x2000)) return 2;
    return (attributes & 0x2000) ? 1 : 0;
}

/// fstatfs(2): `buf` is a struct statfs (120 bytes on Linux's 64-bit ABIs), whose first field
/// is f_type, a long: the file system's magic number. (Glibc's module leaves out sys/vfs.h.)
extern int fstatfs(int fd, void *buf);

#endif
