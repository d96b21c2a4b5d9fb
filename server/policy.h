/* policy.h - turning the operator's security flags into hw_server_opts (docs/security.md).
 * Owns: --data-dir resolution (canonical, must be a directory), --env-limit parsing
 * (ENV.KNOB=N into opts->env_limits), the loud start-up warning for a non-loopback bind
 * without CURVE, and the per-worker env context built from the options. */
#ifndef HW_POLICY_H
#define HW_POLICY_H

#include <stdbool.h>

#include "common/hw_files.h"
#include "env.h"
#include "server.h"

/* Resolves dir (realpath) and appends it; -1 with a message on stderr. */
int hw_policy_add_data_dir(hw_server_opts *o, const char *dir);
/* "dram-v0.count=1000000"; -1 with a message on stderr. */
int hw_policy_add_env_limit(hw_server_opts *o, const char *spec);
/* true for ipc://, inproc:// and tcp:// on 127.0.0.0/8, ::1 or localhost. */
bool hw_policy_bind_is_local(const char *ep);
/* Prints the warning (always, not only with -v) for every non-local bind without CURVE. */
void hw_policy_warn_binds(const hw_server_opts *o);
/* The server's file policy: untrusted, o's data dirs, o's max_file. */
void hw_policy_files(const hw_server_opts *o, hw_files *out);
/* The env context for family `env_id` under these options (files must outlive it). */
hw_env_ctx hw_policy_ctx(const hw_server_opts *o, const hw_files *files, const char *env_id);

#endif
