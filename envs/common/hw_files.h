/* hw_files.h - the one way an env reads a file named in its config (docs/security.md).
 * Owns: the file-access policy (data directories + a trusted flag), path checks, the bounded
 * non-blocking read of a regular file, inline content ({"text": ...}) in place of a path, and
 * the wording of file errors, which never quote file content nor tell a remote client whether
 * a file exists outside the data directories.
 *
 * Every loader in every env goes through hw_files_read / hw_files_cfg_text / hw_files_cfg_json
 * with the policy from its hw_env_ctx; no env calls fopen/open/json_load_file on a config path.
 *
 * Untrusted policy (the server): a path must be relative, without "..", and resolve (symlinks
 * included) beneath one of the data directories, tried in order; only regular files are
 * opened (O_NONBLOCK, fstat before reading: FIFOs and devices never block a worker); at most
 * max_bytes are read. With no data directory no file is read at all. Every refusal gets the
 * same BAD_CONFIG message whatever the reason (absent, outside, symlink out, not regular,
 * unreadable), so existence outside the data directories does not leak.
 * Trusted policy (hw_files_local: CLI, --endpoint local, tests): any path, bounded size. */
#ifndef HW_FILES_H
#define HW_FILES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "hw_error.h"

#define HW_FILES_MAX_DEFAULT ((size_t)64 << 20)

typedef struct hw_files {
    const char *const *dirs; /* data directories, canonical absolute paths (the server resolves them) */
    int ndirs;
    bool trusted;            /* a local tool: any path the user gives, errors may quote content */
    size_t max_bytes;        /* largest file or inline text; 0 = HW_FILES_MAX_DEFAULT */
} hw_files;

extern const hw_files hw_files_local; /* trusted, no data directories */

/* Reads the whole file `path` under policy `p` (NULL: no files). `what` names the config field
 * in errors ("config.trace_file"). Returns a NUL-terminated malloc'd buffer (*len without the
 * NUL; len may be NULL), or NULL with HW_E_BAD_CONFIG / HW_E_LIMIT. */
char *hw_files_read(const hw_files *p, const char *what, const char *path, size_t *len, hw_err *err);

/* The stat of the file hw_files_read would read for `path` (the same resolution, same refusals):
 * 0, or -1 when it would refuse. The evaluation cache keys on the content of the files a config
 * names and re-hashes a file only when this changes (server/cache_files.c). */
struct stat;
int hw_files_stat(const hw_files *p, const char *path, struct stat *st);

/* A config field holding a file: a string (a path, read with hw_files_read) or an object
 * {"text": "<the content>"} (inline, any policy, within max_bytes). Absent or null: returns 0
 * with *out NULL. *from_file (may be NULL) tells whether the text came from a file. */
int hw_files_cfg_text(const hw_files *p, const json_t *cfg, const char *key, char **out, size_t *len, bool *from_file,
                      hw_err *err);

/* Parses JSON text read from `path`/inline; on a syntax error the message names the line and
 * column, and quotes nothing of a file when the policy is untrusted. */
json_t *hw_files_parse_json(const hw_files *p, const char *what, const char *text, size_t len, bool from_file, hw_err *err);

/* hw_files_read + hw_files_parse_json. */
json_t *hw_files_load_json(const hw_files *p, const char *what, const char *path, hw_err *err);

/* After a parser failed on text that came from a file: under an untrusted policy the parser's
 * message (which may quote the file) is replaced by "<what>: not a valid <kind> file"; the
 * code is kept. Trusted policies and inline text keep the parser's message. */
void hw_files_redact(const hw_files *p, bool from_file, const char *what, const char *kind, hw_err *err);

/* True when `s` looks like a path rather than a built-in name ('/' or a '.' in it). */
bool hw_files_is_path(const char *s);

#endif
