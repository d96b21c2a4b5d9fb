/* cache_files.h - the content of the data files a config names, in the evaluation-cache key
 * (docs/cache.md, "What is a key"; issue 28 finding 4).
 * Owns: finding the strings of a config that name a file under the server's data directories
 * (any string that looks like a path, hw_files_is_path, and resolves through the server's file
 * policy, hw_files_stat), the SHA-256 of each such file's content, a memo of those digests
 * re-hashed whenever the file's identity, size or modification time changes, and mixing
 * "path + content digest" of every named file into a batch's key prefix. Two servers on one
 * --cache FILE with different data dirs, or one server after a data file changed, therefore
 * never share results for configs that name the same path with different content.
 * Thread use: the router's, as the cache. */
#ifndef HW_CACHE_FILES_H
#define HW_CACHE_FILES_H

#include <jansson.h>
#include <msgpack.h>

#include "cache_key.h"
#include "common/hw_files.h"

typedef struct hw_cache_files hw_cache_files;

/* policy: the server's file policy (its dirs must outlive the object); NULL or no dirs: no config
 * can name a file, and hw_cache_files_mix changes nothing. */
hw_cache_files *hw_cache_files_new(const hw_files *policy);
void hw_cache_files_free(hw_cache_files *f);

/* Mixes the content digest of every file the config (cfg, else cfg_mp) names into prefix.
 * Returns -1 when the batch must not be cached: more than HW_CACHE_FILES_MAX path-like strings,
 * or a named file that could not be read whole. */
#define HW_CACHE_FILES_MAX 16
int hw_cache_files_mix(hw_cache_files *f, hw_keyer *k, const json_t *cfg, const msgpack_object *cfg_mp, unsigned char prefix[32]);

/* The identity (device, inode, size, modification time) of every file the config names, as a
 * string to append to a key (empty when none; NULL: too many paths, do not reuse). The workers'
 * env cache keys on it, so an env built from a data file is rebuilt when the file changes. */
char *hw_cache_files_stamp(const hw_files *policy, const json_t *cfg);

#endif
