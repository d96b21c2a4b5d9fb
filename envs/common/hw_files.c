/* hw_files.c - see hw_files.h */
#include "hw_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const hw_files hw_files_local = {.dirs = NULL, .ndirs = 0, .trusted = true, .max_bytes = 0};

static size_t max_of(const hw_files *p) { return p && p->max_bytes ? p->max_bytes : HW_FILES_MAX_DEFAULT; }

bool hw_files_is_path(const char *s) { return s && (strchr(s, '/') || strchr(s, '.')); }

/* Reads fd to EOF, at most max bytes (one more = too large). fd is closed. */
static char *read_fd(int fd, const char *what, size_t max, size_t *len, hw_err *err) {
    struct stat st;
    if (fstat(fd, &st) != 0) memset(&st, 0, sizeof st);
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
        close(fd);
        hw_fail(err, HW_E_LIMIT, "%s: the file is larger than the limit of %zu bytes", what, max);
        return NULL;
    }
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
    if (cap > max + 1) cap = max + 1;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        hw_fail(err, HW_E_LIMIT, "%s: out of memory reading the file", what);
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            if (cap > max) break;
            size_t nc = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                free(buf);
                close(fd);
                hw_fail(err, HW_E_LIMIT, "%s: out of memory reading the file", what);
                return NULL;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            free(buf);
            close(fd);
            hw_fail(err, HW_E_BAD_CONFIG, "%s: read error", what);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) {
        free(buf);
        hw_fail(err, HW_E_LIMIT, "%s: the file is larger than the limit of %zu bytes", what, max);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Opens `rel` beneath directory `dir`: openat2(RESOLVE_BENEATH) where the kernel has it, else
 * realpath + prefix check. Only regular files; -1 otherwise. */
static int open_beneath(const char *dir, const char *rel) {
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    int fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
    int e = errno;
    close(dfd);
    if (fd < 0 && (e == ENOSYS || e == EPERM)) { /* no openat2 (old kernel, seccomp): resolve by hand */
        char full[PATH_MAX], res[PATH_MAX];
        size_t dl = strlen(dir);
        if (snprintf(full, sizeof full, "%s/%s", dir, rel) >= (int)sizeof full) return -1;
        if (!realpath(full, res)) return -1;
        if (strncmp(res, dir, dl) != 0 || (res[dl] != '/' && !(dl == 1 && dir[0] == '/'))) return -1;
        fd = open(res, flags | O_NOFOLLOW);
    }
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool has_dotdot(const char *path) {
    for (const char *s = path; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.') return true;
        if (!e) break;
        s = e + 1;
    }
    return false;
}

char *hw_files_read(const hw_files *p, const char *what, const char *path, size_t *len, hw_err *err) {
    size_t max = max_of(p);
    if (!path || !*path) return hw_fail(err, HW_E_BAD_CONFIG, "%s: empty path", what), NULL;
    if (p && p->trusted) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) return hw_fail(err, HW_E_BAD_CONFIG, "%s: cannot open %s: %s", what, path, strerror(errno)), NULL;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            close(fd);
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: %s is a directory", what, path), NULL;
        }
        return read_fd(fd, what, max, len, err);
    }
    if (!p || p->ndirs == 0)
        return hw_fail(err, HW_E_BAD_CONFIG,
                       "%s: this server reads no files (its operator gave no --data-dir); send the content inline as {\"text\": ...}",
                       what),
               NULL;
    if (path[0] == '/')
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: absolute paths are refused; give a path relative to the server's data directories",
                       what),
               NULL;
    if (strlen(path) >= PATH_MAX / 2) /* its own message, not the '..' one (issue 28) */
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: a path of %zu bytes is longer than the limit of %d", what, strlen(path), PATH_MAX / 2 - 1),
               NULL;
    if (has_dotdot(path)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: paths with '..' components are refused", what), NULL;
    for (int i = 0; i < p->ndirs; i++) {
        int fd = open_beneath(p->dirs[i], path);
        if (fd >= 0) return read_fd(fd, what, max, len, err);
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "%s: '%.100s' is not a readable regular file under the server's data directories", what, path),
           NULL;
}

int hw_files_stat(const hw_files *p, const char *path, struct stat *st) {
    if (!path || !*path) return -1;
    if (p && p->trusted) return stat(path, st) == 0 && S_ISREG(st->st_mode) ? 0 : -1;
    if (!p || p->ndirs == 0 || path[0] == '/' || strlen(path) >= PATH_MAX / 2 || has_dotdot(path)) return -1;
    for (int i = 0; i < p->ndirs; i++) {
        int fd = open_beneath(p->dirs[i], path);
        if (fd < 0) continue;
        int rc = fstat(fd, st);
        close(fd);
        return rc == 0 ? 0 : -1;
    }
    return -1;
}

int hw_files_cfg_text(const hw_files *p, const json_t *cfg, const char *key, char **out, size_t *len, bool *from_file,
                      hw_err *err) {
    char what[96];
    snprintf(what, sizeof what, "config.%s", key);
    *out = NULL;
    if (len) *len = 0;
    if (from_file) *from_file = false;
    json_t *v = cfg && json_is_object(cfg) ? json_object_get(cfg, key) : NULL;
    if (!v || json_is_null(v)) return 0;
    if (json_is_string(v)) {
        *out = hw_files_read(p, what, json_string_value(v), len, err);
        if (from_file) *from_file = true;
        return *out ? 0 : -1;
    }
    json_t *t = json_is_object(v) && json_object_size(v) == 1 ? json_object_get(v, "text") : NULL;
    if (!t || !json_is_string(t))
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a file path (a string) or {\"text\": \"<the file's content>\"}", what);
    size_t n = json_string_length(t);
    if (n > max_of(p)) return hw_fail(err, HW_E_LIMIT, "%s.text: %zu bytes exceed the limit of %zu", what, n, max_of(p));
    if (memchr(json_string_value(t), 0, n)) return hw_fail(err, HW_E_BAD_CONFIG, "%s.text: NUL byte in the text", what);
    *out = malloc(n + 1);
    if (!*out) return hw_fail(err, HW_E_LIMIT, "%s.text: out of memory", what);
    memcpy(*out, json_string_value(t), n + 1);
    if (len) *len = n;
    return 0;
}

void hw_files_redact(const hw_files *p, bool from_file, const char *what, const char *kind, hw_err *err) {
    if (!err || !from_file || (p && p->trusted)) return;
    hw_code c = err->code == HW_OK || err->code == HW_E_IO ? HW_E_BAD_CONFIG : err->code;
    hw_fail(err, c, "%s: not a valid %s file (file content is not quoted in errors)", what, kind);
}

json_t *hw_files_parse_json(const hw_files *p, const char *what, const char *text, size_t len, bool from_file, hw_err *err) {
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY, &je);
    if (j) return j;
    if (!from_file || (p && p->trusted)) hw_fail(err, HW_E_BAD_CONFIG, "%s: line %d, column %d: %s", what, je.line, je.column, je.text);
    else hw_fail(err, HW_E_BAD_CONFIG, "%s: not valid JSON (line %d, column %d; file content is not quoted in errors)", what, je.line, je.column);
    return NULL;
}

json_t *hw_files_load_json(const hw_files *p, const char *what, const char *path, hw_err *err) {
    size_t n;
    char *t = hw_files_read(p, what, path, &n, err);
    if (!t) return NULL;
    json_t *j = hw_files_parse_json(p, what, t, n, true, err);
    free(t);
    return j;
}
