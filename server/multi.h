/* multi.h - multi-agent sessions on the worker side (PROTOCOL.md, "Multi-agent sessions").
 * Owns: parsing a make's `agents` into the session's agent table, join, and the barrier: each
 * agent's reset/step part is held until every agent has sent one (then the env runs once and
 * every part is answered), a newer part supersedes an agent's held one, and an open barrier
 * times out after the session's timeout. Runs on the session's worker thread only. */
#ifndef HW_MULTI_H
#define HW_MULTI_H

#include "worker.h"

int parse_agents(session *s, const msgpack_object *arr, hw_err *err);
/* Answers every held part of the open barrier with the error and clears the barrier. */
void barrier_fail(worker *w, session *s, const hw_err *e);
/* Returns true when the task is held (answered later). */
bool op_multi_part(worker *w, task *t);
void check_barrier_timeouts(worker *w);
void op_join(task *t);

#endif
